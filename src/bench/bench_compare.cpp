#include "bench/bench_compare.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "opval/error.hpp"
#include "bench/environment.hpp"
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

namespace {

struct recorded_case {
  std::string descriptor, backend, key, state;
  bool timed = false;
  std::vector<double> values;
  std::vector<double> repetition_medians;
  std::vector<std::string> warnings;  ///< the run's load warning and the case's noise warnings
};

/// What a record says makes its figure depend on when it was taken: the run's load warning
/// (its environment's) and the case's own noise warnings.
std::vector<std::string> recorded_warnings(const nlohmann::json& record) {
  std::vector<std::string> out;
  if (const auto env = record.find("environment"); env != record.end() && env->is_object())
    for (const std::string& w : env->value("warnings", std::vector<std::string>{}))
      if (is_load_warning(w)) out.push_back(w);
  for (const std::string& w : record.at("timing").value("warnings", std::vector<std::string>{})) out.push_back("noise: " + w);
  return out;
}

std::vector<recorded_case> read_bench_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error(fmt::format("cannot read benchmark file '{}'", path));
  std::vector<recorded_case> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("schema", "") != "opval-bench")
        throw error("not an `opval bench` record (an `opval run` journal?)");
      recorded_case c;
      c.descriptor = j.at("descriptor").get<std::string>();
      c.backend = j.at("backend").get<std::string>();
      c.key = fmt::format("{}\n{}\n{}", c.descriptor, c.backend, j.at("seed").get<std::uint64_t>());
      c.state = j.at("state").get<std::string>();
      c.timed = j.at("timed").get<bool>();
      if (c.timed) {
        c.values = j.at("timing").at("values").get<std::vector<double>>();
        c.repetition_medians = j.at("timing").value("repetition_medians", std::vector<double>{});
        c.warnings = recorded_warnings(j);
      }
      out.push_back(std::move(c));
    } catch (const std::exception& e) {
      throw error(fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  return out;
}

}  // namespace

std::vector<compared_case> compare_bench_files(const std::string& base_path, const std::string& new_path,
                                               const compare_options& o) {
  const std::vector<recorded_case> base = read_bench_file(base_path), next = read_bench_file(new_path);
  std::map<std::string, const recorded_case*> next_by_key;
  for (const recorded_case& c : next) next_by_key.emplace(c.key, &c);
  std::vector<compared_case> out;
  for (const recorded_case& b : base) {
    compared_case c{b.descriptor, b.backend, std::nullopt, ""};
    const auto it = next_by_key.find(b.key);
    if (it == next_by_key.end()) {
      c.note = "only in BASE";
    } else if (!b.timed || !it->second->timed) {
      c.note = !b.timed ? fmt::format("not timed in BASE ({})", b.state) : fmt::format("not timed in NEW ({})", it->second->state);
    } else {
      const recorded_case& n = *it->second;
      c.change = compare_sides({b.values, b.repetition_medians, b.warnings}, {n.values, n.repetition_medians, n.warnings}, o);
    }
    if (it != next_by_key.end()) next_by_key.erase(it);
    out.push_back(std::move(c));
  }
  for (const recorded_case& n : next)
    if (next_by_key.contains(n.key)) out.push_back({n.descriptor, n.backend, std::nullopt, "only in NEW"});
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
