// The session's option table (opval/session.hpp) is the one description of every option: the
// CLI registers its options from it (tests/cpp/test_cli.cpp checks the help against
// docs/CLI.md), the worker protocol sends the per-case ones from it (checked here, option by
// option), and the Python keywords follow it (tests/python/test_options.py).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/worker_protocol.hpp"
#include "opval/session.hpp"

namespace {

using namespace opval;

template <class T>
std::string reading(const T& v) {
  if constexpr (std::is_same_v<T, policy>) return v.to_string();
  else if constexpr (std::is_same_v<T, guard_side>) return v == guard_side::before ? "before" : "after";
  else return ::testing::PrintToString(v);
}

/// Changes the field `d` describes to a value other than its default; returns how that value
/// reads, to compare with after a round trip.
std::string change(session_plan& plan, const option_def& d) {
  return std::visit(
      [&]<class T>(plan_field<T> field) -> std::string {
        T& v = field(plan);
        if constexpr (std::is_same_v<T, bool>) v = !v;
        else if constexpr (std::is_same_v<T, int>) v = v + 2;
        else if constexpr (std::is_same_v<T, double>) v = v + 2.5;
        else if constexpr (std::is_same_v<T, std::uint64_t>) v = 0xfedcba9876543210ull;
        else if constexpr (std::is_same_v<T, std::vector<int>>) v = {3, 1};
        else if constexpr (std::is_same_v<T, policy>) v = parse_policy("fixed:rtol=0.125,atol=3e-07");
        else if constexpr (std::is_same_v<T, guard_side>) v = guard_side::before;
        else if constexpr (std::is_same_v<T, std::string>) v = std::string(d.choices.substr(d.choices.rfind(' ') + 1));
        else ADD_FAILURE() << d.flag << ": a per-case option of a type this test cannot change";
        return reading(field(plan));
      },
      d.field);
}

std::string read(session_plan& plan, const option_def& d) {
  return std::visit([&](auto field) { return reading(field(plan)); }, d.field);
}

TEST(session_options, every_per_case_option_reaches_the_worker) {
  const located_problem lp{parse_problem("relu shape=8"), "test"};
  for (const option_def& d : session_option_table()) {
    if (d.stage != option_stage::per_case) continue;
    session_plan plan;
    const std::string before = read(plan, d);
    const std::string set = change(plan, d);
    ASSERT_NE(set, before) << d.flag;
    const auto got = std::get<detail::case_request>(
        detail::parse_worker_request(detail::request_line(lp, {"sim", ""}, plan.run)));
    session_plan received;
    received.run = got.opts;
    EXPECT_EQ(read(received, d), set) << d.flag << " is lost on the way to the worker";
  }
}

TEST(session_options, flags_and_keywords_are_unique_and_per_case_options_have_a_keyword) {
  // A flag once per command (bench's --budget per case and run's --budget for the whole run
  // are two options of different commands).
  std::set<std::pair<std::string_view, unsigned>> flags;
  std::set<std::string_view> keywords;
  for (const option_def& d : session_option_table()) {
    for (unsigned bit = 1; bit <= d.commands; bit <<= 1)
      if (d.commands & bit) EXPECT_TRUE(flags.insert({d.flag, bit}).second) << d.flag << " is defined twice for one command";
    if (!d.keyword.empty()) EXPECT_TRUE(keywords.insert(d.keyword).second) << d.keyword << " is defined twice";
    if (d.stage == option_stage::per_case) EXPECT_FALSE(d.keyword.empty()) << d.flag;
    EXPECT_NE(d.commands, 0u) << d.flag << " belongs to no command";
    EXPECT_FALSE(d.help.empty()) << d.flag;
    const bool flag_type = std::holds_alternative<plan_field<bool>>(d.field) ||
                           std::holds_alternative<plan_field<guard_side>>(d.field);
    EXPECT_EQ(d.value_name.empty(), flag_type) << d.flag << ": a flag has no value name, a value has one";
    if (d.negated) EXPECT_TRUE(d.flag.starts_with("--no-")) << d.flag;
  }
}

const option_def& option(std::string_view flag, unsigned command = ~0u) {
  for (const option_def& d : session_option_table())
    if (d.flag == flag && (d.commands & command)) return d;
  throw std::runtime_error("no option " + std::string(flag));
}

// The library checks each value as the table says (the CLI's validator is this function).
TEST(session_options, values_are_checked_against_their_type_range_and_choices) {
  EXPECT_EQ(option_value_error(option("--worst"), "1000"), "");
  EXPECT_EQ(option_value_error(option("--worst"), "1001"), "expects an integer from 0 to 1000, got '1001'");
  EXPECT_NE(option_value_error(option("--worst"), "-1"), "");
  EXPECT_NE(option_value_error(option("--worst"), "2x"), "");
  EXPECT_EQ(option_value_error(option("--seed"), "18446744073709551615"), "");
  EXPECT_EQ(option_value_error(option("--seed"), "-1"),
            "expects an integer from 0 to 18446744073709551615, got '-1'");  // never wrapped into 64 bits
  EXPECT_NE(option_value_error(option("--seed"), "18446744073709551616"), "");
  EXPECT_EQ(option_value_error(option("--timeout"), "0.0005"), "");
  EXPECT_EQ(option_value_error(option("--timeout"), "0"), "expects a number above 0, got '0'");
  EXPECT_NE(option_value_error(option("--timeout"), "nan"), "");
  EXPECT_EQ(option_value_error(option("--threads"), "4096"), "");  // a list's element
  EXPECT_NE(option_value_error(option("--threads"), "0"), "");
  EXPECT_EQ(option_value_error(option("--isolation"), "none"), "");
  EXPECT_EQ(option_value_error(option("--isolation"), "thread"), "expects one of: process none, got 'thread'");
  EXPECT_EQ(option_value_rule(option("--leak-check")), "an integer from 0 to 1000");
}

/// docs/CLI.md's option tables name each option as `--flag VALUE` (a `|` escaped as `\|`).
TEST(session_options, docs_cli_md_lists_every_option_with_its_value_name) {
  std::ifstream in(std::string(OPVAL_SOURCE_DIR) + "/docs/CLI.md");
  std::stringstream docs;
  docs << in.rdbuf();
  ASSERT_FALSE(docs.str().empty());
  for (const option_def& d : session_option_table()) {
    std::string flag(d.flag.substr(d.flag.find("--")));
    std::string value;
    for (char c : d.value_name) value += c == '|' ? std::string("\\|") : std::string(1, c);
    const std::string shown = "`" + flag + (value.empty() ? "" : " " + value) + "`";
    EXPECT_NE(docs.str().find(shown), std::string::npos) << shown << " is not in docs/CLI.md";
  }
}

}  // namespace
