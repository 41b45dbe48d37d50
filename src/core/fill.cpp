#include "core/fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>
#include <utility>
#include <limits>

#include "opval/error.hpp"
#include "core/rng.hpp"

namespace opval {
namespace {

struct fill_name {
  std::string_view name;
  fill_kind kind;
};
constexpr fill_name fill_names[] = {
    {"uniform", fill_kind::uniform}, {"normal", fill_kind::normal}, {"positive", fill_kind::positive},
    {"exact", fill_kind::exact},     {"wide", fill_kind::wide},     {"cancel", fill_kind::cancel},
    {"large", fill_kind::large},     {"special", fill_kind::special}};

// The special fill's subnormals near t's smallest normal: min_normal * (1/4 + 3/4 f) for f in
// [0, 1), before rounding to t.
double near_normal_subnormal(dtype t, double f) { return traits(t).min_normal * (0.25 + 0.75 * f); }

// A special value for the `special` fill, chosen by a second random draw.
double special_value(const dtype_traits& tr, double u) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  if (u < 0.2) return nan;
  if (u < 0.4) return tr.has_inf ? inf : nan;
  if (u < 0.6) return tr.has_inf ? -inf : -nan;
  if (u < 0.8) return -0.0;
  if (u < 0.9) {
    // The smallest subnormals, both signs: kernels that mishandle them show up.
    const double k = std::floor(1.0 + 6.0 * (u - 0.8) / 0.1);  // 1 .. 6
    return k <= 3 ? k * tr.min_subnormal : -(k - 3) * tr.min_subnormal;
  }
  // Subnormals near the smallest normal, both signs: large enough that a kernel flushing them
  // (as inputs or as results) loses more than the bounds of ops whose results there are of
  // their inputs' size (gelu, silu, tanh, erf near 0, a product with a normal value).
  const double f = (u - 0.9) / 0.1;  // [0, 1)
  const double m = near_normal_subnormal(tr.type, f < 0.5 ? 2 * f : 2 * f - 1);
  return f < 0.5 ? m : -m;
}

double value_at(const fill_params& p, const dtype_traits& tr, std::uint64_t seed,
                std::uint64_t stream, std::uint64_t i) {
  // Stream offsets keep the auxiliary draws independent of the main one.
  const std::uint64_t aux = stream ^ 0x5bd1e9955bd1e995ull;
  switch (p.kind) {
    case fill_kind::uniform: return p.lo + (p.hi - p.lo) * random_uniform(seed, stream, i);
    case fill_kind::normal: return p.scale * random_normal(seed, stream, i);
    case fill_kind::positive:
      return p.scale * (1.0 / 16 + (15.0 / 16) * random_uniform(seed, stream, i));
    case fill_kind::exact: {
      if (random_uniform(seed, aux, i) >= p.density) return 0.0;
      auto r = static_cast<std::int64_t>(random_bits(seed, stream, i) % (2 * p.exact_range + 1));
      return static_cast<double>(r - p.exact_range);
    }
    case fill_kind::wide: {
      // Exponents in [-n/2, n/2) clipped to the type's normal range, so fp8 and integer
      // tensors get a spread of magnitudes rather than many saturated values and zeros.
      const int first = -(p.wide_exponents / 2);
      const int lo = std::max(first, tr.is_float ? tr.min_exponent : 0);
      const int hi = std::max(lo, std::min(first + p.wide_exponents - 1, std::ilogb(tr.max)));
      const int e = lo + static_cast<int>(random_uniform(seed, aux, i) * (hi - lo + 1));
      double m = 1.0 + random_uniform(seed, stream, i);
      double sign = random_bits(seed, aux + 1, i) & 1u ? -1.0 : 1.0;
      return sign * std::ldexp(m, e);
    }
    case fill_kind::cancel: {
      // Elements 2j and 2j+1 nearly cancel: x and -x*(1 + tiny).
      double x = p.scale * random_normal(seed, stream, i / 2);
      double tiny = 0x1.0p-10 * (random_uniform(seed, aux, i) - 0.5);
      return (i % 2 == 0) ? x : -x * (1.0 + tiny);
    }
    case fill_kind::large: return p.scale * (random_uniform(seed, stream, i) * 2.0 - 1.0);
    case fill_kind::special:
      if (random_uniform(seed, aux, i) < p.special_rate)
        return special_value(tr, random_uniform(seed, aux + 2, i));
      return p.scale * random_normal(seed, stream, i);
  }
  return 0.0;
}

}  // namespace

bool symmetric_signs(const fill_params& p) {
  switch (p.kind) {
    case fill_kind::normal:
    case fill_kind::wide:
    case fill_kind::large: return true;
    case fill_kind::uniform: return p.lo == -p.hi;
    default: return false;
  }
}

namespace {

// A drawn value v rounded to t's type.
double rounded(const fill_params& p, const dtype_traits& tr, double v) {
  // Saturate so that finite draws never become infinities; drawn infinities stay.
  double y = round_to(tr.type, v, rounding::rne, std::isinf(v) ? overflow::ieee : overflow::saturate);
  // Rounding may take a tiny positive draw to 0 (integer types, small scales): positive
  // fills promise a strict sign, so use the smallest positive value instead.
  if (p.kind == fill_kind::positive && !(y > 0.0)) y = tr.min_subnormal;
  return y;
}

// The element value i of the fill, rounded to t's type.
double element(const fill_params& p, const dtype_traits& tr, std::uint64_t seed,
               std::uint64_t stream, std::int64_t i) {
  return rounded(p, tr, value_at(p, tr, seed, stream, static_cast<std::uint64_t>(i)));
}

// The kinds whose values are one draw of the stream each: drawn a chunk at a time, vectorised.
bool drawn_in_chunks(fill_kind k) {
  return k == fill_kind::uniform || k == fill_kind::normal || k == fill_kind::positive || k == fill_kind::large;
}

// value_at of elements first .. first + v.size() - 1 for a kind drawn_in_chunks, the same
// expressions on the same draws.
void values_at(const fill_params& p, std::uint64_t seed, std::uint64_t stream, std::uint64_t first,
               std::span<double> v) {
  if (p.kind == fill_kind::normal) {
    random_normals(seed, stream, first, v);
    for (double& x : v) x = p.scale * x;
    return;
  }
  random_uniforms(seed, stream, first, v);
  for (double& x : v) {
    switch (p.kind) {
      case fill_kind::uniform: x = p.lo + (p.hi - p.lo) * x; break;
      case fill_kind::positive: x = p.scale * (1.0 / 16 + (15.0 / 16) * x); break;
      default: x = p.scale * (x * 2.0 - 1.0); break;  // large
    }
  }
}

// A contiguous tensor of a kind drawn_in_chunks: each chunk drawn, rounded and stored in place
// (f32 by a cast, which rounds to nearest as round_to does for finite values within range).
void fill_in_chunks(tensor& t, const fill_params& p, const dtype_traits& tr, std::uint64_t seed, std::uint64_t stream,
                    bool parallel) {
  constexpr std::int64_t chunk = 4096;
  const std::int64_t n = t.numel();
  const std::size_t es = t.element_size();
  auto* data = static_cast<std::byte*>(t.data());
  const bool f32 = t.type() == dtype::f32 && p.kind != fill_kind::positive;  // not tf32, stored as f32
#pragma omp parallel if (parallel)
  {
    std::vector<double> v(chunk);
#pragma omp for schedule(static)
    for (std::int64_t first = 0; first < n; first += chunk) {
      const std::span<double> values(v.data(), std::size_t(std::min(chunk, n - first)));
      values_at(p, seed, stream, std::uint64_t(first), values);
      if (f32) {
        auto* out = reinterpret_cast<float*>(data) + first;
        for (std::size_t i = 0; i < values.size(); ++i)
          out[i] = std::fabs(values[i]) <= std::numeric_limits<float>::max() ? static_cast<float>(values[i])
                                                                            : static_cast<float>(rounded(p, tr, values[i]));
        continue;
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::uint64_t bits = encode(t.type(), rounded(p, tr, values[i]));
        std::memcpy(data + (std::size_t(first) + i) * es, &bits, es);  // little-endian: the low bytes
      }
    }
  }
}

// True when distinct logical elements occupy distinct memory (no zero or overlapping
// strides), so that writing them in parallel is race-free.
bool elements_distinct(const tensor& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;  // (stride, extent)
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape()[d] > 1) steps.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(steps.begin(), steps.end());
  std::int64_t reach = 0;  // furthest element reachable by the smaller strides
  for (auto [stride, extent] : steps) {
    if (stride <= reach) return false;
    reach += stride * (extent - 1);
  }
  return true;
}

// The special fill's guarantee: every kind of special value (the u of special_value in each
// of its bands: NaN, +Inf, -Inf, -0, +-tiny subnormal, +-subnormal near the smallest normal)
// at its own position, so that every problem holds each of them however small its tensors or
// unlucky its seed (random sprinkling at rate r misses a tensor of n elements with
// probability (1 - r)^n). The positions start at a seeded element and are spread n/8 apart
// (distinct when n >= 8; in smaller tensors the later kinds win).
void plant_specials(tensor& t, const dtype_traits& tr, std::uint64_t seed, std::uint64_t stream) {
  const std::uint64_t n = static_cast<std::uint64_t>(t.numel());
  if (n == 0 || !tr.is_float) return;
  constexpr double bands[] = {0.1, 0.3, 0.5, 0.7, 0.825, 0.875, 0.925, 0.975};
  const std::uint64_t start = random_bits(seed, (stream ^ 0x5bd1e9955bd1e995ull) + 3, 0) % n;
  const std::uint64_t spacing = std::max<std::uint64_t>(1, n / std::size(bands));
  for (std::uint64_t k = 0; k < std::size(bands); ++k) {
    const double v = special_value(tr, bands[k]);
    t.set_at(static_cast<std::int64_t>((start + k * spacing) % n), v, rounding::rne,
             std::isinf(v) ? overflow::ieee : overflow::saturate);
  }
}

}  // namespace

void fill_tensor(tensor& t, const fill_params& p, std::uint64_t seed, std::uint64_t stream) {
  const auto& tr = traits(t.type());
  const std::int64_t n = t.numel();
  // Values depend on the index only, so any thread count gives the same data. Overlapping
  // elements are written in order instead: the last index wins, as with one thread.
  const bool parallel = n >= (1 << 15) && elements_distinct(t);
  if (t.is_contiguous() && drawn_in_chunks(p.kind) && t.element_size() <= sizeof(std::uint64_t)) {
    fill_in_chunks(t, p, tr, seed, stream, parallel);
  } else if (t.is_contiguous() && storage_type(t.type()) == dtype::f32) {
    float* data = t.data_as<float>();
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(element(p, tr, seed, stream, i));
  } else {
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) t.set_at(i, element(p, tr, seed, stream, i));
  }
  if (p.kind == fill_kind::special) plant_specials(t, tr, seed, stream);
}

fill_kind parse_fill_kind(std::string_view name) {
  for (const auto& f : fill_names)
    if (f.name == name) return f.kind;
  std::string known;
  for (const auto& f : fill_names) {
    if (!known.empty()) known += ' ';
    known += f.name;
  }
  throw error("unknown fill '" + std::string(name) + "' (known: " + known + ")");
}

std::string_view to_string(fill_kind k) {
  for (const auto& f : fill_names)
    if (f.kind == k) return f.name;
  return "?";
}

std::vector<std::string> generic_fill_names() {
  std::vector<std::string> names;
  for (const auto& f : fill_names) names.emplace_back(f.name);
  return names;
}

}  // namespace opval
