// The `cuda` backend: matmul on cuBLASLt and conv2d on cuDNN, on device 0. prepare() maps the
// case onto the library (descriptors, algorithm choice) and uploads every operand; execute()
// launches between two CUDA events; synchronize() downloads the outputs and returns the
// event-measured time. Without a device or driver every mappable case is SKIPPED with the
// runtime's message; what the mapping cannot express is UNIMPLEMENTED with the reason.
#include <cublasLt.h>
#ifdef OPVAL_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "backends/cuda/cuda_plan.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/op_handlers.hpp"
#include "opval/backend.hpp"
#include "core/device.hpp"
#include "opval/error.hpp"

namespace opval::cuda {

std::vector<operand_view> views_of(const std::vector<operand>& ops) {
  std::vector<operand_view> out;
  for (const operand& o : ops)
    out.push_back({o.type, o.shape, o.lay.strides.empty() ? row_major_strides(o.shape) : o.lay.strides});
  return out;
}

std::vector<operand_view> views_of(std::span<const tensor> ts) {
  std::vector<operand_view> out;
  for (const tensor& t : ts) out.push_back({t.type(), t.shape(), t.strides()});
  return out;
}

void require_plain_rounding(const problem& p, const char* who) {
  const contract& c = p.dt;
  if (c.in_round != rounding::rne || c.acc_round != rounding::rne || c.dst_round != rounding::rne)
    throw refusal{support::unimplemented(std::string(who) + " rounds to nearest even; the contract asks " +
                                         c.to_string())};
  if (c.denorm != denormals::ieee)
    throw refusal{support::unimplemented(std::string(who) + " keeps IEEE subnormals; the contract asks denorm=ftz")};
}

cuda_context& require_device(cuda_context* ctx) {
  if (!ctx) throw refusal{support::skipped(runtime().unavailable_reason())};
  return *ctx;
}

bool tf32_disabled_by_environment() {
  const char* v = std::getenv("NVIDIA_TF32_OVERRIDE");
  return v && std::string(v) == "0";
}

cuda_context::~cuda_context() {
  if (workspace_) runtime().deallocate(workspace_);
}

void cuda_context::reserve_workspace(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return;
  // The old workspace may still be read by queued work.
  runtime().synchronize();
  if (workspace_) runtime().deallocate(workspace_);
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  workspace_ = runtime().allocate(bytes);
  workspace_bytes_ = bytes;
}

namespace {

// The builder of each op the backend maps.
const detail::op_handlers<plan_builder>& builders() {
  static const detail::op_handlers<plan_builder> table("cuda", {{"matmul", &matmul_plan}, {"conv2d", &conv2d_plan}});
  return table;
}

std::string library_versions() {
  std::string v = "cuBLASLt " + std::to_string(cublasLtGetVersion());
#ifdef OPVAL_HAVE_CUDNN
  v += ", cuDNN " + std::to_string(cudnnGetVersion());
#else
  v += ", built without cuDNN";
#endif
  return v;
}

class cuda_backend final : public backend {
 public:
  std::string name() const override { return "cuda"; }
  std::string version() const override { return runtime().description() + ", " + library_versions(); }

  support supports(const problem& p) const override {
    const plan_builder* build = builders().find(p);
    if (!build) return builders().unimplemented(p);
    try {
      (*build)(p, views_of(p.spec().inputs(p)), views_of(p.spec().outputs(p)), context_or_null());
      return support::yes();
    } catch (const refusal& r) {
      return r.s;
    }
  }

  void prepare(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    cuda_context* ctx = context_or_null();
    if (!ctx) throw error(runtime().unavailable_reason());
    const plan_builder& build = builders().at(p);
    try {
      plan_ = build(p, views_of(in), views_of(std::span<const tensor>(out.data(), out.size())), ctx);
    } catch (const refusal& r) {
      throw error("cuda backend refused a case it had accepted: " + r.s.reason);
    }
    ctx->reserve_workspace(plan_.workspace_bytes);
    mirror_.clear();
    args_ = {};
    for (const tensor& t : in) args_.in.push_back(mirror_.upload(t));
    // Outputs too: the library writes only the elements, the padding must come back intact.
    for (const tensor& t : out) args_.out.push_back(mirror_.upload(t));
  }

  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    if (!plan_.launch) throw error("cuda backend: execute without prepare");
    runtime().timer_start();
    plan_.launch(*context_, args_);
    runtime().timer_stop();
    return {plan_.implementation, plan_.actual_contract};
  }

  std::optional<double> synchronize(std::span<tensor> out) override {
    for (std::size_t i = 0; i < out.size() && i < args_.out.size(); ++i) mirror_.download(args_.out[i], out[i]);
    runtime().synchronize();
    mirror_.clear();
    args_ = {};
    return runtime().elapsed_seconds();
  }

 private:
  // The library context, or null when there is no device.
  cuda_context* context_or_null() const {
    if (!runtime().unavailable_reason().empty()) return nullptr;
    if (!context_) context_ = std::make_unique<cuda_context>();
    return context_.get();
  }

  mutable std::unique_ptr<cuda_context> context_;
  device_mirror mirror_{runtime()};
  device_args args_;
  cuda_plan plan_;
};

std::unique_ptr<backend> make_cuda_backend() { return std::make_unique<cuda_backend>(); }

}  // namespace

OPVAL_REGISTER_BACKEND(cuda, make_cuda_backend);

}  // namespace opval::cuda
