// The `opencl` backend: matmul (plain GEMM with alpha/beta, any strides, broadcast
// batches), softmax (any axis) and layer_norm as OpenCL C kernels built at run time on the
// first CPU device found (else any device), computing in f32 with f32 or f16 storage of each
// operand (f16 through vload_half / vstore_half_rte, see opencl_kernels.hpp). The point is to
// test an OpenCL implementation's compiler and math library (exp, rsqrt, fma, division)
// against the contract; a machine without a platform reports every case SKIPPED, and a
// kernel that fails to build throws opval::error with the compiler's log (the runner turns
// it into FAILED).
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/opencl/opencl_backend.hpp"
#include "backends/opencl/opencl_kernels.hpp"
#include "backends/op_handlers.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/backend.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval {
namespace {

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw error(std::string("opencl: ") + what + " failed with OpenCL error " + std::to_string(status));
}

// The value of a string-valued clGet*Info query.
template <class Handle, class Param, class Query>
std::string info_string(Query query, Handle h, Param param) {
  std::size_t size = 0;
  if (query(h, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string s(size, '\0');
  if (query(h, param, size, s.data(), nullptr) != CL_SUCCESS) return "?";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

// One OpenCL context and queue for the whole process, with its built programs. Created on
// first use; never released, because tearing an ICD down during static destruction is
// fragile and the OS reclaims it anyway.
struct cl_env {
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  std::string unavailable;  ///< non-empty: why there is no device
  std::string description;  ///< platform name + version, device, driver
  std::string device_name, platform_version;
  std::string build_options;
  std::mutex mutex;         ///< one command at a time: the queue and program cache are shared
  std::map<std::string, cl_program> programs;
};

// The first CPU device of any platform, else the first device of any type.
std::pair<cl_platform_id, cl_device_id> pick_device() {
  cl_uint np = 0;
  check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  if (np == 0) throw error("no OpenCL platform installed");
  std::vector<cl_platform_id> platforms(np);
  check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_device_type type : {cl_device_type{CL_DEVICE_TYPE_CPU}, cl_device_type{CL_DEVICE_TYPE_ALL}})
    for (cl_platform_id pl : platforms) {
      cl_device_id dev = nullptr;
      if (clGetDeviceIDs(pl, type, 1, &dev, nullptr) == CL_SUCCESS && dev) return {pl, dev};
    }
  throw error("none of the " + std::to_string(np) + " OpenCL platforms has a device");
}

void init_env(cl_env& e) {
  const auto [platform, device] = pick_device();
  cl_int status = CL_SUCCESS;
  e.ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  e.queue = clCreateCommandQueue(e.ctx, device, 0, &status);
  check(status, "clCreateCommandQueue");
  e.device = device;
  e.device_name = info_string(clGetDeviceInfo, device, CL_DEVICE_NAME);
  e.platform_version = info_string(clGetPlatformInfo, platform, CL_PLATFORM_VERSION);
  e.description = info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME) + " " + e.platform_version +
                  ", device " + e.device_name + ", driver " + info_string(clGetDeviceInfo, device, CL_DRIVER_VERSION);
  // OpenCL allows 2.5 ulp for f32 division and sqrt unless asked for correct rounding; the
  // f32 contract claims IEEE division, so ask for it where the device offers it.
  cl_device_fp_config fp = 0;
  clGetDeviceInfo(device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, nullptr);
  e.build_options = "-cl-std=CL1.2";
  if (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) e.build_options += " -cl-fp32-correctly-rounded-divide-sqrt";
}

cl_env& env() {
  static cl_env* e = [] {
    auto* created = new cl_env;
    try {
      init_env(*created);
    } catch (const error& ex) {
      created->unavailable = ex.what();
    }
    return created;
  }();
  return *e;
}

std::string build_log(const cl_env& e, cl_program prog) {
  return info_string(
      [&e](cl_program pr, cl_program_build_info param, std::size_t n, void* v, std::size_t* r) {
        return clGetProgramBuildInfo(pr, e.device, param, n, v, r);
      },
      prog, CL_PROGRAM_BUILD_LOG);
}

// Builds source; throws opval::error with the build log on failure. Caller holds e.mutex.
cl_program build(cl_env& e, const std::string& source) {
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource(e.ctx, 1, &text, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  status = clBuildProgram(prog, 1, &e.device, e.build_options.c_str(), nullptr, nullptr);
  const std::string log = build_log(e, prog);
  if (status != CL_SUCCESS) {
    clReleaseProgram(prog);
    throw error("opencl: clBuildProgram failed (OpenCL error " + std::to_string(status) + ", options '" +
                e.build_options + "' on " + e.device_name + "); build log:\n" + log);
  }
  return prog;
}

// The kernel `name` of the program built from `source`, built once per process and source
// (one per combination of operand storages).
cl_kernel make_kernel(cl_env& e, const char* name, const std::string& source) {
  auto it = e.programs.find(source);
  if (it == e.programs.end()) it = e.programs.emplace(source, build(e, source)).first;
  cl_int status = CL_SUCCESS;
  cl_kernel k = clCreateKernel(it->second, name, &status);
  check(status, "clCreateKernel");
  return k;
}

// Owning handles, released when a case ends (including by an exception).
struct mem_deleter {
  void operator()(cl_mem m) const { clReleaseMemObject(m); }
};
struct kernel_deleter {
  void operator()(cl_kernel k) const { clReleaseKernel(k); }
};
using mem_ptr = std::unique_ptr<std::remove_pointer_t<cl_mem>, mem_deleter>;
using kernel_ptr = std::unique_ptr<std::remove_pointer_t<cl_kernel>, kernel_deleter>;

// A device buffer initialized with `bytes` bytes from host (at least one byte: OpenCL
// refuses empty buffers).
mem_ptr upload(cl_env& e, const void* host, std::size_t bytes) {
  std::vector<unsigned char> dummy(1);
  if (bytes == 0) host = dummy.data();
  cl_int status = CL_SUCCESS;
  cl_mem m = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, std::max<std::size_t>(bytes, 1),
                            const_cast<void*>(host), &status);
  check(status, "clCreateBuffer");
  return mem_ptr(m);
}

void download(cl_env& e, cl_mem m, void* host, std::size_t bytes) {
  if (bytes) check(clEnqueueReadBuffer(e.queue, m, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr), "clEnqueueReadBuffer");
}

// Elements from t's element 0 to its last element inclusive: the storage span a kernel that
// addresses t through its own strides touches.
std::int64_t span_elements(const tensor& t) {
  if (t.numel() == 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < t.rank(); ++d) {
    if (t.strides()[d] < 0) throw error("opencl: negative strides " + to_string(t.strides()) + " are not supported");
    last += (t.shape()[d] - 1) * t.strides()[d];
  }
  return last + 1;
}

std::size_t span_bytes(const tensor& t) { return static_cast<std::size_t>(span_elements(t)) * t.element_size(); }

mem_ptr upload_span(cl_env& e, const tensor& t) { return upload(e, t.data(), span_bytes(t)); }

using opencl_kernels::storage;

// The kernel-side storage of an operand type (supports() admits f32 and f16 only).
storage storage_of(dtype t) {
  if (t == dtype::f32) return storage::f32;
  if (t == dtype::f16) return storage::f16;
  throw error("opencl: no kernel storage for " + std::string(to_string(t)));
}

// The source of `body` with its operands' storage macros, one (prefix, type) per operand.
std::string kernel_source(const char* body, std::initializer_list<std::pair<const char*, dtype>> operands) {
  std::string source;
  for (const auto& [prefix, type] : operands) source += opencl_kernels::storage_macros(prefix, storage_of(type));
  return source + body;
}

// Sets kernel arguments in order; cl_mem handles and scalars alike are passed by address.
template <class... Args>
void set_args(cl_kernel k, const Args&... args) {
  cl_uint i = 0;
  (check(clSetKernelArg(k, i++, sizeof(Args), &args), "clSetKernelArg"), ...);
}

// A kernel with its arguments set and the buffers they point to, built by prepare(); execute()
// enqueues it and synchronize() waits and reads the results back with `fetch`.
struct launch {
  kernel_ptr kernel;
  std::vector<mem_ptr> buffers;     ///< kept alive until the results are fetched
  std::vector<std::size_t> global;  ///< the NDRange; an empty extent means no work
  std::function<void(cl_env&, std::span<tensor>)> fetch;
  std::string implementation;
};

// Hands m to l (which keeps it alive until the results are fetched) and returns its handle.
cl_mem keep(launch& l, mem_ptr m) {
  l.buffers.push_back(std::move(m));
  return l.buffers.back().get();
}

void enqueue(cl_env& e, const launch& l) {
  for (std::size_t g : l.global)
    if (g == 0) return;
  check(clEnqueueNDRangeKernel(e.queue, l.kernel.get(), static_cast<cl_uint>(l.global.size()), nullptr,
                               l.global.data(), nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
}

std::string implementation(const cl_env& e, const char* kernel) {
  return std::string("OpenCL C ") + kernel + " on " + e.device_name + " (" + e.platform_version + ", options '" +
         e.build_options + "')";
}

// ---------------------------------------------------------------------------------------------
// matmul

using ops::common_gemm::batch_offsets;
using ops::common_gemm::epilogue_spec;
using ops::common_gemm::non_gemm_feature;

mem_ptr upload_offsets(cl_env& e, const dims& out_batch, const tensor& t) {
  const auto off = batch_offsets(out_batch, t);
  return upload(e, off.data(), off.size() * sizeof(cl_long));
}

// The (row, column) element strides of t's matrix dims.
std::pair<cl_long, cl_long> matrix_strides(const tensor& t) {
  return {t.strides()[t.rank() - 2], t.strides()[t.rank() - 1]};
}

launch matmul_launch(cl_env& e, const problem& p, std::span<const tensor> in, const tensor& dst) {
  const epilogue_spec ep = ops::common_gemm::read_epilogue(p, true);
  // Inputs are A, B, then C exactly when beta != 0 (supports() refused the rest).
  const tensor& a = in[0];
  const tensor& b = in[1];
  const tensor& c = ep.beta != 0.0 ? in[2] : dst;
  const int r = dst.rank();
  const dims out_batch(dst.shape().begin(), dst.shape().end() - 2);
  const cl_long m = dst.shape()[r - 2], n = dst.shape()[r - 1], k = a.shape().back();
  const auto [a_rs, a_cs] = matrix_strides(a);
  const auto [b_rs, b_cs] = matrix_strides(b);
  const auto [c_rs, c_cs] = matrix_strides(c);
  const auto [d_rs, d_cs] = matrix_strides(dst);
  launch l;
  // dst's whole span goes up and comes back, so padding between its rows survives.
  const cl_mem ma = keep(l, upload_span(e, a)), mb = keep(l, upload_span(e, b)), mc = keep(l, upload_span(e, c)),
               md = keep(l, upload_span(e, dst));
  const cl_mem oa = keep(l, upload_offsets(e, out_batch, a)), ob = keep(l, upload_offsets(e, out_batch, b)),
               oc = keep(l, upload_offsets(e, out_batch, c)), od = keep(l, upload_offsets(e, out_batch, dst));
  const std::string source = kernel_source(
      opencl_kernels::matmul, {{"A", a.type()}, {"B", b.type()}, {"C", c.type()}, {"D", dst.type()}});
  l.kernel.reset(make_kernel(e, "matmul_naive", source));
  const cl_float alpha = static_cast<cl_float>(ep.alpha), beta = static_cast<cl_float>(ep.beta);
  const cl_int has_c = ep.beta != 0.0;
  set_args(l.kernel.get(), ma, mb, mc, md, m, n, k, a_rs, a_cs, b_rs, b_cs, c_rs, c_cs, d_rs, d_cs, oa, ob, oc, od,
           alpha, beta, has_c);
  l.global = {static_cast<std::size_t>(n), static_cast<std::size_t>(m), static_cast<std::size_t>(element_count(out_batch))};
  l.fetch = [md](cl_env& env, std::span<tensor> out) { download(env, md, out[0].data(), span_bytes(out[0])); };
  l.implementation = implementation(e, "matmul_naive");
  return l;
}

// ---------------------------------------------------------------------------------------------
// softmax and layer_norm: row kernels on contiguous copies

// t itself when contiguous, else a contiguous copy (the kernels address rows densely).
tensor dense(const tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

std::size_t dense_bytes(const tensor& t) { return static_cast<std::size_t>(t.numel()) * t.element_size(); }

mem_ptr upload_dense(cl_env& e, const tensor& t) { return upload(e, t.data(), dense_bytes(t)); }

// A zero-filled device buffer of `bytes` bytes.
mem_ptr zeros(cl_env& e, std::size_t bytes) {
  const std::vector<unsigned char> host(bytes);
  return upload(e, host.data(), host.size());
}

// Reads a dense result of out's shape and type back into out, whatever out's strides.
void download_into(cl_env& e, cl_mem m, tensor& out) {
  if (out.is_contiguous()) return download(e, m, out.data(), dense_bytes(out));
  tensor host(out.type(), out.shape());
  download(e, m, host.data(), dense_bytes(host));
  out.assign(host.to_vector());  // f32 / f16 -> f64 -> the same type is exact
}

// A row kernel's launch whose dense result buffer `result` is read back into out[0].
launch row_launch(cl_env& e, launch l, cl_mem result, const char* kernel) {
  l.fetch = [result](cl_env& env, std::span<tensor> out) { download_into(env, result, out[0]); };
  l.implementation = implementation(e, kernel);
  return l;
}

launch softmax_launch(cl_env& e, const problem& p, const tensor& x, const tensor& y) {
  const dims& shape = p.get_dims("shape");
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t axis = p.get_int("axis") < 0 ? p.get_int("axis") + rank : p.get_int("axis");
  cl_long outer = 1, len = 1, inner = 1;
  for (std::int64_t d = 0; d < rank; ++d) (d < axis ? outer : d == axis ? len : inner) *= shape[static_cast<std::size_t>(d)];
  launch l;
  const cl_mem mx = keep(l, upload_dense(e, dense(x)));
  const cl_mem out = keep(l, zeros(e, dense_bytes(y)));
  l.kernel.reset(
      make_kernel(e, "softmax_rows", kernel_source(opencl_kernels::softmax, {{"X", x.type()}, {"Y", y.type()}})));
  set_args(l.kernel.get(), mx, out, len, inner);
  l.global = {static_cast<std::size_t>(outer * inner)};
  return row_launch(e, std::move(l), out, "softmax_rows");
}

launch layer_norm_launch(cl_env& e, const problem& p, std::span<const tensor> in, const tensor& y) {
  const dims& shape = p.get_dims("shape");
  const auto axes = static_cast<std::size_t>(p.get_int("norm_axes"));
  cl_long n = 1;
  for (std::size_t d = shape.size() - std::min(axes, shape.size()); d < shape.size(); ++d) n *= shape[d];
  const bool affine = p.get_bool("affine");
  launch l;
  const cl_mem mx = keep(l, upload_dense(e, dense(in[0])));
  const cl_mem gamma = keep(l, affine ? upload_dense(e, dense(in[1])) : zeros(e, 0));
  const cl_mem beta = keep(l, affine ? upload_dense(e, dense(in[2])) : zeros(e, 0));
  const cl_mem out = keep(l, zeros(e, dense_bytes(y)));
  // Without affine, gamma and beta are absent: their storage is p.dt.wei all the same.
  l.kernel.reset(make_kernel(
      e, "layer_norm_rows",
      kernel_source(opencl_kernels::layer_norm, {{"X", in[0].type()}, {"G", p.dt.wei}, {"Y", y.type()}})));
  const cl_float eps = static_cast<cl_float>(p.get_real("eps"));
  const cl_int aff = affine;
  set_args(l.kernel.get(), mx, gamma, beta, out, n, eps, aff);
  l.global = {static_cast<std::size_t>(y.numel() / n)};
  return row_launch(e, std::move(l), out, "layer_norm_rows");
}

// ---------------------------------------------------------------------------------------------

// True when c asks for f32 arithmetic (with the default claims) on operands stored in f32 or
// f16: what the kernels do, widening f16 on load and rounding to nearest on store.
bool storage_only(const contract& c) {
  const auto stored = [](dtype t) { return t == dtype::f32 || t == dtype::f16; };
  if (!stored(c.src) || !stored(c.wei) || !stored(c.dst)) return false;
  contract plain;  // f32 everywhere, round to nearest, IEEE subnormals, default ulps
  plain.src = plain.math = c.src;
  plain.wei = c.wei;
  plain.dst = c.dst;
  return c == plain;
}

// How the backend runs one op: the launch it prepares, and what it refuses beyond the
// contract check ("" when it runs the problem).
struct kernel_handler {
  launch (*make)(cl_env&, const problem&, std::span<const tensor> in, std::span<tensor> out);
  std::string (*refusal)(const problem&) = nullptr;
};

const detail::op_handlers<kernel_handler>& handlers() {
  static const detail::op_handlers<kernel_handler> table(
      "opencl",
      {{"matmul", {[](cl_env& e, const problem& p, std::span<const tensor> in,
                      std::span<tensor> out) { return matmul_launch(e, p, in, out[0]); },
                   [](const problem& p) {
                     const std::string feature = non_gemm_feature(p, ops::common_gemm::read_epilogue(p, true));
                     return feature.empty() ? feature
                                            : "opencl matmul kernel has no " + feature +
                                                  " (computes alpha*op(A)*op(B) + beta*C only)";
                   }}},
       {"softmax", {[](cl_env& e, const problem& p, std::span<const tensor> in, std::span<tensor> out) {
          return softmax_launch(e, p, in[0], out[0]);
        }}},
       {"layer_norm", {[](cl_env& e, const problem& p, std::span<const tensor> in, std::span<tensor> out) {
                         return layer_norm_launch(e, p, in, out[0]);
                       },
                       [](const problem& p) {
                         return p.get_bool("stats") ? std::string("opencl layer_norm kernel writes y only, not "
                                                                  "stats=1's mean and inv_std")
                                                    : std::string();
                       }}}});
  return table;
}

class opencl_backend final : public backend {
 public:
  std::string name() const override { return "opencl"; }
  std::string version() const override {
    const cl_env& e = env();
    return e.unavailable.empty() ? e.description : "unavailable: " + e.unavailable;
  }

  support supports(const problem& p) const override {
    const kernel_handler* h = handlers().find(p);
    if (!h) return handlers().unimplemented(p);
    const cl_env& e = env();
    if (!e.unavailable.empty()) return support::skipped("no OpenCL platform/device: " + e.unavailable);
    if (!storage_only(p.dt))
      return support::unimplemented("opencl computes in f32 with f32 or f16 storage (e.g. f32, f16:f32:f16, "
                                    "f16:f32:f32; IEEE defaults) only, not " + p.dt.to_string());
    if (h->refusal)
      if (std::string why = h->refusal(p); !why.empty()) return support::unimplemented(why);
    return support::yes();
  }

  // Uploads the operands, builds (or finds) the kernel and sets its arguments.
  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    cl_env& e = available_env();
    const std::lock_guard lock(e.mutex);
    launch_ = handlers().at(p).make(e, p, in, out);
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    if (!launch_.kernel) throw error("opencl: execute called before prepare");
    cl_env& e = available_env();
    const std::lock_guard lock(e.mutex);
    enqueue(e, launch_);
    return {launch_.implementation, ""};
  }

  std::optional<double> synchronize(std::span<tensor> out) override {
    cl_env& e = available_env();
    const std::lock_guard lock(e.mutex);
    check(clFinish(e.queue), "clFinish");
    launch_.fetch(e, out);
    launch_ = launch{};
    return std::nullopt;
  }

 private:
  static cl_env& available_env() {
    cl_env& e = env();
    if (!e.unavailable.empty()) throw error("opencl: no OpenCL platform/device: " + e.unavailable);
    return e;
  }

  launch launch_;
};

std::unique_ptr<backend> make_opencl() { return std::make_unique<opencl_backend>(); }

}  // namespace

std::string opencl_build_for_test(const std::string& source) {
  cl_env& e = env();
  if (!e.unavailable.empty()) throw error("opencl: no OpenCL platform/device: " + e.unavailable);
  const std::lock_guard lock(e.mutex);
  cl_program prog = build(e, source);
  const std::string log = build_log(e, prog);
  clReleaseProgram(prog);
  return log;
}

OPVAL_REGISTER_BACKEND(opencl, make_opencl);

}  // namespace opval
