#pragma once
// cast: y = convert_dst(x * scale), between any two of the 11 types (f64 f32 f16 bf16
// f8_e4m3 f8_e5m2 i8 u8 i32 i64 bool), and between the narrow formats (f8_e4m3fnuz f8_e5m2fnuz
// f8_e8m0 f4_e2m1 f6_e2m3 f6_e3m2 i4 u4) and f64 f32 f16 bf16. Contract `src:acc:dst`: x is stored as src, converted
// to acc, multiplied by scale rounded to acc (skipped when scale = 1, as a plain conversion
// does: fp8/int8 quantization uses scale != 1), then rounded to dst with dst_round.
//
// Semantics (as opval::round_to defines the conversions):
// - float dst, saturate=0: a finite value beyond the rounding threshold becomes Inf (NaN for
//   f8_e4m3, which has no Inf): cast of 1000 to e4m3 is NaN, to e5m2 is Inf.
// - float dst, saturate=1: finite values beyond max become +-max; +-Inf stays +-Inf where dst
//   has Inf and becomes +-max where it has not (e4m3). NaN stays NaN.
// - saturate_inf=1 (with saturate=1): +-Inf also becomes +-max, as ONNX's saturating Cast to
//   f8_e5m2 does.
// - dst without Inf and NaN (f4_e2m1, f6_*): always saturating; NaN becomes 0.
// - f8_e8m0 dst: powers of two, ties up; zero, negatives and NaN become NaN. e8m0_round=up|down
//   rounds to the power of two above / below instead (ONNX Cast's round_mode).
// - integer dst: always saturating to [lowest, max]; NaN becomes 0; rounding per dst_round
//   (rne, or rz as C's conversion does).
// - bool dst: nonzero (NaN included) is 1.
// The reference is x * scale exactly, clamped to dst's range where dst saturates, and the
// overflow value (Inf / NaN / max) where the acc value overflows dst.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/cast/block_scaling.hpp"
#include "ops/common_eltwise/eltwise_fill.hpp"
#include "ops/common_eltwise/eltwise_math.hpp"
#include "ops/common_eltwise/unary_spec.hpp"

namespace opval::ops::cast {

/// How a value is rounded to f8_e8m0 (ONNX Cast's round_mode): to the nearer power of two, ties
/// up (OCP MX, ml_dtypes), or to the power of two at or above / at or below it.
enum class e8m0_rounding { nearest, up, down };

/// cast's own attributes, read from the problem.
struct cast_params {
  double scale = 1.0;     ///< x is multiplied by scale (rounded to acc) before the conversion
  bool saturate = false;  ///< float dst: finite overflow gives +-max instead of Inf
  bool saturate_inf = false;  ///< with saturate: +-Inf becomes +-max too (ONNX Cast)
  e8m0_rounding e8m0_round = e8m0_rounding::nearest;  ///< an f8_e8m0 dst's rounding
};

cast_params params_of(const problem& p);

/// v rounded to f8_e8m0 in mode m: nearest is round_to's rne, down its rz (2^floor(log2 v)),
/// up 2^ceil(log2 v). Zero, negatives, NaN, Inf and the range ends as round_to says for every
/// mode: NaN for zero, negatives and NaN; 2^-127 below it; beyond 2^127 (up: above it) NaN, or
/// 2^127 with overflow::saturate (down: always).
double round_e8m0(double v, e8m0_rounding m, overflow o);

/// The 11 types cast converts between.
inline constexpr dtype all_types[] = {dtype::f64,     dtype::f32,     dtype::f16, dtype::bf16, dtype::f8_e4m3,
                                      dtype::f8_e5m2, dtype::i8,      dtype::u8,  dtype::i32,  dtype::i64,
                                      dtype::boolean};

/// The narrow formats, converted to and from wide_types only.
inline constexpr dtype narrow_types[] = {dtype::f8_e4m3fnuz, dtype::f8_e5m2fnuz, dtype::f8_e8m0, dtype::f4_e2m1,
                                         dtype::f6_e2m3,     dtype::f6_e3m2,     dtype::i4,      dtype::u4};
inline constexpr dtype wide_types[] = {dtype::f64, dtype::f32, dtype::f16, dtype::bf16};

/// Every (src, dst) pair with a contract: all_types squared, then each narrow type from and to
/// each wide type.
std::vector<std::pair<dtype, dtype>> contract_pairs();

/// The contract of the conversion src -> dst, with its natural accumulation type.
std::string contract_text(dtype src, dtype dst);

// One conversion as the contract performs it.
struct converter {
  explicit converter(const problem& p);
  converter(const contract& dt, const cast_params& cp);

  // x * scale in acc (the value the kernel rounds to dst).
  double acc_value(double x) const;
  // v rounded to dst (e8m0_round's direction for an f8_e8m0 dst), overflowing as ovf says.
  double rounded(double v) const;
  double to_dst(double v) const;
  // The exact result, kept unrounded inside dst's range (the runner judges the rounding).
  double reference(double x) const;

  contract c;
  eltwise::acc_steps s;
  double scale, scale_acc;
  overflow ovf;
  bool inf_to_max;
  e8m0_rounding e8m0_round;
  // The rounding to dst is directed by e8m0_round (up or down), not to nearest.
  bool directed() const;
};

/// Whether a cast from `src` / to `dst` has many distinct values: the runner's rounding-bias
/// test reads the repeated rounding errors of a few values as bias, so tie-breaking fills need
/// many values on both ends, and scaling many source values.
bool many_source_values(dtype src);
bool many_destination_values(dtype dst);

/// The error of the acc value of x before its rounding to dst (cast's compute bound).
double acc_error(const converter& cv, const eltwise::acc_error_model& m, double x);

/// Block-scaled casts (block_scaling.hpp): the reference (exact = true) or the contract's
/// computation.
void block_scaled(const problem& p, const block_format& f, bool exact, std::span<const tensor> in,
                  std::span<tensor> out);
/// Their compute bounds, one per output.
std::vector<error_bound> block_scaled_bound(const problem& p, const block_format& f, std::span<const tensor> in,
                                            std::span<const tensor> ref);

class cast_spec final : public eltwise::unary_spec {
 public:
  std::string_view name() const override;
  std::string_view summary() const override;
  const attr_schema& schema() const override;
  std::vector<std::string> fills() const override;
  /// contract_pairs(); f32:f32:bf16 first (the default).
  std::vector<std::string> contracts() const override;
  void validate(const problem& p) const override;
  /// With block > 0, the scales: an input x_scale (dequantize) or an output y_scale (quantize).
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override;
  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override;
  std::vector<std::string> suite(std::string_view tag) const override;
  /// Shapes and layouts, fills, saturation, flush-to-zero and scaling, at every pair of types.
  feature_table features() const override;

 protected:
  double flops_per_element(const problem& p) const override;

 private:
  static eltwise::fill_ranges ranges(const problem& p);
  // Small integers for bool ends (so both 0 and 1 occur), integers for integer sources,
  // normal(0, 3) otherwise.
  static fill_params default_fill(dtype src, dtype dst);
  std::vector<std::string> smoke_suite() const;
};

}  // namespace opval::ops::cast
