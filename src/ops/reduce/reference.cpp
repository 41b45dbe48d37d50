// reduce: the fp64 reference (pairwise sums in fp64, exact max) and the contract-exact
// emulation (the sim backend's kernel, with a chosen summation order for the tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "opval/contract.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/common_reduce/summation.hpp"
#include "ops/reduce/reduce.hpp"

namespace opval::ops::reduce {
namespace {

constexpr double neg_inf = -std::numeric_limits<double>::infinity();

// Where max starts, and what it gives over nothing: its identity in the output type, -inf
// (as ONNX's ReduceMax) where the type has it, else the type's lowest value.
double max_identity(dtype dst) { return traits(dst).has_inf ? neg_inf : traits(dst).lowest; }

}  // namespace

void reduce_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, sum_order order) {
  const reduce_params rp = params_of(p);
  const geometry g = geometry_of(rp);
  const contract_arith ar(p.dt);
  const reduce_kind kind = rp.kind;
  const std::vector<double> x = grouped_values(in[0], g);
  std::vector<double> y(static_cast<std::size_t>(g.outer));
  const auto acc = [&](double t) { return ar.acc(t); };
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
  for (std::int64_t o = 0; o < g.outer; ++o) {
    const double* xo = x.data() + o * g.n;
    double r = 0;
    if (kind == reduce_kind::max) {
      r = max_identity(p.dt.dst);
      for (std::int64_t i = 0; i < g.n; ++i) r = max_of(r, xo[i]);
    } else {
      r = ordered_sum(g.n, order, [&](std::int64_t i) { return ar.input(xo[i]); }, acc);
      if (kind == reduce_kind::mean) r = acc(r / static_cast<double>(g.n));  // 0/0 = NaN when empty
    }
    y[static_cast<std::size_t>(o)] = ar.out(r);
  }
  out[0].assign(y, p.dt.dst_round);
}

void reduce_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const reduce_params rp = params_of(p);
  const geometry g = geometry_of(rp);
  const reduce_kind kind = rp.kind;
  const std::vector<double> x = grouped_values(in[0], g);
  double* y = out[0].data_as<double>();
#pragma omp parallel for schedule(static) if (g.outer * g.n >= parallel_threshold)
  for (std::int64_t o = 0; o < g.outer; ++o) {
    const double* xo = x.data() + o * g.n;
    if (kind == reduce_kind::max) {
      double r = max_identity(p.dt.dst);
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

void reduce_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  reduce_simulate(p, in, out, sum_order::forward);
}

}  // namespace opval::ops::reduce
