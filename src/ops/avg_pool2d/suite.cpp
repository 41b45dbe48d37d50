// avg_pool2d: the pooling windows (common_pool/pool_suite.cpp) on every contract, with
// count_include_pad alternating every other line and the generic fills in turn.
#include "ops/avg_pool2d/avg_pool2d.hpp"
#include "ops/common_pool/pool_suite.hpp"

namespace opval::ops::avg_pool2d {

std::vector<std::string> avg_pool2d_spec::suite(std::string_view tag) const {
  return pool::suite_lines(*this, pool::suite_windows(tag, false),
                           [](const std::string&) { return pool::suite_fills(); },
                           [](std::size_t i) { return (i / 2) % 2 ? "count_include_pad=1" : ""; });
}

}  // namespace opval::ops::avg_pool2d
