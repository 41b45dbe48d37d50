// rms_norm's suites: the trailing-axes norms' (common_norm/trailing_axes.cpp): rows of 1 to 4096
// elements, one and two normalized axes, padded rows, three eps, with and without affine, every
// fill, in each contract.
#include "ops/rms_norm/rms_norm.hpp"

namespace opval::ops::rms_norm {

std::vector<std::string> rms_norm_spec::suite(std::string_view tag) const { return trailing_axes_suite(tag); }

}  // namespace opval::ops::rms_norm
