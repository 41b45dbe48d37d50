// Checksums of GEMM-like outputs (gemm_checksum.hpp; docs/NUMERICS.md "Sampled verification").
#include "ops/common_gemm/gemm_checksum.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error_model.hpp"
#include "core/rng.hpp"
#include "ops/common_gemm/gemm_core.hpp"

namespace opval::ops::common_gemm {
namespace {

constexpr int r_vectors = checksum_vectors;
constexpr std::uint64_t vector_salt = 0x6368656b73756d73ull;  // the checksum vectors' own seed stream

// Norms of one row (or column) of an operand, the envelope of its sums over K with any other.
struct norms {
  double l1 = 0, l2 = 0, l4 = 0;  // sum|v|, sqrt(sum v^2), sqrt(sum v^4)
};

template <class T>
norms norms_of(const T* v, std::int64_t count) {
  double s1 = 0, s2 = 0, s4 = 0;
#pragma omp simd reduction(+ : s1, s2, s4)
  for (std::int64_t i = 0; i < count; ++i) {
    const double x = static_cast<double>(v[i]), x2 = x * x;
    s1 += std::abs(x), s2 += x2, s4 += x2 * x2;
  }
  return {s1, std::sqrt(s2), std::sqrt(s4)};
}

norms max_of(const std::vector<norms>& all) {
  norms m;
  for (const norms& x : all) m.l1 = std::max(m.l1, x.l1), m.l2 = std::max(m.l2, x.l2), m.l4 = std::max(m.l4, x.l4);
  return m;
}

// An upper bound on the total bound b_ij (the op's error bound plus the output rounding) of
// every element whose row of A has norms `a` and column of B norms `b`, whose |C|, |bias|,
// |residual| and |scale_b| are at most the given values: epilogue_error is nondecreasing in
// |s|, sum|a||b|, sum a^2 b^2 and each epilogue operand's magnitude, and by Cauchy-Schwarz
// |s| <= sum|a||b| <= |a|_2 |b|_2 and sum a^2 b^2 <= |a^2|_2 |b^2|_2.
class element_envelope {
 public:
  element_envelope(const problem& p, const epilogue_spec& e, const gemm_error_model& model, double k)
      : c_(p.dt), e_(e), model_(model), k_(k) {
    e_.alpha = std::abs(e.alpha), e_.beta = std::abs(e.beta), e_.scale_a = std::abs(e.scale_a);
    e_.scale_b = std::abs(e.scale_b);
    alpha_a_ = input_absolute_error(p.dt, p.dt.src), alpha_b_ = input_absolute_error(p.dt, p.dt.wei);
  }

  double operator()(const norms& a, const norms& b, double c, double bias, double residual, double scale_b) const {
    const double mag = a.l2 * b.l2;
    const double reach = product_reach(alpha_a_, alpha_b_, model_.k.rho_prod, k_, a.l1, b.l1);
    const epilogue_inputs v{.scale_b = scale_b, .c = c, .bias = bias, .residual = residual};
    const double err = epilogue_error(e_, model_.k, {mag, mag, a.l4 * b.l4, reach}, v);
    const double y = dequant_factor(e_, scale_b) * mag + e_.beta * c + bias + residual;
    return err + output_rounding_bound(c_.dst, c_.dst_round, c_.denorm, y + err);
  }

 private:
  contract c_;
  epilogue_spec e_;
  const gemm_error_model& model_;
  double k_;
  double alpha_a_ = 0, alpha_b_ = 0;
};

// Per output batch, the sums each check compares: from the kernel's output (got), from the
// inputs (want), the magnitudes that bound the fp64 evaluation (mag), per vector t.
struct sums {
  std::vector<double> got, want, mag;  // [t * count + i]
  explicit sums(std::int64_t count) : got(r_vectors * count), want(r_vectors * count), mag(r_vectors * count) {}
};

// "rows 3..18 (16)" from sorted indices: at most four ranges, then the count of the rest.
std::string ranges_text(const std::vector<std::int64_t>& at, const char* what) {
  std::string text;
  std::size_t shown = 0, i = 0;
  while (i < at.size() && shown < 4) {
    std::size_t j = i;
    while (j + 1 < at.size() && at[j + 1] == at[j] + 1) ++j;
    text += fmt::format("{}{}", text.empty() ? "" : ", ",
                        i == j ? std::to_string(at[i]) : fmt::format("{}..{}", at[i], at[j]));
    ++shown, i = j + 1;
  }
  if (i < at.size()) text += fmt::format(" and {} more", at.size() - i);
  return fmt::format("{} {} ({} in all)", what, text, at.size());
}

// One output batch's checks: flags the rows and columns whose sums disagree beyond their
// thresholds and keeps the worst ratio.
struct batch_findings {
  std::vector<std::int64_t> rows, cols;
  double worst_ratio = 0;
  double median_row_threshold = 0;
};

// sum_j row[j] x[j] and sum_j |row[j]| x_abs[j] (x_abs = |x|, or a nonnegative weight),
// vectorised (the sums' order changes with the vector width; the threshold allows for it).
template <class T>
[[gnu::always_inline]] inline void dot2_body(const T* row, const double* x, const double* x_abs, std::int64_t n,
                                             double& s, double& s_abs) {
  double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (std::int64_t j = 0; j < n; ++j) {
    const double r = static_cast<double>(row[j]);
    a += r * x[j], b += std::abs(r) * x_abs[j];
  }
  s = a, s_abs = b;
}

// acc[j] += c row[j] and acc_abs[j] += c_abs |row[j]| (c_abs >= |c|).
template <class T>
[[gnu::always_inline]] inline void axpy2_body(double c, double c_abs, const T* row, std::int64_t n, double* acc,
                                              double* acc_abs) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) {
    const double r = static_cast<double>(row[j]);
    acc[j] += c * r, acc_abs[j] += c_abs * std::abs(r);
  }
}

// The two kernels for f32 and f64 rows, each cloned for AVX-512, AVX2 and the baseline.
#define OPVAL_CHECKSUM_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
OPVAL_CHECKSUM_CLONES void dot2(const float* row, const double* x, const double* x_abs, std::int64_t n, double& s,
                                double& s_abs) {
  dot2_body(row, x, x_abs, n, s, s_abs);
}
OPVAL_CHECKSUM_CLONES void dot2(const double* row, const double* x, const double* x_abs, std::int64_t n, double& s,
                                double& s_abs) {
  dot2_body(row, x, x_abs, n, s, s_abs);
}
OPVAL_CHECKSUM_CLONES void axpy2(double c, double c_abs, const float* row, std::int64_t n, double* acc, double* acc_abs) {
  axpy2_body(c, c_abs, row, n, acc, acc_abs);
}
OPVAL_CHECKSUM_CLONES void axpy2(double c, double c_abs, const double* row, std::int64_t n, double* acc,
                                 double* acc_abs) {
  axpy2_body(c, c_abs, row, n, acc, acc_abs);
}
#undef OPVAL_CHECKSUM_CLONES

// Sums over `rows` of what add_row(row, acc) adds into `length` accumulators, the same for any
// thread count: the rows in at most 64 fixed blocks, each block's partial sums added in block
// order. Each row's own results (written by add_row elsewhere) need no reduction.
template <class AddRow>
std::vector<double> blocked_sum(std::int64_t rows, std::size_t length, AddRow&& add_row) {
  const std::int64_t block = std::max<std::int64_t>(64, (rows + 63) / 64);
  const std::int64_t blocks = (rows + block - 1) / block;
  std::vector<double> partial(std::size_t(blocks) * length, 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::int64_t row = b * block; row < std::min(rows, (b + 1) * block); ++row)
      add_row(row, partial.data() + std::size_t(b) * length);
  std::vector<double> total(length, 0.0);
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::size_t q = 0; q < length; ++q) total[q] += partial[std::size_t(b) * length + q];
  return total;
}

// The operands of one output batch as the checks read them: A (m x k), B (k x n), the output
// (m x n), row-major, of the stored type T when it is f32 (read in place), else fp64 copies.
template <class T>
struct batch_view {
  const T *a, *b, *y;
};

// One output batch's bias and per-channel scale_b, n values each, or null.
struct batch_columns {
  const double *bias = nullptr, *scale = nullptr;
};

class batch_checker {
 public:
  batch_checker(const checksum_operands& x, const epilogue_spec& e, const element_envelope& env, double z,
                std::uint64_t seed)
      : x_(x), e_(e), env_(env), z_(z), seed_(seed) {}

  batch_findings check(std::int64_t ob) const {
    const std::int64_t b_at = x_.b_offset[ob], y_at = ob * x_.m * x_.n;
    const std::int64_t col_at = x_.column_offset.empty() ? 0 : x_.column_offset[ob];
    const batch_columns cols{x_.bias.empty() ? nullptr : x_.bias.data() + col_at,
                             x_.scale.empty() ? nullptr : x_.scale.data() + col_at};
    if (x_.a_of) {
      std::vector<double> a;
      x_.a_of(ob, a);
      return check(ob, batch_view<double>{a.data(), x_.b.data() + b_at, x_.y.data() + y_at}, cols);
    }
    const std::int64_t a_at = x_.a_offset[ob];
    if (x_.a32) return check(ob, batch_view<float>{x_.a32 + a_at, x_.b32 + b_at, x_.y32 + y_at}, cols);
    return check(ob, batch_view<double>{x_.a.data() + a_at, x_.b.data() + b_at, x_.y.data() + y_at}, cols);
  }

 private:
  double scale(const batch_columns& c, std::int64_t j) const { return c.scale ? c.scale[j] : e_.scale_b; }
  double factor(const batch_columns& c, std::int64_t j) const { return dequant_factor(e_, scale(c, j)); }
  static double bias(const batch_columns& c, std::int64_t j) { return c.bias ? c.bias[j] : 0.0; }

  template <class T>
  batch_findings check(std::int64_t ob, const batch_view<T>& in, const batch_columns& cols) const {
    const std::int64_t m = x_.m, n = x_.n, k = x_.k;
    // The Gaussian vectors: x (n) for the row checks, y (m) for the column checks.
    std::vector<double> xv(r_vectors * n), x_abs(r_vectors * n), yv(r_vectors * m), fx(r_vectors * n),
        fx_abs(r_vectors * n);
    for (int t = 0; t < r_vectors; ++t) {
      random_normals(seed_ ^ vector_salt, std::uint64_t(ob * 4 + t), 0, std::span(xv).subspan(t * n, n));
      random_normals(seed_ ^ vector_salt, std::uint64_t(ob * 4 + 2 + t), 0, std::span(yv).subspan(t * m, m));
      for (std::int64_t j = 0; j < n; ++j) {
        fx[t * n + j] = factor(cols, j) * xv[t * n + j];
        fx_abs[t * n + j] = std::abs(fx[t * n + j]), x_abs[t * n + j] = std::abs(xv[t * n + j]);
      }
    }
    // Pass over B: w = B (f x) and |B| |f x|; B's column norms (sum |b|, b^2, b^4 per column).
    std::vector<double> w(r_vectors * k), w_abs(r_vectors * k);
    const std::vector<double> col_norms = blocked_sum(k, std::size_t(3 * n), [&](std::int64_t p, double* acc) {
      const T* bp = in.b + p * n;
      for (int t = 0; t < r_vectors; ++t)
        dot2(bp, fx.data() + t * n, fx_abs.data() + t * n, n, w[t * k + p], w_abs[t * k + p]);
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) {
        const double v = static_cast<double>(bp[j]), v2 = v * v;
        acc[j] += std::abs(v), acc[n + j] += v2, acc[2 * n + j] += v2 * v2;
      }
    });
    std::vector<norms> a_norms(m), b_norms(n);
    for (std::int64_t j = 0; j < n; ++j)
      b_norms[j] = {col_norms[j], std::sqrt(col_norms[n + j]), std::sqrt(col_norms[2 * n + j])};
    // Pass over A: rows A w, and v = y^T A for the columns (values, then magnitudes); A's row norms.
    sums row(m), col(n);
    const std::size_t rk = std::size_t(r_vectors * k), rn = std::size_t(r_vectors * n);
    const std::vector<double> v = blocked_sum(m, 2 * rk, [&](std::int64_t i, double* acc) {
      const T* ai = in.a + i * k;
      a_norms[i] = norms_of(ai, k);
      for (int t = 0; t < r_vectors; ++t) {
        dot2(ai, w.data() + t * k, w_abs.data() + t * k, k, row.want[t * m + i], row.mag[t * m + i]);
        const double yi = yv[t * m + i];
        axpy2(yi, std::abs(yi), ai, k, acc + t * k, acc + rk + t * k);
      }
    });
    // Pass over B again: f (v B) for the columns.
    const std::vector<double> vb = blocked_sum(k, 2 * rn, [&](std::int64_t p, double* acc) {
      for (int t = 0; t < r_vectors; ++t)
        axpy2(v[t * k + p], v[rk + t * k + p], in.b + p * n, n, acc + t * n, acc + rn + t * n);
    });
    for (int t = 0; t < r_vectors; ++t)
      for (std::int64_t j = 0; j < n; ++j)
        col.want[t * n + j] = factor(cols, j) * vb[t * n + j],
        col.mag[t * n + j] = std::abs(factor(cols, j)) * vb[rn + t * n + j];
    // Pass over the output and the epilogue operands.
    std::vector<double> row_c(m, 0.0), row_res(m, 0.0), col_c(n, 0.0), col_res(n, 0.0);
    output_pass(in.y, xv, x_abs, yv, row, col);
    epilogue_pass(ob * m * n, cols, xv, x_abs, yv, row, col, row_c, row_res, col_c, col_res);
    return judge(cols, row, col, a_norms, b_norms, row_c, row_res, col_c, col_res);
  }

  // Y x row by row and y^T Y column by column.
  template <class T>
  void output_pass(const T* y, const std::vector<double>& xv, const std::vector<double>& x_abs,
                   const std::vector<double>& yv, sums& row, sums& col) const {
    const std::int64_t m = x_.m, n = x_.n;
    const std::size_t rn = std::size_t(r_vectors * n);
    const std::vector<double> total = blocked_sum(m, 2 * rn, [&](std::int64_t i, double* acc) {
      const T* yi = y + i * n;
      for (int t = 0; t < r_vectors; ++t) {
        double got = 0, got_abs = 0;
        dot2(yi, xv.data() + t * n, x_abs.data() + t * n, n, got, got_abs);
        row.got[t * m + i] = got, row.mag[t * m + i] += got_abs;
        axpy2(yv[t * m + i], std::abs(yv[t * m + i]), yi, n, acc + t * n, acc + rn + t * n);
      }
    });
    for (std::size_t q = 0; q < rn; ++q) col.got[q] = total[q], col.mag[q] += total[rn + q];
  }

  // The epilogue operands' share of the wanted sums (beta C + residual row by row and column by
  // column, bias by its dot products), and |C| and |residual|'s largest values per row and
  // column (the envelope's).
  void epilogue_pass(std::int64_t out, const batch_columns& cols, const std::vector<double>& xv,
                     const std::vector<double>& x_abs, const std::vector<double>& yv, sums& row, sums& col, std::vector<double>& row_c,
                     std::vector<double>& row_res, std::vector<double>& col_c, std::vector<double>& col_res) const {
    const std::int64_t m = x_.m, n = x_.n;
    for (int t = 0; t < r_vectors; ++t) {
      double bias_x = 0, bias_x_abs = 0, y_sum = 0, y_abs = 0;
      for (std::int64_t j = 0; j < n; ++j)
        bias_x += bias(cols, j) * xv[t * n + j], bias_x_abs += std::abs(bias(cols, j)) * x_abs[t * n + j];
      for (std::int64_t i = 0; i < m; ++i) y_sum += yv[t * m + i], y_abs += std::abs(yv[t * m + i]);
      for (std::int64_t i = 0; i < m; ++i) row.want[t * m + i] += bias_x, row.mag[t * m + i] += bias_x_abs;
      for (std::int64_t j = 0; j < n; ++j)
        col.want[t * n + j] += bias(cols, j) * y_sum, col.mag[t * n + j] += std::abs(bias(cols, j)) * y_abs;
    }
    const bool has_c = !x_.c.empty(), has_res = !x_.residual.empty();
    if (!has_c && !has_res) return;
    std::vector<double> extra(n);
    const std::size_t rn = std::size_t(r_vectors * n);
    std::vector<double> columns(2 * rn, 0.0);  // values, then magnitudes
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t at = out + i * n;
      for (std::int64_t j = 0; j < n; ++j) {
        const double c = has_c ? x_.c[at + j] : 0.0, res = has_res ? x_.residual[at + j] : 0.0;
        extra[j] = e_.beta * c + res;
        row_c[i] = std::max(row_c[i], std::abs(c)), row_res[i] = std::max(row_res[i], std::abs(res));
        col_c[j] = std::max(col_c[j], std::abs(c)), col_res[j] = std::max(col_res[j], std::abs(res));
      }
      for (int t = 0; t < r_vectors; ++t) {
        double s = 0, s_abs = 0;
        dot2(extra.data(), xv.data() + t * n, x_abs.data() + t * n, n, s, s_abs);
        row.want[t * m + i] += s, row.mag[t * m + i] += s_abs;
        axpy2(yv[t * m + i], std::abs(yv[t * m + i]), extra.data(), n, columns.data() + t * n,
              columns.data() + rn + t * n);
      }
    }
    for (std::size_t q = 0; q < rn; ++q) col.want[q] += columns[q], col.mag[q] += columns[rn + q];
  }

  // The fp64 evaluation's own error on sums over `terms` terms of magnitude `mag`: both sides'
  // roundings, Higham's gamma in double precision with room for the chained products.
  double evaluation_error(double terms, double mag) const {
    return 2.0 * gamma_deterministic(terms, 0x1p-53) * mag;
  }

  batch_findings judge(const batch_columns& cols, const sums& row, const sums& col,
                       const std::vector<norms>& a_norms, const std::vector<norms>& b_norms, const std::vector<double>& row_c,
                       const std::vector<double>& row_res, const std::vector<double>& col_c,
                       const std::vector<double>& col_res) const {
    const std::int64_t m = x_.m, n = x_.n;
    const double terms = double(x_.n + x_.k + x_.m + 8);
    norms a_max = max_of(a_norms), b_max = max_of(b_norms);
    double bias_max = 0, scale_max = 0;
    for (std::int64_t j = 0; j < n; ++j)
      bias_max = std::max(bias_max, std::abs(bias(cols, j))), scale_max = std::max(scale_max, std::abs(scale(cols, j)));
    batch_findings f;
    std::vector<double> row_thresholds(m);
    auto flag = [&](const sums& s, std::int64_t count, std::int64_t i, double threshold, std::vector<std::int64_t>& at) {
      bool bad = false;
      for (int t = 0; t < r_vectors; ++t) {
        const double diff = std::abs(s.got[t * count + i] - s.want[t * count + i]);
        const double limit = threshold + evaluation_error(terms, s.mag[t * count + i]);
        if (diff <= limit) continue;  // a NaN or Inf difference fails too
        bad = true;
        f.worst_ratio = std::max(f.worst_ratio, std::isfinite(diff) ? diff / limit : INFINITY);
      }
      if (bad) at.push_back(i);
    };
    for (std::int64_t i = 0; i < m; ++i) {
      const double b_env = env_(a_norms[i], b_max, row_c[i], bias_max, row_res[i], scale_max);
      row_thresholds[i] = z_ * std::sqrt(double(n)) * b_env;
      flag(row, m, i, row_thresholds[i], f.rows);
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const double b_env = env_(a_max, b_norms[j], col_c[j], std::abs(bias(cols, j)), col_res[j], std::abs(scale(cols, j)));
      flag(col, n, j, z_ * std::sqrt(double(m)) * b_env, f.cols);
    }
    std::nth_element(row_thresholds.begin(), row_thresholds.begin() + m / 2, row_thresholds.end());
    f.median_row_threshold = m ? row_thresholds[m / 2] : 0;
    return f;
  }

  const checksum_operands& x_;
  const epilogue_spec& e_;
  const element_envelope& env_;
  double z_;
  std::uint64_t seed_;
};

// Whether a linear checksum applies: no activation, no integer dst, finite inputs.
bool linear(const epilogue_spec& e, const checksum_operands& x) {
  return e.act == activation::none && !e.integer_dst && all_finite(x.a) && all_finite(x.b) && all_finite(x.c) &&
         all_finite(x.bias) && all_finite(x.residual) && all_finite(x.scale);
}

}  // namespace

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double d) { return std::isfinite(d); });
}

void read_epilogue_operands(checksum_operands& x, const operand_slots& sl, std::span<const tensor> in,
                            const std::function<std::vector<double>(std::vector<double>)>& as_output) {
  auto output_shaped = [&](int slot) {
    std::vector<double> v = in[std::size_t(slot)].to_vector();
    return as_output ? as_output(std::move(v)) : v;
  };
  if (sl.c >= 0) x.c = output_shaped(sl.c);
  if (sl.bias >= 0) x.bias = in[std::size_t(sl.bias)].to_vector();
  if (sl.residual >= 0) x.residual = output_shaped(sl.residual);
  if (sl.scale >= 0) x.scale = in[std::size_t(sl.scale)].to_vector();
}

std::vector<checksum_result> gemm_checksums(const problem& p, const epilogue_spec& e, const checksum_operands& x,
                                            const fill_traits& f, const bound_options& o, std::uint64_t seed) {
  if (!linear(e, x) || x.m == 0 || x.n == 0) return {};
  const double k_terms = double(x.k) + (e.block > 0 ? 2.0 : 0.0);
  const gemm_error_model model = make_error_model(p, e, k_terms, double(x.batches * x.m * x.n), f, o);
  if (!model.g.meaningful) return {};
  const element_envelope env(p, e, model, k_terms);
  // One union bound over every row and column test of every batch and vector.
  const double tests = double(x.batches) * double(x.m + x.n) * r_vectors;
  const double z = std::sqrt(2.0 * std::log(tests / o.false_alarm));
  const batch_checker checker(x, e, env, z, seed);
  checksum_result r{.name = "checksums"};
  double median_threshold = 0;
  for (std::int64_t ob = 0; ob < x.batches; ++ob) {
    const batch_findings found = checker.check(ob);
    median_threshold = std::max(median_threshold, found.median_row_threshold);
    if (found.rows.empty() && found.cols.empty()) continue;
    if (r.passed)
      r.reason = fmt::format("{}{} x {} disagree with the inputs' sums beyond their thresholds (worst {:.3g} x its "
                             "threshold): the wrong elements lie there",
                             x.batches > 1 ? fmt::format("in {}, ", x.batch_name(ob)) : "",
                             ranges_text(found.rows, x.row_name.c_str()), ranges_text(found.cols, x.column_name.c_str()),
                             found.worst_ratio);
    r.passed = false;
  }
  r.method = fmt::format("Freivalds row and column sums with {} Gaussian vectors each way, fp64; threshold z = {:.3g} "
                         "(false-alarm rate {:g} over {:g} tests) x sqrt(count) x each row's and column's envelope of "
                         "the element bound (median row threshold {:.3g})",
                         r_vectors, z, o.false_alarm, tests, median_threshold);
  const double miss = std::pow(std::sqrt(2.0 / std::acos(-1.0)) / 40.0, 2 * r_vectors);
  r.guarantee = fmt::format("errors whose 2-norm along some row and along some column exceeds 40x that row's and "
                            "column's threshold are missed with probability below {:.2g}",
                            miss);
  return {std::move(r)};
}

}  // namespace opval::ops::common_gemm
