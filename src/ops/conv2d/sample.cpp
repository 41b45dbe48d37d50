// conv2d: sampled verification (docs/NUMERICS.md "Sampled verification"). The sample keeps
// every output position of a stratified sample of output channels (and of images when there
// are many), so it is a smaller conv2d on the gathered weights; the checksums read the
// convolution in its GEMM form per (image, group): rows are output positions, columns the
// group's output channels, A = im2row(src) built one image at a time, B = the weights.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_checksum.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/common_gemm/gemm_sample.hpp"
#include "ops/conv2d/conv2d.hpp"

namespace opval::ops::conv2d {

using namespace common_gemm;

namespace {

// Within each group, the same sampled channel offsets: the sub-problem keeps g equal groups.
std::vector<std::int64_t> sampled_channels(const conv_shape& s, std::uint64_t seed) {
  const std::vector<std::int64_t> within = sampled_indices(s.ocg(), sample_tile, seed, 1);
  std::vector<std::int64_t> channels;
  for (std::int64_t gi = 0; gi < s.g; ++gi)
    for (const std::int64_t c : within) channels.push_back(gi * s.ocg() + c);
  return channels;
}

// The gathered input of the sampled images x channels, by its role.
tensor gathered(const tensor& t, operand_role role, std::span<const std::int64_t> images,
                std::span<const std::int64_t> channels) {
  switch (role) {
    case operand_role::a: return take(t, 0, images);       // src: its images, every channel
    case operand_role::b: return take(t, 0, channels);     // weights: the sampled filters
    case operand_role::residual: return take(take(t, 0, images), 1, channels);
    default: return take(t, 0, channels);                  // bias, scale_b: one per channel
  }
}

// values[n, c, p] (NCHW, p = oy * ow + ox) as the GEMM form's per-(image, group) P x ocg
// matrices, batch-major: [n][g][p][c within g].
std::vector<double> to_gemm_form(const conv_shape& s, const std::vector<double>& values) {
  const std::int64_t positions = s.oh * s.ow, ocg = s.ocg();
  std::vector<double> out(values.size());
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < s.mb; ++n)
    for (std::int64_t c = 0; c < s.oc; ++c) {
      const std::int64_t gi = c / ocg, o = c % ocg;
      const double* from = values.data() + (n * s.oc + c) * positions;
      double* to = out.data() + (n * s.g + gi) * positions * ocg + o;
      for (std::int64_t q = 0; q < positions; ++q) to[q * ocg] = from[q];
    }
  return out;
}

}  // namespace

std::optional<output_sample> conv2d_spec::sample(const problem& p, std::span<const tensor> in,
                                                 std::uint64_t seed) const {
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  const std::vector<std::int64_t> images = sampled_indices(s.mb, sample_tile, seed, 0);
  const std::vector<std::int64_t> channels = sampled_channels(s, seed);
  output_sample out{.sub = p};
  out.sub.set("mb", std::int64_t(images.size()));
  out.sub.set("oc", std::int64_t(channels.size()));
  out.sub.set("layout", std::string("nchw"));  // the gathered inputs are contiguous NCHW / OIHW
  const std::vector<operand_role> roles = roles_of(e, in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out.inputs.push_back(gathered(in[i], roles[i], images, channels));
  const std::int64_t positions = s.oh * s.ow;
  std::vector<std::int64_t>& where = out.where.emplace_back();
  where.reserve(images.size() * channels.size() * std::size_t(positions));
  for (const std::int64_t n : images)
    for (const std::int64_t c : channels)
      for (std::int64_t q = 0; q < positions; ++q) where.push_back((n * s.oc + c) * positions + q);
  out.coverage = fmt::format("every output position of one random channel in every band of {0} channels aligned "
                             "within each group (every channel of groups up to {1}), and each group's channels 0, the "
                             "last and the first of the last partial tile of each tiling 8 to 128; one random image in "
                             "every band of {0} (every image up to {1}): each tile of up to {0} channels aligned within "
                             "its group, by any output positions, holds sampled elements",
                             sample_tile, 4 * sample_tile);
  return out;
}

std::vector<checksum_result> conv2d_spec::checksums(const problem& p, const fill_traits& f, const bound_options& o,
                                                    std::span<const tensor> in, std::span<const tensor> out,
                                                    std::uint64_t seed) const {
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  if (e.act != activation::none || e.integer_dst) return {};  // no linear checksum: skip reading the operands
  const std::vector<double> src = dot_operand(in[0], e.zp_a, dot_values::signed_values, true);
  const std::vector<double> wei = dot_operand(in[1], e.zp_b, dot_values::signed_values, false);
  if (!all_finite(src) || !all_finite(wei)) return {};
  const std::int64_t positions = s.oh * s.ow, ocg = s.ocg(), k = s.k();
  checksum_operands x{.m = positions, .n = ocg, .k = k, .batches = s.mb * s.g};
  // B of group gi: its filters transposed, k x ocg.
  x.b.resize(wei.size());
  for (std::int64_t c = 0; c < s.oc; ++c)
    for (std::int64_t q = 0; q < k; ++q) x.b[((c / ocg) * k + q) * ocg + c % ocg] = wei[c * k + q];
  for (std::int64_t ob = 0; ob < x.batches; ++ob) {
    x.b_offset.push_back((ob % s.g) * k * ocg);
    x.column_offset.push_back((ob % s.g) * ocg);
  }
  x.a_of = [&](std::int64_t ob, std::vector<double>& a) { a = im2row(s, src, ob / s.g, ob % s.g, 0.0); };
  x.y = to_gemm_form(s, out[0].to_vector());
  read_epilogue_operands(x, slots_of(e), in, [&](std::vector<double> v) { return to_gemm_form(s, v); });
  x.row_name = fmt::format("output positions (oy * {} + ox)", s.ow);
  x.column_name = s.g > 1 ? "channels of the group" : "channels";
  x.batch_name = [g = s.g](std::int64_t ob) {
    return g > 1 ? fmt::format("image {}, group {}", ob / g, ob % g) : fmt::format("image {}", ob);
  };
  return gemm_checksums(p, e, x, f, o, seed);
}

}  // namespace opval::ops::conv2d
