// The cuda backend (matmul on cuBLASLt, conv2d on cuDNN). With a GPU: the smoke and
// regression suites of matmul and conv2d PASS or are refused with a reason, and a planted
// bug (TF32 arithmetic under an f32 contract) FAILS. Without one (this is checked too): the
// backend is registered, every case it maps is SKIPPED naming the missing device, what it
// cannot map is UNIMPLEMENTED with the reason, and the CLI reports the run as all skipped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "cli_testing.hpp"
#include "opval/backend.hpp"
#include "core/device.hpp"
#include "opval/runner.hpp"

namespace {

using opval::backend;
using opval::case_result;
using opval::state;

using opval::testing::cuda_unavailable_reason;

// The cuda backend of a machine with a GPU, else the test skips with the runtime's message.
#define CUDA_BACKEND_OR_SKIP(var)                                              \
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why; \
  auto var = opval::make_backend("cuda")

// Cases the suites contain that cuBLASLt / cuDNN get wrong, by descriptor, each with the
// group it belongs to in docs/CUDA.md. None known: no GPU has run these suites yet.
const std::set<std::string>& known_library_disagreements() {
  static const std::set<std::string> cases;
  return cases;
}

void expect_suite_ok(const std::string& op, const char* implementation, int min_passed) {
  CUDA_BACKEND_OR_SKIP(b);
  const auto& results = opval::testing::suite_results(*b, {op}, known_library_disagreements());
  opval::testing::expect_passed_or_refused(results);
  for (const auto& r : results)
    if (r.v.st == state::passed) EXPECT_NE(r.exec.implementation.find(implementation), std::string::npos) << r.exec.implementation;
  EXPECT_GT(opval::testing::passed_per_op(results)[op], min_passed) << op;
}

TEST(cuda_backend, is_registered_when_built_with_cuda) {
#ifndef OPVAL_HAVE_CUDA
  GTEST_SKIP() << "opval was built without CUDA";
#else
  auto b = opval::make_backend("cuda");
  EXPECT_EQ(b->name(), "cuda");
  EXPECT_NE(b->version().find("CUDA runtime"), std::string::npos) << b->version();
  EXPECT_NE(b->version().find("cuBLASLt"), std::string::npos) << b->version();
#endif
}

TEST(cuda_backend, without_a_device_mapped_cases_are_skipped_naming_the_device) {
#ifndef OPVAL_HAVE_CUDA
  GTEST_SKIP() << "opval was built without CUDA";
#else
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a CUDA device";
  auto b = opval::make_backend("cuda");
  for (const char* line : {"matmul m=4 n=4 k=4 dt=f32", "matmul m=4 n=5 k=6 batch_a=2 bias=1 act=relu dt=bf16:f32:bf16"}) {
    const opval::support s = b->supports(opval::parse_problem(line));
    EXPECT_FALSE(s.ok) << line;
    EXPECT_EQ(s.st, state::skipped) << line;
    EXPECT_NE(s.reason.find("CUDA: no device: "), std::string::npos) << s.reason;
  }
  EXPECT_NE(b->version().find("no device"), std::string::npos) << b->version();
#endif
}

TEST(cuda_backend, refuses_what_it_cannot_map_naming_it) {
#ifndef OPVAL_HAVE_CUDA
  GTEST_SKIP() << "opval was built without CUDA";
#else
  auto b = opval::make_backend("cuda");
  const auto refusal = [&](const char* line) { return opval::testing::unimplemented_reason(*b, line); };
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 residual=1 dt=f32").find("residual"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 act=gelu dt=f32").find("tanh"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 act=silu dt=f32").find("silu"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=u8xi8:i32:f32").find("u8xi8:i32:f32"), std::string::npos);
  EXPECT_NE(refusal("matmul m=4 n=4 k=4 dt=f32 dst_round=rz").find("nearest"), std::string::npos);
  EXPECT_NE(refusal("softmax shape=4x8 dt=f32").find("cuda backend: no softmax kernel (it runs matmul, conv2d)"), std::string::npos);
  if (b->version().find("without cuDNN") != std::string::npos) {
    EXPECT_NE(refusal("conv2d ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 dt=f32").find("without cuDNN"), std::string::npos);
  } else {
    EXPECT_NE(refusal("conv2d ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 pt=1 dt=f32").find("asymmetric"), std::string::npos);
    EXPECT_NE(refusal("conv2d ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 bias=1 act=gelu_tanh dt=f32").find("relu only"),
              std::string::npos);
    EXPECT_NE(refusal("conv2d ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 residual=1 dt=f32").find("residual"), std::string::npos);
    EXPECT_NE(refusal("conv2d ic=3 oc=4 ih=5 iw=6 dt=f16:f32:f32").find("f16:f32:f32"), std::string::npos);
  }
#endif
}

TEST(cuda_backend, cli_run_without_a_device_prints_skipped_cases_and_says_none_ran) {
#if !defined(OPVAL_HAVE_CUDA) || !defined(OPVAL_CLI_PATH)
  GTEST_SKIP() << "opval was built without CUDA";
#else
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a CUDA device";
  const auto r = opval::testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
                                         {"run", "--backend", "cuda", "--op", "matmul", "--tag", "smoke"});
  // All skipped is exit code 1 with "no case ran" (tools/opval/main.cpp): nothing was validated.
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("SKIPPED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA: no device"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PASSED"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no case ran"), std::string::npos) << r.err;
#endif
}

TEST(cuda_backend, matmul_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("matmul", "cublasLtMatmul", 20); }
TEST(cuda_backend, conv2d_suites_pass_or_are_refused_with_a_reason) { expect_suite_ok("conv2d", "cudnn", 10); }

TEST(cuda_backend, strided_broadcast_batches_epilogues_and_contracts_pass) {
  CUDA_BACKEND_OR_SKIP(b);
  for (const char* line : {"matmul m=6 n=5 k=7 batch_a=2x1 batch_b=3 ta=1 tb=1 lda=9 ldb=8 beta=0.5 ldc=6 dt=f32",
                           "matmul m=33 n=17 k=129 batch_a=4 batch_b=4 bias=1 act=relu dt=bf16:f32:bf16",
                           "matmul m=64 n=48 k=33 alpha=0.5 bias=1 act=gelu_tanh dt=f16:f32:f16",
                           "matmul m=63 n=65 k=127 dt=tf32", "matmul m=17 n=9 k=33 dt=f64",
                           "conv2d ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 g=4 sh=2 sw=2 layout=nhwc dt=f32",
                           "conv2d ic=4 oc=6 ih=12 iw=11 kh=3 kw=3 dh=2 dw=2 pt=2 pb=2 pl=2 pr=2 bias=1 act=relu dt=f32"}) {
    const case_result r = opval::run_case(opval::parse_problem(line), *b, {});
    EXPECT_EQ(r.v.st, state::passed) << line << ": " << r.v.reason << "\n  " << r.exec.implementation;
  }
}

TEST(cuda_backend, records_the_algorithm_and_compute_type) {
  CUDA_BACKEND_OR_SKIP(b);
  const case_result r = opval::run_case(opval::parse_problem("matmul m=63 n=65 k=127 dt=tf32"), *b, {});
  EXPECT_NE(r.exec.implementation.find("CUBLAS_COMPUTE_32F_FAST_TF32"), std::string::npos) << r.exec.implementation;
  EXPECT_NE(r.exec.implementation.find("algo "), std::string::npos) << r.exec.implementation;
  EXPECT_TRUE(r.times.device_kernel > 0) << "CUDA events timed the kernel";
}

// A planted bug: the f32 problem run as tf32 (as a library that silently enables TF32 would),
// while opval judges it by the f32 contract.
class tf32_under_f32_backend final : public backend {
 public:
  explicit tf32_under_f32_backend(std::unique_ptr<backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "cuda_tf32_leak"; }
  std::string version() const override { return inner_->version(); }
  opval::support supports(const opval::problem& p) const override { return inner_->supports(as_tf32(p)); }
  void prepare(const opval::problem& p, std::span<const opval::tensor> in, std::span<opval::tensor> out) override {
    inner_->prepare(as_tf32(p), in, out);
  }
  opval::execution_info execute(const opval::problem& p, std::span<const opval::tensor> in,
                                std::span<opval::tensor> out) override {
    return inner_->execute(as_tf32(p), in, out);
  }
  std::optional<double> synchronize(std::span<opval::tensor> out) override { return inner_->synchronize(out); }

 private:
  static opval::problem as_tf32(opval::problem p) {
    p.dt = opval::parse_contract_types("tf32");
    return p;
  }
  std::unique_ptr<backend> inner_;
};

TEST(cuda_backend, planted_tf32_under_an_f32_contract_fails) {
  CUDA_BACKEND_OR_SKIP(b);
  if (const char* v = std::getenv("NVIDIA_TF32_OVERRIDE"); v && std::string(v) == "0")
    GTEST_SKIP() << "NVIDIA_TF32_OVERRIDE=0 disables the TF32 this test plants";
  tf32_under_f32_backend leaky(std::move(b));
  const case_result r = opval::run_case(opval::parse_problem("matmul m=64 n=64 k=512 dt=f32"), leaky, {});
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
}

}  // namespace
