// CUDA kernels through the plugin ABI (opval_plugin_device = OPVAL_DEVICE_CUDA): the example
// cuda_softmax passes the softmax suites' f32 cases and declines the rest with reasons; its
// planted warp-reduction bug FAILS. Without a GPU its cases are SKIPPED with the runtime's
// message (checked here too), and device copies of strided tensors round-trip through any
// device runtime (checked with a host-memory stand-in).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend_testing.hpp"
#include "cli_testing.hpp"
#include "core/device.hpp"
#include "backends/plugin/plugin_backend.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace {

using opval::case_result;
using opval::state;

using opval::testing::cuda_unavailable_reason;

#if defined(OPVAL_CUDA_SOFTMAX)
#define CUDA_PLUGINS_OR_SKIP() (void)0
#else
#define OPVAL_CUDA_SOFTMAX ""
#define OPVAL_CUDA_SOFTMAX_BUGGY ""
#define CUDA_PLUGINS_OR_SKIP() GTEST_SKIP() << "the CUDA example plugins are not built (no CUDA toolkit)"
#endif

#define GPU_OR_SKIP()                                                              \
  CUDA_PLUGINS_OR_SKIP();                                                          \
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

TEST(cuda_plugin, declares_its_name_and_is_refused_as_skipped_without_a_device) {
  CUDA_PLUGINS_OR_SKIP();
  auto b = opval::load_plugin_backend(OPVAL_CUDA_SOFTMAX);
  EXPECT_EQ(b->name(), "plugin:cuda_softmax");
  // The plugin's own refusals come first: they hold on any machine.
  const opval::support other = b->supports(opval::parse_problem("softmax shape=4x8 dt=bf16:f32:bf16"));
  EXPECT_EQ(other.st, state::unimplemented);
  EXPECT_NE(other.reason.find("f32:f32:f32 only"), std::string::npos) << other.reason;
  if (!cuda_unavailable_reason().empty()) {
    const opval::support s = b->supports(opval::parse_problem("softmax shape=4x33 dt=f32"));
    EXPECT_EQ(s.st, state::skipped);
    EXPECT_EQ(s.reason, cuda_unavailable_reason());
  }
}

TEST(cuda_plugin, cli_run_without_a_device_skips_every_case) {
  CUDA_PLUGINS_OR_SKIP();
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a CUDA device";
  const auto r = opval::testing::run_cli(OPVAL_CLI_PATH, std::filesystem::temp_directory_path(),
                                         {"run", "--plugin", OPVAL_CUDA_SOFTMAX, "--op", "softmax", "--tag", "smoke"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // nothing ran: not a pass
  EXPECT_NE(r.out.find("SKIPPED"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PASSED"), std::string::npos) << r.out;
}

TEST(cuda_plugin, passes_every_f32_softmax_suite_case) {
  GPU_OR_SKIP();
  auto b = opval::load_plugin_backend(OPVAL_CUDA_SOFTMAX);
  int passed = 0;
  for (const char* tag : {"smoke", "regression"})
    for (const auto& lp : opval::suite_problems(tag, {"softmax"})) {
      const case_result r = opval::run_case(lp.prob, *b, {});
      if (lp.prob.dt == opval::parse_contract("f32")) {  // the plugin's one contract, default options
        EXPECT_EQ(r.v.st, state::passed) << r.descriptor << ": " << r.v.reason << "\n  " << r.repro;
        passed += r.v.st == state::passed;
        EXPECT_GT(r.times.device_kernel, 0) << "CUDA events timed the plugin's kernel";
      } else {
        EXPECT_EQ(r.v.st, state::unimplemented) << r.descriptor;
      }
    }
  EXPECT_GT(passed, 10);
}

TEST(cuda_plugin, planted_warp_reduction_bug_fails) {
  GPU_OR_SKIP();
  auto b = opval::load_plugin_backend(OPVAL_CUDA_SOFTMAX_BUGGY);
  const case_result r = opval::run_case(opval::parse_problem("softmax shape=4x100 dt=f32"), *b, {});
  EXPECT_EQ(r.v.st, state::failed) << r.v.reason;
  // One element per row is what a single lane holds: nothing to lose in the reduction.
  const case_result one = opval::run_case(opval::parse_problem("softmax shape=4x1 dt=f32"), *b, {});
  EXPECT_EQ(one.v.st, state::passed) << one.v.reason;
}

// A "device" in host memory: what device_mirror and the plugin backend rely on, checkable
// on any machine.
class host_device final : public opval::device_runtime {
 public:
  std::string description() const override { return "host stand-in"; }
  std::string unavailable_reason() const override { return ""; }
  void* allocate(std::size_t bytes) override {
    ++live;
    return ::operator new(bytes);
  }
  void deallocate(void* p) noexcept override {
    --live;
    ::operator delete(p);
  }
  void copy_to_device(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
  void* stream() override { return nullptr; }
  void synchronize() override {}
  void timer_start() override {}
  void timer_stop() override {}
  std::optional<double> elapsed_seconds() override { return std::nullopt; }
  int live = 0;
};

TEST(device_mirror, copies_the_strided_extent_with_its_padding_and_frees_it) {
  host_device dev;
  // A 3x4 f32 matrix with leading dimension 6: 2*6+4 = 16 elements from element 0 to the last.
  opval::tensor t(opval::dtype::f32, {3, 4}, opval::layout{opval::padded_strides({3, 4}, 6)});
  EXPECT_EQ(opval::storage_span_bytes(t), 16 * sizeof(float));
  for (std::int64_t i = 0; i < 16; ++i) t.data_as<float>()[i] = static_cast<float>(i);
  {
    opval::device_mirror mirror(dev);
    void* d = mirror.upload(t);
    EXPECT_EQ(dev.live, 1);
    static_cast<float*>(d)[7] = -1.0f;  // the "kernel" writes element (1, 1)
    static_cast<float*>(d)[4] = -2.0f;  // and a padding element, which comes back as well
    mirror.download(d, t);
  }
  EXPECT_EQ(dev.live, 0);
  EXPECT_EQ(t.get(std::vector<std::int64_t>{1, 1}), -1.0);
  EXPECT_EQ(t.data_as<float>()[4], -2.0f);
  EXPECT_EQ(t.data_as<float>()[15], 15.0f);
}

}  // namespace
