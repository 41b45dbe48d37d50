#include "opval/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "core/install_dirs.hpp"
#include "core/problem_draft.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/tensor.hpp"


namespace opval {
namespace {

struct token {
  std::string_view text;
  std::size_t column;  // 1-based
};

std::vector<token> tokenize(std::string_view line) {
  std::vector<token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), start + 1});
  }
  return tokens;
}

[[noreturn]] void fail_at(const token& t, const std::string& message) {
  throw parse_error("column " + std::to_string(t.column) + ": " + message, std::string(t.text), t.column);
}

std::string known_keys(const op_spec& spec) {
  std::string s;
  for (const auto& d : spec.schema().defs()) s += d.name + " ";
  return s + "dt fill mid in_round acc_round dst_round denorm ulp";
}

// The ulp= functions a value names: each "fn" of "fn:N,...", or every function for a preset
// (cuda, opencl, exact).
std::vector<std::string> ulp_functions(std::string_view value) {
  if (value.find(':') == std::string_view::npos) return {"*"};
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= value.size();) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    const std::string_view item = value.substr(start, end - start);
    out.emplace_back(item.substr(0, item.find(':')));
    start = end + 1;
  }
  return out;
}

// A contract option the op does not read would be written into the descriptor and promise
// nothing: bad input naming the options the op takes (op_spec::contract_options).
void check_op_reads(problem& p, std::string_view key, std::string_view value) {
  const op_spec& spec = p.spec();
  if (key == "deterministic") return;
  const std::vector<std::string_view> reads = spec.contract_options();
  const auto reads_it = [&](std::string_view option) {
    return std::find(reads.begin(), reads.end(), option) != reads.end();
  };
  std::string known = "deterministic";
  for (std::string_view o : reads) known += " " + std::string(o);
  if (key != "ulp") {
    if (!reads_it(key))
      throw error(fmt::format("{} does not use the contract option {} (its contract options: {})", spec.name(), key,
                              known));
    return;
  }
  const bool any_function = std::any_of(reads.begin(), reads.end(), [](std::string_view o) { return o.starts_with("ulp:"); });
  for (const std::string& fn : ulp_functions(value))
    if (fn == "*" ? !any_function : !reads_it("ulp:" + fn))
      throw error(fmt::format("{} does not use {} (ulp={}; its contract options: {})", spec.name(),
                              fn == "*" ? std::string("an elementary function") : "the accuracy of " + fn, value, known));
  // A preset (cuda, opencl, exact) keeps only the functions the op uses: its canonical form
  // then names no other, and reads back.
  p.dt = contract_read_by(spec, p.dt);
}


void apply_token(problem& p, const token& t, std::set<std::string, std::less<>>& seen) {
  std::size_t eq = t.text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    fail_at(t, "expected key=value, got '" + std::string(t.text) + "'");
  std::string_view key = t.text.substr(0, eq);
  std::string_view value = t.text.substr(eq + 1);
  if (!seen.insert(std::string(key)).second) fail_at(t, "'" + std::string(key) + "' is given twice");
  try {
    if (key == "dt") {
      contract c = parse_contract_types(value);
      // Options parsed earlier on the line survive a later dt=.
      c.mid = p.dt.mid == p.dt.acc ? c.acc : p.dt.mid;
      c.in_round = p.dt.in_round, c.acc_round = p.dt.acc_round, c.dst_round = p.dt.dst_round;
      c.denorm = p.dt.denorm, c.ulps = p.dt.ulps;
      p.dt = c;
      return;
    }
    if (key == "fill") {
      auto fills = p.spec().fills();
      if (value != "default" && std::find(fills.begin(), fills.end(), value) == fills.end()) {
        std::string known = "default";
        for (const auto& f : fills) known += " " + f;
        fail_at(t, "unknown fill '" + std::string(value) + "' for " + std::string(p.op()) + " (known: " + known + ")");
      }
      p.fill = std::string(value);
      return;
    }
    if (apply_contract_option(p.dt, key, value)) return check_op_reads(p, key, value);
    const attr_def* def = p.spec().schema().find(key);
    if (!def)
      fail_at(t, "unknown attribute '" + std::string(key) + "' for " + std::string(p.op()) +
                     " (known: " + known_keys(p.spec()) + ")");
    p.set(key, parse_attr_value(*def, value));
  } catch (const parse_error&) {
    throw;
  } catch (const error& e) {
    fail_at(t, e.what());
  }
}

std::string trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == s.npos) return {};
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

// The shape sets are installed beside this library (problems/), or in the share/ folder of its
// prefix.
std::vector<std::filesystem::path> shape_set_dirs() {
  return detail::installed_dirs("OPVAL_PROBLEMS_PATH", "problems", "share/opval/problems");
}

namespace {

std::filesystem::path resolve_problem_file(const std::string& name, const std::filesystem::path& base) {
  namespace fs = std::filesystem;
  // The non-throwing status: a name the OS refuses (too long, a loop of links, no permission)
  // is bad input like a missing file, named in the error rather than a filesystem_error.
  std::string refused;
  std::vector<fs::path> candidates = {base / name, base / (name + ".txt")};
  for (const fs::path& dir : shape_set_dirs()) candidates.insert(candidates.end(), {dir / name, dir / (name + ".txt")});
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate;
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory && refused.empty())
      refused = ": " + ec.message();
  }
  if (!refused.empty()) throw error("cannot read problem file '" + name + "'" + refused);
  std::string dirs;
  for (const fs::path& dir : shape_set_dirs()) dirs += (dirs.empty() ? "" : ", ") + dir.string();
  throw error("cannot read problem file '" + name + "' (no such file, nor a shape set in " +
              (dirs.empty() ? std::string("no shape-set folder: none beside libopval, $OPVAL_PROBLEMS_PATH unset") : dirs) +
              ")");
}

/// Longer lines are no descriptors: the file is binary or runaway, and is not read whole.
constexpr std::size_t max_line_bytes = 64 * 1024;

/// std::getline, but a line over max_line_bytes or holding a control byte (other than tab and
/// carriage return) is an error naming `where`: the file is not a text problem file.
bool read_text_line(std::istream& in, std::string& line, const std::string& where) {
  line.clear();
  std::streambuf& buf = *in.rdbuf();
  for (int c; (c = buf.sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (line.size() == max_line_bytes)
      throw error(where + ": line longer than " + std::to_string(max_line_bytes) +
                  " bytes: not a problem file");
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
      throw error(where + ":" + std::to_string(line.size() + 1) + ": control byte " +
                  std::to_string(c) + " is not text: not a problem file");
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

void read_into(const std::filesystem::path& path, std::vector<located_problem>& out, int depth) {
  if (depth > 8) throw error(path.string() + ": includes nest too deeply");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cannot read problem file '" + path.string() + "'");
  std::string line;
  for (int number = 1;; ++number) {
    std::string where = path.string() + ":" + std::to_string(number);
    if (!read_text_line(in, line, where)) break;
    // A byte-order mark, as editors on Windows write one, opens the file's text.
    if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
    std::string text = trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    if (text.rfind("include ", 0) == 0) {
      std::filesystem::path included;
      try {
        included = resolve_problem_file(trim(text.substr(8)), path.parent_path());
      } catch (const error& e) {
        throw error(where + ": " + e.what());
      }
      read_into(included, out, depth + 1);
      continue;
    }
    try {
      out.push_back({parse_problem(text), where});
    } catch (const parse_error& e) {
      // Columns count in the file's line, not in its trimmed text; file:line:column replaces
      // the descriptor's own "column N: " prefix.
      const std::size_t column = e.column() + line.find_first_not_of(" \t\r\n");
      std::string message = e.what();
      if (const std::string own = "column " + std::to_string(e.column()) + ": "; message.rfind(own, 0) == 0)
        message.erase(0, own.size());
      throw parse_error(where + ":" + std::to_string(column) + ": " + message, e.token(), column);
    } catch (const error& e) {
      throw error(where + ": " + e.what());
    }
  }
}

/// Shapes whose element counts overflow are bad input here, not a failure in the middle of a
/// run (element_count throws on overflow).
void check_operand_sizes(const problem& p) {
  for (const auto& operands : {p.spec().inputs(p), p.spec().outputs(p)})
    for (const operand& o : operands) element_count(o.shape);
}

}  // namespace

problem::problem(const op_spec& spec) : spec_(&spec) {}

std::string_view problem::op() const { return spec_ ? spec_->name() : std::string_view("?"); }

const attr_value& problem::value(std::string_view name) const {
  if (auto it = attrs_.find(name); it != attrs_.end()) return it->second;
  const attr_def* def = spec_->schema().find(name);
  if (!def) throw error(std::string(op()) + " has no attribute '" + std::string(name) + "'");
  return def->default_value;
}

template <class T>
static const T& typed(const attr_value& v, std::string_view name) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw error("attribute '" + std::string(name) + "' is read as the wrong kind");
}

std::int64_t problem::get_int(std::string_view name) const { return typed<std::int64_t>(value(name), name); }
double problem::get_real(std::string_view name) const { return typed<double>(value(name), name); }
bool problem::get_bool(std::string_view name) const { return typed<bool>(value(name), name); }
const std::string& problem::get_choice(std::string_view name) const {
  return typed<std::string>(value(name), name);
}
const opval::dims& problem::get_dims(std::string_view name) const {
  return typed<opval::dims>(value(name), name);
}
bool problem::has(std::string_view name) const { return attrs_.contains(name); }

void problem::set(std::string_view name, attr_value v) {
  const attr_def* def = spec_->schema().find(name);
  if (!def) throw error(std::string(op()) + " has no attribute '" + std::string(name) + "'");
  if (v.index() != def->default_value.index())
    throw error("attribute '" + std::string(name) + "' set with a value of the wrong kind");
  attrs_[std::string(name)] = std::move(v);
}

std::string problem::to_string() const {
  std::string s(op());
  for (const auto& def : spec_->schema().defs()) {
    const attr_value& v = value(def.name);
    if (v != def.default_value) s += " " + def.name + "=" + format_attr_value(v);
  }
  s += " " + dt.to_string();
  if (fill != "default") s += " fill=" + fill;
  return s;
}

bool problem::operator==(const problem& other) const {
  if (spec_ != other.spec_ || !(dt == other.dt) || fill != other.fill) return false;
  for (const auto& def : spec_->schema().defs())
    if (value(def.name) != other.value(def.name)) return false;
  return true;
}

namespace detail {

problem parse_problem_draft(std::string_view line) {
  auto tokens = tokenize(line);
  if (tokens.empty()) throw parse_error("empty problem descriptor", "", 1);
  const op_spec* spec = nullptr;
  try {
    spec = &find_op(tokens[0].text);
  } catch (const error& e) {
    fail_at(tokens[0], e.what());
  }
  problem p(*spec);
  // An op's natural contract comes first; dt= overrides it.
  auto contracts = spec->contracts();
  if (!contracts.empty()) p.dt = parse_contract_types(contracts.front());
  std::set<std::string, std::less<>> seen;
  for (std::size_t i = 1; i < tokens.size(); ++i) apply_token(p, tokens[i], seen);
  return p;
}

}  // namespace detail

problem parse_problem(std::string_view line) {
  problem p = detail::parse_problem_draft(line);
  const op_spec* spec = &p.spec();
  try {
    spec->validate(p);
    check_operand_sizes(p);
  } catch (const error& e) {
    throw parse_error("column 1: invalid " + std::string(spec->name()) + " problem: " + e.what(),
                      std::string(line), 1);
  }
  return p;
}

contract contract_read_by(const op_spec& op, contract c) {
  const std::vector<std::string_view> reads = op.contract_options();
  const auto unread = [&](std::string_view option) {
    return std::find(reads.begin(), reads.end(), option) == reads.end();
  };
  const contract defaults;
  if (unread("mid")) c.mid = c.acc;
  if (unread("in_round")) c.in_round = defaults.in_round;
  if (unread("acc_round")) c.acc_round = defaults.acc_round;
  if (unread("dst_round")) c.dst_round = defaults.dst_round;
  if (unread("denorm")) c.denorm = defaults.denorm;
  for (auto [name, field] : {std::pair{"ulp:exp", &function_accuracy::exp}, {"ulp:erf", &function_accuracy::erf},
                             {"ulp:tanh", &function_accuracy::tanh}, {"ulp:div", &function_accuracy::div},
                             {"ulp:rsqrt", &function_accuracy::rsqrt}, {"ulp:log", &function_accuracy::log}})
    if (unread(name)) c.ulps.*field = defaults.ulps.*field;
  return c;
}

bool implements_contract(const contract& declared, const problem& p) {
  return contract_read_by(p.spec(), declared) == contract_read_by(p.spec(), p.dt);
}

std::vector<located_problem> read_problem_file(const std::string& path) {
  std::vector<located_problem> out;
  read_into(resolve_problem_file(path, std::filesystem::current_path()), out, 0);
  return out;
}

}  // namespace opval
