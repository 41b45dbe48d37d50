// avg_pool2d: the window's attributes with count_include_pad; contracts, validation, operands,
// counts and fill are the mean pools' (common_pool/mean_pool.cpp). Registration.
#include "ops/avg_pool2d/avg_pool2d.hpp"

#include <vector>

namespace opval::ops::avg_pool2d {

std::string_view avg_pool2d_spec::summary() const {
  return "2-D average pooling (stride, asymmetric padding, ceil_mode, count_include_pad; NCHW/NHWC)";
}

const attr_schema& avg_pool2d_spec::schema() const {
  static const attr_schema s = [] {
    std::vector<attr_def> defs = pool::window_attrs(false);
    defs.push_back(bool_attr("count_include_pad", false, "divide by the taps inside the padded input, not the input"));
    return attr_schema(std::move(defs));
  }();
  return s;
}

pool::window avg_pool2d_spec::window_of(const problem& p) const { return pool::read_window(p); }

pool::divisor_rule avg_pool2d_spec::divisor_of(const problem& p) const {
  return p.get_bool("count_include_pad") ? pool::divisor_rule::padded : pool::divisor_rule::inside;
}

}  // namespace opval::ops::avg_pool2d

namespace {
using opval::ops::avg_pool2d::avg_pool2d_spec;
OPVAL_REGISTER_OP(avg_pool2d_spec);
}  // namespace
