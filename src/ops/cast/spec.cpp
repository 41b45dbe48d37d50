// cast: attributes, contracts, validation, fills, cost and registration.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/fill.hpp"
#include "ops/cast/cast.hpp"
#include "opval/error.hpp"

namespace opval::ops::cast {
namespace {

// The natural accumulation type of a conversion: f64 when an end needs more than f32 holds.
dtype natural_acc(dtype src, dtype dst) {
  auto wide = [](dtype t) { return t == dtype::f64 || t == dtype::i32 || t == dtype::i64; };
  return wide(src) || wide(dst) ? dtype::f64 : dtype::f32;
}

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

// Dequantize's scales: powers of two 2^-8 .. 2^8 for e8m0, values in [1/64, 64] for e4m3.
void fill_block_scales(tensor& t, std::uint64_t seed) {
  fill_params f;
  f.kind = fill_kind::uniform;
  f.lo = -8.0;
  f.hi = 8.0;
  tensor exponents(dtype::f64, t.shape());
  fill_tensor(exponents, f, seed, 1);
  const bool powers = t.type() == dtype::f8_e8m0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double e = exponents.at(i);
    t.set_at(i, powers ? std::ldexp(1.0, static_cast<int>(std::lround(e))) : std::exp2(0.75 * e));
  }
}

}  // namespace

cast_params params_of(const problem& p) {
  const std::string& r = p.get_choice("e8m0_round");
  const e8m0_rounding m = r == "up" ? e8m0_rounding::up : r == "down" ? e8m0_rounding::down : e8m0_rounding::nearest;
  return {p.get_real("scale"), p.get_bool("saturate"), p.get_bool("saturate_inf"), m};
}

std::vector<std::pair<dtype, dtype>> contract_pairs() {
  std::vector<std::pair<dtype, dtype>> pairs;
  for (dtype a : all_types)
    for (dtype b : all_types) pairs.emplace_back(a, b);
  for (dtype n : narrow_types)
    for (dtype w : wide_types) pairs.insert(pairs.end(), {{w, n}, {n, w}});
  return pairs;
}

std::string contract_text(dtype src, dtype dst) {
  contract c;
  c.src = c.wei = c.math = src;
  c.acc = c.mid = natural_acc(src, dst);
  c.dst = dst;
  return c.types_string();
}

std::string_view cast_spec::name() const { return "cast"; }
std::string_view cast_spec::summary() const {
  return "y = convert(x * scale) between any two types, saturating or not";
}
const attr_schema& cast_spec::schema() const {
  static const attr_schema s = make_schema(
      real_attr("scale", 1.0, "x is multiplied by scale (rounded to acc) before the conversion"),
      bool_attr("saturate", false,
                "float dst: finite overflow gives +-max instead of Inf (NaN for f8_e4m3); integer dst always saturates"),
      bool_attr("saturate_inf", false,
                "with saturate=1: +-Inf also becomes +-max (ONNX Cast's saturate, e.g. to f8_e5m2: +-57344)"),
      int_attr("block", 0,
               "block scaling (MX, NVFP4): elements per scale along the innermost axis; 0: none, else a "
               "quantize (wide -> y, y_scale) or dequantize (x, x_scale -> wide)",
               0, 1 << 20),
      common_block::block_scale_attr(),
      choice_attr("e8m0_round", "nearest", {"nearest", "up", "down"},
                  "f8_e8m0 dst only: the nearer power of two (ties up), or the one at or above / at or below "
                  "(ONNX Cast's round_mode; ONNX's default is up)"));
  return s;
}
std::vector<std::string> cast_spec::fills() const {
  auto f = op_spec::fills();
  f.push_back("ties");
  return f;
}
std::vector<std::string> cast_spec::contracts() const {
  std::vector<std::string> cs{contract_text(dtype::f32, dtype::bf16)};
  for (auto [a, b] : contract_pairs())
    if (!(a == dtype::f32 && b == dtype::bf16)) cs.push_back(contract_text(a, b));
  return cs;
}

void cast_spec::validate(const problem& p) const {
  validate_operands(p);
  if (!eltwise::is_compute_type(p.dt.acc) || p.dt.rounds_inputs() || p.dt.dst == dtype::tf32)
    throw error(fmt::format("cast does not support contract {} (acc one of f64 f32 f16 bf16; no @math)",
                            p.dt.types_string()));
  const cast_params cp = params_of(p);
  if (!std::isfinite(cp.scale)) throw error("scale must be finite");
  if (cp.saturate_inf && !cp.saturate) throw error("saturate_inf=1 needs saturate=1");
  if (cp.saturate_inf && !traits(p.dt.dst).has_inf)
    throw error(fmt::format("saturate_inf=1 maps +-Inf to +-max of a destination with infinities; {} has none",
                            to_string(p.dt.dst)));
  if (p.has("e8m0_round") && p.dt.dst != dtype::f8_e8m0)
    throw error(fmt::format("e8m0_round applies to an f8_e8m0 destination only; this cast's is {}",
                            to_string(p.dt.dst)));
  if (cp.e8m0_round != e8m0_rounding::nearest && p.dt.dst_round != rounding::rne)
    throw error(fmt::format("e8m0_round={} and dst_round=rz both choose the rounding to f8_e8m0; give one",
                            p.get_choice("e8m0_round")));
  block_format_of(p);  // throws for an inconsistent block format
}

std::vector<operand> cast_spec::inputs(const problem& p) const {
  auto ops = unary_spec::inputs(p);
  if (const auto f = block_format_of(p); f && !f->quantize)
    ops.push_back({"x_scale", f->scale_type, scale_shape(p.get_dims("shape"), f->block), {}});
  return ops;
}

std::vector<operand> cast_spec::outputs(const problem& p) const {
  auto ops = unary_spec::outputs(p);
  if (const auto f = block_format_of(p); f && f->quantize)
    ops.push_back({"y_scale", f->scale_type, scale_shape(p.get_dims("shape"), f->block), {}});
  return ops;
}

fill_traits cast_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const dtype src = p.dt.src, dst = p.dt.dst;
  const bool ties = p.fill == "ties";
  fill_params f = eltwise::eltwise_fill_params(ties ? "normal" : p.fill, ranges(p));
  if (p.fill == "default") f = default_fill(src, dst);
  fill_tensor(in[0], f, seed, 0);
  if (ties) make_ties(in[0], dst);
  if (in.size() > 1) fill_block_scales(in[1], seed);
  return eltwise::eltwise_fill_traits(ties ? "normal" : p.fill, true);
}

double cast_spec::flops_per_element(const problem& p) const { return params_of(p).scale == 1.0 ? 1 : 2; }

eltwise::fill_ranges cast_spec::ranges(const problem& p) {
  const dtype src = p.dt.src, dst = p.dt.dst;
  eltwise::fill_ranges r;
  const double s = std::max(std::fabs(params_of(p).scale), 1e-30);
  // `large` reaches twice dst's max after scaling: the overflow and saturation paths.
  r.large_scale = std::min({0.5 * traits(src).max, 2 * traits(dst).max / s, 1e30});
  if (is_float(dst)) {
    // `wide` reaches below dst's smallest subnormal and above its max.
    const int span = -traits(dst).min_exponent + traits(dst).precision + 2;
    r.wide_exponents = std::clamp(2 * span, 20, 300);
  }
  return r;
}

fill_params cast_spec::default_fill(dtype src, dtype dst) {
  fill_params f;
  if (src == dtype::boolean || dst == dtype::boolean) {
    f.kind = fill_kind::exact;
    f.exact_range = 1;
    f.density = 0.5;
  } else if (src == dtype::f8_e8m0) {  // positive powers of two: a normal fill would be half NaN
    f.kind = fill_kind::uniform;
    f.lo = 0x1p-20;
    f.hi = 0x1p20;
  } else if (!is_float(src)) {
    f.kind = fill_kind::uniform;
    f.lo = std::max(traits(src).lowest, -300.0);
    f.hi = std::min(traits(src).max, 300.0);
  } else {
    f.scale = 3.0;
  }
  return f;
}

OPVAL_REGISTER_OP(cast_spec);

}  // namespace opval::ops::cast
