// One benchmark case: a correct kernel is checked, then timed, with GFLOP/s and GB/s from the
// op's counts; a wrong or refusing one is not timed at all; set-up runs once, outside the
// timing; cold mode flushes before every sample and runs one call per sample.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "bench/bench.hpp"
#include "bench/cache_flush.hpp"
#include "ops/op_testing.hpp"

namespace opval {
namespace {

using testing::function_backend;

// The sim, counting its prepare and execute calls.
class counting_sim final : public backend {
 public:
  std::string name() const override { return "counting_sim"; }
  std::string version() const override { return "test"; }
  support supports(const problem&) const override { return support::yes(); }
  void prepare(const problem&, std::span<const tensor>, std::span<tensor>) override { ++prepares; }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    ++executes;
    p.spec().simulate(p, in, out);
    return {"sim", ""};
  }
  int prepares = 0, executes = 0;
};

bench_options quick() {
  bench_options o;
  o.sampling.budget_seconds = 0.3;
  o.sampling.warmup_seconds = 0.01;
  return o;
}

TEST(bench_case, a_correct_kernel_is_checked_then_timed_with_derived_figures) {
  counting_sim sim;
  const problem p = parse_problem("matmul m=32 n=32 k=32 dt=f32");
  const bench_result r = bench_case(p, sim, quick());
  ASSERT_EQ(r.check.v.st, state::passed) << r.check.v.reason;
  ASSERT_TRUE(r.timed);
  EXPECT_EQ(r.check.descriptor, p.to_string()) << "the same case identity as `run`";
  EXPECT_GE(r.timing.samples.size(), 2u);
  const op_counts c = p.spec().counts(p);
  EXPECT_DOUBLE_EQ(r.counts.flops, c.flops);
  EXPECT_DOUBLE_EQ(r.gflops, c.flops / r.timing.summary.median / 1e9);
  EXPECT_DOUBLE_EQ(r.gbytes_per_second, c.bytes / r.timing.summary.median / 1e9);
  EXPECT_DOUBLE_EQ(r.intensity, c.flops / c.bytes);
  EXPECT_EQ(r.cache, "hot");
}

TEST(bench_case, set_up_runs_once_outside_the_timed_calls) {
  counting_sim sim;
  const problem p = parse_problem("relu shape=1000 dt=f32");
  bench_options o = quick();
  o.check.perturb_check = false;
  o.check.poison_check = false;
  const bench_result r = bench_case(p, sim, o);
  ASSERT_TRUE(r.timed);
  EXPECT_EQ(sim.prepares, 2) << "one for the check's single run, one for the timing";
  EXPECT_GT(sim.executes, static_cast<int>(r.timing.samples.size() * r.timing.batch));
}

TEST(bench_case, a_wrong_or_refusing_kernel_is_not_timed) {
  auto buggy = std::make_shared<function_backend>("buggy", [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    out[0].set_at(0, out[0].at(0) + 1);
  });
  const bench_result wrong = bench_case(parse_problem("matmul m=8 n=8 k=8 dt=f32"), *buggy, quick());
  EXPECT_EQ(wrong.check.v.st, state::failed);
  EXPECT_FALSE(wrong.timed);
  EXPECT_TRUE(wrong.timing.samples.empty());
  EXPECT_EQ(wrong.gflops, 0);

  auto refusing = std::make_shared<function_backend>(
      "refusing", [](const problem&, std::span<const tensor>, std::span<tensor>) {},
      [](const problem&) { return support::unimplemented("no such kernel"); });
  const bench_result skipped = bench_case(parse_problem("relu shape=8"), *refusing, quick());
  EXPECT_EQ(skipped.check.v.st, state::unimplemented);
  EXPECT_FALSE(skipped.timed);
}

TEST(bench_case, cold_mode_flushes_before_every_sample_one_call_each) {
  counting_sim sim;
  bench_options o = quick();
  o.cache = cache_mode::cold;
  o.flush_bytes = 4 << 20;
  const bench_result r = bench_case(parse_problem("relu shape=4096 dt=f32"), sim, o);
  ASSERT_TRUE(r.timed);
  EXPECT_EQ(r.timing.batch, 1u);
  EXPECT_EQ(r.cache, "cold (flushing 4 MiB)");
}

TEST(cache_flusher, defaults_to_twice_the_last_level_cache) {
  const std::size_t llc = last_level_cache_bytes();
  const cache_flusher f;
  EXPECT_EQ(f.bytes(), llc ? 2 * llc : std::size_t{64} << 20);
  cache_flusher small(1 << 20);
  small.flush();
  EXPECT_EQ(small.bytes(), std::size_t{1} << 20);
}

}  // namespace
}  // namespace opval
