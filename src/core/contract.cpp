#include "opval/contract.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>
#include <cmath>
#include <vector>

#include "opval/error.hpp"

namespace opval {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == s.npos ? s.npos : at - start));
    if (at == s.npos) return parts;
    start = at + 1;
  }
}

dtype parse_contract_dtype(std::string_view text, std::string_view whole) {
  try {
    return parse_dtype(text);
  } catch (const error& e) {
    throw error("in contract '" + std::string(whole) + "': " + e.what());
  }
}

dtype default_accumulator(dtype t) {
  if (t == dtype::f64) return dtype::f64;
  return is_float(t) ? dtype::f32 : dtype::i32;
}

contract shorthand(dtype t) {
  contract c;
  if (t == dtype::tf32) {
    c.src = c.wei = dtype::f32;
    c.math = dtype::tf32;
  } else {
    c.src = c.wei = c.math = t;
  }
  c.acc = c.mid = default_accumulator(c.math);
  c.dst = c.src;
  return c;
}

rounding parse_rounding(std::string_view key, std::string_view v) {
  if (v == "rne") return rounding::rne;
  if (v == "rz") return rounding::rz;
  throw error("contract option '" + std::string(key) + "' expects rne or rz, got '" + std::string(v) + "'");
}

std::string_view rounding_name(rounding r) { return r == rounding::rne ? "rne" : "rz"; }

function_accuracy parse_ulps(std::string_view v) {
  if (v == "cuda") return {};
  if (v == "opencl") return {3.0, 16.0, 5.0, 2.5, 2.0, 3.0};
  if (v == "exact") return {0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  function_accuracy a;
  for (auto item : split(v, ',')) {
    auto kv = split(item, ':');
    if (kv.size() != 2) throw error("contract option 'ulp' expects fn:ulps,... or cuda|opencl|exact, got '" + std::string(v) + "'");
    std::string num(kv[1]);
    char* end = nullptr;
    double x = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(x >= 0))
      throw error("contract option 'ulp': bad ulps '" + num + "' for '" + std::string(kv[0]) + "'");
    if (kv[0] == "exp") a.exp = x;
    else if (kv[0] == "erf") a.erf = x;
    else if (kv[0] == "tanh") a.tanh = x;
    else if (kv[0] == "div") a.div = x;
    else if (kv[0] == "rsqrt") a.rsqrt = x;
    else if (kv[0] == "log") a.log = x;
    else throw error("contract option 'ulp': unknown function '" + std::string(kv[0]) + "' (exp erf tanh div rsqrt log)");
  }
  return a;
}

std::string format_ulps(const function_accuracy& a) {
  // The shortest text that reads back to the same double, so that to_string() round trips.
  auto num = [](double x) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
  };
  // Only the functions off their default: an op's descriptor then names no function it does
  // not use (problem parsing refuses those).
  const function_accuracy d;
  std::string text;
  for (const auto& [name, value, fallback] : {std::tuple{"exp", a.exp, d.exp}, {"erf", a.erf, d.erf},
                                              {"tanh", a.tanh, d.tanh}, {"div", a.div, d.div},
                                              {"rsqrt", a.rsqrt, d.rsqrt}, {"log", a.log, d.log}})
    if (value != fallback) {  // appended piece by piece: GCC 12 flags the temporary of a concatenation (-Wrestrict)
      if (!text.empty()) text += ',';
      text += name;
      text += ':';
      text += num(value);
    }
  return text;
}

}  // namespace

bool contract::rounds_inputs() const { return math != src && is_float(math); }

std::string contract::types_string() const {
  std::string s(opval::to_string(src));
  if (wei != src) s.append("x").append(opval::to_string(wei));
  if (math != src) s.append("@").append(opval::to_string(math));
  return s.append(":").append(opval::to_string(acc)).append(":").append(opval::to_string(dst));
}

std::string contract::to_string() const { return "dt=" + types_string() + options_string(*this); }

std::string options_string(const contract& c) {
  const contract defaults;
  std::string s;
  if (c.mid != c.acc) s += " mid=" + std::string(opval::to_string(c.mid));
  if (c.in_round != defaults.in_round) s += " in_round=" + std::string(rounding_name(c.in_round));
  if (c.acc_round != defaults.acc_round) s += " acc_round=" + std::string(rounding_name(c.acc_round));
  if (c.dst_round != defaults.dst_round) s += " dst_round=" + std::string(rounding_name(c.dst_round));
  if (c.denorm != defaults.denorm) s += " denorm=ftz";
  if (!(c.ulps == defaults.ulps)) s += " ulp=" + format_ulps(c.ulps);
  if (!c.deterministic) s += " deterministic=0";
  return s;
}

contract parse_contract_types(std::string_view text) {
  auto parts = split(text, ':');
  if (parts.size() == 1) return shorthand(parse_contract_dtype(text, text));
  if (parts.size() != 3)
    throw error("contract '" + std::string(text) + "' is not of the form src[xwei][@math]:acc:dst");
  contract c;
  std::string_view inputs = parts[0];
  std::size_t at = inputs.find('@');
  std::string_view stored = inputs.substr(0, at);
  auto operands = split(stored, 'x');
  if (operands.size() > 2 || operands[0].empty())
    throw error("contract '" + std::string(text) + "': bad input types '" + std::string(stored) + "'");
  c.src = parse_contract_dtype(operands[0], text);
  c.wei = operands.size() == 2 ? parse_contract_dtype(operands[1], text) : c.src;
  c.math = at == inputs.npos ? c.src : parse_contract_dtype(inputs.substr(at + 1), text);
  c.acc = parse_contract_dtype(parts[1], text);
  c.mid = c.acc;
  c.dst = parse_contract_dtype(parts[2], text);
  if (c.src == dtype::tf32 || c.wei == dtype::tf32)
    throw error("contract '" + std::string(text) + "': tf32 is a math type; write f32@tf32");
  return c;
}

contract parse_contract(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::size_t at = text.find_first_not_of(" \t"); at != text.npos; at = text.find_first_not_of(" \t", at)) {
    const std::size_t end = std::min(text.find_first_of(" \t", at), text.size());
    words.push_back(text.substr(at, end - at));
    at = end;
  }
  if (words.empty()) throw error("empty contract: expected types such as f32 or bf16:f32:bf16, then options");
  std::string_view types = words.front();
  if (types.starts_with("dt=")) types.remove_prefix(3);
  contract c = parse_contract_types(types);
  std::vector<std::string_view> seen;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    const std::string_view key = words[i].substr(0, eq);
    if (eq == std::string_view::npos || eq == 0)
      throw error("contract '" + std::string(text) + "': expected key=value after the types, got '" +
                  std::string(words[i]) + "'");
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw error("contract '" + std::string(text) + "': option '" + std::string(key) + "' is given twice");
    seen.push_back(key);
    if (!apply_contract_option(c, key, words[i].substr(eq + 1)))
      throw error("contract '" + std::string(text) + "': unknown contract option '" + std::string(key) +
                  "' (known: mid in_round acc_round dst_round denorm ulp deterministic)");
  }
  return c;
}

bool apply_contract_option(contract& c, std::string_view key, std::string_view value) {
  if (key == "mid") c.mid = parse_dtype(value);
  else if (key == "in_round") c.in_round = parse_rounding(key, value);
  else if (key == "acc_round") c.acc_round = parse_rounding(key, value);
  else if (key == "dst_round") c.dst_round = parse_rounding(key, value);
  else if (key == "denorm") {
    if (value == "ieee") c.denorm = denormals::ieee;
    else if (value == "ftz") c.denorm = denormals::ftz;
    else throw error("contract option 'denorm' expects ieee or ftz, got '" + std::string(value) + "'");
  } else if (key == "ulp") c.ulps = parse_ulps(value);
  else if (key == "deterministic") {
    if (value != "0" && value != "1")
      throw error("contract option 'deterministic' expects 0 or 1, got '" + std::string(value) + "'");
    c.deterministic = value == "1";
  } else return false;
  return true;
}

contract_arith::contract_arith(const contract& c)
    : c_(c),
      acc_is_f32_rne_(c.acc == dtype::f32 && c.acc_round == rounding::rne &&
                      c.denorm == denormals::ieee) {}

double contract_arith::flush(dtype t, double x) const {
  if (c_.denorm == denormals::ftz && is_float(t) && std::fabs(x) < traits(t).min_normal)
    return std::copysign(0.0, x);
  return x;
}

double contract_arith::input(double x) const {
  if (!c_.rounds_inputs()) return flush(c_.math, x);
  return flush(c_.math, round_to(c_.math, x, c_.in_round));
}

double contract_arith::acc(double x) const { return flush(c_.acc, round_to(c_.acc, x, c_.acc_round)); }

double contract_arith::mid(double x) const { return flush(c_.mid, round_to(c_.mid, x, c_.acc_round)); }

double contract_arith::out(double x) const { return flush(c_.dst, round_to(c_.dst, x, c_.dst_round)); }

double contract_arith::fma(double a, double b, double c) const {
  if (acc_is_f32_rne_)
    return std::fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c));
  if (c_.acc == dtype::f64) return std::fma(a, b, c);
  // Products of inputs of at most 26 significant bits are exact in double, so this rounds once
  // in all but the rare case where the double sum itself was inexact.
  return acc(a * b + c);
}

}  // namespace opval
