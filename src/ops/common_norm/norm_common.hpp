#pragma once
// What the normalizations share (layer_norm, rms_norm, group_norm). Each computes, per
// normalized row of n elements,
//   y = (x - c) * rsqrt(P + eps) * gamma [+ beta]
// with c = mean(x), P = mean((x - c)^2) when centred (layer_norm, group_norm) and c = 0,
// P = mean(x^2) when not (rms_norm). Which elements form a row and which gamma/beta element
// each uses is the op's `geometry` (the trailing norm_axes dims for layer_norm and rms_norm;
// a group of channels with their spatial extent for group_norm): the fill, fp64 reference,
// contract-exact emulation (with legitimate kernel variants for tests) and error model are
// written once here for any geometry (norm_common.cpp).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opval/op_spec.hpp"
#include "ops/common_reduce/summation.hpp"

namespace opval::ops::norm {

/// Below this many elements a parallel loop costs more (thread wake-up) than it saves.
inline constexpr std::int64_t parallel_threshold = 1 << 15;

/// The statistics: centred (mean and variance, gamma and beta: layer_norm, group_norm) or
/// not (mean square, gamma only: rms_norm).
enum class norm_kind : std::uint8_t { layer, rms };

/// How a kernel computes the variance. two_pass and welford (incl. Chan's pairwise merging)
/// are legitimate and covered by the bound; one_pass (E[x^2] - E[x]^2) is not: it loses
/// |mean|^2/var digits and may fail on rows whose mean dwarfs their spread (fill=cancel).
enum class variance_algo : std::uint8_t { two_pass, welford, one_pass };

/// The algorithm choices of one kernel. sim uses the defaults; tests use the others as
/// legitimately different kernels (and eps_override as a planted bug).
struct kernel_variant {
  variance_algo variance = variance_algo::two_pass;
  reduce::sum_order order = reduce::sum_order::forward;
  double eps_override = -1;  ///< >= 0: use this eps instead of the problem's
};

/// The normalization geometry, the typed parameters of one problem: x's logical elements
/// (row-major over its shape) form `rows` consecutive runs of n elements, each normalized on
/// its own; element i of row r uses gamma/beta element param_index(r, i).
struct geometry {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  dims param_shape;  ///< shape of gamma and beta
  /// Rows cycle through this many blocks of parameters (group_norm: the groups of a sample).
  std::int64_t param_groups = 1;
  /// Consecutive row elements sharing one parameter (group_norm: the spatial extent).
  std::int64_t param_repeat = 1;
  double eps = 0;
  bool affine = true;
  /// layer_norm stats=1: outputs mean and inv_std per row after y (native_layer_norm's).
  bool stats = false;
  /// The dims of the statistics outputs: x's leading dims, 1 for each normalized one (keepdim).
  dims stats_shape;

  std::int64_t param_index(std::int64_t r, std::int64_t i) const {
    return ((r % param_groups) * n + i) / param_repeat;
  }
};

/// Op-specific fill: every third row constant (zero variance; half of them all zero).
inline constexpr std::string_view constant_rows_fill = "constant_rows";

/// The contracts the normalizations' suites cover, and the fills their regression suites
/// cycle through, in this order.
std::vector<std::string> suite_contracts();
std::vector<std::string> suite_fills();

/// The base of the normalization ops: everything but which elements form a row (geometry),
/// the attributes that say so, their layouts and the suites. A derived op's reference.cpp,
/// bound.cpp and suite.cpp override those stages by calling the family's functions below.
/// Why a norm problem cannot be judged ("" when it can): a row of one element without affine is
/// always beta (or 0) and tests nothing; a constant row of rms_norm without gamma repeats one
/// value (and one rounding error) n times, which the rounding-bias test, assuming independent
/// errors, reads as bias. The suites and the feature tables leave both out.
std::string norm_case_not_meaningful(norm_kind kind, const geometry& g, const std::string& fill);

class norm_spec : public op_spec {
 public:
  explicit norm_spec(norm_kind kind) : kind_(kind) {}
  norm_kind kind() const { return kind_; }

  /// Which elements form a row, their parameters, eps and affine: read once per call.
  virtual geometry geometry_of(const problem& p) const = 0;
  /// x's and y's layout (strides); row-major by default.
  virtual layout data_layout(const problem& p) const { return {}; }

  std::vector<std::string> fills() const override;
  std::vector<std::string> contracts() const override { return suite_contracts(); }
  /// The statistics in `mid`, the normalization through rsqrt.
  std::vector<std::string_view> contract_options() const override {
    return {"acc_round", "mid", "denorm", "dst_round", "ulp:rsqrt"};
  }
  /// The checks every norm shares (eps, fill, contract); derived ops check their shape first.
  void validate(const problem& p) const override;
  std::vector<operand> inputs(const problem& p) const override;
  std::vector<operand> outputs(const problem& p) const override;
  op_counts counts(const problem& p) const override;
  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override;
  /// A row of one element normalizes to exactly beta (centred, affine): perturb beta there.
  int perturbed_input(const problem& p) const override;

  /// The kernel `v` (sim's by default) on `in`: what simulate() runs; tests run the others.
  void simulate_with(const problem& p, std::span<const tensor> in, std::span<tensor> out,
                     const kernel_variant& v) const;

 protected:
  void norm_reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const;
  std::vector<error_bound> norm_bound(const problem& p, const fill_traits& f, const bound_options& o,
                                      std::span<const tensor> in) const;

 private:
  norm_kind kind_;
};

/// The norm op a problem names (its spec, as a norm_spec); throws opval::error otherwise.
const norm_spec& norm_of(const problem& p);

}  // namespace opval::ops::norm
