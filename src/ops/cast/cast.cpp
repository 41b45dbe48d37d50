// cast: y = convert_dst(x * scale), between any two of the 11 types (f64 f32 f16 bf16
// f8_e4m3 f8_e5m2 i8 u8 i32 i64 bool). Contract `src:acc:dst`: x is stored as src, converted
// to acc, multiplied by scale rounded to acc (skipped when scale = 1, as a plain conversion
// does: fp8/int8 quantization uses scale != 1), then rounded to dst with dst_round.
//
// Semantics (as opval::round_to defines the conversions):
// - float dst, saturate=0: a finite value beyond the rounding threshold becomes Inf (NaN for
//   f8_e4m3, which has no Inf): cast of 1000 to e4m3 is NaN, to e5m2 is Inf.
// - float dst, saturate=1: finite values beyond max become +-max; +-Inf stays +-Inf where dst
//   has Inf and becomes +-max where it has not (e4m3). NaN stays NaN.
// - integer dst: always saturating to [lowest, max]; NaN becomes 0; rounding per dst_round
//   (rne, or rz as C's conversion does).
// - bool dst: nonzero (NaN included) is 1.
// The reference is x * scale exactly, clamped to dst's range where dst saturates, and the
// overflow value (Inf / NaN / max) where the acc value overflows dst.
//
// Error model: the compute bound is the error of the acc value before the rounding to dst:
//   |x_acc - x| |s_acc| + |x| |s_acc - scale| + (scale != 1 ? u|x_acc s_acc| : 0) + underflow,
// 0 for a plain conversion whose src fits in acc; the runner adds the dst rounding.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include <fmt/format.h>

#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/common_eltwise/suite_lines.hpp"
#include "ops/common_eltwise/unary_spec.hpp"
#include "opval/error.hpp"

namespace opval::ops::cast {
namespace {

using eltwise::acc_error_model;
using eltwise::acc_steps;

constexpr dtype all_types[] = {dtype::f64,     dtype::f32,     dtype::f16, dtype::bf16, dtype::f8_e4m3,
                               dtype::f8_e5m2, dtype::i8,      dtype::u8,  dtype::i32,  dtype::i64,
                               dtype::boolean};

bool is_compute_type(dtype t) {
  return t == dtype::f64 || t == dtype::f32 || t == dtype::f16 || t == dtype::bf16;
}

// The natural accumulation type of a conversion: f64 when an end needs more than f32 holds.
dtype natural_acc(dtype src, dtype dst) {
  auto wide = [](dtype t) { return t == dtype::f64 || t == dtype::i32 || t == dtype::i64; };
  return wide(src) || wide(dst) ? dtype::f64 : dtype::f32;
}

std::string contract_text(dtype src, dtype dst) {
  contract c;
  c.src = c.wei = c.math = src;
  c.acc = c.mid = natural_acc(src, dst);
  c.dst = dst;
  return c.types_string();
}

overflow overflow_of(const problem& p) {
  return p.get_bool("saturate") || !is_float(p.dt.dst) ? overflow::saturate : overflow::ieee;
}

// One conversion as the contract performs it.
struct converter {
  explicit converter(const problem& p)
      : c(p.dt), s(p.dt), scale(p.get_real("scale")), scale_acc(s.constant(scale)), ovf(overflow_of(p)) {}

  // x * scale in acc (the value the kernel rounds to dst).
  double acc_value(double x) const {
    const double xa = s.load(x);
    return scale == 1.0 ? xa : s.mul(xa, scale_acc);
  }
  double to_dst(double v) const {
    const double y = round_to(c.dst, v, c.dst_round, ovf);
    if (c.denorm == denormals::ftz && is_float(c.dst) && std::fabs(y) < traits(c.dst).min_normal)
      return std::copysign(0.0, y);
    return y;
  }
  // The exact result, kept unrounded inside dst's range (the runner judges the rounding).
  double reference(double x) const {
    if (std::isnan(x) || c.dst == dtype::boolean) return to_dst(acc_value(x));
    const double va = acc_value(x);
    if (!std::isfinite(va) || !std::isfinite(round_to(c.dst, va, c.dst_round, ovf))) return to_dst(va);
    // Finite in dst: beyond max only by less than the rounding threshold (or rz), or saturated.
    const double v = x * scale;
    const double hi = round_to(c.dst, DBL_MAX, rounding::rz, overflow::saturate);
    const double lo = round_to(c.dst, -DBL_MAX, rounding::rz, overflow::saturate);
    return std::fmin(std::fmax(v, lo), hi);
  }

  contract c;
  acc_steps s;
  double scale, scale_acc;
  overflow ovf;
};

// Values halfway between neighbours of dst (x.5 for integers): where rne, rz and
// round-half-away differ, so a kernel rounding ties the wrong way shows a bias.
void make_ties(tensor& t, dtype dst) {
  const bool unsigned_dst = !traits(dst).is_signed;  // negatives would all become the tie 0.5
  eltwise::parallel_for(t.numel(), [&](std::int64_t i) {
    const double x = unsigned_dst ? std::fabs(t.at(i)) : t.at(i);
    const double w = round_to(dst, x, rounding::rne, overflow::saturate);
    const double mid = std::copysign(std::fabs(w) + 0.5 * ulp(dst, std::fabs(w)), w);
    t.set_at(i, mid, rounding::rne, overflow::saturate);
  });
}

}  // namespace

class cast_spec final : public eltwise::unary_spec {
 public:
  std::string_view name() const override { return "cast"; }
  std::string_view summary() const override {
    return "y = convert(x * scale) between any two types, saturating or not";
  }
  const attr_schema& schema() const override {
    static const attr_schema s = make_schema(
        real_attr("scale", 1.0, "x is multiplied by scale (rounded to acc) before the conversion"),
        bool_attr("saturate", false,
                  "float dst: finite overflow gives +-max instead of Inf (NaN for f8_e4m3); integer dst always saturates"));
    return s;
  }
  std::vector<std::string> fills() const override {
    auto f = op_spec::fills();
    f.push_back("ties");
    return f;
  }
  /// Every ordered pair of the 11 types; f32:f32:bf16 first (the default).
  std::vector<std::string> contracts() const override {
    std::vector<std::string> cs{contract_text(dtype::f32, dtype::bf16)};
    for (dtype a : all_types)
      for (dtype b : all_types)
        if (!(a == dtype::f32 && b == dtype::bf16)) cs.push_back(contract_text(a, b));
    return cs;
  }

  void validate(const problem& p) const override {
    validate_operands(p);
    if (!is_compute_type(p.dt.acc) || p.dt.rounds_inputs() || p.dt.dst == dtype::tf32)
      throw error(fmt::format("cast does not support contract {} (acc one of f64 f32 f16 bf16; no @math)",
                              p.dt.types_string()));
    if (!std::isfinite(p.get_real("scale"))) throw error("scale must be finite");
  }

  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    const dtype src = p.dt.src, dst = p.dt.dst;
    const bool ties = p.fill == "ties";
    fill_params f = eltwise::eltwise_fill_params(ties ? "normal" : p.fill, ranges(p));
    if (p.fill == "default") f = default_fill(src, dst);
    fill_tensor(in[0], f, seed, 0);
    if (ties) make_ties(in[0], dst);
    return eltwise::eltwise_fill_traits(ties ? "normal" : p.fill, true);
  }

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const converter cv(p);
    eltwise::map_elements(in[0], out[0], [&](double x) { return cv.reference(x); });
  }

  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const converter cv(p);
    eltwise::map_elements(in[0], out[0], [&](double x) { return cv.to_dst(cv.acc_value(x)); });
  }

  std::vector<error_bound> bound(const problem& p, const fill_traits&, const bound_options&,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override {
    const converter cv(p);
    const acc_error_model m(p.dt);
    const double scale = cv.scale, sa = cv.scale_acc;
    error_bound eb;
    eb.compute = eltwise::map_bound(in[0], ref[0], [&](double x, double y) {
      if (!std::isfinite(x) || !std::isfinite(y) || p.dt.dst == dtype::boolean) return 0.0;
      const double xa = cv.s.load(x);
      double e = std::fabs(xa - x) * std::fabs(sa) + std::fabs(x) * std::fabs(sa - scale);
      if (scale != 1.0) e += m.rounding(xa * sa);
      return e * m.second_order();
    });
    eb.formula = fmt::format("|x_acc - x||s_acc| + |x||s_acc - scale| + u|x_acc s_acc| (scale={}, s_acc={}); {}",
                             scale, sa, m.describe());
    std::vector<error_bound> v;
    v.push_back(std::move(eb));
    return v;
  }

  std::vector<std::string> suite(std::string_view tag) const override {
    if (tag == "smoke") return smoke_suite();
    if (tag != "regression") return {};
    std::vector<std::string> lines;
    for (dtype a : all_types)
      for (dtype b : all_types) {
        // The runner's bias test reads the repeated rounding errors of a few distinct values
        // as bias: ties only where dst has many values, scaling only sources with many values.
        const bool many_src = traits(a).precision >= 8 || (!is_float(a) && a != dtype::boolean);
        const bool many_dst = traits(b).precision >= 8 || (!is_float(b) && traits(b).is_signed);
        eltwise::suite_axis fills{"", "fill=special", "fill=wide", "fill=large", "fill=uniform"};
        if (many_dst && many_src) fills.push_back("fill=ties");
        eltwise::suite_axis modes{"", "saturate=1", "denorm=ftz"};
        if (many_src) eltwise::append(modes, {"scale=0.3", "scale=100", "scale=100 saturate=1"});
        const eltwise::suite_axis axes[] = {
            {"shape=1031", "shape=1", "shape=37x41 stride_pad=3 step=2"}, fills, modes};
        const std::string c[] = {contract_text(a, b)};
        eltwise::append(lines, eltwise::covering_lines(name(), axes, c));
      }
    return lines;
  }

 protected:
  double flops_per_element(const problem& p) const override { return p.get_real("scale") == 1.0 ? 1 : 2; }

 private:
  static eltwise::fill_ranges ranges(const problem& p) {
    const dtype src = p.dt.src, dst = p.dt.dst;
    eltwise::fill_ranges r;
    const double s = std::max(std::fabs(p.get_real("scale")), 1e-30);
    // `large` reaches twice dst's max after scaling: the overflow and saturation paths.
    r.large_scale = std::min({0.5 * traits(src).max, 2 * traits(dst).max / s, 1e30});
    if (is_float(dst)) {
      // `wide` reaches below dst's smallest subnormal and above its max.
      const int span = -traits(dst).min_exponent + traits(dst).precision + 2;
      r.wide_exponents = std::clamp(2 * span, 20, 300);
    }
    return r;
  }

  // Small integers for bool ends (so both 0 and 1 occur), integers for integer sources,
  // normal(0, 3) otherwise.
  static fill_params default_fill(dtype src, dtype dst) {
    fill_params f;
    if (src == dtype::boolean || dst == dtype::boolean) {
      f.kind = fill_kind::exact;
      f.exact_range = 1;
      f.density = 0.5;
    } else if (!is_float(src)) {
      f.kind = fill_kind::uniform;
      f.lo = std::max(traits(src).lowest, -300.0);
      f.hi = std::min(traits(src).max, 300.0);
    } else {
      f.scale = 3.0;
    }
    return f;
  }

  std::vector<std::string> smoke_suite() const {
    const std::pair<dtype, dtype> pairs[] = {
        {dtype::f32, dtype::bf16},    {dtype::f32, dtype::f16},     {dtype::f32, dtype::f8_e4m3},
        {dtype::f32, dtype::f8_e5m2}, {dtype::bf16, dtype::f8_e4m3}, {dtype::f16, dtype::f8_e5m2},
        {dtype::f32, dtype::i8},      {dtype::f32, dtype::u8},      {dtype::i32, dtype::f32},
        {dtype::f16, dtype::f32},     {dtype::f8_e4m3, dtype::f32}, {dtype::boolean, dtype::f32},
        {dtype::f32, dtype::boolean}, {dtype::i8, dtype::f16},      {dtype::f64, dtype::f32}};
    std::vector<std::string> cs;
    for (auto [a, b] : pairs) cs.push_back(contract_text(a, b));
    const eltwise::suite_axis axes[] = {{"shape=257", "shape=13x17 stride_pad=3 step=2"},
                                        {"", "fill=special"},
                                        {"", "saturate=1", "scale=100"}};
    std::vector<std::string> lines = eltwise::covering_lines(name(), axes, cs);
    // Every supported pair once, so smoke covers every contract of the op.
    for (dtype a : all_types)
      for (dtype b : all_types) lines.push_back(fmt::format("{} shape=257 dt={}", name(), contract_text(a, b)));
    return lines;
  }
};

OPVAL_REGISTER_OP(cast_spec);

}  // namespace opval::ops::cast
