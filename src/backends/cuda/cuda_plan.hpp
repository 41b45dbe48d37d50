#pragma once
// What the `cuda` backend's files share: operand descriptions, the library context (cuBLASLt
// and cuDNN handles, workspace), the plan of one case and the builders, one per op (each in
// its own file). A builder either returns a plan or throws `refusal` with the verdict to
// report; it is run by supports() (without device pointers) and again by prepare().
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "opval/backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"

namespace opval::cuda {

/// What a library needs of an operand: type, logical shape, element strides. Built from the
/// op's operand descriptions (capability queries) or from the tensors (execution).
struct operand_view {
  dtype type = dtype::f32;
  dims shape;
  dims strides;
};
std::vector<operand_view> views_of(const std::vector<operand>& ops);
std::vector<operand_view> views_of(std::span<const tensor> ts);

/// A refusal decided while mapping a problem: the support verdict to report.
struct refusal {
  support s;
};

/// Library handles bound to the runtime's stream and a device workspace, created on first
/// use (cuDNN's handle loads its sub-libraries, so a matmul-only run never pays for it).
class cuda_context {
 public:
  cuda_context() = default;
  ~cuda_context();
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;
  /// A cublasLtHandle_t (defined in cublaslt_matmul.cpp).
  void* cublaslt();
  /// A cudnnHandle_t set to the runtime's stream (defined in cudnn_conv2d.cpp).
  void* cudnn();
  /// A device workspace of at least `bytes` (grown, never shrunk; call outside timed work).
  void reserve_workspace(std::size_t bytes);
  void* workspace() const { return workspace_; }
  std::size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  // Each handle is created, with its own deleter, by the file that uses its library.
  std::shared_ptr<void> lt_, dnn_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

/// Device addresses of element 0 of every input and output, in operand order.
struct device_args {
  std::vector<const void*> in;
  std::vector<void*> out;
};

/// One case mapped onto a library call, ready to launch on the runtime's stream.
struct cuda_plan {
  std::string implementation;    ///< the library routine and the algorithm it chose
  std::string actual_contract;   ///< non-empty when the library computes another contract
  std::size_t workspace_bytes = 0;
  std::function<void(cuda_context&, const device_args&)> launch;
};

/// Maps p onto a library; `ctx` is null when there is no device (only the static checks of
/// the mapping run then, and a mappable problem is refused as SKIPPED with the device reason).
using plan_builder = cuda_plan (*)(const problem& p, const std::vector<operand_view>& in,
                                   const std::vector<operand_view>& out, cuda_context* ctx);

cuda_plan matmul_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                      cuda_context*);
cuda_plan conv2d_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                      cuda_context*);

/// Refuses (UNIMPLEMENTED) a contract with a non-default rounding, FTZ or a fused-input
/// rounding the libraries do not express; `who` names the library for the reason.
void require_plain_rounding(const problem& p, const char* who);

/// Throws refusal SKIPPED with the runtime's reason when there is no device (ctx null).
cuda_context& require_device(cuda_context* ctx);

/// True when the environment disables TF32 for NVIDIA libraries (NVIDIA_TF32_OVERRIDE=0):
/// a tf32 contract then runs as plain f32.
bool tf32_disabled_by_environment();

}  // namespace opval::cuda
