// max_pool2d: the pooling windows with the dilated ones (common_pool/pool_suite.cpp) on every
// contract, the fills in turn (integer contracts: no special).
#include <algorithm>

#include "ops/common_pool/pool_suite.hpp"
#include "ops/max_pool2d/max_pool2d.hpp"
#include "opval/contract.hpp"

namespace opval::ops::max_pool2d {

std::vector<std::string> max_pool2d_spec::suite(std::string_view tag) const {
  const pool::fills_fn fills = [](const std::string& dt) {
    std::vector<std::string> fills = pool::suite_fills();
    if (!is_float(parse_contract_types(dt).src)) std::erase(fills, "special");
    return fills;
  };
  std::vector<std::string> lines = pool::suite_lines(*this, pool::suite_windows(tag, true), fills);
  const std::vector<std::string> empty = pool::suite_lines(*this, pool::empty_windows(tag), fills);
  lines.insert(lines.end(), empty.begin(), empty.end());
  return lines;
}

}  // namespace opval::ops::max_pool2d
