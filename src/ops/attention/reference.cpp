// attention: fp64 reference, matmul -> (soft-cap) -> softmax -> matmul on exactly the stored inputs.
#include <algorithm>

#include "ops/attention/attention.hpp"
#include "ops/common_softmax/softmax_numerics.hpp"

namespace opval::ops::attention {

void attention_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const attention_data d(p, in);
  const attention_shape& s = d.s;
  double* o = out[0].data_as<double>();
  for_each_query_row(
      d, [&] { return std::vector<double>(s.lk); },
      [&](std::vector<double>&, const double* q, const double* k, std::int64_t b, std::int64_t hd, std::int64_t i,
          std::int64_t j) {
        double dot = 0;
        for (std::int64_t e = 0; e < s.d; ++e) dot += q[e] * k[e];
        return s.cap(s.scale * dot) + d.bias(b, hd, i, j);
      },
      [&](std::vector<double>& prob, std::int64_t row, std::int64_t b, std::int64_t hd, std::int64_t,
          const std::vector<double>& logits) {
        softmax::reference_row(logits, prob, false, softmax::empty_row::zero);
        double* orow = o + row * s.dv;
        std::fill(orow, orow + s.dv, 0.0);
        for (std::int64_t j = 0; j < s.lk; ++j) {
          if (prob[j] == 0) continue;  // masked keys are never read
          const double* v = d.v_row(b, hd, j);
          for (std::int64_t e = 0; e < s.dv; ++e) orow[e] += prob[j] * v[e];
        }
      });
}

}  // namespace opval::ops::attention
