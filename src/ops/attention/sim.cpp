// attention: contract-exact emulation. S = Q.K^T by fused multiply-adds in acc, scaled,
// soft-capped (softcap*tanh(S/softcap), each step rounded to acc, tanh correctly rounded) and
// biased in acc, softmax in acc (softmax_numerics.hpp), P rounded to mid (and to the math
// type when the contract rounds matmul inputs, as a tf32 P.V does), O = P.V in acc, rounded
// to dst.
#include <algorithm>
#include <cmath>

#include "ops/attention/attention.hpp"
#include "ops/common_softmax/softmax_numerics.hpp"

namespace opval::ops::attention {

void attention_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const contract_arith a(p.dt);
  attention_data d(p, in);
  for (auto* t : {&d.q, &d.k, &d.v})
    for (auto& x : *t) x = a.input(x);
  const attention_shape& s = d.s;
  const double scale = a.acc(s.scale), softcap = a.acc(s.softcap);
  std::vector<double> o(static_cast<std::size_t>(s.rows() * s.dv));
  for_each_query_row(
      d, [&] { return std::vector<double>(s.lk); },
      [&](std::vector<double>&, const double* q, const double* k, std::int64_t b, std::int64_t hd, std::int64_t i,
          std::int64_t j) {
        double dot = 0;
        for (std::int64_t e = 0; e < s.d; ++e) dot = a.fma(q[e], k[e], dot);
        double score = a.acc(dot * scale);
        if (s.softcap > 0) score = a.acc(softcap * a.acc(std::tanh(a.acc(score / softcap))));
        return s.bias ? a.acc(score + d.bias(b, hd, i, j)) : score;
      },
      [&](std::vector<double>& prob, std::int64_t row, std::int64_t b, std::int64_t hd, std::int64_t,
          const std::vector<double>& logits) {
        softmax::simulate_row(logits, prob, false, softmax::empty_row::zero, a);
        for (auto& x : prob) x = a.input(a.mid(x));
        double* orow = o.data() + row * s.dv;
        for (std::int64_t j = 0; j < s.lk; ++j) {
          if (prob[j] == 0) continue;  // a zero weight adds exactly nothing
          const double* v = d.v_row(b, hd, j);
          for (std::int64_t e = 0; e < s.dv; ++e) orow[e] = a.fma(prob[j], v[e], orow[e]);
        }
        for (std::int64_t e = 0; e < s.dv; ++e) orow[e] = a.out(orow[e]);
      });
  out[0].assign(o);
}

}  // namespace opval::ops::attention
