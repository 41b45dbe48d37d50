// Tolerance policies: the text form, its parameters and their checks, and printing back.
#include <gtest/gtest.h>

#include <string>

#include "opval/error.hpp"
#include "opval/policy.hpp"

namespace {

using opval::parse_policy;
using opval::policy;
using opval::policy_kind;
using opval::policy_description;
using opval::policy_descriptions;
using opval::policy_name;

void expect_same(const policy& a, const policy& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.false_alarm, b.false_alarm);
  EXPECT_EQ(a.random_data, b.random_data);
  EXPECT_EQ(a.sim_factor, b.sim_factor);
  EXPECT_EQ(a.rtol, b.rtol);
  EXPECT_EQ(a.atol, b.atol);
  EXPECT_EQ(a.bias_z, b.bias_z);
  EXPECT_EQ(a.bias_min_ulps, b.bias_min_ulps);
}

TEST(policy, kinds_with_default_parameters) {
  const policy defaults;
  const struct {
    const char* text;
    policy_kind kind;
  } cases[] = {{"bound", policy_kind::bound},
               {"relative-to-sim", policy_kind::relative_to_sim},
               {"exact", policy_kind::exact},
               {"fixed", policy_kind::fixed}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    policy expected = defaults;
    expected.kind = c.kind;
    expect_same(parse_policy(c.text), expected);
    EXPECT_EQ(opval::policy_name(c.kind), c.text);
  }
  EXPECT_EQ(defaults.kind, policy_kind::bound);
}

TEST(policy, parameters) {
  const policy b = parse_policy("bound:false_alarm=1e-9");
  EXPECT_EQ(b.kind, policy_kind::bound);
  EXPECT_EQ(b.false_alarm, 1e-9);
  EXPECT_TRUE(b.random_data);
  const policy ordered = parse_policy("bound:false_alarm=1e-9,random_data=0");
  EXPECT_FALSE(ordered.random_data);
  EXPECT_EQ(ordered.false_alarm, 1e-9);
  EXPECT_TRUE(parse_policy("bound:random_data=1").random_data);
  const policy r = parse_policy("relative-to-sim:m=3");
  EXPECT_EQ(r.kind, policy_kind::relative_to_sim);
  EXPECT_EQ(r.sim_factor, 3.0);
  EXPECT_EQ(parse_policy("relative-to-sim:m=1").sim_factor, 1.0);
  const policy f = parse_policy("fixed:rtol=1e-3,atol=1e-5");
  EXPECT_EQ(f.kind, policy_kind::fixed);
  EXPECT_EQ(f.rtol, 1e-3);
  EXPECT_EQ(f.atol, 1e-5);
  // One parameter alone leaves the other at its default; zero tolerances are allowed.
  const policy defaults;
  EXPECT_EQ(parse_policy("fixed:atol=0").atol, 0.0);
  EXPECT_EQ(parse_policy("fixed:atol=0").rtol, defaults.rtol);
  EXPECT_EQ(parse_policy("fixed:rtol=0.25").rtol, 0.25);
  EXPECT_EQ(parse_policy("fixed:rtol=0.25").atol, defaults.atol);
  // Other kinds' fields keep their defaults.
  EXPECT_EQ(f.false_alarm, defaults.false_alarm);
  EXPECT_EQ(b.sim_factor, defaults.sim_factor);
}

TEST(policy, to_string_round_trips) {
  for (const char* text : {"bound", "bound:false_alarm=1e-9", "bound:false_alarm=1.2345678901234e-7", "bound:random_data=0",
                           "relative-to-sim", "relative-to-sim:m=3", "relative-to-sim:m=1.0000001",
                           "exact", "fixed", "fixed:rtol=1e-3,atol=1e-5",
                           "fixed:rtol=0.333333333333,atol=7.77777777e-9", "fixed:atol=0"}) {
    SCOPED_TRACE(text);
    const policy p = parse_policy(text);
    const std::string printed = p.to_string();
    EXPECT_EQ(printed.rfind(std::string(opval::policy_name(p.kind)), 0), 0u) << printed;
    expect_same(parse_policy(printed), p);
    EXPECT_EQ(parse_policy(printed).to_string(), printed);
  }
  EXPECT_EQ(parse_policy("exact").to_string(), "exact");
  EXPECT_EQ(parse_policy("bound").to_string(), "bound:false_alarm=1e-06");
  EXPECT_EQ(parse_policy("bound:random_data=0").to_string(), "bound:false_alarm=1e-06,random_data=0");
  EXPECT_EQ(parse_policy("relative-to-sim:m=3").to_string(), "relative-to-sim:m=3");
}

TEST(policy, errors) {
  for (const char* bad : {"", "bounds", "Bound", "relative_to_sim", "bound:bogus=1", "bound:m=3",
                          "bound:rtol=1e-3", "relative-to-sim:false_alarm=1e-9", "fixed:m=2",
                          "exact:rtol=0", "bound:false_alarm=abc", "bound:false_alarm=",
                          "fixed:rtol=1e-3x", "fixed:rtol=-1", "bound:false_alarm=0",
                          "bound:false_alarm=1", "bound:false_alarm=1.5", "relative-to-sim:m=0.5",
                          "relative-to-sim:m=0", "fixed:rtol", "fixed:rtol=1e-3,,atol=1",
                          "fixed:rtol=1e-3,atol", "bound:random_data=2", "bound:random_data=0.5",
                          "relative-to-sim:random_data=0"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_policy(bad), opval::error);
  }
}

TEST(policy, error_messages_name_the_bad_part) {
  auto message = [](const char* text) {
    try {
      parse_policy(text);
    } catch (const opval::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("bounds").find("bounds"), std::string::npos);
  EXPECT_NE(message("bounds").find("relative-to-sim"), std::string::npos);  // lists the known ones
  EXPECT_NE(message("bound:m=3").find("m=3"), std::string::npos);
  EXPECT_NE(message("fixed:rtol=abc").find("rtol"), std::string::npos);
  EXPECT_NE(message("bound:false_alarm=2").find("false_alarm"), std::string::npos);
}

TEST(policy, every_kind_is_described_by_a_syntax_that_parses) {
  const auto descriptions = policy_descriptions();
  ASSERT_EQ(descriptions.size(), 4u);
  for (std::size_t i = 0; i < descriptions.size(); ++i) {
    const policy_description& d = descriptions[i];
    EXPECT_EQ(static_cast<std::size_t>(d.kind), i);
    EXPECT_TRUE(d.syntax.starts_with(policy_name(d.kind))) << d.syntax;
    EXPECT_FALSE(d.meaning.empty());
    // The syntax without its optional part, and with example values, is a policy of its kind.
    std::string text(d.syntax.substr(0, d.syntax.find('[')));
    if (d.kind == policy_kind::fixed) text = "fixed:rtol=1e-3,atol=1e-6";
    EXPECT_EQ(parse_policy(text).kind, d.kind) << text;
  }
}

}  // namespace
