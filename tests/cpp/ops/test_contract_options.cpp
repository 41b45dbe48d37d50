// The contract options each op reads (op_spec::contract_options, docs/NUMERICS.md): an option
// an op declares changes its contract-exact simulation or its bound on some problem of its
// suites (a declaration is not decoration), and one it does not declare is bad input naming
// the options it takes, never written silently into a descriptor that promises nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_testing.hpp"

namespace opval {
namespace {

using testing::direct_case;
using testing::run_direct;

// One non-default value of each option; an ulp function gets a figure far from its default.
std::string setting(std::string_view option) {
  if (option == "mid") return "mid=bf16";
  if (option.starts_with("ulp:")) return "ulp=" + std::string(option.substr(4)) + ":7";
  if (option == "denorm") return "denorm=ftz";
  return std::string(option) + "=rz";
}

bool differs(const direct_case& a, const direct_case& b) {
  for (std::size_t i = 0; i < a.out.size(); ++i)
    if (!a.out[i].bitwise_equal(b.out[i])) return true;
  for (std::size_t i = 0; i < a.bounds.size(); ++i)
    if (!a.bounds[i].compute.empty() && !a.bounds[i].compute.bitwise_equal(b.bounds[i].compute)) return true;
  return false;
}

TEST(ContractOptions, EachOptionAnOpDeclaresChangesItsSimulationOrItsBound) {
  for (const op_spec* op : all_ops()) {
    std::vector<std::string> lines = op->suite("smoke");
    for (const std::string& line : op->suite("regression")) lines.push_back(line);
    for (std::string_view option : op->contract_options()) {
      const std::string set = setting(option);
      const std::string key = set.substr(0, set.find('='));
      bool changed = false;
      for (std::size_t i = 0; i < lines.size() && i < 300 && !changed; ++i) {
        if (lines[i].find(" " + key + "=") != std::string::npos) continue;
        try {
          changed = differs(run_direct(parse_problem(lines[i])), run_direct(parse_problem(lines[i] + " " + set)));
        } catch (const error&) {
          // a contract that has no such option (in_round without a math type)
        }
      }
      EXPECT_TRUE(changed) << op->name() << " declares " << option << " but " << set
                           << " changes neither its simulation nor its bound on its suites";
    }
  }
}

TEST(ContractOptions, AnOptionTheOpDoesNotReadIsBadInputNamingTheOnesItTakes) {
  const std::pair<const char*, const char*> refused[] = {
      {"matmul m=4 n=5 k=3 mid=f16", "matmul does not use the contract option mid (its contract options: deterministic"},
      {"relu shape=8 acc_round=rz", "relu does not use the contract option acc_round (its contract options: deterministic denorm)"},
      {"relu shape=8 ulp=exp:3", "relu does not use the accuracy of exp (ulp=exp:3;"},
      {"gelu shape=8 ulp=erf:3,rsqrt:2", "gelu does not use the accuracy of rsqrt"},
      {"max_pool2d mb=1 c=1 ulp=cuda", "max_pool2d does not use an elementary function (ulp=cuda;"},
      {"softmax shape=4x8 in_round=rz", "softmax does not use the contract option in_round"},
  };
  for (const auto& [line, message] : refused) {
    SCOPED_TRACE(line);
    try {
      parse_problem(line);
      ADD_FAILURE() << "accepted";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  for (const char* line : {"relu shape=8 denorm=ftz deterministic=0", "attention b=1 h=1 lq=2 lk=3 d=4 dt=bf16 mid=bf16",
                           "layer_norm shape=2x8 mid=bf16 ulp=rsqrt:3", "gelu shape=8 ulp=opencl"})
    EXPECT_NO_THROW(parse_problem(line)) << line;
}

TEST(ContractOptions, EveryOpsSuitesUseOnlyTheOptionsItReads) {
  for (const op_spec* op : all_ops())
    for (const char* tag : {"smoke", "regression"})
      for (const std::string& line : op->suite(tag)) EXPECT_NO_THROW(parse_problem(line)) << line;
}

}  // namespace
}  // namespace opval
