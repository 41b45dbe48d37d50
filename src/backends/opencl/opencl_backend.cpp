// The `opencl` backend: f32 matmul (plain GEMM with alpha/beta, any strides, broadcast
// batches), softmax (any axis) and layer_norm as OpenCL C kernels built at run time on the
// first CPU device found (else any device). The point is to test an OpenCL implementation's
// compiler and math library (exp, rsqrt, fma, division) against the contract; a machine
// without a platform reports every case SKIPPED, and a kernel that fails to build throws
// opval::error with the compiler's log (the runner turns it into FAILED).
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/opencl/opencl_backend.hpp"
#include "backends/opencl/opencl_kernels.hpp"
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

// The kernel `name` of the program built from `source`, built once per process.
cl_kernel make_kernel(cl_env& e, const char* name, const char* source) {
  auto it = e.programs.find(name);
  if (it == e.programs.end()) it = e.programs.emplace(name, build(e, source)).first;
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

void download(cl_env& e, const mem_ptr& m, void* host, std::size_t bytes) {
  if (bytes) check(clEnqueueReadBuffer(e.queue, m.get(), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr), "clEnqueueReadBuffer");
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

mem_ptr upload_span(cl_env& e, const tensor& t) {
  return upload(e, t.data(), static_cast<std::size_t>(span_elements(t)) * sizeof(float));
}

// Sets kernel arguments in order; cl_mem handles and scalars alike are passed by address.
template <class... Args>
void set_args(cl_kernel k, const Args&... args) {
  cl_uint i = 0;
  (check(clSetKernelArg(k, i++, sizeof(Args), &args), "clSetKernelArg"), ...);
}

void run_kernel(cl_env& e, cl_kernel k, std::vector<std::size_t> global) {
  for (std::size_t g : global)
    if (g == 0) return;
  check(clEnqueueNDRangeKernel(e.queue, k, static_cast<cl_uint>(global.size()), nullptr, global.data(), nullptr, 0,
                               nullptr, nullptr),
        "clEnqueueNDRangeKernel");
  check(clFinish(e.queue), "clFinish");
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

void run_matmul(cl_env& e, const problem& p, std::span<const tensor> in, tensor& dst) {
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
  // dst's whole span goes up and comes back, so padding between its rows survives.
  const mem_ptr ma = upload_span(e, a), mb = upload_span(e, b), mc = upload_span(e, c), md = upload_span(e, dst);
  const mem_ptr oa = upload_offsets(e, out_batch, a), ob = upload_offsets(e, out_batch, b),
                oc = upload_offsets(e, out_batch, c), od = upload_offsets(e, out_batch, dst);
  const kernel_ptr kern(make_kernel(e, "matmul_naive", opencl_kernels::matmul));
  const cl_float alpha = static_cast<cl_float>(ep.alpha), beta = static_cast<cl_float>(ep.beta);
  const cl_int has_c = ep.beta != 0.0;
  set_args(kern.get(), ma.get(), mb.get(), mc.get(), md.get(), m, n, k, a_rs, a_cs, b_rs, b_cs, c_rs, c_cs, d_rs, d_cs,
           oa.get(), ob.get(), oc.get(), od.get(), alpha, beta, has_c);
  run_kernel(e, kern.get(), {static_cast<std::size_t>(n), static_cast<std::size_t>(m),
                             static_cast<std::size_t>(element_count(out_batch))});
  download(e, md, dst.data(), static_cast<std::size_t>(span_elements(dst)) * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// softmax and layer_norm: row kernels on contiguous copies

// t itself when contiguous, else a contiguous copy (the kernels address rows densely).
tensor dense(const tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

mem_ptr upload_dense(cl_env& e, const tensor& t) {
  return upload(e, t.data(), static_cast<std::size_t>(t.numel()) * sizeof(float));
}

// A zero-filled device buffer of `count` floats.
mem_ptr zeros(cl_env& e, std::int64_t count) {
  const std::vector<float> host(static_cast<std::size_t>(count));
  return upload(e, host.data(), host.size() * sizeof(float));
}

// Reads a dense f32 result of out's shape back into out, whatever out's strides.
void download_into(cl_env& e, const mem_ptr& m, tensor& out) {
  if (out.is_contiguous()) return download(e, m, out.data(), static_cast<std::size_t>(out.numel()) * sizeof(float));
  std::vector<float> host(static_cast<std::size_t>(out.numel()));
  download(e, m, host.data(), host.size() * sizeof(float));
  const std::vector<double> values(host.begin(), host.end());  // f32 -> f64 -> f32 is exact
  out.assign(values);
}

void run_softmax(cl_env& e, const problem& p, const tensor& x, tensor& y) {
  const dims& shape = p.get_dims("shape");
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t axis = p.get_int("axis") < 0 ? p.get_int("axis") + rank : p.get_int("axis");
  cl_long outer = 1, len = 1, inner = 1;
  for (std::int64_t d = 0; d < rank; ++d) (d < axis ? outer : d == axis ? len : inner) *= shape[static_cast<std::size_t>(d)];
  const mem_ptr mx = upload_dense(e, dense(x));
  const mem_ptr out = zeros(e, y.numel());
  const kernel_ptr kern(make_kernel(e, "softmax_rows", opencl_kernels::softmax));
  set_args(kern.get(), mx.get(), out.get(), len, inner);
  run_kernel(e, kern.get(), {static_cast<std::size_t>(outer * inner)});
  download_into(e, out, y);
}

void run_layer_norm(cl_env& e, const problem& p, std::span<const tensor> in, tensor& y) {
  const dims& shape = p.get_dims("shape");
  const auto axes = static_cast<std::size_t>(p.get_int("norm_axes"));
  cl_long n = 1;
  for (std::size_t d = shape.size() - std::min(axes, shape.size()); d < shape.size(); ++d) n *= shape[d];
  const bool affine = p.get_bool("affine");
  const mem_ptr mx = upload_dense(e, dense(in[0]));
  const mem_ptr gamma = affine ? upload_dense(e, dense(in[1])) : zeros(e, 0);
  const mem_ptr beta = affine ? upload_dense(e, dense(in[2])) : zeros(e, 0);
  const mem_ptr out = zeros(e, y.numel());
  const kernel_ptr kern(make_kernel(e, "layer_norm_rows", opencl_kernels::layer_norm));
  const cl_float eps = static_cast<cl_float>(p.get_real("eps"));
  const cl_int aff = affine;
  set_args(kern.get(), mx.get(), gamma.get(), beta.get(), out.get(), n, eps, aff);
  run_kernel(e, kern.get(), {static_cast<std::size_t>(y.numel() / n)});
  download_into(e, out, y);
}

// ---------------------------------------------------------------------------------------------

class opencl_backend final : public backend {
 public:
  std::string name() const override { return "opencl"; }
  std::string version() const override {
    const cl_env& e = env();
    return e.unavailable.empty() ? e.description : "unavailable: " + e.unavailable;
  }

  support supports(const problem& p) const override {
    const cl_env& e = env();
    if (!e.unavailable.empty()) return support::skipped("no OpenCL platform/device: " + e.unavailable);
    if (p.op() != "matmul" && p.op() != "softmax" && p.op() != "layer_norm")
      return support::unimplemented("opencl implements matmul, softmax and layer_norm only");
    if (!(p.dt == parse_contract_types("f32")))
      return support::unimplemented("opencl implements dt=f32 (f32:f32:f32, IEEE defaults) only, not " + p.dt.to_string());
    if (p.op() == "matmul") {
      const std::string feature = non_gemm_feature(p, ops::common_gemm::read_epilogue(p, true));
      if (!feature.empty())
        return support::unimplemented("opencl matmul kernel has no " + feature + " (computes alpha*op(A)*op(B) + beta*C only)");
    }
    return support::yes();
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    cl_env& e = env();
    if (!e.unavailable.empty()) throw error("opencl: no OpenCL platform/device: " + e.unavailable);
    const std::lock_guard lock(e.mutex);
    if (p.op() == "matmul") {
      run_matmul(e, p, in, out[0]);
      return {implementation(e, "matmul_naive"), ""};
    }
    if (p.op() == "softmax") {
      run_softmax(e, p, in[0], out[0]);
      return {implementation(e, "softmax_rows"), ""};
    }
    if (p.op() == "layer_norm") {
      run_layer_norm(e, p, in, out[0]);
      return {implementation(e, "layer_norm_rows"), ""};
    }
    throw error("opencl: execute called for unsupported op " + std::string(p.op()));
  }
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
