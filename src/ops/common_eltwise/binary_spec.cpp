#include "ops/common_eltwise/binary_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/common_eltwise/suite_lines.hpp"
#include "core/rng.hpp"
#include "opval/error.hpp"

namespace opval::ops::eltwise {
namespace {

broadcast_plan plan_of(const problem& p) { return plan_broadcast(p.get_dims("shape_a"), p.get_dims("shape_b")); }

// The float contracts (the covering suites' contracts) and the integer ones.
std::vector<std::string> float_contracts() {
  return {"f32", "bf16:f32:bf16", "f16:f32:f16", "f16:f16:f16", "bf16xf32:f32:f32"};
}
std::vector<std::string> integer_contracts() { return {"i32:i32:i32", "i64:i64:i64"}; }

bool integer_contract(const contract& c) { return c.dst == dtype::i32 || c.dst == dtype::i64; }

// The fills an integer contract takes (fill_integers draws their values).
constexpr std::string_view integer_fills[] = {"default", "normal", "uniform", "exact", "positive", "large"};

// An element the special fill left an ordinary value (finite, normal).
bool ordinary(double v, dtype t) { return std::isfinite(v) && std::fabs(v) >= traits(t).min_normal; }

// The special fill's subnormals near the smallest normal, paired: at four output elements
// (seeded, spread over the output) both a and b get one, through the broadcast, where both
// held ordinary values. Sums and differences of the pairs stay subnormal (a+b: 7/8 - 5/16 or
// 3/8 + 5/16 of min_normal), so a kernel flushing either input or the result loses more than
// the bound, which the per-tensor ones, meeting normal values of the other input, do not show
// for add; a quotient of two flushed inputs is 0/0.
void pair_near_normal_subnormals(const broadcast_plan& plan, std::uint64_t seed, std::span<tensor> in) {
  const std::int64_t n = element_count(plan.out);
  if (n == 0) return;
  constexpr double pairs[][2] = {{0.875, -0.3125}, {0.375, 0.3125}, {-0.875, 0.3125}, {-0.375, -0.3125}};
  const std::int64_t start = static_cast<std::int64_t>(random_bits(seed, 0x9a17ed, 0) % static_cast<std::uint64_t>(n));
  const std::int64_t spacing = std::max<std::int64_t>(1, n / static_cast<std::int64_t>(std::size(pairs)));
  for (std::size_t k = 0; k < std::size(pairs); ++k)
    for (std::int64_t probe = 0; probe < std::min<std::int64_t>(n, 16); ++probe) {
      const auto [ia, ib] = plan.sources((start + static_cast<std::int64_t>(k) * spacing + probe) % n);
      if (!ordinary(in[0].at(ia), in[0].type()) || !ordinary(in[1].at(ib), in[1].type())) continue;
      in[0].set_at(ia, pairs[k][0] * traits(in[0].type()).min_normal);
      in[1].set_at(ib, pairs[k][1] * traits(in[1].type()).min_normal);
      break;
    }
}

}  // namespace

const attr_schema& binary_spec::schema() const {
  static const attr_schema s{
      dims_attr("shape_a", {64, 1000}, "logical shape of a ('scalar' for rank 0)"),
      dims_attr("shape_b", {1000}, "logical shape of b; broadcasts against shape_a as numpy does"),
      stride_pad_attr(), step_attr()};
  return s;
}

std::vector<std::string> binary_spec::contracts() const {
  std::vector<std::string> c = float_contracts();
  if (wraps_integers()) append(c, integer_contracts());
  return c;
}

void binary_spec::validate(const problem& p) const {
  check_extents(p.get_dims("shape_a"), "shape_a");
  check_extents(p.get_dims("shape_b"), "shape_b");
  plan_of(p);
  const contract& c = p.dt;
  if (integer_contract(c) && wraps_integers()) {
    if (c.src != c.dst || c.wei != c.dst || c.acc != c.dst || c.math != c.dst)
      throw error(fmt::format("{} does not support contract {} (integer contracts are i32:i32:i32 and i64:i64:i64: "
                              "one type throughout, the result wrapping modulo 2^bits)",
                              name(), c.types_string()));
    if (std::find(std::begin(integer_fills), std::end(integer_fills), p.fill) == std::end(integer_fills))
      throw error(fmt::format("{} fill={} needs a float contract (integer contracts take default, normal, uniform, "
                              "exact, positive, large)", name(), p.fill));
    return;
  }
  if (!is_float(c.src) || !is_float(c.wei) || !is_float(c.dst) || !is_compute_type(c.acc) ||
      (c.rounds_inputs() && !is_compute_type(c.math)))
    throw error(fmt::format("{} does not support contract {} (floating-point inputs and output, acc "
                            "one of f64 f32 f16 bf16)",
                            name(), c.types_string()));
}

std::vector<operand> binary_spec::inputs(const problem& p) const {
  const dims& a = p.get_dims("shape_a");
  const dims& b = p.get_dims("shape_b");
  return {{"a", p.dt.src, a, input_layout(p, a)}, {"b", p.dt.wei, b, input_layout(p, b)}};
}

std::vector<operand> binary_spec::outputs(const problem& p) const { return {{"y", p.dt.dst, plan_of(p).out, {}}}; }

op_counts binary_spec::counts(const problem& p) const {
  const double n = static_cast<double>(element_count(plan_of(p).out));
  const double na = static_cast<double>(element_count(p.get_dims("shape_a")));
  const double nb = static_cast<double>(element_count(p.get_dims("shape_b")));
  return {n, na * traits(p.dt.src).size_bytes + nb * traits(p.dt.wei).size_bytes +
                 n * traits(p.dt.dst).size_bytes};
}

void binary_spec::fill_integers(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  // default: |x| <= 1000; positive: 0..1000; large: i32's whole range (results wrap), for
  // i64 the largest power of two M with |M (op) M| < 2^53 (the reference's doubles stay exact).
  double hi = 1000, lo = p.fill == "positive" ? 0 : -1000;
  if (p.fill == "large") {
    if (p.dt.dst == dtype::i32) {
      lo = traits(dtype::i32).lowest, hi = traits(dtype::i32).max;
    } else {
      hi = 0x1p52;
      while (std::fabs(apply(hi, hi)) >= 0x1p53) hi /= 2;
      lo = -hi;
    }
  }
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  for (std::size_t k = 0; k < in.size(); ++k)
    for (std::int64_t i = 0, n = in[k].numel(); i < n; ++i)
      in[k].set_at(i, lo + static_cast<double>(random_bits(seed, k, static_cast<std::uint64_t>(i)) % span));
}

double binary_spec::integer_result(const problem& p, double a, double b) const {
  const std::int64_t r = apply_wrapped(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b));
  return p.dt.dst == dtype::i32 ? static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(r)))
                                : static_cast<double>(r);
}

fill_traits binary_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  if (integer_contract(p.dt)) {
    fill_integers(p, seed, in);
    fill_traits t;
    t.exact = true;
    t.same_sign = p.fill == "positive";
    return t;
  }
  fill_ranges r;
  r.large_scale = large_scale(p);
  // `wide` values below 2^(n/2 + 1) stay within the large magnitude too.
  r.wide_exponents = std::min(r.wide_exponents, 2 * (static_cast<int>(std::floor(std::log2(r.large_scale))) - 1));
  const fill_params f = eltwise_fill_params(p.fill, r);
  const fill_params params[] = {f, f};
  fill_inputs(in, params, seed);
  if (f.kind == fill_kind::special) pair_near_normal_subnormals(plan_of(p), seed, in);
  return eltwise_fill_traits(p.fill, true);
}

template <class F>
void binary_spec::for_each_pair(const problem& p, std::span<const tensor> in, F&& f) const {
  const broadcast_plan plan = plan_of(p);
  const std::vector<double> a = in[0].to_vector();
  const std::vector<double> b = in[1].to_vector();
  parallel_for(element_count(plan.out), [&](std::int64_t i) {
    const auto [ia, ib] = plan.sources(i);
    f(i, a[ia], b[ib]);
  });
}

void binary_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  double* y = out[0].data_as<double>();
  if (integer_contract(p.dt)) {
    for_each_pair(p, in, [&](std::int64_t i, double a, double b) { y[i] = integer_result(p, a, b); });
    return;
  }
  for_each_pair(p, in, [&](std::int64_t i, double a, double b) { y[i] = apply(a, b); });
}

void binary_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  tensor& y = out[0];
  if (integer_contract(p.dt)) {  // exact: the kernel's result is the reference's
    for_each_pair(p, in, [&](std::int64_t i, double a, double b) { y.set_at(i, integer_result(p, a, b)); });
    return;
  }
  const acc_steps s(p.dt);
  for_each_pair(p, in, [&](std::int64_t i, double a, double b) {
    y.set_at(i, s.store(s.round(apply(s.load(a), s.load(b)))));
  });
}

std::vector<error_bound> binary_spec::bound(const problem& p, const fill_traits&, const bound_options&,
                                            std::span<const tensor> in, std::span<const tensor> ref) const {
  if (integer_contract(p.dt)) {
    error_bound eb;
    eb.compute = tensor(dtype::f64, ref[0].shape());  // zeros: the wrapped result, exactly
    eb.formula = fmt::format("exact: a {} b modulo 2^{}", symbol(), p.dt.dst == dtype::i32 ? 32 : 64);
    std::vector<error_bound> v;
    v.push_back(std::move(eb));
    return v;
  }
  const acc_steps s(p.dt);
  const acc_error_model m(p.dt);
  error_bound eb;
  eb.compute = tensor(dtype::f64, ref[0].shape());
  double* out = eb.compute.data_as<double>();
  for_each_pair(p, in, [&](std::int64_t i, double a, double b) {
    const double exact = apply(a, b), in_acc = apply(s.load(a), s.load(b));
    out[i] = std::isfinite(exact) && std::isfinite(in_acc)
                 ? (std::fabs(in_acc - exact) + m.rounding(in_acc)) * m.second_order()
                 : 0.0;
  });
  eb.formula = fmt::format("|a_acc {0} b_acc - a {0} b| + u|a_acc {0} b_acc| + underflow, times (1+8u)(1+u_dst); {1}",
                           symbol(), m.describe());
  std::vector<error_bound> v;
  v.push_back(std::move(eb));
  return v;
}

namespace {

/// Broadcasting patterns: same shape, scalar, row, column, outer product, 4-D, both sides.
suite_axis broadcast_shapes(bool smoke) {
  return smoke ? suite_axis{"shape_a=13x61 shape_b=61", "shape_a=37 shape_b=37", "shape_a=5x7 shape_b=scalar",
                         "shape_a=17x1 shape_b=1x19", "shape_a=2x3x5x7 shape_b=3x1x7 stride_pad=2 step=2"}
            : suite_axis{"shape_a=33x65 shape_b=65",
                         "shape_a=1 shape_b=1",
                         "shape_a=31 shape_b=31",
                         "shape_a=4099 shape_b=4099",
                         "shape_a=65537 shape_b=1",
                         "shape_a=37x53 shape_b=scalar",
                         "shape_a=scalar shape_b=37x53",
                         "shape_a=33x65 shape_b=33x1",
                         "shape_a=1x65 shape_b=33x1",
                         "shape_a=2x3x5x7 shape_b=1x3x1x7",
                         "shape_a=4x1x6x1 shape_b=5x1x7",
                         "shape_a=3x100003 shape_b=100003",
                         "shape_a=61x67 shape_b=67 step=2",
                         "shape_a=257x129 shape_b=257x1 stride_pad=5",
                         "shape_a=7x9x13 shape_b=9x13 stride_pad=1 step=3",
                         // Empty tensors: 1 broadcasts to 0 as to any extent.
                         "shape_a=0x5 shape_b=5",
                         "shape_a=3x1 shape_b=0"};
}

}  // namespace

std::vector<std::string> binary_spec::suite(std::string_view tag) const {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  const suite_axis shapes = broadcast_shapes(smoke);
  const suite_axis axes[] = {shapes, generic_fills(smoke, true), contract_option_values(smoke, *this)};
  std::vector<std::string> lines = covering_lines(name(), axes, float_contracts());
  // Integer contracts: the shapes, then the fills (`large`: i32 results wrap).
  const suite_axis int_fills = smoke ? suite_axis{"", "fill=large"}
                                     : suite_axis{"", "fill=large", "fill=positive", "fill=uniform"};
  const suite_axis int_axes[] = {shapes, int_fills};
  if (wraps_integers()) append(lines, covering_lines(name(), int_axes, integer_contracts()));
  return lines;
}

feature_table binary_spec::features() const {
  const named_axis axes[] = {{"broadcast", broadcast_shapes(false)},
                             {"fill", generic_fills(false, true)},
                             {"contract option", contract_option_values(false, *this)}};
  return axes_table(axes, contracts());
}

}  // namespace opval::ops::eltwise
