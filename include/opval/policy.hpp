#pragma once
// How a result is judged. Always recorded with the verdict.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace opval {

enum class policy_kind : std::uint8_t { bound, relative_to_sim, exact, fixed };

/// A tolerance policy and its parameters. Text: `bound`, `bound:false_alarm=1e-9`,
/// `bound:random_data=0`,
/// `relative-to-sim`, `relative-to-sim:m=3`, `exact`, `fixed:rtol=1e-3,atol=1e-5`.
struct policy {
  policy_kind kind = policy_kind::bound;
  double false_alarm = 1e-6;  ///< bound: per-case false-alarm rate of the probabilistic gamma
  bool random_data = true;    ///< bound: the sharper bound for sums of random-sign fills
  double sim_factor = 2.0;    ///< relative-to-sim: m
  double rtol = 1e-5;         ///< fixed
  double atol = 1e-8;         ///< fixed
  double bias_z = 6.0;        ///< bias test: |z| beyond this (and the effect size) fails
  double bias_min_ulps = 0.1; ///< bias test: smallest mean offset (ULPs) that counts as bias

  std::string to_string() const;
};

/// Parses the text form; throws opval::error naming the bad part.
policy parse_policy(std::string_view text);
/// The name of a policy kind, as its text starts ("bound", "relative-to-sim", ...).
std::string_view policy_name(policy_kind k);

/// One policy's syntax and what it does, for `opval list policies`.
struct policy_description {
  policy_kind kind;
  std::string_view syntax;
  std::string_view meaning;
};
/// Every policy kind's description, in the order of policy_kind.
std::span<const policy_description> policy_descriptions();

}  // namespace opval
