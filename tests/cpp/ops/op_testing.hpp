#pragma once
// Helpers shared by every op test: run one problem's stages directly on its op spec (fill,
// kernel, reference, bound), measure the kernel's error against the bound, wrap a plain
// function as a backend (planted bugs, legitimate variant kernels), and run whole suites.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace opval::testing {

/// Special values for hand-written inputs.
inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

/// A kernel: computes the outputs of a problem from its inputs (as backend::execute does).
using kernel_fn = std::function<void(const problem&, std::span<const tensor>, std::span<tensor>)>;

/// Tensors for `ops`: in their own types and layouts, or contiguous f64 (reference outputs).
inline std::vector<tensor> allocate(const std::vector<operand>& ops, bool f64) {
  std::vector<tensor> t;
  for (const auto& o : ops) t.emplace_back(f64 ? dtype::f64 : o.type, o.shape, f64 ? layout{} : o.lay);
  return t;
}

/// Every stage of one case, run directly on the op spec.
struct direct_case {
  problem p;
  std::vector<tensor> in, out, ref;
  fill_traits ft;
  std::vector<error_bound> bounds;

  /// The fp64 reference on the current inputs.
  void run_reference() { p.spec().reference(p, in, ref); }
  /// The kernel `k` on the current inputs (the op's sim when empty).
  void run_simulate(const kernel_fn& k = {}) {
    if (k) {
      k(p, in, out);
    } else {
      p.spec().simulate(p, in, out);
    }
  }
  /// The bounds of the current inputs and reference.
  void run_bound() { bounds = p.spec().bound(p, ft, bound_options{}, in, ref); }
  /// Kernel, reference and bounds again, after the inputs changed.
  void recompute(const kernel_fn& k = {}) {
    run_simulate(k);
    run_reference();
    run_bound();
  }
  /// The reference of output 0 on the current inputs.
  std::vector<double> reference_values() {
    run_reference();
    return ref[0].to_vector();
  }
  /// Recomputes sim, reference and bounds; the checked_worst_ratio of the result.
  double sim_error_over_bound();
};

/// Validates p and allocates its operands, filling the inputs from `seed`; computes nothing.
inline direct_case filled_case(const problem& p, std::uint64_t seed = 1) {
  direct_case c{p, {}, {}, {}, {}, {}};
  const op_spec& s = p.spec();
  s.validate(p);
  c.in = allocate(s.inputs(p), false);
  c.out = allocate(s.outputs(p), false);
  c.ref = allocate(s.outputs(p), true);
  c.ft = s.fill(p, seed, c.in);
  return c;
}
inline direct_case filled_case(const std::string& line, std::uint64_t seed = 1) {
  return filled_case(parse_problem(line), seed);
}

/// Fills the inputs of p (or keeps `in` when given), runs the kernel (sim by default), the
/// reference and the bounds.
inline direct_case run_direct(const problem& p, std::uint64_t seed = 1, std::vector<tensor> in = {},
                              const kernel_fn& k = {}) {
  auto given = [&] {
    p.spec().validate(p);
    return direct_case{p, std::move(in), allocate(p.spec().outputs(p), false), allocate(p.spec().outputs(p), true),
                       {}, {}};
  };
  direct_case c = in.empty() ? filled_case(p, seed) : given();
  c.recompute(k);
  return c;
}

/// run_direct of p on one contiguous input of p's src type holding `values`.
inline direct_case run_on_values(const problem& p, const std::vector<double>& values) {
  tensor t(p.dt.src, {static_cast<std::int64_t>(values.size())});
  t.assign(values);
  return run_direct(p, 1, {t});
}

namespace detail {
// max |out - ref| / (compute bound + output rounding) over output 0; +inf where NaN or
// infinities disagree (NaN and equal infinities are exact matches), each one reported as a
// test failure when `report`.
inline double worst_ratio(const direct_case& c, bool report) {
  const std::vector<double> got = c.out[0].to_vector();
  const double* ref = c.ref[0].data_as<double>();
  const double* bnd = c.bounds[0].compute.data_as<double>();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool nan = std::isnan(ref[i]) || std::isnan(got[i]);
    if (nan || std::isinf(ref[i]) || std::isinf(got[i])) {
      const bool agree = nan ? std::isnan(ref[i]) == std::isnan(got[i]) : ref[i] == got[i];
      if (!agree) {
        if (report) ADD_FAILURE() << c.p.to_string() << " element " << i << " got " << got[i] << " want " << ref[i];
        worst = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const rounding r = judged_rounding(c.p.dt, c.bounds[0]);
    const double total = bnd[i] + output_rounding_bound(c.p.dt.dst, r, c.p.dt.denorm, ref[i]);
    worst = std::max(worst, std::fabs(got[i] - ref[i]) / total);
  }
  return worst;
}
}  // namespace detail

/// max |out - ref| / (compute bound + output rounding) over output 0; +inf on a NaN or
/// infinity disagreement.
inline double worst_ratio(const direct_case& c) { return detail::worst_ratio(c, false); }

/// worst_ratio, also failing the test where the bound is not meaningful or where NaN or
/// infinities disagree (naming the element).
inline double checked_worst_ratio(const direct_case& c) {
  EXPECT_TRUE(c.bounds[0].meaningful) << c.p.to_string() << ": " << c.bounds[0].why_not;
  return detail::worst_ratio(c, true);
}

inline double direct_case::sim_error_over_bound() {
  recompute();
  return checked_worst_ratio(*this);
}

/// Every problem of the smoke and regression suites of `op`: the kernel (sim by default)
/// within the bound. Returns the largest error / bound ratio (OPVAL_TEST_VERBOSE prints each).
inline double expect_within_bound_on_suites(const std::string& op, const kernel_fn& k = {}) {
  double worst = 0;
  for (const char* tag : {"smoke", "regression"})
    for (const auto& line : find_op(op).suite(tag)) {
      const direct_case c = run_direct(parse_problem(line), 1, {}, k);
      const double r = checked_worst_ratio(c);
      EXPECT_LE(r, 1.0) << line;
      if (std::getenv("OPVAL_TEST_VERBOSE")) std::printf("%.3g  %s\n", r, line.c_str());
      worst = std::max(worst, r);
    }
  return worst;
}

/// Whether the op of `line` ("gelu approximate=tanh") reads the contract option of `option`
/// (" acc_round=rz"; "" reads as yes): op_spec::contract_options.
inline bool reads_option(const std::string& line, const std::string& option) {
  if (option.empty()) return true;
  const std::string key = option.substr(0, option.find('=')).substr(option.find_first_not_of(' '));
  const auto reads = find_op(line.substr(0, line.find(' '))).contract_options();
  return std::find(reads.begin(), reads.end(), key) != reads.end();
}

/// The message of the error that parsing and validating `line` throws; empty when none.
inline std::string validation_error(const std::string& line) {
  try {
    problem p = parse_problem(line);
    p.spec().validate(p);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

/// A backend computing with a plain function (a planted bug or a variant kernel).
class function_backend final : public backend {
 public:
  using support_fn = std::function<support(const problem&)>;
  function_backend(std::string name, kernel_fn k, support_fn s = {})
      : name_(std::move(name)), k_(std::move(k)), s_(std::move(s)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  support supports(const problem& p) const override { return s_ ? s_(p) : support::yes(); }
  execution_info execute(const problem& p, std::span<const tensor> in, std::span<tensor> out) override {
    k_(p, in, out);
    return {name_, ""};
  }

 private:
  std::string name_;
  kernel_fn k_;
  support_fn s_;
};

/// run_case with default options (bound policy, seed 1, perturbation check on), or the
/// policy given.
inline case_result run_with(const std::string& line, backend& b, std::uint64_t seed = 1, const policy& pol = {}) {
  run_options o;
  o.seed = seed;
  o.pol = pol;
  // The GEMM tests run again under sampled verification (tests/cpp/CMakeLists.txt): every planted
  // bug must be caught by the sample and the checksums as by the full check.
  if (const char* verify = std::getenv("OPVAL_TEST_VERIFY")) o.verify = verify;
  return run_case(parse_problem(line), b, o);
}

/// The tightness of a bound for a legitimate variant kernel (bench/tightness.py takes its
/// lines): `b` runs `line_for(n)` for each reduction length n at seeds 1..S; every case must pass
/// with each output's worst |error| / bound in (0, 1]. By default S = 1 and n runs `lengths`;
/// with OPVAL_TIGHTNESS_SEEDS=S set, n runs 64 ... 16384 and each case prints a line
/// `tightness-variant<TAB>LINE<TAB>CONTRACT<TAB>VARIANT<TAB>SEED<TAB>MAX<TAB>MEDIAN` (LINE as
/// written in bench/tightness/problems.txt, where the script finds its table and length).
inline void expect_tight_within_bound(const std::string& variant, backend& b,
                                      const std::function<std::string(std::int64_t)>& line_for,
                                      std::vector<std::int64_t> lengths = {64, 4096}) {
  const char* seeds_env = std::getenv("OPVAL_TIGHTNESS_SEEDS");
  const std::uint64_t seeds = seeds_env ? std::strtoull(seeds_env, nullptr, 10) : 1;
  if (seeds_env) lengths = {64, 256, 1024, 4096, 16384};
  for (const std::int64_t n : lengths)
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      const std::string line = line_for(n);
      const case_result r = run_with(line, b, seed);
      EXPECT_EQ(r.v.st, state::passed) << variant << ": " << line << " seed " << seed << ": " << r.v.reason;
      for (const auto& o : r.v.outputs) {
        EXPECT_GT(o.m.max_error_over_bound, 0) << variant << ": " << line << " seed " << seed;
        EXPECT_LE(o.m.max_error_over_bound, 1) << variant << ": " << line << " seed " << seed;
        if (seeds_env)
          std::printf("tightness-variant\t%s\t%s\t%s\t%llu\t%.6g\t%.6g\n", line.c_str(), r.contract.c_str(),
                      variant.c_str(), static_cast<unsigned long long>(seed), o.m.max_error_over_bound,
                      o.m.median_error_over_bound);
      }
    }
}


/// Seeds 1..every_seed: a planted bug must not hide behind one lucky draw of the inputs, nor
/// a legitimate variant pass on one.
inline constexpr std::uint64_t every_seed = 8;

/// Runs `b` on each line at seeds 1..every_seed: every case must end in `want`, with `why` (when
/// not empty) in its reason.
inline void expect_at_every_seed(backend& b, const std::vector<std::string>& lines, state want,
                                 const std::string& why = "") {
  for (const auto& line : lines)
    for (std::uint64_t seed = 1; seed <= every_seed; ++seed) {
      const case_result r = run_with(line, b, seed);
      EXPECT_EQ(r.v.st, want) << b.name() << " seed " << seed << ": " << line << ": " << to_string(r.v.st) << ": "
                              << r.v.reason;
      if (!why.empty()) EXPECT_NE(r.v.reason.find(why), std::string::npos) << b.name() << ": " << r.v.reason;
    }
}

/// A planted bug `k` fails every line at every seed (with `why` in the reason when given).
inline void expect_fails_at_every_seed(const std::string& name, const kernel_fn& k, const std::vector<std::string>& lines,
                                       const std::string& why = "") {
  function_backend b(name, k);
  expect_at_every_seed(b, lines, state::failed, why);
}

/// expect_fails_at_every_seed, the reason naming the bound (an error beyond it, not a NaN or a
/// mistrusted output).
inline void expect_fails(const std::string& name, const kernel_fn& k, const std::vector<std::string>& lines,
                         const std::string& why = "beyond the bound") {
  expect_fails_at_every_seed(name, k, lines, why);
}

/// A legitimate variant `k` passes every line at every seed.
inline void expect_passes_at_every_seed(const std::string& name, const kernel_fn& k,
                                        const std::vector<std::string>& lines) {
  function_backend b(name, k);
  expect_at_every_seed(b, lines, state::passed);
}

/// A planted bug: the op's own sim on the problem changed by `change` (an attribute ignored, a
/// contract option not honoured), i.e. a kernel that does not do what the problem asks. The
/// change must keep the operands' shapes.
inline kernel_fn simulating_as(std::function<void(problem&)> change) {
  return [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    change(q);
    p.spec().simulate(q, in, out);
  };
}

/// A planted bug: the op's own sim on inputs changed by `change` (an input ignored, read from
/// the wrong place), i.e. a kernel that misreads its inputs.
inline kernel_fn simulating_on(std::function<void(const problem&, std::vector<tensor>&)> change) {
  return [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    std::vector<tensor> x(in.begin(), in.end());  // `change` replaces tensors, never writes them
    change(p, x);
    p.spec().simulate(p, x, out);
  };
}

/// A planted bug whose changed problem has other output shapes (a stride, dilation or ceil_mode
/// ignored, the output grid kept): the op's sim on the changed problem, each output element
/// taken at the same logical index; one the changed problem lacks is never computed and keeps
/// the 0 of a fresh buffer. The change must keep the input shapes.
inline kernel_fn simulating_as_cropped(std::function<void(problem&)> change) {
  return [change](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    problem q = p;
    change(q);
    std::vector<tensor> full = allocate(q.spec().outputs(q), false);
    q.spec().simulate(q, in, full);
    for (std::size_t o = 0; o < out.size(); ++o) {
      std::vector<double> v(static_cast<std::size_t>(out[o].numel()));
      for (std::int64_t i = 0; i < out[o].numel(); ++i) {
        const dims at = out[o].unravel(i);
        bool inside = true;
        for (std::size_t d = 0; d < at.size(); ++d) inside = inside && at[d] < full[o].shape()[d];
        v[static_cast<std::size_t>(i)] = inside ? full[o].get(at) : 0.0;
      }
      out[o].assign(v);
    }
  };
}

/// `t` with every element `f(t, its logical index)`, in t's type and shape (contiguous): an input
/// as a kernel misreading it sees it.
inline tensor remapped(const tensor& t, const std::function<double(const tensor&, const dims&)>& f) {
  tensor r(t.type(), t.shape());
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = f(t, t.unravel(i));
  r.assign(v);
  return r;
}

/// `t` with every element zero: an input the kernel ignores.
inline tensor zeros_like(const tensor& t) {
  tensor r(t.type(), t.shape());
  r.assign(std::vector<double>(static_cast<std::size_t>(t.numel()), 0.0));
  return r;
}

/// A channels-last 4-D tensor (logical N, C, H, W) as a kernel ignoring its strides reads it: the
/// element it means by (n, c, h, w) is the one at NCHW offset ((c H + h) W + w) of the image,
/// which NHWC memory holds for channel at % C at position at / C.
inline tensor nhwc_read_as_nchw(const tensor& t) {
  return remapped(t, [](const tensor& x, const dims& i) {
    const std::int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    const std::int64_t at = (i[1] * h + i[2]) * w + i[3];
    return x.get(dims{i[0], at % c, at / (c * w), (at / c) % w});
  });
}

/// A strided tensor (strides decreasing outward: padded rows, an inner step) as a kernel that
/// ignores its strides reads it: the element it means by index i is the one at i's contiguous
/// offset in memory; a gap (row padding, a skipped step) reads as 0.
inline tensor strides_ignored(const tensor& t) {
  return remapped(t, [](const tensor& x, const dims& i) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < i.size(); ++d) at = at * x.shape()[d] + i[d];
    dims j(i.size());
    for (std::size_t d = 0; d < i.size(); ++d) {
      j[d] = at / x.strides()[d];
      at %= x.strides()[d];
      if (j[d] >= x.shape()[d]) return 0.0;
    }
    return at == 0 ? x.get(j) : 0.0;
  });
}

/// `t` as a NaN-skipping kernel uses it: every NaN read as 0.
inline tensor nans_as_zero(const tensor& t) {
  return remapped(t, [](const tensor& x, const dims& i) {
    const double v = x.get(i);
    return std::isnan(v) ? 0.0 : v;
  });
}

/// The index of p's input operand `name` ("bias", "C"); fails the test when p has none.
inline std::size_t input_index(const problem& p, std::string_view name) {
  const auto ops = p.spec().inputs(p);
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  ADD_FAILURE() << p.to_string() << " has no input " << name;
  return 0;
}

/// A planted bug: the op's sim with input `name` read as zeros (the kernel ignores it).
inline kernel_fn ignoring_input(std::string name) {
  return simulating_on([name](const problem& p, std::vector<tensor>& x) {
    tensor& t = x[input_index(p, name)];
    t = zeros_like(t);
  });
}

/// Every problem of the `tag` suites of `ops` passes with the sim backend under the default
/// policy; prints the case count and the time taken.
inline void expect_suite_passes_under_sim(const std::string& tag, const std::vector<std::string>& ops) {
  auto sim = make_backend("sim");
  const auto start = std::chrono::steady_clock::now();
  const auto problems = suite_problems(tag, ops);
  for (const auto& lp : problems) {
    const case_result r = run_case(lp.prob, *sim, run_options{}, lp.source);
    EXPECT_EQ(r.v.st, state::passed) << lp.source << ": " << r.descriptor << ": " << r.v.reason;
  }
  std::string names;
  for (const auto& op : ops) names += (names.empty() ? "" : "+") + op;
  std::printf("%s %s suite: %zu cases in %.2f s\n", names.c_str(), tag.c_str(), problems.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace opval::testing
