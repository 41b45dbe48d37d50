// oneDNN pooling_v2 (max with dilation, average with or without the padding in the divisor)
// for max_pool2d, avg_pool2d and global_avg_pool. oneDNN's dst extent follows from its right
// padding by the floor formula, so a ceil_mode window is described by the right padding that
// makes the last window fit.
#include <cstdint>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "ops/common_pool/pool_window.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

// The right padding oneDNN needs for the window's output extent: the last window ends there.
std::int64_t padding_r(const ops::pool::axis& a) {
  return (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1 - a.in - a.pad_lo;
}

// The refusal of a contract oneDNN's pooling does not compute as opval states it.
void require_pool_contract(const problem& p, dnnl::algorithm alg) {
  if (alg != dnnl::algorithm::pooling_max) return require_f32_acc_contract(p);
  const contract& c = p.dt;
  if (!dnnl_type(c.src) || c.dst != c.src || !plain_rounding(c))
    throw refusal{support::unimplemented("onednn backend: max_pool2d " + c.to_string() +
                                         " is not a contract oneDNN's pooling computes (a dst of src's type)")};
}

plan pool_with(dnnl::algorithm alg, const problem& p, const std::vector<operand_view>& in,
               const std::vector<operand_view>& out, const dnnl::engine& eng) {
  require_pool_contract(p, alg);
  const ops::pool::window g = dynamic_cast<const ops::pool::pool_spec&>(p.spec()).window_of(p);
  const std::int64_t rh = padding_r(g.h), rw = padding_r(g.w);
  // oneDNN divides by kh*kw with the padding; opval (PyTorch) never counts the taps a ceil_mode
  // window reaches past the trailing padding.
  if (alg == dnnl::algorithm::pooling_avg_include_padding && (rh > g.h.pad_hi || rw > g.w.pad_hi))
    throw refusal{support::unimplemented("onednn backend: avg_pool2d count_include_pad=1 with a ceil_mode window past "
                                         "the padding: oneDNN divides it by kh*kw, opval by its taps in the padded input")};
  const auto src = md_of(in[0], 4), dst = md_of(out[0], 4);
  // oneDNN's dilation counts the taps skipped (0 = dense).
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src, dst, {g.h.stride, g.w.stride},
                                            {g.h.kernel, g.w.kernel}, {g.h.dilation - 1, g.w.dilation - 1},
                                            {g.h.pad_lo, g.w.pad_lo}, {rh, rw});
  plan pl;
  pl.pd = dnnl::pooling_v2_forward::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, src}, {DNNL_ARG_DST, true, 0, dst}};
  return pl;
}

}  // namespace

plan_builder pool_plan(dnnl::algorithm (*of)(const problem&)) {
  return [of](const problem& p, const auto& in, const auto& out, const dnnl::engine& eng) {
    return pool_with(of(p), p, in, out, eng);
  };
}

}  // namespace opval::onednn
