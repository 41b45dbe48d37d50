// oneDNN matmul with its fused post-ops, float and int8.
#include <cstdint>
#include <optional>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/error.hpp"

namespace opval::onednn {

// matmul: dst = act(alpha * scales * (A - zp_a).(B - zp_b) + beta * C + bias) + residual,
// requantized for an integer dst; the epilogue maps as map_gemm_epilogue says, with the
// output channel N as the last dimension.
plan matmul_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                 const dnnl::engine& eng) {
  if (const std::int64_t block = p.get_int("block"); block > 0)
    throw refusal{support::unimplemented("onednn backend: block-scaled matmul (block=" + std::to_string(block) +
                                         ", A_scale and B_scale): this backend maps no MX or NVFP4 matmul to oneDNN")};
  require_gemm_contract(p);
  // Found by the empty-tensor cases of the matmul suite; refused here, since the crash would
  // take down a process that runs oneDNN in-process (--isolation none, the library's tests).
  if (p.get_int("m") == 0)
    throw refusal{support::unimplemented("onednn backend: matmul with m=0: oneDNN 2.6 divides by zero (SIGFPE) "
                                         "creating the primitive")};
  const ops::common_gemm::epilogue_spec e = ops::common_gemm::read_epilogue(p, true);
  const std::size_t rank = out[0].shape.size();
  plan pl;
  const gemm_epilogue g = map_gemm_epilogue(p, e, in, rank, static_cast<int>(rank) - 1, true, pl);
  const auto a = md_of(in[0], rank), b = md_of(in[1], rank), d = md_of(out[0], rank);
  std::optional<std::size_t> bias_index;
  dnnl::memory::desc bias;
  if (g.native_bias) {
    bias_index = static_cast<std::size_t>(ops::common_gemm::slots_of(e).bias);
    bias = md_of(in[*bias_index], rank);  // [n] padded to 1 x ... x 1 x n
  }
  const dnnl::matmul::desc desc = bias_index ? dnnl::matmul::desc(a, b, bias, d) : dnnl::matmul::desc(a, b, d);
  pl.pd = dnnl::matmul::primitive_desc(desc, g.attr, eng);
  pl.args.push_back({DNNL_ARG_SRC, false, 0, a});
  pl.args.push_back({DNNL_ARG_WEIGHTS, false, 1, b});
  if (bias_index) pl.args.push_back({DNNL_ARG_BIAS, false, *bias_index, bias});
  pl.args.push_back({DNNL_ARG_DST, true, 0, d});
  return pl;
}

}  // namespace opval::onednn
