#include "bench/bench_compare.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "opval/error.hpp"
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
};

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
      c.change = compare_series(b.values, it->second->values, o, b.repetition_medians, it->second->repetition_medians);
    }
    if (it != next_by_key.end()) next_by_key.erase(it);
    out.push_back(std::move(c));
  }
  for (const recorded_case& n : next)
    if (next_by_key.contains(n.key)) out.push_back({n.descriptor, n.backend, std::nullopt, "only in NEW"});
  return out;
}

case_change compare_series(std::span<const double> base, std::span<const double> next, const compare_options& o,
                           std::span<const double> base_repetitions, std::span<const double> next_repetitions) {
  if (base.size() < 2 || next.size() < 2)
    throw error(fmt::format("comparing needs 2 samples or more on each side, got {} and {}", base.size(), next.size()));
  case_change c;
  c.base_median = summarize(base).median;
  c.new_median = summarize(next).median;
  if (c.base_median <= 0) throw error("a base median of 0 cannot be compared as a ratio");
  c.ratio_point = c.new_median / c.base_median;
  c.ratio = median_ratio_ci(base, next, o.ci);
  // The test compares repetitions: the runs' own when both sides have 3 or more, else chunks.
  const bool own = base_repetitions.size() >= 3 && next_repetitions.size() >= 3;
  c.test = own ? mann_whitney_u(next_repetitions, base_repetitions)
               : mann_whitney_u(chunk_medians(next, o.repetitions), chunk_medians(base, o.repetitions));
  const bool significant = c.test.p_value < o.alpha;
  if (c.ratio.low > 1 + o.threshold && significant) c.verdict = change_verdict::slower;
  else if (c.ratio.high < 1 - o.threshold && significant) c.verdict = change_verdict::faster;
  else if (c.ratio.low >= 1 - o.threshold && c.ratio.high <= 1 + o.threshold) c.verdict = change_verdict::same;
  else c.verdict = change_verdict::too_noisy;
  c.why = fmt::format("ratio {:.3g} [{:.3g}, {:.3g}], Mann-Whitney p = {:.2g}", c.ratio_point, c.ratio.low, c.ratio.high,
                      c.test.p_value);
  return c;
}

}  // namespace opval
