// The ONNX op types opval maps to its ops (op_nodes.hpp), each following the ONNX operator
// specification across the opsets that changed it (an attribute become an input, a default).
#include "graph/op_nodes.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/tensor_proto_file.hpp"
#include "graph/graph_value.hpp"
#include "ops/cast/cast.hpp"
#include "ops/common_eltwise/broadcast.hpp"
#include "opval/contract.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

using named_attr = std::pair<std::string_view, attr_value>;

// The contract a node of element type `type` is judged under when the stack documents
// nothing finer: that type in and out, accumulated in f32 (f64 values, which no opval op
// takes, are computed by the reference alike and judged as f32).
std::string natural_contract(const op_spec& spec, dtype type) {
  std::string text = "f32";
  if (type == dtype::f16) text = "f16:f32:f16";
  if (type == dtype::bf16) text = "bf16:f32:bf16";
  const std::vector<std::string> supported = spec.contracts();
  return std::ranges::find(supported, text) != supported.end() ? text : "f32";
}

// The contract the stack documents for the node (model::contracts), checked against op `spec`
// and the node's natural contract: one the op supports, storing the values as the model types
// them (an override says how the stack computes, not what the model's values are).
contract overridden_contract(const node_context& c, const op_spec& spec, const std::string& text,
                             const contract& natural) {
  contract given;
  try {
    given = parse_contract_types(text);
  } catch (const error& e) {
    c.fail(fmt::format("contract override '{}': {}", text, e.what()));
  }
  const std::vector<std::string> supported = spec.contracts();
  if (std::ranges::none_of(supported, [&](const std::string& s) {
        return parse_contract_types(s).types_string() == given.types_string();
      }))
    c.fail(fmt::format("contract override '{}': opval's {} does not support it (supported: {})", text, spec.name(),
                       fmt::join(supported, " ")));
  if (given.src != natural.src || given.wei != natural.wei || given.dst != natural.dst)
    c.fail(fmt::format("contract override '{}' stores the values as {}, but the model gives them as {}: an override "
                       "may change only the math and accumulation types",
                       text, given.types_string(), natural.types_string()));
  return given;
}

// The problem of op `op` with `attrs` under the node's contract — `contract_text` when the
// mapping fixes one (a Cast's), else the override the stack documents for the node, else its
// natural one — validated: an attribute or shape the op rejects is an error naming the node.
problem make_problem(const node_context& c, std::string_view op, dtype type, const std::vector<named_attr>& attrs,
                     std::string contract_text = "") {
  const op_spec& spec = find_op(op);
  problem p(spec);
  const std::string* override_text = contract_text.empty() ? contract_override(c.graph(), c.current()) : nullptr;
  if (override_text)  // outside the try below: its error already names the node
    p.dt = overridden_contract(c, spec, *override_text, parse_contract_types(natural_contract(spec, type)));
  try {
    for (const auto& [name, v] : attrs) p.set(name, v);
    if (!override_text)
      p.dt = parse_contract_types(contract_text.empty() ? natural_contract(spec, type) : contract_text);
    spec.validate(p);
  } catch (const error& e) {
    c.fail(fmt::format("as opval's {}: {}", op, e.what()));
  }
  return p;
}

op_call call_of(problem p, std::vector<value> operands, dtype type, std::vector<std::optional<dims>> shapes = {}) {
  op_call call;
  call.prob = std::move(p);
  call.operands = std::move(operands);
  call.result_shapes = std::move(shapes);
  call.result_type = type;
  return call;
}

std::int64_t product(const dims& d, std::size_t from, std::size_t to) {
  return std::accumulate(d.begin() + from, d.begin() + to, std::int64_t{1}, std::multiplies{});
}

value with_shape(value v, dims shape) {
  v.shape = std::move(shape);
  return v;
}

// `v` broadcast (NumPy's rule) to `shape`, exactly.
value broadcast_to(const node_context& c, const value& v, const dims& shape, std::string_view what) {
  ops::eltwise::broadcast_plan plan;
  try {
    plan = ops::eltwise::plan_broadcast(shape, v.shape);
  } catch (const error&) {
    c.fail(fmt::format("{} of shape {} does not broadcast to {}", what, to_string(v.shape), to_string(shape)));
  }
  if (plan.out != shape)
    c.fail(fmt::format("{} of shape {} does not broadcast to {}", what, to_string(v.shape), to_string(shape)));
  value out = zeros(v.type, shape);
  for (std::size_t i = 0; i < out.data.size(); ++i)
    out.data[i] = v.data[static_cast<std::size_t>(plan.sources(static_cast<std::int64_t>(i)).second)];
  return out;
}

value transposed_matrix(const value& v) {
  const std::int64_t rows = v.shape[0], cols = v.shape[1];
  value out = zeros(v.type, {cols, rows});
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < cols; ++k) out.data[k * rows + r] = v.data[r * cols + k];
  return out;
}

void require_float(const node_context& c, const value& v, std::string_view what) {
  if (!is_float(v.type)) c.unsupported_form(fmt::format("{} is {}, and opval's op takes floating-point values", what, to_string(v.type)));
}

std::optional<op_call> matmul(const node_context& c) {
  const value& a = c.input(0, "A");
  const value& b = c.input(1, "B");
  require_float(c, a, "A");
  if (a.shape.empty() || b.shape.empty()) c.fail("an input is a scalar");
  const bool vector_a = a.shape.size() == 1, vector_b = b.shape.size() == 1;
  const dims sa = vector_a ? dims{1, a.shape[0]} : a.shape;
  const dims sb = vector_b ? dims{b.shape[0], 1} : b.shape;
  const std::int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) c.fail(fmt::format("A {} and B {} do not multiply", to_string(a.shape), to_string(b.shape)));
  const dims batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  problem p = make_problem(c, "matmul", a.type, {{"m", m}, {"n", n}, {"k", k}, {"batch_a", batch_a}, {"batch_b", batch_b}});
  dims out = ops::eltwise::plan_broadcast(batch_a, batch_b).out;
  if (!vector_a) out.push_back(m);
  if (!vector_b) out.push_back(n);
  return call_of(std::move(p), {with_shape(a, sa), with_shape(b, sb)}, a.type, {out});
}

std::optional<op_call> gemm(const node_context& c) {
  const value& a = c.input(0, "A");
  const value& b = c.input(1, "B");
  require_float(c, a, "A");
  if (a.shape.size() != 2 || b.shape.size() != 2) c.fail("A and B must be matrices");
  const bool ta = c.integer("transA", 0) != 0, tb = c.integer("transB", 0) != 0;
  const value la = ta ? transposed_matrix(a) : a, lb = tb ? transposed_matrix(b) : b;
  const std::int64_t m = la.shape[0], k = la.shape[1], n = lb.shape[1];
  if (lb.shape[0] != k) c.fail(fmt::format("A {} and B {} do not multiply", to_string(a.shape), to_string(b.shape)));
  const double alpha = c.real("alpha", 1.0), beta = c.real("beta", 1.0);
  const value* cin = c.optional_input(2);
  const bool with_c = cin != nullptr && beta != 0.0;
  problem p = make_problem(c, "matmul", a.type,
                           {{"m", m}, {"n", n}, {"k", k}, {"ta", ta}, {"tb", tb}, {"alpha", alpha},
                            {"beta", with_c ? beta : 0.0}});
  std::vector<value> operands{la, lb};
  if (with_c) operands.push_back(broadcast_to(c, *cin, {m, n}, "C"));
  return call_of(std::move(p), std::move(operands), a.type);
}

// The explicit pads of one spatial axis under auto_pad (NOTSET: the `pads` attribute).
struct axis_pads {
  std::int64_t begin = 0, end = 0;
};

std::vector<axis_pads> spatial_pads(const node_context& c, const dims& in, const dims& kernel, const dims& strides,
                                    const dims& dilations) {
  const std::size_t spatial = in.size();
  std::vector<axis_pads> out(spatial);
  const std::string mode = c.text("auto_pad", "NOTSET");
  if (mode == "NOTSET") {
    const std::vector<std::int64_t> pads = c.integers("pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial) c.fail(fmt::format("pads has {} entries, not {}", pads.size(), 2 * spatial));
    for (std::size_t d = 0; d < spatial; ++d) out[d] = {pads[d], pads[d + spatial]};
  } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    for (std::size_t d = 0; d < spatial; ++d) {
      const std::int64_t target = (in[d] + strides[d] - 1) / strides[d];
      const std::int64_t total =
          std::max<std::int64_t>(0, (target - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in[d]);
      const std::int64_t small = total / 2;
      out[d] = mode == "SAME_UPPER" ? axis_pads{small, total - small} : axis_pads{total - small, small};
    }
  } else if (mode != "VALID") {
    c.fail(fmt::format("auto_pad={} is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID", mode));
  }
  return out;
}

// The window attributes a 2-D conv or pool node shares: kernel, strides, dilations, pads.
struct window2d {
  dims kernel, strides, dilations;
  std::vector<axis_pads> pads;
};

window2d window_of(const node_context& c, const dims& x, dims kernel) {
  window2d w;
  w.kernel = std::move(kernel);
  w.strides = c.integers("strides").value_or(dims{1, 1});
  w.dilations = c.integers("dilations").value_or(dims{1, 1});
  if (w.kernel.size() != 2 || w.strides.size() != 2 || w.dilations.size() != 2)
    c.fail("kernel_shape, strides and dilations must have two entries (a 2-D window)");
  w.pads = spatial_pads(c, {x[2], x[3]}, w.kernel, w.strides, w.dilations);
  return w;
}

std::vector<named_attr> window_attrs(const window2d& w) {
  return {{"kh", w.kernel[0]},     {"kw", w.kernel[1]},     {"sh", w.strides[0]},  {"sw", w.strides[1]},
          {"pt", w.pads[0].begin}, {"pb", w.pads[0].end}, {"pl", w.pads[1].begin}, {"pr", w.pads[1].end}};
}

void require_2d_image(const node_context& c, const value& x) {
  if (x.shape.size() != 4)
    c.unsupported_form(fmt::format("X has rank {}: opval maps the 2-D form (N x C x H x W) only", x.shape.size()));
}

std::optional<op_call> conv(const node_context& c) {
  const value& x = c.input(0, "X");
  const value& w = c.input(1, "W");
  require_float(c, x, "X");
  require_2d_image(c, x);
  if (w.shape.size() != 4) c.fail("W must be M x C/group x kH x kW");
  const std::int64_t groups = c.integer("group", 1);
  const dims kernel = c.integers("kernel_shape").value_or(dims{w.shape[2], w.shape[3]});
  if (kernel != dims{w.shape[2], w.shape[3]}) c.fail("kernel_shape differs from W's spatial extents");
  if (groups <= 0 || w.shape[1] * groups != x.shape[1])
    c.fail(fmt::format("W's {} input channels per group x group={} is not X's {} channels", w.shape[1], groups, x.shape[1]));
  const window2d win = window_of(c, x.shape, kernel);
  std::vector<named_attr> attrs{{"mb", x.shape[0]}, {"ic", x.shape[1]}, {"oc", w.shape[0]}, {"ih", x.shape[2]},
                                {"iw", x.shape[3]}, {"g", groups},      {"dh", win.dilations[0]},
                                {"dw", win.dilations[1]}};
  for (auto& a : window_attrs(win)) attrs.push_back(a);
  const value* bias = c.optional_input(2);
  if (bias) attrs.emplace_back("bias", true);
  std::vector<value> operands{x, w};
  if (bias) operands.push_back(*bias);
  return call_of(make_problem(c, "conv2d", x.type, attrs), std::move(operands), x.type);
}

std::optional<op_call> pool(const node_context& c, std::string_view op) {
  const value& x = c.input(0, "X");
  require_float(c, x, "X");
  require_2d_image(c, x);
  if (c.wants_output(1)) c.unsupported_form("it asks for the Indices output, which opval's max_pool2d does not give");
  const std::optional<dims> kernel = c.integers("kernel_shape");
  if (!kernel) c.fail("attribute 'kernel_shape' is missing");
  const window2d win = window_of(c, x.shape, *kernel);
  std::vector<named_attr> attrs{{"mb", x.shape[0]}, {"c", x.shape[1]}, {"ih", x.shape[2]}, {"iw", x.shape[3]},
                                {"ceil_mode", c.integer("ceil_mode", 0) != 0}};
  for (auto& a : window_attrs(win)) attrs.push_back(a);
  const bool dilated = win.dilations != dims{1, 1};
  if (find_op(op).schema().find("dh")) {
    attrs.emplace_back("dh", win.dilations[0]);
    attrs.emplace_back("dw", win.dilations[1]);
  } else if (dilated) {
    c.unsupported_form(fmt::format("dilations [{}]: opval's {} has no dilation", fmt::join(win.dilations, ","), op));
  }
  if (op == "avg_pool2d") attrs.emplace_back("count_include_pad", c.integer("count_include_pad", 0) != 0);
  return call_of(make_problem(c, op, x.type, attrs), {x}, x.type);
}

std::optional<op_call> max_pool(const node_context& c) { return pool(c, "max_pool2d"); }
std::optional<op_call> average_pool(const node_context& c) { return pool(c, "avg_pool2d"); }

std::optional<op_call> global_average_pool(const node_context& c) {
  const value& x = c.input(0, "X");
  require_float(c, x, "X");
  require_2d_image(c, x);
  problem p = make_problem(c, "global_avg_pool", x.type,
                           {{"mb", x.shape[0]}, {"c", x.shape[1]}, {"ih", x.shape[2]}, {"iw", x.shape[3]}});
  return call_of(std::move(p), {x}, x.type);
}

std::optional<op_call> unary(const node_context& c, std::string_view op, std::vector<named_attr> attrs = {}) {
  const value& x = c.input(0, "X");
  require_float(c, x, "X");
  attrs.emplace_back("shape", x.shape);
  return call_of(make_problem(c, op, x.type, attrs), {x}, x.type);
}

std::optional<op_call> relu(const node_context& c) { return unary(c, "relu"); }
std::optional<op_call> tanh_op(const node_context& c) { return unary(c, "tanh"); }
std::optional<op_call> erf_op(const node_context& c) { return unary(c, "erf"); }
std::optional<op_call> gelu(const node_context& c) {
  const std::string approximate = c.text("approximate", "none");
  if (approximate != "none" && approximate != "tanh") c.fail(fmt::format("approximate={} is neither none nor tanh", approximate));
  return unary(c, "gelu", {{"approximate", approximate}});
}

// An op on integers (shape arithmetic, index computations) is exact: the graph's own values,
// wrapped to the type as ONNX's integer arithmetic wraps.
op_call exact_result(value v) {
  for (double& x : v.data) x = wrapped_integer(x, v.type);
  op_call call;
  call.result_type = v.type;
  call.exact = {std::move(v)};
  return call;
}

template <class F>
op_call exact_elementwise(const value& a, const value& b, F&& f) {
  const ops::eltwise::broadcast_plan plan = ops::eltwise::plan_broadcast(a.shape, b.shape);
  value out = zeros(a.type, plan.out);
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    const auto [ia, ib] = plan.sources(static_cast<std::int64_t>(i));
    out.data[i] = f(as_index(a.data[ia]), as_index(b.data[ib]));
  }
  return exact_result(std::move(out));
}

std::optional<op_call> binary(const node_context& c, std::string_view op, bool negate_b) {
  const value& a = c.input(0, "A");
  value b = c.input(1, "B");
  if (!is_float(a.type)) {
    if (b.type != a.type) c.fail(fmt::format("A is {} and B is {}", to_string(a.type), to_string(b.type)));
    return exact_elementwise(a, b, [&](std::int64_t x, std::int64_t y) {
      if (op == "div" && y == 0) c.fail("an integer division by zero");
      // Integer division truncates toward zero, as ONNX Runtime's and C++'s.
      return static_cast<double>(op == "div" ? x / y : op == "mul" ? x * y : negate_b ? x - y : x + y);
    });
  }
  if (negate_b)  // a - b = a + (-b), rounded alike: negation is exact
    for (double& v : b.data) v = -v;
  problem p = make_problem(c, op, a.type, {{"shape_a", a.shape}, {"shape_b", b.shape}});
  return call_of(std::move(p), {a, std::move(b)}, a.type);
}

std::optional<op_call> add(const node_context& c) { return binary(c, "add", false); }
std::optional<op_call> sub(const node_context& c) { return binary(c, "add", true); }
std::optional<op_call> mul(const node_context& c) { return binary(c, "mul", false); }
std::optional<op_call> div_op(const node_context& c) { return binary(c, "div", false); }

// Softmax and LogSoftmax: one axis from opset 13; before it, the input seen as a matrix
// [prod(shape[:axis]), prod(shape[axis:])] normalized along its rows.
std::optional<op_call> softmax_family(const node_context& c, std::string_view op) {
  const value& x = c.input(0, "input");
  require_float(c, x, "input");
  const int rank = static_cast<int>(x.shape.size());
  if (c.opset() >= 13) {
    const int axis = c.axis(c.integer("axis", -1), rank);
    return call_of(make_problem(c, op, x.type, {{"shape", x.shape}, {"axis", std::int64_t{axis}}}), {x}, x.type);
  }
  std::int64_t axis = c.integer("axis", 1);
  if (axis < -rank || axis > rank) c.fail(fmt::format("axis={} is outside [{}, {}]", axis, -rank, rank));
  if (axis < 0) axis += rank;
  const dims matrix{product(x.shape, 0, axis), product(x.shape, axis, x.shape.size())};
  problem p = make_problem(c, op, x.type, {{"shape", matrix}, {"axis", std::int64_t{1}}});
  return call_of(std::move(p), {with_shape(x, matrix)}, x.type, {x.shape});
}

std::optional<op_call> softmax(const node_context& c) { return softmax_family(c, "softmax"); }
std::optional<op_call> log_softmax(const node_context& c) { return softmax_family(c, "log_softmax"); }

// LayerNormalization's optional Mean and InvStdDev outputs, exactly: the statistics of each
// normalized row, shaped as X with the normalized dims kept as 1.
std::vector<value> layer_norm_statistics(const value& x, int axis, double eps) {
  dims shape(x.shape.begin(), x.shape.begin() + axis);
  shape.resize(x.shape.size(), 1);
  const std::int64_t rows = product(x.shape, 0, axis), width = product(x.shape, axis, x.shape.size());
  value mean = zeros(x.type, shape), inv_std = zeros(x.type, shape);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = x.data.begin() + r * width;
    const double mu = std::accumulate(row, row + width, 0.0) / double(width);
    double var = 0;
    for (std::int64_t i = 0; i < width; ++i) var += (row[i] - mu) * (row[i] - mu);
    mean.data[r] = mu;
    inv_std.data[r] = 1.0 / std::sqrt(var / double(width) + eps);
  }
  return {mean, inv_std};
}

std::optional<op_call> trailing_norm(const node_context& c, std::string_view op) {
  const value& x = c.input(0, "X");
  require_float(c, x, "X");
  const int rank = static_cast<int>(x.shape.size());
  const int axis = c.axis(c.integer("axis", -1), rank);
  const double eps = c.real("epsilon", 1e-5);
  const dims normalized(x.shape.begin() + axis, x.shape.end());
  problem p = make_problem(c, op, x.type,
                           {{"shape", x.shape}, {"norm_axes", std::int64_t{rank - axis}}, {"eps", eps}, {"affine", true}});
  std::vector<value> operands{x, broadcast_to(c, c.input(1, "Scale"), normalized, "Scale")};
  if (op == "layer_norm") {
    const value* bias = c.optional_input(2);
    operands.push_back(bias ? broadcast_to(c, *bias, normalized, "B") : zeros(x.type, normalized));
  }
  op_call call = call_of(std::move(p), std::move(operands), x.type);
  if (op == "layer_norm" && (c.wants_output(1) || c.wants_output(2))) call.exact = layer_norm_statistics(x, axis, eps);
  return call;
}

std::optional<op_call> layer_normalization(const node_context& c) { return trailing_norm(c, "layer_norm"); }
std::optional<op_call> rms_normalization(const node_context& c) { return trailing_norm(c, "rms_norm"); }

// GroupNormalization: per-channel scale and bias from opset 21; opset 18's were per group,
// given here to each channel of the group.
std::optional<op_call> group_normalization(const node_context& c) {
  const value& x = c.input(0, "X");
  require_float(c, x, "X");
  if (x.shape.size() < 3) c.fail("X must be N x C x spatial...");
  const std::optional<std::int64_t> groups = c.integer("num_groups");
  if (!groups) c.fail("attribute 'num_groups' is missing");
  const std::int64_t channels = x.shape[1];
  if (*groups <= 0 || channels % *groups != 0) c.fail(fmt::format("num_groups={} does not divide C={}", *groups, channels));
  auto per_channel = [&](const value& v, std::string_view what) {
    if (v.data.size() == static_cast<std::size_t>(channels)) return with_shape(v, {channels});
    if (c.opset() < 21 && v.data.size() == static_cast<std::size_t>(*groups)) {
      value out = zeros(v.type, {channels});
      for (std::int64_t ch = 0; ch < channels; ++ch) out.data[ch] = v.data[ch / (channels / *groups)];
      return out;
    }
    c.fail(fmt::format("{} has {} elements, for C={} and num_groups={}", what, v.data.size(), channels, *groups));
  };
  problem p = make_problem(c, "group_norm", x.type,
                           {{"shape", x.shape}, {"groups", *groups}, {"eps", c.real("epsilon", 1e-5)}, {"affine", true}});
  return call_of(std::move(p), {x, per_channel(c.input(1, "scale"), "scale"), per_channel(c.input(2, "bias"), "bias")},
                 x.type);
}

// An exact sum or maximum of integers (or booleans: any) over `axes`; the maximum of an empty
// set is the type's lowest value, as ONNX says.
value integer_reduction(const value& x, const dims& axes, bool keepdims, bool maximum) {
  dims kept = x.shape;
  for (const std::int64_t a : axes) kept[a] = 1;
  value out = zeros(x.type, kept);
  if (maximum) std::ranges::fill(out.data, x.type == dtype::boolean ? 0.0 : traits(x.type).lowest);
  const dims kept_strides = row_major_strides(kept);
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    dims index = unravel(static_cast<std::int64_t>(i), x.shape);
    for (const std::int64_t a : axes) index[a] = 0;
    double& y = out.data[position(index, kept_strides)];
    y = maximum ? std::max(y, x.data[i]) : y + x.data[i];
  }
  if (!keepdims) {
    dims shape;
    for (std::size_t d = 0; d < x.shape.size(); ++d)
      if (std::ranges::find(axes, static_cast<std::int64_t>(d)) == axes.end()) shape.push_back(x.shape[d]);
    out.shape = shape;
  }
  return out;
}

// ReduceSum (axes an input from opset 13), ReduceMean and ReduceMax (from opset 18).
std::optional<op_call> reduce(const node_context& c, std::string_view kind, std::int64_t axes_input_since) {
  const value& x = c.input(0, "data");
  const int rank = static_cast<int>(x.shape.size());
  std::vector<std::int64_t> listed;
  if (c.opset() >= axes_input_since) {
    if (const value* a = c.optional_input(1)) listed = indices_of(*a);
  } else {
    listed = c.integers("axes").value_or(std::vector<std::int64_t>{});
  }
  const bool keepdims = c.integer("keepdims", 1) != 0;
  if (!is_float(x.type) && kind == "mean") c.unsupported_form("ReduceMean of integers (its rounding) is not mapped");
  if (listed.empty()) {
    if (c.integer("noop_with_empty_axes", 0) != 0) {
      op_call identity;
      identity.result_type = x.type;
      identity.exact = {x};
      return identity;
    }
    for (int d = 0; d < rank; ++d) listed.push_back(d);
  }
  dims axes;
  for (const std::int64_t a : listed) axes.push_back(c.axis(a, rank, "axes entry"));
  if (!is_float(x.type)) return exact_result(integer_reduction(x, axes, keepdims, kind == "max"));
  problem p = make_problem(c, "reduce", x.type, {{"shape", x.shape}, {"axes", axes}, {"kind", std::string(kind)},
                                                 {"keepdims", keepdims}});
  return call_of(std::move(p), {x}, x.type);
}

std::optional<op_call> reduce_sum(const node_context& c) { return reduce(c, "sum", 13); }
std::optional<op_call> reduce_mean(const node_context& c) { return reduce(c, "mean", 18); }
std::optional<op_call> reduce_max(const node_context& c) { return reduce(c, "max", 18); }

// A Cast (or CastLike) between two floating-point types rounds: opval's cast. Any other is
// structural.
std::optional<op_call> float_cast(const node_context& c, std::optional<dtype> to) {
  const value& x = c.input(0, "input");
  if (!to || !is_float(*to) || !is_float(x.type)) return std::nullopt;
  // ONNX's saturate (opset 19) applies to the float8 types only (the fnuz ones too); it
  // defaults to true.
  const bool float8 = *to == dtype::f8_e4m3 || *to == dtype::f8_e5m2 || *to == dtype::f8_e4m3fnuz ||
                      *to == dtype::f8_e5m2fnuz;
  const bool saturate = float8 && c.integer("saturate", 1) != 0;
  problem p = make_problem(c, "cast", x.type, {{"shape", x.shape}, {"saturate", saturate}},
                           ops::cast::contract_text(x.type, *to));
  op_call call = call_of(std::move(p), {x}, *to);
  call.rounds_to_result_type = true;
  call.result_overflow = saturate ? overflow::saturate : overflow::ieee;
  return call;
}

std::optional<op_call> cast(const node_context& c) {
  const std::optional<std::int64_t> to = c.integer("to");
  if (!to) c.fail("attribute 'to' is missing");
  return float_cast(c, detail::opval_type(static_cast<int>(*to)));
}

std::optional<op_call> cast_like(const node_context& c) { return float_cast(c, c.input(1, "target_type").type); }

}  // namespace

const std::vector<mapped_op>& mapped_ops() {
  static const std::vector<mapped_op> table{
      {"MatMul", "matmul", matmul},
      {"Gemm", "matmul", gemm},
      {"Conv", "conv2d", conv},
      {"MaxPool", "max_pool2d", max_pool},
      {"AveragePool", "avg_pool2d", average_pool},
      {"GlobalAveragePool", "global_avg_pool", global_average_pool},
      {"Relu", "relu", relu},
      {"Tanh", "tanh", tanh_op},
      {"Erf", "erf", erf_op},
      {"Gelu", "gelu", gelu},
      {"Add", "add", add},
      {"Sub", "add", sub},
      {"Mul", "mul", mul},
      {"Div", "div", div_op},
      {"Softmax", "softmax", softmax},
      {"LogSoftmax", "log_softmax", log_softmax},
      {"LayerNormalization", "layer_norm", layer_normalization},
      {"RMSNormalization", "rms_norm", rms_normalization},
      {"GroupNormalization", "group_norm", group_normalization},
      {"ReduceSum", "reduce", reduce_sum},
      {"ReduceMean", "reduce", reduce_mean},
      {"ReduceMax", "reduce", reduce_max},
      {"Cast", "cast", cast},
      {"CastLike", "cast", cast_like},
  };
  return table;
}

std::vector<tensor> input_tensors(const op_call& call) {
  const problem& p = *call.prob;
  const std::vector<operand> ins = p.spec().inputs(p);
  std::vector<tensor> out;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    out.emplace_back(ins[i].type, ins[i].shape);
    out.back().assign(call.operands[i].data);
  }
  return out;
}

const mapped_op* find_mapped_op(const node& n) {
  if (!n.domain.empty()) return nullptr;
  for (const mapped_op& m : mapped_ops())
    if (m.op_type == n.op_type) return &m;
  return nullptr;
}

}  // namespace opval::graph
