#include "core/suite_generator.hpp"
#include "core/problem_draft.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "opval/error.hpp"
#include "core/rng.hpp"

namespace opval {
namespace {

// ---------------------------------------------------------------- descriptor fragments

/// A descriptor's key=value tokens in order, each marked with whether the base set it (a base
/// token is overridden by a feature; two features setting a key differently do not combine).
struct fragment_tokens {
  std::vector<std::pair<std::string, std::string>> kv;
  std::vector<bool> from_base;
};

std::vector<std::pair<std::string, std::string>> split_tokens(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i == start) break;
    const std::string token = text.substr(start, i - start);
    const std::size_t eq = token.find('=');
    if (eq == std::string::npos) throw error(fmt::format("feature fragment '{}': token '{}' is no key=value", text, token));
    out.emplace_back(token.substr(0, eq), token.substr(eq + 1));
  }
  return out;
}

/// Adds `text`'s tokens to t; false when one sets a key a non-base token already set differently.
bool merge(fragment_tokens& t, const std::string& text, bool base) {
  for (auto& [k, v] : split_tokens(text)) {
    const std::string& key = k;  // a structured binding is no lambda capture before clang 16
    const auto it = std::find_if(t.kv.begin(), t.kv.end(), [&](const auto& e) { return e.first == key; });
    if (it == t.kv.end()) {
      t.kv.emplace_back(k, v);
      t.from_base.push_back(base);
      continue;
    }
    const std::size_t at = static_cast<std::size_t>(it - t.kv.begin());
    if (!t.from_base[at] && it->second != v) return false;
    it->second = v;
    t.from_base[at] = base;
  }
  return true;
}

/// Adds the tokens of `text` whose keys t does not set or only the base sets (a block-scaled
/// matmul's k, a multiple of its block, in place of the base's).
void add_missing(fragment_tokens& t, const std::string& text) {
  for (auto& [k, v] : split_tokens(text)) {
    const std::string& key = k;  // a structured binding is no lambda capture before clang 16
    const auto it = std::find_if(t.kv.begin(), t.kv.end(), [&](const auto& e) { return e.first == key; });
    if (it == t.kv.end()) {
      t.kv.emplace_back(k, v);
      t.from_base.push_back(true);
    } else if (t.from_base[static_cast<std::size_t>(it - t.kv.begin())]) {
      it->second = v;
    }
  }
}

/// The problem a table's `complete` reads: the candidate itself, or where it is not valid yet
/// (a block-scaled contract without its block), its draft.
problem completion_input(const std::string& line) {
  try {
    return parse_problem(line);
  } catch (const error&) {
    return detail::parse_problem_draft(line);
  }
}

/// Whether two fragments set some key to different values.
bool conflict(const std::string& a, const std::string& b) {
  const auto ta = split_tokens(a), tb = split_tokens(b);
  for (const auto& [k, v] : ta)
    for (const auto& [k2, v2] : tb)
      if (k == k2 && v != v2) return true;
  return false;
}

std::string line_of(std::string_view op, const fragment_tokens& t) {
  std::string s(op);
  for (const auto& [k, v] : t.kv) s += fmt::format(" {}={}", k, v);
  return s;
}

/// A parse error's reason without where in the generated line it was ("column 91: invalid
/// conv2d problem: "), which means nothing to the reader of a report.
std::string without_position(std::string_view what) {
  if (what.starts_with("column ")) what.remove_prefix(std::min(what.size(), what.find(": ") + 2));
  if (what.starts_with("invalid ")) what.remove_prefix(std::min(what.size(), what.find(" problem: ") + 10));
  return std::string(what);
}

// ---------------------------------------------------------------- candidates

/// One feature value: the feature's index and the value's.
struct value_id {
  std::size_t feature, value;
  auto operator<=>(const value_id&) const = default;
};

/// A candidate's fate.
enum class outcome { runs, refused, inapplicable };

struct tried {
  outcome what = outcome::runs;
  std::string reason;
  std::optional<problem> prob;
};

class contract_generator {
 public:
  contract_generator(const op_spec& op, const feature_table& table, const std::string& contract,
                     const support_query& supports)
      : op_(op), table_(table), contract_(contract), supports_(supports) {}

  /// The problem of the base plus `values`, and whether the kernel runs it.
  tried attempt(const std::vector<value_id>& values) const {
    fragment_tokens t;
    merge(t, table_.base, true);
    if (!merge(t, "dt=" + contract_, false)) return {outcome::inapplicable, "the contract conflicts with the base", {}};
    for (const value_id& v : values)
      if (!merge(t, fragment(v), false)) return {outcome::inapplicable, "two values set one key differently", {}};
    problem p;
    try {
      if (table_.complete) add_missing(t, table_.complete(completion_input(line_of(op_.name(), t))));
      p = parse_problem(line_of(op_.name(), t));
    } catch (const error& e) {
      return {outcome::inapplicable, without_position(e.what()), {}};
    }
    if (table_.not_meaningful)
      if (std::string why = table_.not_meaningful(p); !why.empty()) return {outcome::inapplicable, std::move(why), {}};
    const support s = supports_(p);
    if (!s.ok) return {outcome::refused, s.reason.empty() ? "refused without a reason" : s.reason, std::move(p)};
    return {outcome::runs, "", std::move(p)};
  }

  const std::string& fragment(const value_id& v) const { return table_.features[v.feature].values[v.value]; }

 private:
  const op_spec& op_;
  const feature_table& table_;
  std::string contract_;
  const support_query& supports_;
};

/// Deterministic order from the seed, the op and the contract: a Fisher-Yates shuffle.
template <class T>
void shuffle(std::vector<T>& v, std::uint64_t seed, std::uint64_t stream) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::size_t j = random_bits(seed, stream, i) % i;
    std::swap(v[i - 1], v[j]);
  }
}

std::uint64_t stream_of(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms, unlike std::hash
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

using value_pair = std::pair<value_id, value_id>;

value_pair ordered(value_id a, value_id b) { return a < b ? value_pair{a, b} : value_pair{b, a}; }

/// What one contract contributes: its cases (in order) and its coverage.
struct contract_part {
  std::vector<problem> cases;
  std::vector<std::vector<value_id>> holds;  ///< the values each case holds
  contract_coverage cov;
  std::map<value_id, std::string> refused, inapplicable;
  std::set<value_id> alone;
};

/// Greedy pairwise covering (AETG-like): each case starts from an uncovered pair, then takes for
/// each other feature the value that covers the most uncovered pairs with those chosen so far.
void cover_pairs(const contract_generator& gen, const feature_table& table, const std::vector<value_id>& usable,
                 std::uint64_t stream, const generation_options& o, contract_part& part) {
  std::set<value_pair> uncovered;
  for (std::size_t i = 0; i < usable.size(); ++i)
    for (std::size_t j = i + 1; j < usable.size(); ++j)
      if (usable[i].feature != usable[j].feature && !conflict(gen.fragment(usable[i]), gen.fragment(usable[j])))
        uncovered.insert(ordered(usable[i], usable[j]));
  part.cov.pairs = static_cast<int>(uncovered.size());
  std::vector<value_pair> order(uncovered.begin(), uncovered.end());
  shuffle(order, o.seed, stream);
  std::vector<std::size_t> features(table.features.size());
  for (std::size_t f = 0; f < features.size(); ++f) features[f] = f;
  std::uint64_t round = 0;
  for (const value_pair& start : order) {
    if (!uncovered.contains(start)) continue;
    if (static_cast<int>(part.cases.size()) >= o.budget) break;
    std::vector<value_id> chosen{start.first, start.second};
    std::vector<std::size_t> others = features;
    shuffle(others, o.seed, stream + ++round);
    for (std::size_t f : others) {
      if (f == start.first.feature || f == start.second.feature) continue;
      std::optional<value_id> best;
      int best_gain = 0;
      for (const value_id& v : usable) {
        if (v.feature != f) continue;
        int gain = 0;
        bool fits = true;
        for (const value_id& c : chosen) {
          if (conflict(gen.fragment(v), gen.fragment(c))) fits = false;
          gain += uncovered.contains(ordered(v, c));
        }
        if (fits && gain > best_gain) best = v, best_gain = gain;
      }
      if (best) chosen.push_back(*best);
    }
    tried t = gen.attempt(chosen);
    if (t.what != outcome::runs && chosen.size() > 2) {
      chosen.resize(2);  // the pair alone, before judging the pair itself
      t = gen.attempt(chosen);
    }
    if (t.what == outcome::refused) ++part.cov.pairs_refused;
    if (t.what == outcome::inapplicable) ++part.cov.pairs_inapplicable;
    if (t.what != outcome::runs) {
      uncovered.erase(start);
      continue;
    }
    for (std::size_t i = 0; i < chosen.size(); ++i)
      for (std::size_t j = i + 1; j < chosen.size(); ++j)
        if (uncovered.erase(ordered(chosen[i], chosen[j]))) ++part.cov.pairs_covered;
    part.cases.push_back(std::move(*t.prob));
    part.holds.push_back(chosen);
  }
  part.cov.pairs_over_budget = static_cast<int>(uncovered.size());
}

contract_part generate_contract(const op_spec& op, const feature_table& table, const std::string& contract,
                                const support_query& supports, const generation_options& o) {
  const contract_generator gen(op, table, contract, supports);
  contract_part part;
  part.cov.contract = contract;
  tried base = gen.attempt({});
  if (base.what != outcome::runs) {
    part.cov.refused = base.what == outcome::refused ? base.reason : "no valid problem: " + base.reason;
    return part;
  }
  part.cases.push_back(std::move(*base.prob));
  part.holds.emplace_back();
  std::vector<value_id> usable;
  for (std::size_t f = 0; f < table.features.size(); ++f)
    for (std::size_t v = 0; v < table.features[f].values.size(); ++v) {
      const value_id id{f, v};
      tried t = gen.attempt({id});
      if (t.what == outcome::refused) part.refused[id] = t.reason;
      if (t.what == outcome::inapplicable) part.inapplicable[id] = t.reason;
      if (t.what != outcome::runs) continue;
      part.cases.push_back(std::move(*t.prob));
      part.holds.push_back({id});
      part.alone.insert(id);
      usable.push_back(id);
    }
  cover_pairs(gen, table, usable, stream_of(fmt::format("{} {}", op.name(), contract)), o, part);
  part.cov.cases = static_cast<int>(part.cases.size());
  return part;
}

/// The table's contracts that `o.contracts` selects (by their types, as `--contract` does).
std::vector<std::string> selected_contracts(const op_spec& op, const feature_table& table,
                                            const generation_options& o) {
  std::vector<std::string> all = table.contracts;
  if (all.empty()) all = op.contracts();
  if (o.contracts.empty()) return all;
  std::set<std::string> wanted;
  for (const std::string& c : o.contracts) wanted.insert(parse_contract_types(c).types_string());
  std::erase_if(all, [&](const std::string& c) {
    return !wanted.contains(parse_contract_types(c.substr(0, c.find(' '))).types_string());
  });
  return all;
}

}  // namespace

int op_coverage::values_covered() const {
  return static_cast<int>(std::count_if(values.begin(), values.end(), [](const value_coverage& v) { return !v.alone.empty(); }));
}

generated_suite generate_suite(const op_spec& op, const support_query& supports, const generation_options& o) {
  if (o.budget < 1) throw error(fmt::format("the suite budget must be at least 1 case (got {})", o.budget));
  const feature_table table = op.features();
  generated_suite out;
  out.coverage.op = op.name();
  out.coverage.seed = o.seed;
  out.coverage.budget = o.budget;
  for (std::size_t f = 0; f < table.features.size(); ++f)
    for (const std::string& v : table.features[f].values) out.coverage.values.push_back({table.features[f].name, v});
  const auto index_of = [&](const value_id& id) {
    std::size_t i = 0;
    for (std::size_t f = 0; f < id.feature; ++f) i += table.features[f].values.size();
    return i + id.value;
  };
  std::set<std::string> seen;
  for (const std::string& contract : selected_contracts(op, table, o)) {
    contract_part part = generate_contract(op, table, contract, supports, o);
    for (const auto& [id, why] : part.refused) out.coverage.values[index_of(id)].refused.emplace_back(contract, why);
    for (const auto& [id, why] : part.inapplicable)
      out.coverage.values[index_of(id)].inapplicable.emplace_back(contract, why);
    for (const value_id& id : part.alone) out.coverage.values[index_of(id)].alone.push_back(contract);
    for (std::size_t i = 0; i < part.cases.size(); ++i) {
      for (const value_id& id : part.holds[i]) ++out.coverage.values[index_of(id)].cases;
      const std::string text = part.cases[i].to_string();
      if (!seen.insert(text).second) continue;  // a value equal to its base's default: one case
      out.problems.push_back({std::move(part.cases[i]), fmt::format("{} generated #{}", op.name(), out.problems.size() + 1)});
    }
    out.coverage.contracts.push_back(std::move(part.cov));
  }
  return out;
}

}  // namespace opval
