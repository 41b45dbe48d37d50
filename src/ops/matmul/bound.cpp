// matmul: error bound, the GEMM error model of common_gemm (gemm_bound in gemm_core.hpp,
// epilogue_error in epilogue.cpp; docs/NUMERICS.md, "matmul and conv2d").
//
// Each output element (batch..., i, j) is one dot product of K = k terms, row i of its A
// batch with column j of its B batch (broadcast batches read the same slices), followed by
// the epilogue with channel j (bias[j], scale_b[j]) and C, residual at (batch..., i, j).
// With s = sum_p (a_ip - zp_a)(b_pj - zp_b) and f = alpha*scale_a*scale_b[j], float
// accumulation gives
//   |z^ - z| <= ((1+g)(1+rho) - 1) |f| sum_p |a_ip||b_pj| + g (|beta C_ij| + |bias_j|) + (|f|(k+1) + 3) eta
//   g = accumulation_constant(k + extra_steps) over batch_count*m*n outputs
// which holds for any summation order of the k terms (blocked or tiled GEMMs, split-K,
// pairwise) since gamma_n does; integer accumulation is exact and only the float epilogue
// steps count. The activation, residual and integer-dst terms follow (gemm_core.hpp).
// Layouts (ta, tb, lda, ldb, ldc) change no value: the bound reads the logical operands.
#include <span>
#include <vector>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::matmul {

using namespace common_gemm;

std::vector<error_bound> matmul_spec::bound(const problem& p, const fill_traits& f, const bound_options& o,
                                            std::span<const tensor> in, std::span<const tensor> ref) const {
  const matmul_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, true);
  // Block scaling: the products of the scaled values are exact (at most 2 x (4 + 4) significant
  // bits); two more roundings cover a kernel that sums each block's raw products and scales
  // the partial sum by A's and B's scales in turn.
  const double k = double(s.k) + (e.block > 0 ? 2.0 : 0.0);
  return {gemm_bound(p, e, k, with_matrix(s.batch, s.m, s.n), f, o, reader_of(s, e, in),
                     [&](dot_values v) { return exact_dots(s, e, in, v); }, ref[0])};
}

}  // namespace opval::ops::matmul
