// The tolerance policies (core/tolerance_policy.hpp) and their descriptions.
#include "core/tolerance_policy.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/timed.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"

namespace opval::detail {
namespace {

double max_abs_finite(const tensor& ref) {
  const double* r = ref.data_as<double>();
  double m = 0;
  for (std::int64_t i = 0, n = ref.numel(); i < n; ++i)
    if (std::isfinite(r[i])) m = std::max(m, std::fabs(r[i]));
  return m;
}

// Why the rounding-bias test does not apply to an output judged by its bound ("" if it does).
std::string bias_exemption(const contract& c, const fill_traits& f, const error_bound& eb) {
  if (!is_float(c.dst)) return "integer outputs lie on a grid as coarse as their ULP";
  if (c.dst_round != rounding::rne) return "the contract promises directed output rounding";
  if (eb.directed_rounding) return "the problem asks for directed output rounding";
  if (f.repeated_values) return "the fill repeats values, so rounding errors are not independent";
  return {};
}

judgement judge_by_bound(const error_bound& eb, const tensor& ref, const contract& c) {
  judgement j;
  const double* comp = eb.compute.data_as<double>();
  const rounding r = judged_rounding(c, eb);
  j.total = map_reference(ref, [&](std::int64_t i, double x) {
    return comp[i] + output_rounding_bound(c.dst, r, c.denorm, x);
  });
  j.compute = eb.compute;
  j.bound_text = eb.formula + " + output rounding to " + std::string(to_string(c.dst)) +
                 (eb.directed_rounding ? " (directed: one ulp)" : r == rounding::rz ? " (rz)" : "");
  return j;
}

judgement judge_by_constant(std::string text) {
  judgement j;
  j.bound_text = std::move(text);
  j.bias_skip = "the policy has no per-element error model to tell rounding-dominated elements";
  return j;
}

// sim's largest error on each output: relative-to-sim's yardstick.
class sim_yardstick {
 public:
  sim_yardstick(const judging_input& in, contract_emulation& sim) : in_(in), sim_(sim) {}
  double error(std::size_t i) {
    compare_input ci{.got = &sim_.outputs()[i], .expected = &in_.refs[i], .ulp_type = in_.p.dt.dst, .worst_k = 0,
                     .bias_test = false, .bias_skip_reason = "a yardstick, not a verdict"};
    return compare_outputs(ci).max_abs_error;
  }

 private:
  const judging_input& in_;
  contract_emulation& sim_;
};

// |err| <= m * max(sim's error, u_dst * max|ref|).
judgement relative_to_sim(const judging_input& in, sim_yardstick& sim, std::size_t i, double m) {
  const tensor& ref = in.refs[i];
  const double floor_ = traits(in.p.dt.dst).unit_roundoff * max_abs_finite(ref);
  const double sim_err = sim.error(i);
  const double threshold = m * std::max(sim_err, floor_);
  judgement j = judge_by_constant(fmt::format("relative-to-sim: |err| <= {:g} * max(sim max err {:.3g}, "
                                              "u_out*max|ref| {:.3g}) = {:.3g}", m, sim_err, floor_, threshold));
  j.total = map_reference(ref, [&](std::int64_t, double) { return threshold; });
  return j;
}

class exact_policy final : public tolerance_policy {
 public:
  static constexpr policy_description description{policy_kind::exact, "exact",
                                                  "bitwise equal to the rounded fp64 reference"};
  explicit exact_policy(const judging_input& in) : in_(in) {}
  judgement of(std::size_t i, const std::string&) override {
    judgement j = judge_by_constant("exact (bitwise)");
    j.total = map_reference(in_.refs[i], [](std::int64_t, double) { return 0.0; });
    return j;
  }
  bool widens_for_reference() const override { return false; }

 private:
  const judging_input& in_;
};

class fixed_policy final : public tolerance_policy {
 public:
  static constexpr policy_description description{policy_kind::fixed, "fixed:rtol=R,atol=A",
                                                  "|err| <= A + R * |ref| (a guessed tolerance, for comparison)"};
  fixed_policy(const judging_input& in, const policy& p) : in_(in), rtol_(p.rtol), atol_(p.atol) {}
  judgement of(std::size_t i, const std::string&) override {
    judgement j = judge_by_constant(fmt::format("fixed: atol {:g} + rtol {:g} * |ref|", atol_, rtol_));
    j.total = map_reference(in_.refs[i], [&](std::int64_t, double x) { return atol_ + rtol_ * std::fabs(x); });
    return j;
  }
  bool widens_for_reference() const override { return false; }

 private:
  const judging_input& in_;
  double rtol_, atol_;
};

class relative_to_sim_policy final : public tolerance_policy {
 public:
  static constexpr policy_description description{
      policy_kind::relative_to_sim, "relative-to-sim[:m=M]",
      "|err| <= M * max(error of the contract-exact sim, u_dst * max|ref|), M default 2"};
  relative_to_sim_policy(const judging_input& in, const policy& p, contract_emulation& sim)
      : in_(in), sim_(in, sim), m_(p.sim_factor) {}
  judgement of(std::size_t i, const std::string&) override { return relative_to_sim(in_, sim_, i, m_); }

 private:
  const judging_input& in_;
  sim_yardstick sim_;
  double m_;
};

// Where an output's bound is not meaningful (n*u_acc >= 1/2: it would pass anything), that
// output is judged relative-to-sim at the default m, and the policy's note says so.
class bound_policy final : public tolerance_policy {
 public:
  static constexpr policy_description description{
      policy_kind::bound, "bound[:false_alarm=P][,random_data=0]",
      "default: per-element bound from the op's error analysis of the contract (P: allowed false-alarm rate of "
      "the probabilistic bound, default 1e-6; random_data=0: no sharper bound for sums of random-sign fills, "
      "for a kernel whose order of additions depends on the values)"};
  bound_policy(const judging_input& in, const policy& p, case_result& r, contract_emulation& sim)
      : in_(in), sim_(in, sim), r_(r) {
    const bound_options bo{p.false_alarm, p.random_data};
    const op_spec& spec = in.p.spec();
    bounds_ = timed(phase::bound, r.times.bound, [&] { return spec.bound(in.p, in.ft, bo, in.ins, in.refs); });
    if (bounds_.size() != in.outs.size())
      throw error(fmt::format("{} returned {} bounds for {} outputs", spec.name(), bounds_.size(), in.outs.size()));
    // An output the op stores in another float type than dst (layer_norm's statistics, in acc)
    // is rounded to that type: the op's declared type, not the tensor's, which a caller of
    // judge() may hand over widened (a stack's f16 values as f32).
    for (const operand& o : spec.outputs(in.p)) {
      contract c = in.p.dt;
      if (is_float(o.type)) c.dst = o.type;
      output_contracts_.push_back(c);
    }
  }
  judgement of(std::size_t i, const std::string& output) override {
    if (bounds_[i].meaningful) {
      judgement j = judge_by_bound(bounds_[i], in_.refs[i], output_contracts_.at(i));
      j.bias_skip = bias_exemption(in_.p.dt, in_.ft, bounds_[i]);
      return j;
    }
    const double m = policy{}.sim_factor;
    r_.v.policy_note += fmt::format("{}output '{}' judged relative-to-sim:m={:g}: {}",
                                    r_.v.policy_note.empty() ? "" : "; ", output, m, bounds_[i].why_not);
    return relative_to_sim(in_, sim_, i, m);
  }

 private:
  const judging_input& in_;
  sim_yardstick sim_;
  case_result& r_;
  std::vector<error_bound> bounds_;
  std::vector<contract> output_contracts_;  ///< per output: the contract with dst its declared type
};

}  // namespace

std::unique_ptr<tolerance_policy> make_tolerance_policy(const policy& p, const judging_input& in, case_result& r,
                                                        contract_emulation& sim) {
  switch (p.kind) {
    case policy_kind::bound: return std::make_unique<bound_policy>(in, p, r, sim);
    case policy_kind::relative_to_sim: return std::make_unique<relative_to_sim_policy>(in, p, sim);
    case policy_kind::exact: return std::make_unique<exact_policy>(in);
    case policy_kind::fixed: return std::make_unique<fixed_policy>(in, p);
  }
  throw error("unknown policy kind");
}

}  // namespace opval::detail

namespace opval {

std::span<const policy_description> policy_descriptions() {
  static constexpr policy_description table[] = {detail::bound_policy::description,
                                                 detail::relative_to_sim_policy::description,
                                                 detail::exact_policy::description, detail::fixed_policy::description};
  return table;
}

}  // namespace opval
