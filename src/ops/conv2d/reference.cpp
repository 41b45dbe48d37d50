// conv2d: the fp64 reference on exactly the stored inputs and the contract-exact simulation
// (the sim backend's kernel): per (image, group), the GEMM weights x im2col(src) of
// common_gemm, then the shared epilogue.
#include <algorithm>
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

// src at tap (ky, kx) of output position (oy, ox) in channel plane `plane`, or `pad` outside.
inline double tap_value(const conv_shape& s, const double* plane, std::int64_t oy, std::int64_t ox, std::int64_t ky,
                        std::int64_t kx, double pad) {
  const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh, ix = ox * s.sw - s.pl + kx * s.dw;
  return iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw ? plane[iy * s.iw + ix] : pad;
}

// Row oy of tap (ky, kx) in im2col: the ow values of that tap along output row oy, the
// padding's range filled apart so that the inside is a plain strided copy (which vectorises).
void tap_row(const conv_shape& s, const double* plane, std::int64_t oy, std::int64_t ky, std::int64_t kx, double pad,
             double* out) {
  const std::int64_t iy = oy * s.sh - s.pt + ky * s.dh;
  if (iy < 0 || iy >= s.ih) {
    std::fill(out, out + s.ow, pad);
    return;
  }
  // ix = ox sw - pl + kx dw lies in [0, iw) for ox in [lo, hi).
  const std::int64_t shift = s.pl - kx * s.dw;
  const std::int64_t lo = std::clamp<std::int64_t>(shift <= 0 ? 0 : (shift + s.sw - 1) / s.sw, 0, s.ow);
  const std::int64_t hi = std::clamp<std::int64_t>(s.iw - 1 + shift < 0 ? 0 : (s.iw - 1 + shift) / s.sw + 1, lo, s.ow);
  std::fill(out, out + lo, pad);
  const double* in = plane + iy * s.iw;
  for (std::int64_t ox = lo; ox < hi; ++ox) out[ox] = in[ox * s.sw - shift];
  std::fill(out + hi, out + s.ow, pad);
}

const double* plane_of(const conv_shape& s, const std::vector<double>& src, std::int64_t n, std::int64_t gi,
                       std::int64_t c) {
  return src.data() + ((n * s.ic) + gi * s.icg() + c) * s.ih * s.iw;
}

}  // namespace

std::vector<double> im2col(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad) {
  const std::int64_t positions = s.oh * s.ow;
  std::vector<double> col(s.k() * positions);
  for (std::int64_t c = 0; c < s.icg(); ++c) {
    const double* plane = plane_of(s, src, n, gi, c);
    for (std::int64_t ky = 0; ky < s.kh; ++ky)
      for (std::int64_t kx = 0; kx < s.kw; ++kx) {
        double* row = col.data() + ((c * s.kh + ky) * s.kw + kx) * positions;
        for (std::int64_t oy = 0; oy < s.oh; ++oy) tap_row(s, plane, oy, ky, kx, pad, row + oy * s.ow);
      }
  }
  return col;
}

std::vector<double> im2row(const conv_shape& s, const std::vector<double>& src, std::int64_t n,
                           std::int64_t gi, double pad) {
  const std::int64_t k = s.k();
  std::vector<double> rows(k * s.oh * s.ow);
  // Each output row written whole, in order (the transposed im2col's strided writes are
  // several times slower); the output rows shared out over the threads.
#pragma omp parallel for schedule(static)
  for (std::int64_t oy = 0; oy < s.oh; ++oy)
    for (std::int64_t ox = 0; ox < s.ow; ++ox) {
      double* row = rows.data() + (oy * s.ow + ox) * k;
      for (std::int64_t c = 0; c < s.icg(); ++c) {
        const double* plane = plane_of(s, src, n, gi, c);
        for (std::int64_t ky = 0; ky < s.kh; ++ky)
          for (std::int64_t kx = 0; kx < s.kw; ++kx) *row++ = tap_value(s, plane, oy, ox, ky, kx, pad);
      }
    }
  return rows;
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
