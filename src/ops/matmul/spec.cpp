// The matmul op spec: schema, shapes, fill, fp64 reference, contract-exact simulation, bound.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/common_gemm/blocked_gemm.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval::ops::matmul {

using namespace common_gemm;

matmul_shape read_shape(const problem& p) {
  matmul_shape s;
  s.m = p.get_int("m");
  s.n = p.get_int("n");
  s.k = p.get_int("k");
  s.batch_a = p.get_dims("batch_a");
  s.batch_b = p.get_dims("batch_b");
  const std::size_t rank = std::max(s.batch_a.size(), s.batch_b.size());
  s.batch.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - s.batch_a.size() ? 1 : s.batch_a[i - (rank - s.batch_a.size())];
    const std::int64_t db = i < rank - s.batch_b.size() ? 1 : s.batch_b[i - (rank - s.batch_b.size())];
    if (da < 1 || db < 1) throw error("batch_a / batch_b extents must be >= 1");
    if (da != db && da != 1 && db != 1)
      throw error("batch_a=" + to_string(s.batch_a) + " and batch_b=" + to_string(s.batch_b) +
                  " do not broadcast (extents must match or be 1)");
    s.batch[i] = std::max(da, db);
  }
  s.batch_count = element_count(s.batch);
  return s;
}

layout matrix_layout(const dims& batch, std::int64_t rows, std::int64_t cols, bool transposed,
                     std::int64_t ld) {
  // Stored as (transposed ? cols x rows : rows x cols) with a padded leading dimension.
  const std::int64_t inner = transposed ? rows : cols, outer = transposed ? cols : rows;
  const std::int64_t lead = ld == 0 ? inner : ld;
  layout lay;
  lay.strides.assign(batch.size() + 2, 1);
  const std::size_t r = batch.size();
  lay.strides[r] = transposed ? 1 : lead;
  lay.strides[r + 1] = transposed ? lead : 1;
  std::int64_t stride = outer * lead;
  for (std::size_t i = r; i-- > 0;) {
    lay.strides[i] = stride;
    stride *= batch[i];
  }
  return lay;
}

namespace {

// For each output batch (row-major over `out`), the linear batch index of an operand with
// batch dims `in` (right-aligned; extents of 1 broadcast).
std::vector<std::int64_t> broadcast_map(const dims& out, const dims& in) {
  const std::int64_t count = element_count(out);
  std::vector<std::int64_t> map(count);
  const std::size_t off = out.size() - in.size();
  for (std::int64_t ob = 0; ob < count; ++ob) {
    std::int64_t rem = ob, idx = 0, mul = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
      const std::int64_t coord = rem % out[d];
      rem /= out[d];
      if (d >= off) {
        const std::int64_t extent = in[d - off];
        idx += (extent == 1 ? 0 : coord) * mul;
        mul *= extent;
      }
    }
    map[ob] = idx;
  }
  return map;
}

dims with_matrix(dims batch, std::int64_t rows, std::int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

// Input indices of the optional operands (-1 when absent).
struct operand_slots {
  int c = -1, bias = -1, residual = -1, scale = -1;
};

operand_slots slots_of(const epilogue_spec& e) {
  operand_slots s;
  int next = 2;
  if (e.beta != 0.0) s.c = next++;
  if (e.has_bias) s.bias = next++;
  if (e.has_residual) s.residual = next++;
  if (e.per_channel) s.scale = next++;
  return s;
}

// The largest |x - zp| over the values of integer type t.
double max_centered(dtype t, std::int64_t zp) {
  return std::max(std::abs(traits(t).lowest - double(zp)), std::abs(traits(t).max - double(zp)));
}

// Everything the three fp64 passes (reference, bound) and the simulation share: per output
// batch, the dot products of the batch's A and B slices.
template <class DotFn>
void for_each_batch(const matmul_shape& s, DotFn&& dot) {
  const auto map_a = broadcast_map(s.batch, s.batch_a), map_b = broadcast_map(s.batch, s.batch_b);
  for (std::int64_t ob = 0; ob < s.batch_count; ++ob)
    dot(ob, map_a[ob] * s.m * s.k, map_b[ob] * s.k * s.n);
}

// The epilogue operand values of output element `linear` (= (ob*m + i)*n + j).
struct epilogue_reader {
  const epilogue_spec& e;
  operand_slots slots;
  std::vector<double> c, bias, residual, scale;

  epilogue_reader(const epilogue_spec& spec, std::span<const tensor> in)
      : e(spec), slots(slots_of(spec)) {
    if (slots.c >= 0) c = in[slots.c].to_vector();
    if (slots.bias >= 0) bias = in[slots.bias].to_vector();
    if (slots.residual >= 0) residual = in[slots.residual].to_vector();
    if (slots.scale >= 0) scale = in[slots.scale].to_vector();
  }
  epilogue_inputs at(std::int64_t linear, std::int64_t j) const {
    epilogue_inputs v;
    v.scale_b = scale.empty() ? e.scale_b : scale[j];
    if (!c.empty()) v.c = c[linear];
    if (!bias.empty()) v.bias = bias[j];
    if (!residual.empty()) v.residual = residual[linear];
    return v;
  }
};

// The exact dot products s (zero points removed) of every output, in fp64.
std::vector<double> exact_dots(const matmul_shape& s, const epilogue_spec& e, const tensor& ta,
                               const tensor& tb, bool absolute) {
  auto a = centered(ta.to_vector(), e.zp_a), b = centered(tb.to_vector(), e.zp_b);
  if (absolute) {
    for (double& x : a) x = std::abs(x);
    for (double& x : b) x = std::abs(x);
  }
  std::vector<double> out(s.batch_count * s.m * s.n);
  for_each_batch(s, [&](std::int64_t ob, std::int64_t oa, std::int64_t obb) {
    reference_gemm(s.m, s.n, s.k, a.data() + oa, b.data() + obb, out.data() + ob * s.m * s.n);
  });
  return out;
}

class matmul_spec final : public op_spec {
 public:
  std::string_view name() const override { return "matmul"; }
  std::string_view summary() const override {
    return "batched GEMM (broadcast, transposes, padded ld) with alpha/beta, bias, activation, residual; float, fp8, int8";
  }
  const attr_schema& schema() const override { return schema_; }
  std::vector<std::string> contracts() const override { return gemm_contracts(); }

  void validate(const problem& p) const override {
    check_contract("matmul", p.dt);
    const matmul_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, true);
    const std::int64_t lda = p.get_int("lda"), ldb = p.get_int("ldb"), ldc = p.get_int("ldc");
    auto check_ld = [](const char* name, std::int64_t ld, std::int64_t min) {
      if (ld != 0 && ld < min)
        throw error(std::string(name) + "=" + std::to_string(ld) + " is smaller than the stored row length " +
                    std::to_string(min));
    };
    check_ld("lda", lda, p.get_bool("ta") ? s.m : s.k);
    check_ld("ldb", ldb, p.get_bool("tb") ? s.k : s.n);
    check_ld("ldc", ldc, s.n);
    if (e.integer_acc) {
      const double worst = double(s.k) * max_centered(p.dt.src, e.zp_a) * max_centered(p.dt.wei, e.zp_b);
      if (worst > 2147483647.0)
        throw error("k=" + std::to_string(s.k) + " can overflow the i32 accumulator with these zero points");
    }
  }

  std::vector<operand> inputs(const problem& p) const override {
    const matmul_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, true);
    std::vector<operand> ops;
    ops.push_back({"A", p.dt.src, with_matrix(s.batch_a, s.m, s.k),
                   matrix_layout(s.batch_a, s.m, s.k, p.get_bool("ta"), p.get_int("lda"))});
    ops.push_back({"B", p.dt.wei, with_matrix(s.batch_b, s.k, s.n),
                   matrix_layout(s.batch_b, s.k, s.n, p.get_bool("tb"), p.get_int("ldb"))});
    const dims out = with_matrix(s.batch, s.m, s.n);
    if (e.beta != 0.0) ops.push_back({"C", aux_type(p.dt), out, matrix_layout(s.batch, s.m, s.n, false, p.get_int("ldc"))});
    if (e.has_bias) ops.push_back({"bias", aux_type(p.dt), {s.n}, {}});
    if (e.has_residual) ops.push_back({"residual", aux_type(p.dt), out, {}});
    if (e.per_channel) ops.push_back({"scale_b", dtype::f32, {s.n}, {}});
    return ops;
  }

  std::vector<operand> outputs(const problem& p) const override {
    const matmul_shape s = read_shape(p);
    return {{"dst", p.dt.dst, with_matrix(s.batch, s.m, s.n),
             matrix_layout(s.batch, s.m, s.n, false, p.get_int("ldc"))}};
  }

  op_counts counts(const problem& p) const override {
    const matmul_shape s = read_shape(p);
    op_counts c;
    c.flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch_count);
    for (const auto& list : {inputs(p), outputs(p)})
      for (const auto& o : list) c.bytes += double(element_count(o.shape)) * traits(o.type).size_bytes;
    return c;
  }

  fill_traits fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const override {
    const epilogue_spec e = read_epilogue(p, true);
    const operand_slots sl = slots_of(e);
    std::vector<operand_role> roles(in.size(), operand_role::a);
    roles[1] = operand_role::b;
    if (sl.c >= 0) roles[sl.c] = operand_role::c;
    if (sl.bias >= 0) roles[sl.bias] = operand_role::bias;
    if (sl.residual >= 0) roles[sl.residual] = operand_role::residual;
    if (sl.scale >= 0) roles[sl.scale] = operand_role::scale;
    return fill_gemm(p, e, read_shape(p).k, roles, seed, in);
  }

  void reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const matmul_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, true);
    const std::vector<double> dots = exact_dots(s, e, in[0], in[1], false);
    const epilogue_reader rd(e, in);
    std::vector<double> y(dots.size());
#pragma omp parallel for schedule(static) if (y.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(y.size()); ++i)
      y[i] = epilogue_reference(e, dots[i], rd.at(i, i % s.n));
    if (e.integer_dst)  // saturation is part of an integer output's meaning
      for (double& v : y) v = std::clamp(v, traits(p.dt.dst).lowest, traits(p.dt.dst).max);
    out[0].assign(y);
  }

  void simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const override {
    const matmul_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, true);
    const std::vector<double> a = in[0].to_vector(), b = in[1].to_vector();
    std::vector<double> acc(s.batch_count * s.m * s.n);
    for_each_batch(s, [&](std::int64_t ob, std::int64_t oa, std::int64_t obb) {
      simulate_dot(p.dt, e, s.m, s.n, s.k, std::span(a).subspan(oa, s.m * s.k),
                   std::span(b).subspan(obb, s.k * s.n), std::span(acc).subspan(ob * s.m * s.n, s.m * s.n));
    });
    const epilogue_reader rd(e, in);
#pragma omp parallel for schedule(static) if (acc.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(acc.size()); ++i)
      acc[i] = epilogue_simulate(p.dt, e, acc[i], rd.at(i, i % s.n));
    out[0].assign(acc, p.dt.dst_round);
  }

  std::vector<error_bound> bound(const problem& p, const fill_traits& f, const bound_options& o,
                                 std::span<const tensor> in, std::span<const tensor> ref) const override {
    const matmul_shape s = read_shape(p);
    const epilogue_spec e = read_epilogue(p, true);
    const double outputs = double(s.batch_count * s.m * s.n);
    const gemm_error_model model = make_error_model(p, e, double(s.k), outputs, f, o);
    const std::vector<double> dots = exact_dots(s, e, in[0], in[1], false);
    const std::vector<double> abs_dots = e.integer_acc ? dots : exact_dots(s, e, in[0], in[1], true);
    const epilogue_reader rd(e, in);
    std::vector<double> b(dots.size());
#pragma omp parallel for schedule(static) if (b.size() > 4096)
    for (std::int64_t i = 0; i < std::int64_t(b.size()); ++i) {
      const double v = epilogue_error(e, model.k, abs_dots[i], dots[i], rd.at(i, i % s.n));
      b[i] = std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
    }
    error_bound eb;
    eb.compute = make_f64(with_matrix(s.batch, s.m, s.n), b);
    eb.formula = epilogue_formula(e, model.k, model.g.formula);
    eb.meaningful = model.g.meaningful;
    eb.why_not = model.g.why_not;
    return {eb};
  }

  std::vector<std::string> suite(std::string_view tag) const override { return matmul_suite(tag); }

 private:
  attr_schema schema_{
      int_attr("m", 1, "rows of A and dst", 1),
      int_attr("n", 1, "columns of B and dst", 1),
      int_attr("k", 1, "the reduction length", 1),
      dims_attr("batch_a", {}, "batch dims of A (broadcast against batch_b, NumPy rules)"),
      dims_attr("batch_b", {}, "batch dims of B"),
      bool_attr("ta", false, "A is stored transposed (k x m)"),
      bool_attr("tb", false, "B is stored transposed (n x k)"),
      int_attr("lda", 0, "leading dimension of stored A (0 = tight)", 0),
      int_attr("ldb", 0, "leading dimension of stored B (0 = tight)", 0),
      int_attr("ldc", 0, "leading dimension of dst and C (0 = tight)", 0),
      alpha_attr(),
      beta_attr(),
      bias_attr(),
      act_attr(),
      residual_attr(),
      scale_a_attr(),
      scale_b_attr(),
      scale_b_mode_attr(),
      zp_a_attr(),
      zp_b_attr(),
      scale_dst_attr(),
      zp_dst_attr(),
  };
};

}  // namespace

OPVAL_REGISTER_OP(matmul_spec);

}  // namespace opval::ops::matmul
