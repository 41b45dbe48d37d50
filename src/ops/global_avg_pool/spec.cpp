// global_avg_pool: attributes (the input's extents and layout) and the window they make;
// contracts, validation, operands, counts and fill are the mean pools'. Registration.
#include "ops/global_avg_pool/global_avg_pool.hpp"

namespace opval::ops::global_avg_pool {

std::string_view global_avg_pool_spec::summary() const {
  return "mean over each channel's whole H x W plane (NCHW/NHWC), y is mb x c x 1 x 1";
}

const attr_schema& global_avg_pool_spec::schema() const {
  static const attr_schema s{
      int_attr("mb", 1, "minibatch", 0),
      int_attr("c", 1, "channels", 0),
      int_attr("ih", 7, "input height", 1),
      int_attr("iw", 7, "input width", 1),
      choice_attr("layout", "nchw", {"nchw", "nhwc"}, "memory layout of x and y"),
  };
  return s;
}

pool::window global_avg_pool_spec::window_of(const problem& p) const {
  pool::window g;
  g.mb = p.get_int("mb");
  g.c = p.get_int("c");
  g.h = {p.get_int("ih"), p.get_int("ih"), 1, 0, 0, 1, 1};
  g.w = {p.get_int("iw"), p.get_int("iw"), 1, 0, 0, 1, 1};
  g.nhwc = p.get_choice("layout") == "nhwc";
  return g;
}

}  // namespace opval::ops::global_avg_pool

namespace {
using opval::ops::global_avg_pool::global_avg_pool_spec;
OPVAL_REGISTER_OP(global_avg_pool_spec);
}  // namespace
