// Backends dispatch by a table of per-op handlers (src/backends/op_handlers.hpp): an op a
// backend has no handler for is UNIMPLEMENTED naming what it runs, never run as another op
// (the trap of a chain whose last case is a default). Checked for every registered op on every
// library backend built here, so adding an op needs no backend edit for this to hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/op_handlers.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/runner.hpp"

namespace opval {
namespace {

TEST(OpHandlers, FindsByOpNameAndNamesWhatItRunsOtherwise) {
  const detail::op_handlers<int> table("demo", {{"matmul", 1}, {"softmax", 2}});
  EXPECT_EQ(*table.find(parse_problem("softmax shape=4x8")), 2);
  const problem relu = parse_problem("relu shape=8");
  EXPECT_EQ(table.find(relu), nullptr);
  const support s = table.unimplemented(relu);
  EXPECT_EQ(s.st, state::unimplemented);
  EXPECT_EQ(s.reason, "demo backend: no relu kernel (it runs matmul, softmax)");
  EXPECT_THROW((void)table.at(relu), error);
}

TEST(OpHandlers, AnEntryNamingNoOpIsAnError) {
  EXPECT_THROW(detail::op_handlers<int>("demo", {{"matmull", 1}}), error);
}

// The ops each library backend runs; every other registered op must be refused by name.
const std::map<std::string, std::set<std::string>>& runs() {
  static const std::map<std::string, std::set<std::string>> table{
      {"onednn", {"matmul", "conv2d", "layer_norm", "reduce", "softmax", "log_softmax", "relu", "gelu", "silu", "add",
                  "mul", "max_pool2d", "avg_pool2d", "global_avg_pool"}},
      {"onednn_winograd", {"conv2d"}},
      {"openblas", {"matmul"}},
      {"opencl", {"matmul", "softmax", "layer_norm"}},
      {"cuda", {"matmul", "conv2d"}}};
  return table;
}

TEST(OpHandlers, EveryOpABackendDoesNotNameIsUnimplementedByName) {
  const std::vector<std::string> built = backend_names();
  int checked = 0;
  for (const auto& [name, ops] : runs()) {
    if (std::find(built.begin(), built.end(), name) == built.end()) continue;
    const std::unique_ptr<backend> b = make_backend(name);
    for (const op_spec* spec : all_ops()) {
      if (ops.contains(std::string(spec->name()))) continue;
      for (const std::string& line : spec->suite("smoke")) {
        const support s = b->supports(parse_problem(line));
        EXPECT_EQ(s.st, state::unimplemented) << name << " on " << line << ": " << s.reason;
        EXPECT_NE(s.reason.find("no " + std::string(spec->name()) + " kernel"), std::string::npos) << s.reason;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace opval
