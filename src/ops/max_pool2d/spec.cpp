// max_pool2d: attributes (the dilated window), contracts, validation and fill; operands and
// counts are the pools' (common_pool/pool_window.cpp). Registration.
#include "ops/max_pool2d/max_pool2d.hpp"

#include <fmt/format.h>

#include "core/fill.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"

namespace opval::ops::max_pool2d {

std::string_view max_pool2d_spec::summary() const {
  return "2-D max pooling (stride, asymmetric padding, dilation, ceil_mode; NCHW/NHWC): exact, NaN wins";
}

const attr_schema& max_pool2d_spec::schema() const {
  static const attr_schema s(pool::window_attrs(true));
  return s;
}

std::vector<std::string> max_pool2d_spec::contracts() const {
  return {"f32", "bf16:f32:bf16", "f16:f32:f16", "i8:i32:i8", "u8:i32:u8"};
}

pool::window max_pool2d_spec::window_of(const problem& p) const { return pool::read_window(p); }

void max_pool2d_spec::validate(const problem& p) const {
  validate_window(p);
  const contract& c = p.dt;
  if (c.dst != c.src || c.rounds_inputs() || c.src == dtype::tf32 || c.src == dtype::boolean)
    throw error(fmt::format("max_pool2d does not support contract {}: its result is one of its inputs, so dst must "
                            "be src's type (e.g. f32, bf16:f32:bf16, f16:f32:f16, i8:i32:i8, u8:i32:u8)",
                            c.types_string()));
  if (!is_float(c.src) && p.fill == "special")
    throw error(fmt::format("max_pool2d fill=special needs a float contract ({} has no NaN or Inf)", c.types_string()));
}

fill_traits max_pool2d_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const dtype_traits& t = traits(p.dt.src);
  fill_params fp;
  if (is_float(p.dt.src)) {
    fp.kind = p.fill == "default" ? fill_kind::normal : parse_fill_kind(p.fill);
    if (fp.kind == fill_kind::large) fp.scale = t.max / 2;
  } else {
    fp.kind = fill_kind::uniform;
    fp.lo = p.fill == "positive" ? 1 : p.fill == "exact" ? -4 : t.lowest;
    fp.hi = p.fill == "exact" ? 4 : t.max;
  }
  fill_tensor(in[0], fp, seed, 0);
  fill_traits f;
  f.exact = true;  // the result is one of the inputs
  f.same_sign = fp.kind == fill_kind::positive;
  f.has_specials = fp.kind == fill_kind::special;
  return f;
}

}  // namespace opval::ops::max_pool2d

namespace {
using opval::ops::max_pool2d::max_pool2d_spec;
OPVAL_REGISTER_OP(max_pool2d_spec);
}  // namespace
