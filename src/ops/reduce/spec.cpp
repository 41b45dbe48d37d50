// reduce: sum, mean or max over a set of axes.
//
// Semantics a user relies on (and tests check):
// - axes= uses the dims syntax, axes separated by 'x': axes=0x2 reduces axes 0 and 2 (negative
//   axes, settable through the API, count from the end); duplicates are an error. keepdims=1
//   keeps reduced axes as extent 1; reducing every axis without keepdims gives a scalar.
// - Empty reductions (a reduced axis of extent 0): sum = 0, mean = NaN (0/0), max = -inf (the
//   identity of max; i32: the lowest value). NumPy and PyTorch agree for sum and mean; they
//   raise for max, we return the identity.
// - max: NaN wins (any NaN in the set gives NaN), and max(-0, +0) = +0 (IEEE 754-2019
//   maximum). A kernel returning -0 there is reported (neg_zero_mismatch) but does not fail.
// - Error model: sum |s_hat - s| <= gamma(n) * sum|x| for any summation order; mean adds the
//   division (or the multiplication by a rounded 1/n, or pre-scaled terms); max is exact;
//   integer (i32) sums are exact while sum|x| < 2^31.
#include "ops/reduce/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"
#include "core/fill.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::reduce {
namespace {

/// The reduced axes (normalized, sorted) and the split of the input into outer x n.
struct geometry {
  std::vector<int> order;  ///< kept axes, then reduced axes: a permutation of the input
  std::int64_t outer = 1;  ///< number of outputs
  std::int64_t n = 1;      ///< elements per output
  dims out_shape;
};

std::vector<int> normalized_axes(const problem& p) {
  const dims& shape = p.get_dims("shape");
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<int> axes;
  for (std::int64_t a : p.get_dims("axes")) {
    const std::int64_t b = a < 0 ? a + rank : a;
    if (b < 0 || b >= rank)
      throw error(fmt::format("reduce axes={} has axis {} outside shape={} (rank {})", to_string(p.get_dims("axes")),
                              a, to_string(shape), rank));
    if (std::find(axes.begin(), axes.end(), b) != axes.end())
      throw error(fmt::format("reduce axes={} names axis {} twice", to_string(p.get_dims("axes")), b));
    axes.push_back(static_cast<int>(b));
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

geometry geometry_of(const problem& p) {
  const dims& shape = p.get_dims("shape");
  const std::vector<int> axes = normalized_axes(p);
  const bool keepdims = p.get_bool("keepdims");
  geometry g;
  for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), a);
    if (!reduced) {
      g.order.push_back(a);
      g.outer *= shape[static_cast<std::size_t>(a)];
      g.out_shape.push_back(shape[static_cast<std::size_t>(a)]);
    } else if (keepdims) {
      g.out_shape.push_back(1);
    }
  }
  for (int a : axes) {
    g.order.push_back(a);
    g.n *= shape[static_cast<std::size_t>(a)];
  }
  return g;
}

/// The input's values with every output's n elements contiguous.
std::vector<double> grouped_values(const tensor& x, const geometry& g) {
  return x.permute(g.order).to_vector();
}

enum class reduce_kind : std::uint8_t { sum, mean, max };

reduce_kind kind_of(const problem& p) {
  const std::string& k = p.get_choice("kind");
  return k == "sum" ? reduce_kind::sum : k == "mean" ? reduce_kind::mean : reduce_kind::max;
}

constexpr double neg_inf = -std::numeric_limits<double>::infinity();
// Below this many elements a parallel loop costs more (thread wake-up) than it saves.
constexpr std::int64_t parallel_threshold = 1 << 15;

}  // namespace

double max_of(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // only differs for -0 vs +0: +0 wins
  return a > b ? a : b;
}

void reduce_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, sum_order order) {
  const geometry g = geometry_of(p);
  const contract_arith ar(p.dt);
  const reduce_kind kind = kind_of(p);
  const std::vector<double> x = grouped_values(in[0], g);
  std::vector<double> y(static_cast<std::size_t>(g.outer));
  const auto acc = [&](double t) { return ar.acc(t); };
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
  for (std::int64_t o = 0; o < g.outer; ++o) {
    const double* xo = x.data() + o * g.n;
    double r = 0;
    if (kind == reduce_kind::max) {
      r = neg_inf;
      for (std::int64_t i = 0; i < g.n; ++i) r = max_of(r, xo[i]);
    } else {
      r = ordered_sum(g.n, order, [&](std::int64_t i) { return ar.input(xo[i]); }, acc);
      if (kind == reduce_kind::mean) r = acc(r / static_cast<double>(g.n));  // 0/0 = NaN when empty
    }
    y[static_cast<std::size_t>(o)] = ar.out(r);
  }
  out[0].assign(y, p.dt.dst_round);
}

namespace {

/// The reduce op.
class reduce_spec final : public op_spec {
 public:
  std::string_view name() const override { return "reduce"; }
  std::string_view summary() const override { return "sum, mean or max over axes (keepdims optional)"; }
  const attr_schema& schema() const override {
    static const attr_schema schema{
        dims_attr("shape", {4, 8}, "shape of x, e.g. 16x33x7"),
        dims_attr("axes", {1}, "reduced axes in dims syntax: 0x2 = axes 0 and 2"),
        choice_attr("kind", "sum", {"sum", "mean", "max"},
                    "sum (empty: 0), mean (empty: NaN), max (empty: -inf; NaN wins; max(-0,+0)=+0)"),
        bool_attr("keepdims", false, "keep reduced axes as extent-1 dims"),
    };
    return schema;
  }
  std::vector<std::string> fills() const override { return generic_fill_names(); }
  std::vector<std::string> contracts() const override {
    return {"f32", "bf16:f32:bf16", "f16:f32:f16", "f16:f16:f16", "i32"};
  }

  void validate(const problem& p) const override {
    const dims& shape = p.get_dims("shape");
    if (shape.empty()) throw error("reduce needs shape= with at least one dim");
    if (p.get_dims("axes").empty()) throw error("reduce needs axes= with at least one axis");
    for (auto e : shape)
      if (e < 0) throw error(fmt::format("reduce shape={} has a negative extent", to_string(shape)));
    normalized_axes(p);
    const std::vector<std::string> f = fills();
    if (p.fill != "default" && std::find(f.begin(), f.end(), p.fill) == f.end())
      throw error(fmt::format("reduce does not know fill={}", p.fill));
    const contract& c = p.dt;
    if (!is_float(c.src)) {
      if (c.src != dtype::i32 || c.acc != dtype::i32 || c.dst != dtype::i32)
        throw error(fmt::format("reduce does not support contract {} (integer: i32 only)", c.types_string()));
      if (kind_of(p) == reduce_kind::mean)
        throw error("reduce kind=mean does not support integer contract i32 (use dt=f32 or kind=sum)");
      return;
    }
    auto io = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
    const bool acc_ok = c.acc == dtype::f32 || c.acc == dtype::f64 || (c.acc == dtype::f16 && c.src == dtype::f16);
    if (!io(c.src) || !io(c.dst) || !acc_ok || c.rounds_inputs())
      throw error(fmt::format("reduce does not support contract {} (e.g. f32, bf16:f32:bf16, f16:f32:f16, "
                              "f16:f16:f16, i32)", c.types_string()));
  }

  std::vector<operand> inputs(const problem& p) const override {
    return {{"x", p.dt.src, p.get_dims("shape"), {}}};
  }
  std::vector<operand> outputs(const problem& p) const override {
    return {{"y", p.dt.dst, geometry_of(p).out_shape, {}}};
  }
  op_counts counts(const problem& p) const override {
    const geometry g = geometry_of(p);
    const double numel = static_cast<double>(g.outer * g.n);
    return {numel, numel * traits(p.dt.src).size_bytes + static_cast<double>(g.outer) * traits(p.dt.dst).size_bytes};
  }

  /// default: N(0,1) for floats, integers in [-100, 100] for i32; `large` is as large as the
  /// sum can be without overflowing acc or dst.
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    const geometry g = geometry_of(p);
    fill_params fp;
    const bool integer = !is_float(p.dt.src);
    if (p.fill == "default") {
      fp.kind = integer ? fill_kind::exact : fill_kind::normal;
      fp.exact_range = 100;
    } else {
      fp.kind = parse_fill_kind(p.fill);
    }
    if (fp.kind == fill_kind::large) {
      const double n = static_cast<double>(std::max<std::int64_t>(g.n, 1));
      const reduce_kind k = kind_of(p);
      double s = traits(p.dt.src).max;
      if (k != reduce_kind::max) s = std::min(s, traits(p.dt.acc).max / n);
      if (k == reduce_kind::sum) s = std::min(s, traits(p.dt.dst).max / n);
      fp.scale = s / 2;
    }
    fill_tensor(in[0], fp, seed, 0);
    fill_traits f;
    f.same_sign = fp.kind == fill_kind::positive;
    f.has_specials = fp.kind == fill_kind::special;
    f.exact = integer;
    return f;
  }

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const geometry g = geometry_of(p);
    const reduce_kind kind = kind_of(p);
    const std::vector<double> x = grouped_values(in[0], g);
    double* y = out[0].data_as<double>();
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
    for (std::int64_t o = 0; o < g.outer; ++o) {
      const double* xo = x.data() + o * g.n;
      if (kind == reduce_kind::max) {
        double r = neg_inf;
        for (std::int64_t i = 0; i < g.n; ++i) r = max_of(r, xo[i]);
        y[o] = r;
      } else {
        // fp64 pairwise: its error (log2(n) 2^-53 sum|x|) is far below any contract's bound.
        const double s = ordered_sum(g.n, sum_order::pairwise, [&](std::int64_t i) { return xo[i]; },
                                     [](double t) { return t; });
        y[o] = kind == reduce_kind::mean ? s / static_cast<double>(g.n) : s;
      }
    }
  }

  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    reduce_simulate(p, in, out, sum_order::forward);
  }

  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override {
    const geometry g = geometry_of(p);
    const reduce_kind kind = kind_of(p);
    error_bound b;
    b.compute = tensor(dtype::f64, g.out_shape);
    double* out = b.compute.data_as<double>();
    std::fill(out, out + g.outer, 0.0);
    if (kind == reduce_kind::max) {
      b.formula = "max is exact: 0";
      return {b};
    }
    const std::vector<double> x = grouped_values(in[0], g);
    std::vector<double> abs_sums(static_cast<std::size_t>(g.outer));
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
    for (std::int64_t k = 0; k < g.outer; ++k) {
      double s = 0;
      for (std::int64_t i = 0; i < g.n; ++i) s += std::fabs(x[static_cast<std::size_t>(k * g.n + i)]);
      abs_sums[static_cast<std::size_t>(k)] = s;
    }
    if (!is_float(p.dt.src)) {
      const double worst = abs_sums.empty() ? 0 : *std::max_element(abs_sums.begin(), abs_sums.end());
      b.formula = "i32 sums are exact while sum|x| < 2^31: 0";
      if (worst >= 0x1.0p31) {
        b.meaningful = false;
        b.why_not = fmt::format("sum|x| = {} may overflow i32 partial sums", worst);
      }
      return {b};
    }
    if (g.n == 0) {
      b.formula = "empty reduction: exact (sum 0, mean NaN)";
      return {b};
    }
    const accumulation_gamma ag =
        accumulation_constant(static_cast<double>(g.n), static_cast<double>(g.outer), p.dt, f, o);
    b.meaningful = ag.meaningful;
    b.why_not = ag.why_not;
    const double u = unit_roundoff(p.dt.acc, p.dt.acc_round);
    const double g2 = gamma_deterministic(2, u);
    const double* y = ref[0].data_as<double>();
    const double dn = static_cast<double>(g.n);
    for (std::int64_t k = 0; k < g.outer; ++k) {
      const double s = abs_sums[static_cast<std::size_t>(k)];
      if (!std::isfinite(s)) continue;  // NaN/Inf results are compared by class, not by bound
      out[k] = kind == reduce_kind::sum ? ag.gamma * s
                                        : ag.gamma * (s / dn) * (1 + g2) + g2 * (s / dn + std::fabs(y[k]));
    }
    b.formula = kind == reduce_kind::sum
        ? fmt::format("gamma*sum|x|, gamma={} ({})", ag.gamma, ag.formula)
        : fmt::format("gamma*mean|x|*(1+g2) + g2*(mean|x|+|y|), gamma={} ({}), g2={:.3g}", ag.gamma, ag.formula, g2);
    return {b};
  }

  std::vector<std::string> suite(std::string_view tag) const override;
};

// Shapes with the axes that make them interesting: inner, outer, middle, several, all.
struct shaped_axes {
  const char* shape;
  const char* axes;
  bool long_sums = false;  ///< over 500 terms: too long for f16 acc; NaN-flooded with fill=special
};

std::vector<std::string> reduce_spec::suite(std::string_view tag) const {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  static constexpr shaped_axes smoke_cases[] = {{"7", "0"}, {"13x17", "1"}, {"5x6x7", "0x2"}, {"4x33", "0"}};
  static constexpr shaped_axes regression_cases[] = {
      {"1x1", "1"},           {"7", "0"},          {"13x17", "1"},         {"13x17", "0"},
      {"5x6x7", "1"},         {"5x6x7", "0x2"},    {"5x6x7", "0x1x2"},     {"3x1000", "1", true},
      {"1000x3", "0", true},  {"2x4096", "1", true}, {"9x31x5", "1x2"},    {"64x33x3", "0x2"},
      {"4x768", "1", true},   {"2x3x4x5", "1x3"},  {"97x1", "0"},
      {"256x4096", "1", true}, {"4096x256", "0", true}, {"64x64x64", "0x1", true}};
  const std::vector<std::string> fills{"default", "positive", "wide", "cancel", "large", "uniform", "exact", "special"};
  std::vector<std::string> lines;
  std::size_t i = 0;
  auto add = [&](const shaped_axes& c, const char* kind, bool keep, const std::string& dt, const std::string& fill) {
    lines.push_back(fmt::format("reduce shape={} axes={} kind={} keepdims={} dt={} fill={}", c.shape, c.axes, kind,
                                keep ? 1 : 0, dt, fill));
  };
  const std::span<const shaped_axes> cases = smoke ? std::span<const shaped_axes>(smoke_cases)
                                                   : std::span<const shaped_axes>(regression_cases);
  for (const auto& dt : contracts()) {
    const bool integer = dt == "i32";
    for (const auto& c : cases) {
      if (dt == "f16:f16:f16" && c.long_sums) continue;  // n u_f16 >= 1/2: no meaningful bound
      for (const char* kind : {"sum", "mean", "max"}) {
        if (integer && std::string_view(kind) == "mean") continue;
        std::string fill = fills[i++ % fills.size()];
        if (integer && fill == "special") fill = "default";
        // NaN/Inf in most outputs would make the output constant (MISTRUSTED): only short sums.
        if (fill == "special" && c.long_sums) fill = "default";
        add(c, kind, (i % 2) == 0, dt, fill);
      }
    }
  }
  return lines;
}

}  // namespace
}  // namespace opval::ops::reduce

namespace {
using opval::ops::reduce::reduce_spec;
OPVAL_REGISTER_OP(reduce_spec);
}  // namespace
