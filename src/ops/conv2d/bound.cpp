// conv2d: error bound, the GEMM error model of common_gemm (gemm_bound in gemm_core.hpp,
// epilogue_error in epilogue.cpp; docs/NUMERICS.md, "matmul and conv2d").
//
// Each output element (n, o, y, x) is one dot product of K = ic/g*kh*kw terms, the weights
// of channel o with the im2col patch of (n, group of o, y, x), padded taps included, followed
// by the epilogue with channel o (bias[o], scale_b[o]) and the residual at (n, o, y, x). A
// padded tap with a finite weight contributes an exact 0 to both s and sum |a||b| (float
// contracts pad with 0, integer ones with zp_a, so (zp_a - zp_a) w = 0): a kernel that skips
// padded taps sums fewer nonzero terms and stays within the same gamma. With
// f = alpha*scale_a*scale_b[o], float accumulation gives
//   |z^ - z| <= ((1+g)(1+rho) - 1) |f| sum_k |x_k||w_k| + g |bias_o| + (|f|(K+1) + 3) eta
//   g = accumulation_constant(K + extra_steps) over mb*oc*oh*ow outputs
// for any order of the K terms (implicit GEMM, im2col + blocked GEMM, direct loops, split
// over channels or taps); integer accumulation is exact and only the float epilogue steps
// count. The activation, residual and integer-dst terms follow (gemm_core.hpp). Transform
// algorithms (Winograd, FFT) do not compute K-term dot products: the derivation does not
// cover them. The layout (nchw, nhwc) changes no value: the bound reads the logical operands.
#include <span>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::conv2d {

using namespace common_gemm;

std::vector<error_bound> conv2d_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                            std::span<const tensor> in, std::span<const tensor> ref) const {
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  return {gemm_bound(p, e, double(s.k()), {s.mb, s.oc, s.oh, s.ow}, f, o, reader_of(s, e, in),
                     [&](dot_values v) { return exact_dots(s, e, in[0], in[1], v); }, ref[0])};
}

}  // namespace opval::ops::conv2d
