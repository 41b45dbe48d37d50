// group_norm: attributes, validation, geometry and layout; the fill, operands and counts are
// the normalizations' (common_norm).
#include "ops/group_norm/group_norm.hpp"

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval::ops::group_norm {

group_norm_params params_of(const problem& p) {
  const dims& shape = p.get_dims("shape");
  group_norm_params g;
  g.batch = shape.empty() ? 0 : shape[0];
  g.channels = shape.size() < 2 ? 0 : shape[1];
  for (std::size_t d = 2; d < shape.size(); ++d) g.spatial *= shape[d];
  g.groups = p.get_int("groups");
  g.nhwc = p.get_choice("layout") == "nhwc";
  return g;
}

std::string_view group_norm_spec::summary() const {
  return "group normalization: (x-mean)*rsqrt(var+eps)*gamma[c]+beta[c], statistics per sample and channel group";
}

const attr_schema& group_norm_spec::schema() const {
  static const attr_schema schema{
      dims_attr("shape", {2, 32, 4, 4}, "N x C x spatial... in logical order whatever the layout, e.g. 2x64x8x8"),
      int_attr("groups", 8, "number of channel groups; must divide C (1: all channels, C: instance norm)", 1),
      real_attr("eps", 1e-5, "added to the variance before rsqrt; >= 0"),
      bool_attr("affine", true, "apply the per-channel gamma and beta (shape C)"),
      choice_attr("layout", "nchw", {"nchw", "nhwc"}, "nhwc stores x and y channels-last (strides only)"),
  };
  return schema;
}

void group_norm_spec::validate(const problem& p) const {
  const dims& shape = p.get_dims("shape");
  if (shape.size() < 2)
    throw error(fmt::format("group_norm needs shape= N x C [x spatial...], got shape={}", to_string(shape)));
  for (auto e : shape)
    if (e < 0) throw error(fmt::format("group_norm shape={} has a negative extent", to_string(shape)));
  const group_norm_params g = params_of(p);
  if (g.channels % g.groups != 0)
    throw error(fmt::format("group_norm groups={} does not divide the {} channels of shape={}", g.groups, g.channels,
                            to_string(shape)));
  norm_spec::validate(p);
}

// One row per (sample, group): C/groups channels of `spatial` elements each, consecutive in
// the logical N x C x spatial order; element i of a row is in channel group*C/groups + i/spatial.
norm::geometry group_norm_spec::geometry_of(const problem& p) const {
  const group_norm_params gp = params_of(p);
  norm::geometry g;
  g.rows = gp.batch * gp.groups;
  g.n = gp.channels / gp.groups * gp.spatial;
  g.param_shape = {gp.channels};
  g.param_groups = gp.groups;
  g.param_repeat = gp.spatial;
  g.eps = p.get_real("eps");
  g.affine = p.get_bool("affine");
  return g;
}

// nhwc: channels-last strides of the logical N x C x spatial... shape.
layout group_norm_spec::data_layout(const problem& p) const {
  layout lay;
  if (params_of(p).nhwc) lay.strides = channels_last_strides(p.get_dims("shape"));
  return lay;
}

}  // namespace opval::ops::group_norm

namespace {
using opval::ops::group_norm::group_norm_spec;
OPVAL_REGISTER_OP(group_norm_spec);
}  // namespace
