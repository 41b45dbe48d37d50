// Choosing the cases that fit a time budget (core/case_selection.hpp).
#include "core/case_selection.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "opval/error.hpp"

namespace opval {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

// "13x61" -> {13, 61}; empty when the text is no shape.
std::vector<double> shape_of(std::string_view s) {
  std::vector<double> dims;
  for (std::size_t pos = 0; pos <= s.size();) {
    const std::size_t x = std::min(s.find('x', pos), s.size());
    const std::string_view part = s.substr(pos, x - pos);
    if (!all_digits(part)) return {};
    dims.push_back(std::stod(std::string(part)));
    pos = x + 1;
  }
  return dims;
}

int size_class(double v) { return v <= 1 ? 0 : static_cast<int>(std::lround(std::log2(v))); }

// FNV-1a, then MurmurHash3's finalizer so that keys differing in their last bytes spread over
// the high bits too: the same on every machine, unlike std::hash.
std::uint64_t stable_hash(std::string_view a, std::string_view b) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::string_view part : {a, std::string_view("\n"), b})
    for (unsigned char c : part) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// The reason and group of a case the history or the change puts first; group 4: none.
struct priority {
  int group = 4;
  int failures = 0;
  std::string why, counted_as;
};

priority priority_of(const selection_candidate& c, const selection_inputs& in) {
  if (const auto h = in.history.find(c.key); h != in.history.end()) {
    const candidate_history& ch = h->second;
    if (ch.failed_last)
      return {0, ch.recent_failures, fmt::format("failed at its latest run (commit {})", ch.failed_at), "failed"};
    if (ch.recent_failures > 0)
      return {1, ch.recent_failures,
              fmt::format("failed {} of its latest runs (last at commit {})", ch.recent_failures, ch.failed_at), "failed"};
    if (ch.flaky) return {2, 0, "flaky: different verdicts at one commit", "flaky"};
  }
  if (in.changed_ops.contains(c.op)) return {3, 0, fmt::format("the change touches op {}", c.op), "changed"};
  if (in.changed_backends.contains(c.backend))
    return {3, 0, fmt::format("the change touches backend {}", c.backend), "changed"};
  return {};
}

// The state of a selection being made.
class chooser {
 public:
  chooser(std::span<const selection_candidate> c, const selection_inputs& in)
      : c_(c), in_(in), chosen_(c.size(), false) {
    for (const selection_candidate& x : c) {
      std::vector<int> ids;
      for (const std::string& f : x.features) ids.push_back(feature_id(f));
      features_of_.push_back(std::move(ids));
    }
    covered_.assign(names_.size(), false);
    out_.budget_seconds = in.budget_seconds;
    out_.features = names_.size();
  }

  bool chosen(std::size_t i) const { return chosen_[i]; }
  double left() const { return in_.budget_seconds - out_.chosen_seconds; }
  bool fits(std::size_t i) const { return c_[i].seconds <= left(); }

  void take(std::size_t i, std::string why, const std::string& counted_as) {
    chosen_[i] = true;
    out_.order.push_back(i);
    out_.choices.push_back({static_cast<std::int64_t>(out_.choices.size()), std::move(why)});
    out_.chosen_seconds += c_[i].seconds;
    ++out_.chosen_for[counted_as];
    for (int f : features_of_[i]) covered_[f] = true;
  }

  std::vector<int> new_features(std::size_t i) const {
    std::vector<int> out;
    for (int f : features_of_[i])
      if (!covered_[f] && std::ranges::find(out, f) == out.end()) out.push_back(f);
    return out;
  }
  const std::string& feature_name(int f) const { return names_[f]; }

  case_selection finish() {
    for (std::size_t i = 0; i < c_.size(); ++i)
      if (!chosen_[i]) out_.left_out.push_back(i), out_.left_out_seconds += c_[i].seconds;
    for (std::size_t f = 0; f < names_.size(); ++f)
      if (!covered_[f]) out_.features_lost.push_back(names_[f]);
    return std::move(out_);
  }

 private:
  int feature_id(const std::string& f) {
    const auto [it, added] = ids_.try_emplace(f, static_cast<int>(names_.size()));
    if (added) names_.push_back(f);
    return it->second;
  }

  std::span<const selection_candidate> c_;
  const selection_inputs& in_;
  std::vector<bool> chosen_, covered_;
  std::vector<std::vector<int>> features_of_;
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
  case_selection out_;
};

void choose_prioritised(std::span<const selection_candidate> c, const selection_inputs& in, chooser& ch) {
  std::vector<std::pair<std::size_t, priority>> first;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (priority p = priority_of(c[i], in); p.group < 4) first.emplace_back(i, std::move(p));
  std::ranges::stable_sort(first, [&](const auto& a, const auto& b) {
    return std::tuple(a.second.group, -a.second.failures, c[a.first].seconds) <
           std::tuple(b.second.group, -b.second.failures, c[b.first].seconds);
  });
  for (auto& [i, p] : first)
    if (ch.fits(i)) ch.take(i, std::move(p.why), p.counted_as);
}

std::string coverage_reason(const chooser& ch, const std::vector<int>& added) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < std::min<std::size_t>(added.size(), 3); ++k) names.push_back(ch.feature_name(added[k]));
  return fmt::format("covers {} feature{} no chosen case had: {}{}", added.size(), added.size() == 1 ? "" : "s",
                     fmt::join(names, ", "), added.size() > 3 ? ", ..." : "");
}

// Lazy greedy weighted coverage: a case's gain only shrinks as others are chosen, so a stale
// gain is an upper bound, and the top of the queue, once refreshed and still on top, is the best.
void choose_for_coverage(std::span<const selection_candidate> c, chooser& ch) {
  const auto score = [&](std::size_t i, std::size_t gain) { return static_cast<double>(gain) / std::max(c[i].seconds, 1e-6); };
  using entry = std::tuple<double, std::int64_t, std::size_t>;  // score, -index (earlier first on ties), index
  std::priority_queue<entry> queue;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (!ch.chosen(i))
      if (const std::size_t gain = ch.new_features(i).size(); gain > 0)
        queue.emplace(score(i, gain), -static_cast<std::int64_t>(i), i);
  while (!queue.empty()) {
    const auto [stale, order, i] = queue.top();
    queue.pop();
    if (ch.chosen(i) || !ch.fits(i)) continue;
    const std::vector<int> added = ch.new_features(i);
    if (added.empty()) continue;
    // Still the best once refreshed (ties to the earlier case, as the queue orders them)?
    if (const double now = score(i, added.size());
        now < stale && !queue.empty() && std::pair(now, order) < std::pair(std::get<0>(queue.top()), std::get<1>(queue.top()))) {
      queue.emplace(now, order, i);
      continue;
    }
    ch.take(i, coverage_reason(ch, added), "coverage");
  }
}

// The slow cases in the order the sample takes them: rotated by the sample key.
std::vector<std::size_t> slow_sample_order(std::span<const selection_candidate> c, const selection_inputs& in,
                                           const chooser& ch) {
  std::vector<std::size_t> slow;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (!ch.chosen(i) && c[i].seconds > in.slow_fraction * in.budget_seconds) slow.push_back(i);
  std::ranges::sort(slow, {}, [&](std::size_t i) { return std::pair(stable_hash(in.sample_key, c[i].key), i); });
  return slow;
}

void choose_the_rest(std::span<const selection_candidate> c, const selection_inputs& in, chooser& ch) {
  const std::vector<std::size_t> slow = slow_sample_order(c, in, ch);
  const double sample_until = ch.left() - in.slow_share * in.budget_seconds;
  const auto sampled = [&](std::size_t i) {
    return fmt::format("a sample of the slow cases (each over {:g}% of the budget; the sample rotates with the commit)",
                       100 * in.slow_fraction);
  };
  for (std::size_t i : slow)
    if (ch.fits(i) && ch.left() - c[i].seconds >= sample_until) ch.take(i, sampled(i), "slow sample");
  for (std::size_t i = 0; i < c.size(); ++i)
    if (!ch.chosen(i) && c[i].seconds <= in.slow_fraction * in.budget_seconds && ch.fits(i))
      ch.take(i, "fills the budget", "fill");
  for (std::size_t i : slow)
    if (!ch.chosen(i) && ch.fits(i)) ch.take(i, sampled(i), "slow sample");
}

std::string minutes_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

case_selection select_cases(std::span<const selection_candidate> candidates, const selection_inputs& in) {
  if (!(in.budget_seconds > 0)) throw error("a time budget must be positive");
  chooser ch(candidates, in);
  choose_prioritised(candidates, in, ch);
  choose_for_coverage(candidates, ch);
  choose_the_rest(candidates, in, ch);
  return ch.finish();
}

std::vector<std::string> case_features(const std::string& descriptor, const std::string& backend) {
  std::vector<std::string> out;
  const std::size_t space = descriptor.find(' ');
  const std::string op = descriptor.substr(0, space);
  out.push_back(op);
  out.push_back("backend " + backend);
  for (std::size_t pos = space; pos != std::string::npos && pos < descriptor.size();) {
    const std::size_t start = pos + 1, end = std::min(descriptor.find(' ', start), descriptor.size());
    const std::string token = descriptor.substr(start, end - start);
    pos = end < descriptor.size() ? end : std::string::npos;
    const std::size_t eq = token.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    if (all_digits(value)) {
      out.push_back(fmt::format("{} {}~2^{}", op, key, size_class(std::stod(value))));
    } else if (const std::vector<double> dims = shape_of(value); !dims.empty()) {
      const double elements = std::accumulate(dims.begin(), dims.end(), 1.0, std::multiplies<>());
      out.push_back(fmt::format("{} {}~rank{},2^{}", op, key, dims.size(), size_class(elements)));
    } else {
      out.push_back(fmt::format("{} {}", op, token));
    }
  }
  return out;
}

std::string selection_summary(const case_selection& s, std::span<const selection_candidate> candidates) {
  std::vector<std::string> reasons;
  for (const char* r : {"failed", "flaky", "changed", "coverage", "slow sample", "fill"})
    if (const auto it = s.chosen_for.find(r); it != s.chosen_for.end()) reasons.push_back(fmt::format("{} {}", it->second, r));
  std::string text = fmt::format("budget {}: chose {} of {} cases (estimated {}: {}); left out {} (estimated {})",
                                 minutes_text(s.budget_seconds), s.order.size(), candidates.size(),
                                 minutes_text(s.chosen_seconds), fmt::join(reasons, ", "), s.left_out.size(),
                                 minutes_text(s.left_out_seconds));
  if (s.features_lost.empty()) return text + fmt::format("; every one of the {} features covered", s.features);
  std::vector<std::string> lost(s.features_lost.begin(), s.features_lost.begin() + std::min<std::size_t>(s.features_lost.size(), 8));
  return text + fmt::format("; coverage lost: {} of {} features ({}{})", s.features_lost.size(), s.features,
                            fmt::join(lost, ", "), s.features_lost.size() > lost.size() ? ", ..." : "");
}

std::string selection_json(const case_selection& s, std::span<const selection_candidate> candidates) {
  nlohmann::ordered_json left = nlohmann::ordered_json::array();
  for (std::size_t i : s.left_out)
    left.push_back({{"descriptor", candidates[i].descriptor}, {"backend", candidates[i].backend},
                    {"seed", candidates[i].seed}, {"seconds", candidates[i].seconds}});
  nlohmann::ordered_json j = {
      {"budget_seconds", s.budget_seconds}, {"cases", candidates.size()}, {"chosen", s.order.size()},
      {"chosen_seconds", s.chosen_seconds}, {"chosen_for", s.chosen_for}, {"left_out_seconds", s.left_out_seconds},
      {"features", s.features}, {"features_lost", s.features_lost}, {"left_out", left}};
  return nlohmann::ordered_json{{"selection", j}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

double parse_budget(const std::string& text) {
  const auto bad = [&] {
    return error(fmt::format("budget '{}' is not a duration: give seconds (600) or a number with s, m or h (10m, 1h30m)",
                             text));
  };
  if (text.empty()) throw bad();
  double total = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    double v = 0;
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || !(v >= 0) || !std::isfinite(v)) throw bad();
    p = next;
    double unit = 1;
    if (p < end) {
      if (*p == 'h') unit = 3600;
      else if (*p == 'm') unit = 60;
      else if (*p == 's') unit = 1;
      else throw bad();
      ++p;
    } else if (p != text.data() + text.size() || total > 0) {
      throw bad();  // "1h30" is ambiguous: a unit after every number but a lone one
    }
    total += v * unit;
  }
  return total;
}

}  // namespace opval
