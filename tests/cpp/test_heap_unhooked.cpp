// Memory accounting in a program without the allocator hooks (libopval used as a library, as
// this test and the Python module do): nothing is measured, the leak check says it could not
// run, and no case fails for it. test_heap covers the program with the hooks.
#include <gtest/gtest.h>

#include "core/heap_stats.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

TEST(HeapUnhooked, NothingIsMeasured) {
  EXPECT_NE(heap_hooks_unavailable_reason().find("no allocator hooks"), std::string::npos)
      << heap_hooks_unavailable_reason();
  heap_section s;
  delete new int(1);
  EXPECT_FALSE(s.finish().measured);
}

TEST(HeapUnhooked, LeakCheckSaysWhyItDidNotRunAndTheCaseStillPasses) {
  run_options o;
  o.leak_check = 3;
  const case_result r = run_case(parse_problem("matmul m=4 n=5 k=3"), *make_sim_backend(), o);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
  EXPECT_FALSE(r.memory.run.kernel.measured);
  EXPECT_FALSE(r.memory.leak.leaks);
  EXPECT_EQ(r.memory.leak.finding.rfind("not checked: no allocator hooks", 0), 0u) << r.memory.leak.finding;
  EXPECT_TRUE(r.memory.run.kernel_rss_delta.has_value()) << "the resident set is measured without hooks";
}

}  // namespace
}  // namespace opval
