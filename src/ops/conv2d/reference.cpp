// conv2d: the fp64 reference on exactly the stored inputs and the contract-exact simulation
// (the sim backend's kernel): per (image, group), the GEMM weights x im2col(src) of
// common_gemm, then the shared epilogue.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "ops/common_gemm/blocked_gemm.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"

namespace opval::ops::conv2d {

using namespace common_gemm;

namespace {

// The unfolded src of image n, group gi: tap t = (c * kh + ky) * kw + kx at output position
// q = oy * ow + ox is written to out[t * tap_stride + q * position_stride] (im2col: K x P,
// im2row: P x K); taps in the padding read `pad`.
std::vector<double> unfold(const conv_shape& s, const std::vector<double>& src, std::int64_t n, std::int64_t gi,
                           double pad, std::int64_t tap_stride, std::int64_t position_stride) {
  std::vector<double> out(s.k() * s.oh * s.ow);
  for (std::int64_t c = 0; c < s.icg(); ++c) {
    const double* plane = src.data() + ((n * s.ic) + gi * s.icg() + c) * s.ih * s.iw;
    for (std::int64_t ky = 0; ky < s.kh; ++ky)
      for (std::int64_t kx = 0; kx < s.kw; ++kx) {
        double* tap = out.data() + ((c * s.kh + ky) * s.kw + kx) * tap_stride;
        for (std::int64_t oy = 0; oy < s.oh; ++oy) {
          const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh;
          for (std::int64_t ox = 0; ox < s.ow; ++ox) {
            const std::int64_t ix = ox * s.sw - s.pl + kx * s.dw;
            const bool inside = iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw;
            tap[(oy * s.ow + ox) * position_stride] = inside ? plane[iy * s.iw + ix] : pad;
          }
        }
      }
  }
  return out;
}

}  // namespace

std::vector<double> im2col(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad) {
  return unfold(s, src, n, gi, pad, s.oh * s.ow, 1);
}

std::vector<double> im2row(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad) {
  return unfold(s, src, n, gi, pad, 1, s.k());
}

namespace {

// Runs `fn(n, gi, weights_offset, dst_offset)` for every (image, group) GEMM, in parallel
// when there is more than one (the reference GEMM inside then runs single-threaded).
template <class Fn>
void for_each_gemm(const conv_shape& s, Fn&& fn) {
  const std::int64_t tasks = s.mb * s.g, ohw = s.oh * s.ow;
#pragma omp parallel for schedule(dynamic) if (tasks > 1 && tasks * s.ocg() * ohw * s.k() > 32768)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t n = t / s.g, gi = t % s.g;
    fn(n, gi, gi * s.ocg() * s.k(), (n * s.oc + gi * s.ocg()) * ohw);
  }
}

}  // namespace

std::vector<double> exact_dots(const conv_shape& s, const epilogue_spec& e, const tensor& src,
                               const tensor& wei, dot_values v) {
  const auto x = dot_operand(src, e.zp_a, v, true), w = dot_operand(wei, e.zp_b, v, false);
  std::vector<double> out(s.mb * s.oc * s.oh * s.ow);
  for_each_gemm(s, [&](std::int64_t n, std::int64_t gi, std::int64_t wo, std::int64_t oo) {
    const std::vector<double> col = im2col(s, x, n, gi, 0.0);
    reference_gemm(s.ocg(), s.oh * s.ow, s.k(), w.data() + wo, col.data(), out.data() + oo);
  });
  return out;
}

epilogue_reader reader_of(const conv_shape& s, const epilogue_spec& e, std::span<const tensor> in) {
  return epilogue_reader(e, in, s.oh * s.ow, s.oc);
}

void conv2d_spec::reference(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  std::vector<double> y = exact_dots(s, e, in[0], in[1], dot_values::signed_values);
  epilogue_reference_all(p.dt, e, reader_of(s, e, in), y);
  out[0].assign(y);
}

void conv2d_spec::simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out) const {
  const conv_shape s = read_shape(p);
  const epilogue_spec e = read_epilogue(p, false);
  // The GEMM is weights x col, so the weights' zero point is the first operand's.
  epilogue_spec swapped = e;
  std::swap(swapped.zp_a, swapped.zp_b);
  const std::vector<double> x = in[0].to_vector(), w = in[1].to_vector();
  std::vector<double> acc(s.mb * s.oc * s.oh * s.ow);
  const std::int64_t ohw = s.oh * s.ow;
  for_each_gemm(s, [&](std::int64_t n, std::int64_t gi, std::int64_t wo, std::int64_t oo) {
    const std::vector<double> col = im2col(s, x, n, gi, double(e.zp_a));
    simulate_dot(p.dt, swapped, s.ocg(), ohw, s.k(), std::span(w).subspan(wo, s.ocg() * s.k()), col,
                 std::span(acc).subspan(oo, s.ocg() * ohw));
  });
  epilogue_simulate_all(p.dt, e, reader_of(s, e, in), acc);
  out[0].assign(acc, p.dt.dst_round);
}

}  // namespace opval::ops::conv2d
