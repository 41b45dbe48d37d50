// oneDNN layer normalization (forward inference, statistics computed by the primitive).
// oneDNN normalizes over the last logical dim of one data descriptor shared by src and dst,
// with scale and shift as f32 vectors; everything the contract asks beyond that is refused.
#include <cstdint>
#include <string>

#include "backends/onednn/onednn_plan.hpp"
#include "opval/error.hpp"

namespace opval::onednn {
namespace {

support refused(const problem& p, const std::string& why) {
  return support::unimplemented("onednn backend: layer_norm " + p.dt.to_string() + ": " + why);
}

// True when the trailing `k` dims of v are packed row-major (each dim's stride is the next
// dim's stride times its extent), so that they can be read as one dim of their product.
bool trailing_dims_packed(const operand_view& v, std::size_t k) {
  const std::size_t r = v.shape.size();
  for (std::size_t d = r - k; d + 1 < r; ++d)
    if (v.strides[d] != v.strides[d + 1] * v.shape[d + 1]) return false;
  return true;
}

// v with its trailing `k` dims folded into one (they are packed), and at least one outer
// dim: oneDNN's layer normalization wants rows x row length, rank 2 to 5.
operand_view rows_view(const operand_view& v, std::size_t k) {
  const std::size_t r = v.shape.size();
  operand_view f{v.type, dims(v.shape.begin(), v.shape.end() - static_cast<std::ptrdiff_t>(k)),
                 dims(v.strides.begin(), v.strides.end() - static_cast<std::ptrdiff_t>(k))};
  std::int64_t n = 1;
  for (std::size_t d = r - k; d < r; ++d) n *= v.shape[d];
  if (f.shape.empty()) f.shape.push_back(1), f.strides.push_back(n * v.strides[r - 1]);
  f.shape.push_back(n);
  f.strides.push_back(v.strides[r - 1]);
  return f;
}

void require_mappable(const problem& p, const std::vector<operand_view>& in, const operand_view& y, std::size_t k) {
  require_f32_acc_contract(p);
  if (p.get_bool("stats"))
    throw refusal{refused(p, "stats=1: the inference primitive gives no mean and inv_std (training gives the "
                             "variance, not 1/sqrt(var + eps))")};
  if (p.dt.mid != dtype::f32)
    throw refusal{refused(p, "mid=" + std::string(to_string(p.dt.mid)) + ": oneDNN keeps the statistics in f32")};
  if (in[0].type != y.type)
    throw refusal{refused(p, "x and y of different types: oneDNN 2.6 describes src and dst with one descriptor")};
  if (in[0].strides != y.strides)
    throw refusal{refused(p, "x and y in different layouts: oneDNN 2.6 describes src and dst with one descriptor")};
  if (!trailing_dims_packed(in[0], k))
    throw refusal{refused(p, "norm_axes=" + std::to_string(k) + " over padded rows (ld): oneDNN normalizes over "
                             "the last dim only, and these dims cannot be read as one")};
  for (std::size_t i = 1; i < in.size(); ++i)
    if (in[i].type != dtype::f32)
      throw refusal{refused(p, "gamma/beta in " + std::string(to_string(in[i].type)) +
                               ": oneDNN 2.6 takes scale and shift in f32 only")};
}

}  // namespace

// layer_norm: y = (x - mean) / sqrt(var + eps) * gamma + beta per row of the last norm_axes
// dims, as one layer_normalization_forward with use_scale / use_shift. norm_axes > 1 is
// mapped when those dims are packed (read as one dim of their product), else refused.
plan layer_norm_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                     const dnnl::engine& eng) {
  const auto k = static_cast<std::size_t>(p.get_int("norm_axes"));
  require_mappable(p, in, out[0], k);
  const operand_view rows = rows_view(in[0], k);
  const auto data = md_of(rows, rows.shape.size());
  const bool affine = p.get_bool("affine");
  const auto flags = affine ? dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift
                            : dnnl::normalization_flags::none;
  const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     static_cast<float>(p.get_real("eps")), flags);
  plan pl;
  pl.pd = dnnl::layer_normalization_forward::primitive_desc(desc, strict_attr(), eng);
  pl.args = {{DNNL_ARG_SRC, false, 0, data}, {DNNL_ARG_DST, true, 0, md_of(rows_view(out[0], k), rows.shape.size())}};
  if (affine) {
    // gamma and beta are shaped as the normalized dims, contiguous: one vector of n each.
    const dnnl::memory::desc vec({rows.shape.back()}, tag_dt::f32, dnnl::memory::format_tag::x);
    pl.args.push_back({DNNL_ARG_SCALE, false, 1, vec});
    pl.args.push_back({DNNL_ARG_SHIFT, false, 2, vec});
  }
  return pl;
}

}  // namespace opval::onednn
