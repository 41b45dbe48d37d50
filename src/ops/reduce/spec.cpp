// reduce: attributes, contracts, validation, operands, counts, fill and the geometry of a
// problem (semantics and error model: reduce.hpp). Numerics: reference.cpp, bound.cpp.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "opval/attr.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "core/fill.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/reduce/reduce.hpp"

namespace opval::ops::reduce {

reduce_params params_of(const problem& p) {
  reduce_params r;
  r.shape = p.get_dims("shape");
  r.axes = p.get_dims("axes");
  const std::string& k = p.get_choice("kind");
  r.kind = k == "sum" ? reduce_kind::sum : k == "mean" ? reduce_kind::mean : reduce_kind::max;
  r.keepdims = p.get_bool("keepdims");
  return r;
}

std::vector<int> normalized_axes(const reduce_params& r) {
  const dims& shape = r.shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<int> axes;
  for (std::int64_t a : r.axes) {
    const std::int64_t b = a < 0 ? a + rank : a;
    if (b < 0 || b >= rank)
      throw error(fmt::format("reduce axes={} has axis {} outside shape={} (rank {})", to_string(r.axes),
                              a, to_string(shape), rank));
    if (std::find(axes.begin(), axes.end(), b) != axes.end())
      throw error(fmt::format("reduce axes={} names axis {} twice", to_string(r.axes), b));
    axes.push_back(static_cast<int>(b));
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

geometry geometry_of(const reduce_params& r) {
  const dims& shape = r.shape;
  const std::vector<int> axes = normalized_axes(r);
  const bool keepdims = r.keepdims;
  geometry g;
  for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), a);
    if (!reduced) {
      g.order.push_back(a);
      g.outer *= shape[static_cast<std::size_t>(a)];
      g.out_shape.push_back(shape[static_cast<std::size_t>(a)]);
    } else if (keepdims) {
      g.out_shape.push_back(1);
    }
  }
  for (int a : axes) {
    g.order.push_back(a);
    g.n *= shape[static_cast<std::size_t>(a)];
  }
  return g;
}

std::vector<double> grouped_values(const tensor& x, const geometry& g) {
  return x.permute(g.order).to_vector();
}

std::string_view reduce_spec::name() const { return "reduce"; }

std::string_view reduce_spec::summary() const { return "sum, mean or max over axes (keepdims optional)"; }

const attr_schema& reduce_spec::schema() const {
  static const attr_schema schema{
      dims_attr("shape", {4, 8}, "shape of x, e.g. 16x33x7"),
      dims_attr("axes", {1}, "reduced axes in dims syntax: 0x2 = axes 0 and 2"),
      choice_attr("kind", "sum", {"sum", "mean", "max"},
                  "sum (empty: 0), mean (empty: NaN), max (empty: -inf; NaN wins; max(-0,+0)=+0)"),
      bool_attr("keepdims", false, "keep reduced axes as extent-1 dims"),
  };
  return schema;
}

std::vector<std::string> reduce_spec::fills() const { return generic_fill_names(); }

std::vector<std::string> reduce_spec::contracts() const {
  return {"f32", "bf16:f32:bf16", "f16:f32:f16", "f16:f16:f16", "i32"};
}

void reduce_spec::validate(const problem& p) const {
  const reduce_params r = params_of(p);
  const dims& shape = r.shape;
  if (shape.empty()) throw error("reduce needs shape= with at least one dim");
  if (r.axes.empty()) throw error("reduce needs axes= with at least one axis");
  for (auto e : shape)
    if (e < 0) throw error(fmt::format("reduce shape={} has a negative extent", to_string(shape)));
  normalized_axes(r);
  const std::vector<std::string> f = fills();
  if (p.fill != "default" && std::find(f.begin(), f.end(), p.fill) == f.end())
    throw error(fmt::format("reduce does not know fill={}", p.fill));
  const contract& c = p.dt;
  if (!is_float(c.src)) {
    if (c.src != dtype::i32 || c.acc != dtype::i32 || c.dst != dtype::i32)
      throw error(fmt::format("reduce does not support contract {} (integer: i32 only)", c.types_string()));
    if (r.kind == reduce_kind::mean)
      throw error("reduce kind=mean does not support integer contract i32 (use dt=f32 or kind=sum)");
    return;
  }
  auto io = [](dtype t) { return t == dtype::f32 || t == dtype::bf16 || t == dtype::f16; };
  const bool acc_ok = c.acc == dtype::f32 || c.acc == dtype::f64 || (c.acc == dtype::f16 && c.src == dtype::f16);
  if (!io(c.src) || !io(c.dst) || !acc_ok || c.rounds_inputs())
    throw error(fmt::format("reduce does not support contract {} (e.g. f32, bf16:f32:bf16, f16:f32:f16, "
                            "f16:f16:f16, i32)", c.types_string()));
}

std::vector<operand> reduce_spec::inputs(const problem& p) const {
  return {{"x", p.dt.src, params_of(p).shape, {}}};
}

std::vector<operand> reduce_spec::outputs(const problem& p) const {
  return {{"y", p.dt.dst, geometry_of(params_of(p)).out_shape, {}}};
}

op_counts reduce_spec::counts(const problem& p) const {
  const geometry g = geometry_of(params_of(p));
  const double numel = static_cast<double>(g.outer * g.n);
  return {numel, numel * traits(p.dt.src).size_bytes + static_cast<double>(g.outer) * traits(p.dt.dst).size_bytes};
}

fill_traits reduce_spec::fill(const problem& p, std::uint64_t seed, std::span<tensor> in) const {
  const reduce_params r = params_of(p);
  const geometry g = geometry_of(r);
  fill_params fp;
  const bool integer = !is_float(p.dt.src);
  if (p.fill == "default") {
    fp.kind = integer ? fill_kind::exact : fill_kind::normal;
    fp.exact_range = 100;
  } else {
    fp.kind = parse_fill_kind(p.fill);
  }
  if (fp.kind == fill_kind::large) {
    const double n = static_cast<double>(std::max<std::int64_t>(g.n, 1));
    const reduce_kind k = r.kind;
    double s = traits(p.dt.src).max;
    if (k != reduce_kind::max) s = std::min(s, traits(p.dt.acc).max / n);
    if (k == reduce_kind::sum) s = std::min(s, traits(p.dt.dst).max / n);
    fp.scale = s / 2;
  }
  fill_tensor(in[0], fp, seed, 0);
  fill_traits f;
  f.same_sign = fp.kind == fill_kind::positive;
  f.has_specials = fp.kind == fill_kind::special;
  f.exact = integer;
  f.random_signs = !integer && symmetric_signs(fp);
  return f;
}

}  // namespace opval::ops::reduce

namespace {
using opval::ops::reduce::reduce_spec;
OPVAL_REGISTER_OP(reduce_spec);
}  // namespace
