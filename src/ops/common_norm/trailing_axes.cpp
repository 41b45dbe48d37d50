#include "ops/common_norm/trailing_axes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval::ops::norm {

namespace {
std::vector<attr_def> common_attrs() {
  return {
      dims_attr("shape", {4, 64}, "shape of x, e.g. 8x768; the last norm_axes dims are normalized"),
      int_attr("norm_axes", 1, "how many trailing dims of shape form one normalized row", 1, 8),
      real_attr("eps", 1e-5, "added to the variance (mean square) before rsqrt; >= 0"),
      bool_attr("affine", true, "apply gamma (and beta for layer_norm), shaped as the normalized dims"),
      int_attr("ld", 0, "stride of x's and y's innermost-but-one dim (padded rows); 0 = contiguous", 0),
  };
}
}  // namespace

const attr_schema& trailing_axes_spec::schema() const {
  static const attr_schema rms(common_attrs());
  static const attr_schema layer = [] {
    std::vector<attr_def> a = common_attrs();
    a.push_back(bool_attr("stats", false,
                          "also output mean and inv_std = 1/sqrt(var + eps) per row, in acc, shaped as x with "
                          "the normalized dims 1 (PyTorch native_layer_norm, ONNX LayerNormalization)"));
    return attr_schema(std::move(a));
  }();
  return kind() == norm_kind::layer ? layer : rms;
}

geometry trailing_axes_spec::geometry_of(const problem& p) const {
  const dims& shape = p.get_dims("shape");
  const auto k = static_cast<std::size_t>(p.get_int("norm_axes"));
  geometry g;
  g.param_shape.assign(shape.end() - static_cast<std::ptrdiff_t>(std::min(k, shape.size())), shape.end());
  g.n = element_count(g.param_shape);
  g.rows = g.n > 0 ? element_count(shape) / g.n : 0;
  g.eps = p.get_real("eps");
  g.affine = p.get_bool("affine");
  if (kind() == norm_kind::layer && p.get_bool("stats")) {
    g.stats = true;
    g.stats_shape = shape;
    for (std::size_t d = shape.size() - std::min(k, shape.size()); d < shape.size(); ++d) g.stats_shape[d] = 1;
  }
  return g;
}

void trailing_axes_spec::validate(const problem& p) const {
  const std::string_view op = name();
  const dims& shape = p.get_dims("shape");
  const std::int64_t k = p.get_int("norm_axes");
  if (shape.empty()) throw error(fmt::format("{} needs shape= with at least one dim", op));
  if (k > static_cast<std::int64_t>(shape.size()))
    throw error(fmt::format("{} norm_axes={} exceeds the rank of shape={}", op, k, to_string(shape)));
  for (auto e : shape)
    if (e < 0) throw error(fmt::format("{} shape={} has a negative extent", op, to_string(shape)));
  const std::int64_t ld = p.get_int("ld");
  if (ld != 0 && (shape.size() < 2 || ld < shape.back()))
    throw error(fmt::format("{} ld={} must be 0 or >= the last dim of shape={} (rank >= 2)", op, ld, to_string(shape)));
  norm_spec::validate(p);
}

layout trailing_axes_spec::data_layout(const problem& p) const {
  const std::int64_t ld = p.get_int("ld");
  layout lay;
  if (ld > 0) lay.strides = padded_strides(p.get_dims("shape"), ld);
  return lay;
}

std::vector<std::string> trailing_axes_spec::trailing_axes_suite(std::string_view tag) const {
  const std::string op(name());
  const std::vector<std::string> contracts = suite_contracts();
  std::vector<std::string> lines;
  auto add = [&](const std::string& shape, int axes, double eps, bool affine, const std::string& dt,
                 const std::string& fill, std::int64_t ld = 0, const std::string& extra = "") {
    // A layer_norm row of one element is always beta (or 0): only affine makes it testable.
    if (kind() == norm_kind::layer && !affine && shape.ends_with("x1") && axes == 1) return;
    // Without gamma, a constant rms_norm row repeats one value (and one rounding error) n
    // times: the bias test, which assumes independent errors, would see a false bias.
    const bool repeats = kind() == norm_kind::rms && !affine && fill == constant_rows_fill;
    lines.push_back(fmt::format("{} shape={} norm_axes={} eps={} affine={} dt={} fill={}{}{}", op, shape, axes, eps,
                                affine ? 1 : 0, dt, repeats ? "default" : fill,
                                ld ? fmt::format(" ld={}", ld) : std::string(), extra));
  };
  if (tag == "smoke") {
    for (const auto& dt : contracts) {
      add("4x1", 1, 1e-5, true, dt, "default");
      add("5x17", 1, 1e-5, true, dt, "default");
      add("3x768", 1, 1e-12, false, dt, "default");
      add("6x33", 1, 0.1, true, dt, std::string(constant_rows_fill));
      add("2x3x40", 2, 1e-5, true, dt, "cancel", 48);
    }
    return lines;
  }
  if (tag != "regression") return lines;
  const std::vector<std::string> rows_by_n{"7x1", "5x2", "9x3", "6x13", "8x31", "4x97", "3x257", "4x1000",
                                           "12x768", "2x4096", "16x100"};
  const std::vector<double> eps_values{1e-5, 1e-12, 0.1};
  const std::vector<std::string> fills = suite_fills();
  std::size_t i = 0;
  for (const auto& dt : contracts) {
    for (const auto& shape : rows_by_n)
      for (double eps : eps_values)
        for (bool affine : {true, false}) add(shape, 1, eps, affine, dt, fills[i++ % fills.size()]);
    for (const auto& fill : fills) {
      add("2x3x5x7", 2, 1e-5, true, dt, fill);
      add("3x4x64", 2, 1e-12, false, dt, fill, 70);
      add("2x768", 1, 0.1, true, dt, fill);
      add("5x17", 1, 1e-5, true, dt, fill, 24);
    }
    // Model-sized rows: BERT (768), LLaMA (4096), padded.
    add("256x768", 1, 1e-12, true, dt, "default");
    add("32x4096", 1, 1e-5, true, dt, "default", 4160);
    add("64x1024", 1, 1e-5, false, dt, "cancel");
    add("0x768", 1, 1e-5, true, dt, "default");  // an empty batch
    if (kind() == norm_kind::layer) {
      // The mean and inv_std outputs (stats=1): small and large eps, two axes, padded rows.
      add("6x97", 1, 1e-5, true, dt, "default", 0, " stats=1");
      add("4x33", 1, 0.1, false, dt, std::string(constant_rows_fill), 0, " stats=1");
      add("2x3x5x7", 2, 1e-12, true, dt, "cancel", 0, " stats=1");
      add("3x4x64", 1, 1e-5, true, dt, "special", 70, " stats=1");
    }
  }
  return lines;
}

feature_table trailing_axes_spec::features() const {
  feature_table t;
  t.base = "shape=6x13 norm_axes=1 eps=1e-05 affine=1";
  std::vector<std::string> fills;
  for (const std::string& f : suite_fills())
    if (f != "default") fills.push_back("fill=" + f);
  t.features = {{"rows",
                 {"shape=7x1", "shape=5x2", "shape=9x3", "shape=8x31", "shape=4x97", "shape=3x257", "shape=4x1000",
                  "shape=12x768", "shape=2x4096", "shape=0x768", "shape=2x3x5x7 norm_axes=2",
                  "shape=3x4x64 norm_axes=2"}},
                {"eps", {"eps=1e-12", "eps=0.1"}},
                {"affine", {"affine=0"}},
                {"padded rows", {"ld=24", "ld=4160"}},
                {"fill", fills}};
  if (kind() == norm_kind::layer) t.features.push_back({"statistics outputs", {"stats=1"}});
  t.not_meaningful = [this](const problem& p) { return norm_case_not_meaningful(kind(), geometry_of(p), p.fill); };
  return t;
}

}  // namespace opval::ops::norm
