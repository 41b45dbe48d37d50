// avg_pool2d: the pooling windows (common_pool/pool_suite.cpp) on every contract, with
// count_include_pad alternating every other line and the generic fills in turn.
#include "ops/avg_pool2d/avg_pool2d.hpp"
#include "ops/common_pool/pool_suite.hpp"

namespace opval::ops::avg_pool2d {

std::vector<std::string> avg_pool2d_spec::suite(std::string_view tag) const {
  const pool::fills_fn fills = [](const std::string&) { return pool::suite_fills(); };
  const auto include_pad = [](std::size_t i) { return (i / 2) % 2 ? "count_include_pad=1" : ""; };
  std::vector<std::string> lines = pool::suite_lines(*this, pool::suite_windows(tag, false), fills, include_pad);
  const std::vector<std::string> empty = pool::suite_lines(*this, pool::empty_windows(tag), fills, include_pad);
  lines.insert(lines.end(), empty.begin(), empty.end());
  return lines;
}

}  // namespace opval::ops::avg_pool2d
