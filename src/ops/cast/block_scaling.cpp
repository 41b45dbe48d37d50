// cast: block scales (OCP MX v1.0 section 6.3; NVFP4), see block_scaling.hpp.
#include "ops/cast/block_scaling.hpp"

#include <string>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "opval/problem.hpp"

namespace opval::ops::cast {
namespace {

bool is_wide(dtype t) { return t == dtype::f64 || t == dtype::f32 || t == dtype::f16 || t == dtype::bf16; }

}  // namespace

std::optional<block_format> block_format_of(const problem& p) {
  const std::int64_t block = p.get_int("block");
  if (block == 0) return std::nullopt;
  block_format f;
  f.block = block;
  f.scale_type = parse_dtype(p.get_choice("block_scale"));
  const dtype src = p.dt.src, dst = p.dt.dst;
  f.quantize = is_wide(src) && common_block::is_block_element(dst);
  if (!f.quantize && !(common_block::is_block_element(src) && is_wide(dst)))
    throw error(fmt::format("block={} needs a cast between f64/f32/f16/bf16 and one of f8_e4m3 f8_e5m2 f6_e2m3 "
                            "f6_e3m2 f4_e2m1, not {}",
                            block, p.dt.types_string()));
  f.element = f.quantize ? dst : src;
  const dims& shape = p.get_dims("shape");
  if (shape.empty() || shape.back() % block != 0)
    throw error(fmt::format("block={} must divide the innermost extent of shape ({})", block,
                            shape.empty() ? std::string("a scalar has none") : std::to_string(shape.back())));
  return f;
}

dims scale_shape(dims shape, std::int64_t block) {
  shape.back() /= block;
  return shape;
}

}  // namespace opval::ops::cast
