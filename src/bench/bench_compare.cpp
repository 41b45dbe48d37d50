#include "bench/bench_compare.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/error.hpp"
#include "bench/bench_records.hpp"
#include "bench/sample_summary.hpp"

namespace opval {

std::string_view to_string(change_verdict v) {
  switch (v) {
    case change_verdict::faster: return "faster";
    case change_verdict::slower: return "slower";
    case change_verdict::same: return "same";
    case change_verdict::too_noisy: return "too noisy to tell";
  }
  return "?";
}


std::vector<compared_case> compare_bench_files(const std::string& base_path, const std::string& new_path,
                                               const compare_options& o) {
  const std::vector<bench_record> base = read_bench_records(base_path), next = read_bench_records(new_path);
  std::map<std::string, const bench_record*> next_by_key;
  for (const bench_record& c : next) next_by_key.emplace(c.key(), &c);
  std::vector<compared_case> out;
  for (const bench_record& b : base) {
    compared_case c{b.descriptor, b.backend, std::nullopt, ""};
    const auto it = next_by_key.find(b.key());
    if (it == next_by_key.end()) {
      c.note = "only in BASE";
    } else if (!b.timed || !it->second->timed) {
      c.note = !b.timed ? fmt::format("not timed in BASE ({})", b.state) : fmt::format("not timed in NEW ({})", it->second->state);
    } else {
      const bench_record& n = *it->second;
      c.change = compare_sides({b.values, b.repetition_medians, b.warnings}, {n.values, n.repetition_medians, n.warnings}, o);
    }
    if (it != next_by_key.end()) next_by_key.erase(it);
    out.push_back(std::move(c));
  }
  for (const bench_record& n : next)
    if (next_by_key.contains(n.key())) out.push_back({n.descriptor, n.backend, std::nullopt, "only in NEW"});
  return out;
}

namespace {

/// max / min of `medians`: how far apart repeating the same run put its figure (1: no spread).
double spread(std::span<const double> medians) {
  const auto [low, high] = std::minmax_element(medians.begin(), medians.end());
  return medians.empty() || *low <= 0 ? 1.0 : *high / *low;
}

/// Why a change cannot be told apart from the noise: the warnings either side recorded, and a
/// side whose repetitions spread as wide as the change (each alone could have produced it).
std::vector<std::string> noise_reasons(const compare_side& base, const compare_side& next, double ratio,
                                       std::span<const double> base_medians, std::span<const double> next_medians) {
  std::vector<std::string> reasons;
  for (const auto& [name, side] : {std::pair{"BASE", &base}, {"NEW", &next}})
    for (const std::string& w : side->warnings) reasons.push_back(fmt::format("{} recorded {}", name, w));
  const double change = std::max(ratio, 1 / ratio);
  for (const auto& [name, medians] : {std::pair{"BASE", base_medians}, {"NEW", next_medians}})
    if (const double s = spread(medians); s >= change)
      reasons.push_back(fmt::format("{}'s repetitions spread {:.3g}x (max / min of their {} medians), as wide as the "
                                    "change {:.3g}x",
                                    name, s, medians.size(), change));
  return reasons;
}

}  // namespace

case_change compare_sides(const compare_side& base, const compare_side& next, const compare_options& o) {
  if (base.values.size() < 2 || next.values.size() < 2)
    throw error(fmt::format("comparing needs 2 samples or more on each side, got {} and {}", base.values.size(),
                            next.values.size()));
  case_change c;
  c.base_median = summarize(base.values).median;
  c.new_median = summarize(next.values).median;
  if (c.base_median <= 0) throw error("a base median of 0 cannot be compared as a ratio");
  c.ratio_point = c.new_median / c.base_median;
  c.ratio = median_ratio_ci(base.values, next.values, o.ci);
  // The test compares repetitions: the runs' own when both sides have 3 or more, else chunks.
  const bool own = base.repetitions.size() >= 3 && next.repetitions.size() >= 3;
  const std::vector<double> base_medians = own ? std::vector<double>(base.repetitions.begin(), base.repetitions.end())
                                               : chunk_medians(base.values, o.repetitions);
  const std::vector<double> next_medians = own ? std::vector<double>(next.repetitions.begin(), next.repetitions.end())
                                               : chunk_medians(next.values, o.repetitions);
  c.test = mann_whitney_u(next_medians, base_medians);
  c.why = fmt::format("ratio {:.3g} [{:.3g}, {:.3g}], Mann-Whitney p = {:.2g}", c.ratio_point, c.ratio.low, c.ratio.high,
                      c.test.p_value);
  const bool significant = c.test.p_value < o.alpha;
  const bool beyond = c.ratio.low > 1 + o.threshold || c.ratio.high < 1 - o.threshold;
  if (c.ratio.low >= 1 - o.threshold && c.ratio.high <= 1 + o.threshold) {
    c.verdict = change_verdict::same;
    return c;
  }
  std::vector<std::string> reasons;
  if (!beyond)
    reasons.push_back(fmt::format("the ratio's interval [{:.3f}, {:.3f}] reaches within 1 +- {:g}%", c.ratio.low,
                                  c.ratio.high, 100 * o.threshold));
  else if (!significant)
    reasons.push_back(fmt::format("the Mann-Whitney test cannot tell (p = {:.2g}, alpha {:g})", c.test.p_value, o.alpha));
  else
    reasons = noise_reasons(base, next, c.ratio_point, base_medians, next_medians);
  if (reasons.empty()) {
    c.verdict = c.ratio.low > 1 + o.threshold ? change_verdict::slower : change_verdict::faster;
    return c;
  }
  c.verdict = change_verdict::too_noisy;
  c.noisy_because = fmt::format("{}", fmt::join(reasons, "; "));
  return c;
}

case_change compare_series(std::span<const double> base, std::span<const double> next, const compare_options& o,
                           std::span<const double> base_repetitions, std::span<const double> next_repetitions) {
  return compare_sides({base, base_repetitions, {}}, {next, next_repetitions, {}}, o);
}

}  // namespace opval
