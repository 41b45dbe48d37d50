// The exact references of the structural ops (structural_ops.hpp), following the ONNX
// operator specification of each op, across the opsets that moved an attribute to an input.
#include "graph/structural_ops.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/size_product.hpp"
#include "core/tensor_proto_file.hpp"
#include "graph/graph_value.hpp"
#include "ops/common_eltwise/broadcast.hpp"
#include "opval/error.hpp"

namespace opval::graph {
namespace {

// A value of `shape` whose element i is element source(i) of `in` (a row-major position).
template <class Source>
value remap(const value& in, const dims& shape, Source&& source) {
  value out = zeros(in.type, shape);
  for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] = in.data[static_cast<std::size_t>(source(i))];
  return out;
}

value reshaped(const value& in, dims shape) {
  value out = in;
  out.shape = std::move(shape);
  return out;
}

int rank_of(const value& v) { return static_cast<int>(v.shape.size()); }

// A list-valued operand: the input at `index` from opset `since_opset` on, the attribute
// `name` before it; nullopt when neither is given.
std::optional<std::vector<std::int64_t>> list_operand(const node_context& c, std::size_t index,
                                                      std::int64_t since_opset, std::string_view name) {
  if (c.opset() >= since_opset) {
    const value* v = c.optional_input(index);
    return v ? std::optional(indices_of(*v)) : std::nullopt;
  }
  return c.integers(name);
}

// Distinct axes of a rank-`rank` tensor, normalized and sorted.
std::vector<int> axes_of(const node_context& c, const std::vector<std::int64_t>& axes, int rank) {
  std::set<int> out;
  for (const std::int64_t a : axes)
    if (!out.insert(c.axis(a, rank, "axes entry")).second) c.fail(fmt::format("axis {} is listed twice", a));
  return {out.begin(), out.end()};
}

std::vector<value> identity(const node_context& c) { return {c.input(0, "input")}; }

std::vector<value> reshape(const node_context& c) {
  const value& data = c.input(0, "data");
  const std::vector<std::int64_t> target =
      c.opset() >= 5 ? indices_of(c.input(1, "shape")) : c.integers("shape").value_or(std::vector<std::int64_t>{});
  const bool allow_zero = c.integer("allowzero", 0) != 0;
  dims shape;
  int inferred = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    std::int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      if (i >= data.shape.size()) c.fail(fmt::format("shape entry {} is 0 (copy) past the input's rank", i));
      d = data.shape[i];
    }
    if (d == -1) {
      if (inferred >= 0) c.fail("the shape has more than one -1");
      inferred = static_cast<int>(i);
    } else if (d < 0) {
      c.fail(fmt::format("shape entry {} is {}", i, d));
    } else {
      known = size_product(known, d, target);  // a hostile shape is an error, not a wrapped product
    }
    shape.push_back(d);
  }
  const std::int64_t count = element_count(data.shape);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      c.fail(fmt::format("{} elements cannot take the shape [{}]", count, fmt::join(target, ",")));
    shape[inferred] = count / known;
  }
  if (element_count(shape) != count)
    c.fail(fmt::format("{} elements cannot take the shape {}", count, to_string(shape)));
  return {reshaped(data, shape)};
}

std::vector<value> transpose(const node_context& c) {
  const value& data = c.input(0, "data");
  const int rank = rank_of(data);
  std::vector<std::int64_t> perm = c.integers("perm").value_or(std::vector<std::int64_t>{});
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int>(perm.size()) != rank) c.fail(fmt::format("perm has {} entries for rank {}", perm.size(), rank));
  std::vector<bool> seen(rank, false);
  for (const std::int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) c.fail(fmt::format("perm [{}] is no permutation", fmt::join(perm, ",")));
    seen[p] = true;
  }
  dims shape(rank);
  for (int d = 0; d < rank; ++d) shape[d] = data.shape[perm[d]];
  const dims in_strides = row_major_strides(data.shape);
  return {remap(data, shape, [&](std::size_t i) {
    const dims index = unravel(static_cast<std::int64_t>(i), shape);
    std::int64_t at = 0;
    for (int d = 0; d < rank; ++d) at += index[d] * in_strides[perm[d]];
    return at;
  })};
}

std::vector<value> concat(const node_context& c) {
  if (c.input_count() == 0) c.fail("it has no inputs");
  const value& first = c.input(0, "input");
  const std::optional<std::int64_t> axis_attr = c.integer("axis");
  if (!axis_attr) c.fail("attribute 'axis' is missing");
  const int rank = rank_of(first);
  const int axis = c.axis(*axis_attr, rank);
  dims shape = first.shape;
  shape[axis] = 0;
  std::vector<const value*> parts;
  for (std::size_t i = 0; i < c.input_count(); ++i) {
    const value& v = c.input(i, "input");
    bool fits = rank_of(v) == rank;
    for (int d = 0; fits && d < rank; ++d) fits = d == axis || v.shape[d] == first.shape[d];
    if (!fits)
      c.fail(fmt::format("input {} of shape {} does not concatenate with {} along axis {}", i, to_string(v.shape),
                         to_string(first.shape), axis));
    shape[axis] += v.shape[axis];
    parts.push_back(&v);
  }
  value out = zeros(first.type, shape);
  const std::int64_t outer = std::accumulate(shape.begin(), shape.begin() + axis, std::int64_t{1}, std::multiplies{});
  const std::int64_t inner = std::accumulate(shape.begin() + axis + 1, shape.end(), std::int64_t{1}, std::multiplies{});
  std::size_t at = 0;
  for (std::int64_t o = 0; o < outer; ++o)
    for (const value* p : parts) {
      const std::int64_t run = p->shape[axis] * inner;
      std::copy_n(p->data.begin() + o * run, run, out.data.begin() + at);
      at += static_cast<std::size_t>(run);
    }
  return {out};
}

// The slice [begin, begin + extent) of `data` along `axis`.
value narrow(const value& data, int axis, std::int64_t begin, std::int64_t extent) {
  dims shape = data.shape;
  shape[axis] = extent;
  const dims in_strides = row_major_strides(data.shape);
  return remap(data, shape, [&](std::size_t i) {
    dims index = unravel(static_cast<std::int64_t>(i), shape);
    index[axis] += begin;
    return position(index, in_strides);
  });
}

std::vector<value> split(const node_context& c) {
  const value& data = c.input(0, "input");
  const int axis = c.axis(c.integer("axis", 0), rank_of(data));
  const std::int64_t extent = data.shape[axis];
  std::vector<std::int64_t> sizes =
      list_operand(c, 1, 13, "split").value_or(std::vector<std::int64_t>{});
  const std::size_t outputs = c.current().outputs.size();
  if (sizes.empty()) {
    const std::int64_t parts = c.integer("num_outputs", static_cast<std::int64_t>(outputs));
    if (parts <= 0) c.fail("it has no outputs");
    const std::int64_t each = (extent + parts - 1) / parts;  // opset 18: the last part may be smaller
    for (std::int64_t p = 0, left = extent; p < parts; ++p, left -= each) sizes.push_back(std::max<std::int64_t>(0, std::min(each, left)));
  }
  if (sizes.size() != outputs)
    c.fail(fmt::format("it splits into {} parts but names {} outputs", sizes.size(), outputs));
  if (std::ranges::any_of(sizes, [](std::int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != extent)
    c.fail(fmt::format("split [{}] does not add up to the extent {} of axis {}", fmt::join(sizes, ","), extent, axis));
  std::vector<value> out;
  std::int64_t begin = 0;
  for (const std::int64_t s : sizes) {
    out.push_back(narrow(data, axis, begin, s));
    begin += s;
  }
  return out;
}

// One axis of a Slice: the first index and the count, clamped as the ONNX specification says.
struct slice_axis {
  std::int64_t start = 0, step = 1, count = 0;
};

slice_axis clamp_slice(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  slice_axis s{0, step, 0};
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    s.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<std::int64_t>(start, 0, dim - 1);
    end = std::clamp<std::int64_t>(end, -1, dim - 1);
    s.count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  s.start = start;
  return s;
}

std::vector<value> slice(const node_context& c) {
  const value& data = c.input(0, "data");
  const int rank = rank_of(data);
  const bool as_inputs = c.opset() >= 10;
  const std::vector<std::int64_t> starts =
      as_inputs ? indices_of(c.input(1, "starts")) : c.integers("starts").value_or(std::vector<std::int64_t>{});
  const std::vector<std::int64_t> ends =
      as_inputs ? indices_of(c.input(2, "ends")) : c.integers("ends").value_or(std::vector<std::int64_t>{});
  std::vector<std::int64_t> axes = list_operand(c, 3, 10, "axes").value_or(std::vector<std::int64_t>{});
  std::vector<std::int64_t> steps =
      as_inputs && c.optional_input(4) ? indices_of(*c.optional_input(4)) : std::vector<std::int64_t>{};
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  std::vector<slice_axis> plan(rank);
  for (int d = 0; d < rank; ++d) plan[d] = {0, 1, data.shape[d]};
  std::set<int> seen;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int axis = c.axis(axes[i], rank, "axes entry");
    if (!seen.insert(axis).second) c.fail(fmt::format("axis {} is sliced twice", axis));
    if (steps[i] == 0) c.fail("a step is 0");
    plan[axis] = clamp_slice(starts[i], ends[i], steps[i], data.shape[axis]);
  }
  dims shape(rank);
  for (int d = 0; d < rank; ++d) shape[d] = plan[d].count;
  const dims in_strides = row_major_strides(data.shape);
  return {remap(data, shape, [&](std::size_t i) {
    dims index = unravel(static_cast<std::int64_t>(i), shape);
    for (int d = 0; d < rank; ++d) index[d] = plan[d].start + index[d] * plan[d].step;
    return position(index, in_strides);
  })};
}

std::vector<value> gather(const node_context& c) {
  const value& data = c.input(0, "data");
  const value& indices = c.input(1, "indices");
  if (is_float(indices.type)) c.fail("its indices are floating-point");
  const int rank = rank_of(data);
  if (rank == 0) c.fail("its data is a scalar");
  const int axis = c.axis(c.integer("axis", 0), rank);
  const std::int64_t extent = data.shape[axis];
  std::vector<std::int64_t> picks = indices_of(indices);
  for (std::int64_t& p : picks) {
    if (p < -extent || p >= extent)
      c.fail(fmt::format("index {} is outside [{}, {}) of axis {}", p, -extent, extent, axis));
    if (p < 0) p += extent;
  }
  dims shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  const dims in_strides = row_major_strides(data.shape);
  const int index_rank = rank_of(indices);
  const dims index_strides = row_major_strides(indices.shape);
  return {remap(data, shape, [&](std::size_t i) {
    const dims out_index = unravel(static_cast<std::int64_t>(i), shape);
    dims index(out_index.begin(), out_index.begin() + axis);
    const std::int64_t pick =
        picks[position(std::span(out_index).subspan(axis, index_rank), index_strides)];
    index.push_back(pick);
    index.insert(index.end(), out_index.begin() + axis + index_rank, out_index.end());
    return position(index, in_strides);
  })};
}

std::vector<value> squeeze(const node_context& c) {
  const value& data = c.input(0, "data");
  const int rank = rank_of(data);
  const std::optional<std::vector<std::int64_t>> listed = list_operand(c, 1, 13, "axes");
  std::vector<int> axes;
  if (listed && !listed->empty()) {
    axes = axes_of(c, *listed, rank);
    for (const int a : axes)
      if (data.shape[a] != 1) c.fail(fmt::format("axis {} has extent {}, not 1", a, data.shape[a]));
  } else {
    for (int d = 0; d < rank; ++d)
      if (data.shape[d] == 1) axes.push_back(d);
  }
  dims shape;
  for (int d = 0; d < rank; ++d)
    if (!std::ranges::binary_search(axes, d)) shape.push_back(data.shape[d]);
  return {reshaped(data, shape)};
}

std::vector<value> unsqueeze(const node_context& c) {
  const value& data = c.input(0, "data");
  const std::optional<std::vector<std::int64_t>> listed = list_operand(c, 1, 13, "axes");
  if (!listed || listed->empty()) c.fail("it names no axes");
  const int rank = rank_of(data) + static_cast<int>(listed->size());
  const std::vector<int> axes = axes_of(c, *listed, rank);
  dims shape;
  std::size_t from = 0;
  for (int d = 0; d < rank; ++d) shape.push_back(std::ranges::binary_search(axes, d) ? 1 : data.shape[from++]);
  return {reshaped(data, shape)};
}

std::vector<value> flatten(const node_context& c) {
  const value& data = c.input(0, "input");
  const int rank = rank_of(data);
  std::int64_t axis = c.integer("axis", 1);
  if (axis < -rank || axis > rank) c.fail(fmt::format("axis={} is outside [{}, {}]", axis, -rank, rank));
  if (axis < 0) axis += rank;
  const std::int64_t outer =
      std::accumulate(data.shape.begin(), data.shape.begin() + axis, std::int64_t{1}, std::multiplies{});
  const std::int64_t inner =
      std::accumulate(data.shape.begin() + axis, data.shape.end(), std::int64_t{1}, std::multiplies{});
  return {reshaped(data, {outer, inner})};
}

std::vector<value> expand(const node_context& c) {
  const value& data = c.input(0, "input");
  const dims target = indices_of(c.input(1, "shape"));
  ops::eltwise::broadcast_plan plan;
  try {
    plan = ops::eltwise::plan_broadcast(data.shape, target);
  } catch (const error&) {
    c.fail(fmt::format("shape {} does not broadcast to {}", to_string(data.shape), to_string(target)));
  }
  return {remap(data, plan.out, [&](std::size_t i) { return plan.sources(static_cast<std::int64_t>(i)).first; })};
}

std::vector<value> constant(const node_context& c) {
  if (const value* t = c.tensor("value")) return {*t};
  if (c.has("value_float")) return {make_value(dtype::f32, {}, {c.real("value_float", 0)})};
  if (c.has("value_int")) return {make_value(dtype::i64, {}, {static_cast<double>(c.integer("value_int", 0))})};
  if (const auto v = c.reals("value_floats")) return {make_value(dtype::f32, {std::ssize(*v)}, *v)};
  if (const auto v = c.integers("value_ints")) {
    std::vector<double> data(v->begin(), v->end());
    return {make_value(dtype::i64, {std::ssize(*v)}, std::move(data))};
  }
  c.fail("it holds no value opval reads (value, value_float(s), value_int(s); not strings or sparse tensors)");
}

std::vector<value> constant_of_shape(const node_context& c) {
  const dims shape = indices_of(c.input(0, "shape"));
  if (std::ranges::any_of(shape, [](std::int64_t d) { return d < 0; }))
    c.fail(fmt::format("shape {} has a negative extent", to_string(shape)));
  const value* fill = c.tensor("value");
  if (fill && fill->data.size() != 1) c.fail("its value is not one element");
  value out = zeros(fill ? fill->type : dtype::f32, shape);
  if (fill) std::ranges::fill(out.data, fill->data[0]);
  return {out};
}

std::vector<value> shape_of(const node_context& c) {
  const value& data = c.input(0, "data");
  const std::int64_t rank = rank_of(data);
  auto clamped = [&](std::int64_t at) { return std::clamp<std::int64_t>(at < 0 ? at + rank : at, 0, rank); };
  const std::int64_t start = clamped(c.integer("start", 0)), end = clamped(c.integer("end", rank));
  std::vector<double> extents;
  for (std::int64_t d = start; d < end; ++d) extents.push_back(static_cast<double>(data.shape[d]));
  const dims shape{std::ssize(extents)};
  return {make_value(dtype::i64, shape, std::move(extents))};
}

// x converted to integer type `to` as a C++ (and NumPy) conversion does: floats truncate
// toward zero (saturating at the type's range; NaN is 0), integers wrap.
double to_integer(double x, dtype to, bool from_float) {
  if (to == dtype::boolean) return x != 0 ? 1.0 : 0.0;
  if (from_float) return round_to(to, std::trunc(x), rounding::rz, overflow::saturate);
  return wrapped_integer(x, to);
}

value converted(const value& in, dtype to) {
  value out = in;
  out.type = to;
  // To a float type from an integer: the integer's value (exact in the fp64 reference).
  if (is_float(to)) return out;
  for (double& x : out.data) x = to_integer(x, to, is_float(in.type));
  return out;
}

dtype cast_target(const node_context& c) {
  const std::optional<std::int64_t> to = c.integer("to");
  if (!to) c.fail("attribute 'to' is missing");
  const std::optional<dtype> t = detail::opval_type(static_cast<int>(*to));
  if (!t) c.fail(fmt::format("it casts to ONNX element type {}, none opval has", *to));
  return *t;
}

std::vector<value> cast(const node_context& c) { return {converted(c.input(0, "input"), cast_target(c))}; }
std::vector<value> cast_like(const node_context& c) {
  return {converted(c.input(0, "input"), c.input(1, "target_type").type)};
}

const std::map<std::string_view, structural_fn>& table() {
  static const std::map<std::string_view, structural_fn> t{
      {"Identity", identity}, {"Reshape", reshape},     {"Transpose", transpose},
      {"Concat", concat},     {"Split", split},         {"Slice", slice},
      {"Gather", gather},     {"Squeeze", squeeze},     {"Unsqueeze", unsqueeze},
      {"Flatten", flatten},   {"Expand", expand},       {"Constant", constant},
      {"ConstantOfShape", constant_of_shape},           {"Shape", shape_of},
      {"Cast", cast},         {"CastLike", cast_like},
  };
  return t;
}

}  // namespace

structural_fn find_structural(const node& n) {
  if (!n.domain.empty()) return nullptr;
  const auto it = table().find(n.op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string_view> structural_op_types() {
  std::vector<std::string_view> out;
  for (const auto& [name, fn] : table()) out.push_back(name);
  return out;
}

}  // namespace opval::graph
