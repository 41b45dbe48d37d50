// global_avg_pool: planes from 1x1 to 56x56 (a ResNet head is 512 channels of 7x7) on every
// contract, the generic fills in turn; f16 accumulation skips planes of 1024 and more
// elements (no meaningful bound).
#include <string>

#include "ops/common_pool/pool_suite.hpp"
#include "ops/global_avg_pool/global_avg_pool.hpp"
#include "opval/problem.hpp"

namespace opval::ops::global_avg_pool {

std::vector<std::string> global_avg_pool_spec::suite(std::string_view tag) const {
  const bool smoke = tag == "smoke";
  if (!smoke && tag != "regression") return {};
  std::vector<std::string> planes{"mb=2 c=3 ih=7 iw=7", "mb=1 c=8 ih=1 iw=1", "mb=1 c=4 ih=5 iw=9"};
  if (!smoke)
    for (const char* more : {"mb=1 c=512 ih=7 iw=7", "mb=2 c=16 ih=14 iw=14", "mb=1 c=4 ih=56 iw=56", "mb=3 c=5 ih=1 iw=33"})
      planes.emplace_back(more);
  const auto long_plane = [this](const std::string& plane) {
    const problem p = parse_problem(std::string(name()) + " " + plane);
    return window_of(p).taps() >= 1024;
  };
  const pool::fills_fn fills = [](const std::string&) { return pool::suite_fills(); };
  std::vector<std::string> lines = pool::suite_lines(*this, planes, fills, {}, [&](const std::string& dt, const std::string& plane) {
    return dt != "f16:f16:f16" || !long_plane(plane);
  });
  // After all others (moving no other line's fill or layout): an empty batch, no channels.
  if (!smoke) {
    const std::vector<std::string> empty = pool::suite_lines(*this, {"mb=0 c=3 ih=7 iw=7", "mb=2 c=0 ih=5 iw=5"}, fills);
    lines.insert(lines.end(), empty.begin(), empty.end());
  }
  return lines;
}

}  // namespace opval::ops::global_avg_pool
