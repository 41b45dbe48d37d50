#pragma once
// softmax and log_softmax: one spec class, parameterized by the output form. The ops differ
// only in what a row computes (softmax_numerics.hpp), so attributes, contracts, fills,
// suites and the row plumbing live here once. Header-only: each op folder builds alone.
// Each op declares its class in its own folder (softmax/softmax.hpp, log_softmax/
// log_softmax.hpp) with its name and summary (spec.cpp) and its stages (reference.cpp,
// bound.cpp, suite.cpp), each a call into the family code here.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "opval/attr.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "core/error_model.hpp"
#include "core/fill.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "core/rng.hpp"
#include "ops/common_softmax/softmax_numerics.hpp"

namespace opval::ops::softmax {

/// The attributes of a softmax or log_softmax problem (the family's schema).
struct softmax_family_params {
  dims shape;             ///< tensor shape
  std::int64_t axis = -1; ///< axis normalized over; negative counts from the end
};

/// The attributes of `p`, read once.
inline softmax_family_params params_of(const problem& p) {
  return {p.get_dims("shape"), p.get_int("axis")};
}

/// The rows of a tensor along one axis: row r = (o, i) holds elements (o*len + j)*inner + i.
struct row_geometry {
  std::int64_t outer = 1, len = 1, inner = 1;
  std::int64_t rows() const { return outer * inner; }
  std::int64_t index(std::int64_t row, std::int64_t j) const {
    return ((row / inner) * len + j) * inner + row % inner;
  }
};

/// The geometry of `shape` along `axis` (negative counts from the end; validated).
inline row_geometry geometry_of(const dims& shape, std::int64_t axis) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  row_geometry g;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (d < a) g.outer *= shape[d];
    else if (d == a) g.len = shape[d];
    else g.inner *= shape[d];
  }
  return g;
}

/// Calls f(row, x_row, out_row) for every row in parallel, gathering x along the axis and
/// scattering out back (both row-major logical order).
template <class F>
void for_each_row(const row_geometry& g, const std::vector<double>& x, std::vector<double>& out, F&& f) {
  // Threads only when there is work to share: a parallel region on a busy machine waits for
  // every thread to be scheduled, which costs a tiny case milliseconds.
#pragma omp parallel if (x.size() >= 16384)
  {
    std::vector<double> xr(g.len), yr(g.len);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < g.rows(); ++r) {
      for (std::int64_t j = 0; j < g.len; ++j) xr[j] = x[g.index(r, j)];
      f(r, std::span<const double>(xr), std::span<double>(yr));
      for (std::int64_t j = 0; j < g.len; ++j) out[g.index(r, j)] = yr[j];
    }
  }
}

/// softmax (log = false) or log_softmax (log = true) over one axis of an arbitrary shape.
/// The ops' classes derive from it and give name(), summary() and the stage overrides.
class softmax_family_spec : public op_spec {
 public:
  explicit softmax_family_spec(bool log) : log_(log) {}

  const attr_schema& schema() const override {
    static const attr_schema s{
        dims_attr("shape", {8, 64}, "tensor shape, e.g. 8x64 or 2x3x17"),
        int_attr("axis", -1, "axis normalized over; negative counts from the end"),
    };
    return s;
  }
  std::vector<std::string> fills() const override {
    return {"normal", "uniform", "large", "special", "constant_rows"};
  }
  std::vector<std::string> contracts() const override {
    std::vector<std::string> c = float32_contracts();
    c.insert(c.end(), float64_contracts.begin(), float64_contracts.end());
    return c;
  }
  /// The contracts computing in f32 (the suites cycle through them).
  static std::vector<std::string> float32_contracts() {
    return {"f32:f32:f32", "bf16:f32:bf16", "f16:f32:f16", "bf16:f32:f32", "f32:f32:bf16", "f32:f32:f16"};
  }
  /// The generated suites' features.
  feature_table features() const override;
  /// A float64 output computed in float64, as PyTorch's softmax(x, dim, dtype=torch.float64)
  /// (the input converted to f64 first, exactly).
  static constexpr std::array<const char*, 3> float64_contracts = {"f32:f64:f64", "bf16:f64:f64", "f16:f64:f64"};

  void validate(const problem& p) const override {
    const softmax_family_params q = params_of(p);
    const dims& shape = q.shape;
    if (shape.empty()) throw error(fmt::format("{}: shape must have at least one dimension", name()));
    for (auto e : shape)
      if (e < 0) throw error(fmt::format("{}: shape {} has a negative extent", name(), to_string(shape)));
    const auto rank = static_cast<std::int64_t>(shape.size());
    const std::int64_t axis = q.axis;
    if (axis < -rank || axis >= rank)
      throw error(fmt::format("{}: axis={} is out of range for shape {} (rank {})", name(), axis,
                              to_string(shape), rank));
    const contract& c = p.dt;
    auto io_type = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
    const bool f32_acc = c.acc == dtype::f32 && io_type(c.dst);
    const bool f64_acc = c.acc == dtype::f64 && c.dst == dtype::f64;
    if (!io_type(c.src) || c.wei != c.src || c.math != c.src || !(f32_acc || f64_acc))
      throw error(fmt::format("{} does not support contract {} (inputs f32, bf16 or f16, no in-kernel input "
                              "rounding; accumulation f32 with outputs f32, bf16 or f16, or accumulation and "
                              "output f64)",
                              name(), c.types_string()));
  }

  std::vector<operand> inputs(const problem& p) const override {
    return {{"x", p.dt.src, params_of(p).shape, {}}};
  }
  std::vector<operand> outputs(const problem& p) const override {
    return {{"y", p.dt.dst, params_of(p).shape, {}}};
  }
  op_counts counts(const problem& p) const override {
    const double n = static_cast<double>(element_count(params_of(p).shape));
    // max, subtract, exp, add, divide (or subtract) per element
    return {5.0 * n, n * (traits(p.dt.src).size_bytes + traits(p.dt.dst).size_bytes)};
  }

  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    fill_traits t;
    fill_params fp;
    fp.kind = fill_kind::normal;
    fp.scale = 2.0;  // logits spread over a few units, as classifier outputs
    if (p.fill == "uniform") fp.kind = fill_kind::uniform, fp.lo = -4.0, fp.hi = 4.0;
    // exp(300) overflows f32 (and exp(89) already does): only max subtraction survives.
    if (p.fill == "large") fp.kind = fill_kind::large, fp.scale = 300.0;
    if (p.fill == "special") fp.kind = fill_kind::special, fp.special_rate = 0.02, t.has_specials = true;
    fill_tensor(in[0], fp, seed, 0);
    if (p.fill == "constant_rows") {
      make_rows_constant(p, seed, in[0]);
      t.repeated_values = true;  // a constant row has one output value, hence one rounding error
    }
    return t;
  }

 protected:
  // The stages, shared: each op's overrides (its reference.cpp, bound.cpp) call them.
  /// The fp64 reference: reference_row on every row (an all -inf row gives NaN).
  void family_reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
    const row_geometry g = geometry(p);
    const std::vector<double> x = in[0].to_vector();
    std::vector<double> y(x.size());
    for_each_row(g, x, y, [&](std::int64_t, std::span<const double> xr, std::span<double> yr) {
      reference_row(xr, yr, log_, empty_row::nan);
    });
    std::copy(y.begin(), y.end(), out[0].data_as<double>());
  }

  /// The contract-exact emulation: inputs to the contract, simulate_row in acc, outputs to dst.
  void family_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
    const contract_arith a(p.dt);
    const row_geometry g = geometry(p);
    std::vector<double> x = in[0].to_vector();
    for (auto& v : x) v = a.input(v);
    std::vector<double> y(x.size());
    for_each_row(g, x, y, [&](std::int64_t, std::span<const double> xr, std::span<double> yr) {
      simulate_row(xr, yr, log_, empty_row::nan, a);
      for (auto& v : yr) v = a.out(v);
    });
    out[0].assign(y);
  }

  /// The error model of softmax_numerics.hpp per row: probability_error (softmax) or
  /// log_probability_error (log_softmax), with the input rounding as the logit error dx.
  std::vector<error_bound> family_bound(const problem& p, const fill_traits& f, const bound_options& o,
                                        std::span<const tensor> in, std::span<const tensor> ref) const {
    const contract& c = p.dt;
    const softmax_family_params q = params_of(p);
    const row_geometry g = geometry_of(q.shape, q.axis);
    const bool final_rounding = c.acc == c.dst && c.acc_round == c.dst_round;
    const error_constants k =
        make_error_constants(static_cast<double>(g.len), static_cast<double>(g.rows()), c, o, final_rounding);
    const double u_final = final_rounding ? 0.0 : k.u;
    const std::vector<double> x = in[0].to_vector();
    std::vector<double> e(x.size());
    for_each_row(g, x, e, [&](std::int64_t, std::span<const double> xr, std::span<double> er) {
      std::fill(er.begin(), er.end(), 0.0);
      if (classify_row(xr).kind != row_kind::finite) return;  // NaN rows: exact NaN required
      std::vector<double> pr(xr.size()), dx(xr.size());
      reference_row(xr, pr, false, empty_row::nan);
      for (std::size_t j = 0; j < xr.size(); ++j) dx[j] = input_error(c, c.src, xr[j]);
      const row_bound b = bound_row(xr, pr, dx, k);
      const double m = classify_row(xr).max;
      for (std::size_t j = 0; j < xr.size(); ++j)
        er[j] = log_ ? log_probability_error(b, j, (xr[j] - m) - b.log_s, k, u_final)
                     : probability_error(b, j, pr[j]);
    });
    error_bound eb;
    eb.compute = make_f64(q.shape, e);
    eb.meaningful = k.meaningful;
    eb.why_not = k.why_not;
    eb.formula = log_ ? k.formula + "; log form: delta_j + L_s + log_ulps*eps*(log s + L_s) (+u|y| if acc != dst)"
                      : k.formula;
    return {eb};
  }

  /// The row-shape test (softmax_numerics.hpp, docs/NUMERICS.md "The row-shape test"): the
  /// kernel's rows and the reference's, each normalized by its own sum (or log-sum-exp), with
  /// a bound that has no n*u. Rows that are not finite, or whose kernel row has no finite
  /// positive sum, are left to the element-wise test (compared exactly to themselves here).
  std::vector<posterior_check> family_posterior(const problem& p, std::span<const tensor> in,
                                                std::span<const tensor> ref, std::span<const tensor> out) const {
    const contract& c = p.dt;
    const softmax_family_params q = params_of(p);
    const row_geometry g = geometry_of(q.shape, q.axis);
    const bool final_rounding = c.acc == c.dst && c.acc_round == c.dst_round;
    const shape_constants k = make_shape_constants(static_cast<double>(g.len), c, log_, final_rounding);
    const std::vector<double> x = in[0].to_vector(), expected = ref[0].to_vector(), got = out[0].to_vector();
    std::vector<double> got_n(x.size()), expected_n(x.size()), bound(x.size());
    // Rows in parallel (for_each_row), each writing its slice of the three outputs.
#pragma omp parallel if (x.size() >= 16384)
    {
      std::vector<double> xr(g.len), er(g.len), yr(g.len), dx(g.len), yn(g.len), en(g.len), br(g.len), pr(g.len);
#pragma omp for schedule(static)
      for (std::int64_t r = 0; r < g.rows(); ++r) {
        for (std::int64_t j = 0; j < g.len; ++j) {
          const std::int64_t i = g.index(r, j);
          xr[j] = x[i], er[j] = expected[i], yr[j] = got[i];
          dx[j] = input_error(c, c.src, x[i]);
        }
        std::fill(br.begin(), br.end(), 0.0);
        const double norm = classify_row(xr).kind == row_kind::finite ? normalize_row(yr, log_, yn) : 0.0;
        if (norm > 0 && normalize_row(er, log_, en) > 0) {
          for (std::int64_t j = 0; j < g.len; ++j) pr[j] = log_ ? std::exp(en[j]) : en[j];
          shape_bound_row(xr, dx, pr, yr, norm, log_, k, br);
        } else {
          yn = er, en = er;  // left to the element-wise test
        }
        for (std::int64_t j = 0; j < g.len; ++j) {
          const std::int64_t i = g.index(r, j);
          got_n[i] = yn[j], expected_n[i] = en[j], bound[i] = br[j];
        }
      }
    }
    posterior_check pc;
    pc.name = "row shape";
    pc.got = make_f64(q.shape, got_n);
    pc.expected = make_f64(q.shape, expected_n);
    pc.bound = make_f64(q.shape, bound);
    pc.formula = k.formula;
    pc.on_failure = log_ ? "each row shifted by its own log-sum-exp is distorted beyond a correct kernel's "
                           "per-term errors (no error common to the row, such as log(sum), explains it): a wrong "
                           "exp or log, rounded logits or outputs?"
                         : "each row divided by its own sum is distorted beyond a correct kernel's per-term errors "
                           "(no error common to the row, such as the denominator's, explains it): a wrong exp, "
                           "rounded logits or probabilities?";
    pc.on_pass = log_ ? "the rows are right up to an offset common to each row: log(sum) or the max is off"
                      : "the rows are right up to a factor common to each row: the denominator sum is off";
    return {pc};
  }

 private:
  row_geometry geometry(const problem& p) const {
    const softmax_family_params q = params_of(p);
    return geometry_of(q.shape, q.axis);
  }

  // Every other row becomes one value: the output is exactly uniform there, 1/n (or -log n).
  void make_rows_constant(const problem& p, std::uint64_t seed, tensor& x) const {
    const row_geometry g = geometry(p);
    for (std::int64_t r = 0; r < g.rows(); r += 2) {
      const double v = 2.0 * random_normal(seed, 1, static_cast<std::uint64_t>(r));
      for (std::int64_t j = 0; j < g.len; ++j) x.set_at(g.index(r, j), v);
    }
  }

  bool log_;
};

/// The suites of both ops: shapes where kernels break (size 1, primes, non-multiples of
/// 8/16/32, long rows, every axis position), every fill and every contract.
inline std::vector<std::string> softmax_family_suite(std::string_view op, std::string_view tag) {
  struct shape_fill {
    const char* shape;
    int axis;
    const char* fill;
  };
  std::vector<std::string> lines;
  auto add = [&](const std::string& shape, int axis, const std::string& dt, const std::string& fill) {
    lines.push_back(fmt::format("{} shape={} axis={} dt={} fill={}", op, shape, axis, dt, fill));
  };
  const std::vector<std::string> contracts = {"f32", "bf16:f32:bf16", "f16:f32:f16", "bf16:f32:f32", "f32:f32:bf16",
                                              "f32:f32:f16"};
  if (tag == "smoke") {  // every contract once, on a fill and axis that exercise it
    const shape_fill smoke[] = {{"4x33", -1, "normal"},  {"3x5x7", 1, "large"},     {"2x19", 0, "special"},
                                {"5x17", -1, "uniform"}, {"2x3x31", -2, "normal"}, {"3x129", -1, "constant_rows"}};
    for (std::size_t c = 0; c < contracts.size(); ++c) add(smoke[c].shape, smoke[c].axis, contracts[c], smoke[c].fill);
    return lines;
  }
  if (tag != "regression") return lines;
  const std::vector<std::string> fills = {"normal", "uniform", "large", "special", "constant_rows"};
  struct shape_axis {
    const char* shape;
    int axis;
  };
  const shape_axis shapes[] = {{"1", 0},      {"1x1", -1},       {"7", -1},         {"3x1", 1},
                               {"5x17", -1},  {"5x17", 0},       {"2x31x3", 1},     {"2x3x31", -2},
                               {"4x100", -1}, {"2x1000", 1},     {"2x3x4x5", 2},    {"3x2x2x37", -4},
                               {"1x4099", -1}, {"16x64", -1},    {"6x255", 1},
                               {"0x64", -1},  {"4x0", 0}};  // empty tensors
  auto contract_for = [&](const std::string&, std::size_t i) { return contracts[i % contracts.size()]; };
  std::size_t i = 0;
  for (const auto& s : shapes)
    for (const auto& fill : fills) add(s.shape, s.axis, contract_for(fill, i++), fill);
  // Every contract on every fill at one ragged size.
  for (std::size_t c = 0; c < contracts.size(); ++c)
    for (const auto& fill : fills) add("3x129", -1, contract_for(fill, c), fill);
  // float64 outputs: every fill, a long row, an inner axis.
  for (const char* dt : softmax_family_spec::float64_contracts)
    for (const auto& fill : fills) add("3x129", -1, dt, fill);
  add("2x4099", -1, "f32:f64:f64", "normal");
  add("5x17x3", 1, "bf16:f64:f64", "large");
  return lines;
}

/// The features of both ops' generated suites: the shapes and axes of the regression suite, the
/// fills, and directed accumulation and flush-to-zero.
inline feature_table softmax_family_spec::features() const {
  feature_table t;
  t.base = "shape=3x129 axis=-1";
  t.features = {{"shape and axis",
                 {"shape=1 axis=0", "shape=1x1 axis=-1", "shape=7 axis=-1", "shape=3x1 axis=1", "shape=5x17 axis=0",
                  "shape=2x31x3 axis=1", "shape=2x3x31 axis=-2", "shape=2x1000 axis=1", "shape=3x2x2x37 axis=-4",
                  "shape=1x4099 axis=-1", "shape=16x64 axis=-1", "shape=6x255 axis=1", "shape=0x64 axis=-1",
                  "shape=4x0 axis=0"}},
                {"fill", {"fill=uniform", "fill=large", "fill=special", "fill=constant_rows"}},
                {"contract option", {"acc_round=rz", "denorm=ftz"}}};
  return t;
}

}  // namespace opval::ops::softmax
