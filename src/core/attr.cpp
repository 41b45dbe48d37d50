#include "opval/attr.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/error.hpp"

namespace opval {
namespace {

std::string describe(const attr_def& def) { return "attribute '" + def.name + "'"; }

std::int64_t parse_integer(const attr_def& def, std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw error(describe(def) + " expects an integer, got '" + std::string(text) + "'");
  return v;
}

double parse_real(const attr_def& def, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    throw error(describe(def) + " expects a number, got '" + s + "'");
  return v;
}

/// Integer attributes and extents stay within int32, as the libraries under test take them:
/// shape arithmetic (sums of extents and paddings, products of two) then cannot overflow.
constexpr std::int64_t max_integer = 2147483647;

void check_range(const attr_def& def, double v) {
  // Written so that NaN is out of range too.
  if (!(v >= def.min && v <= def.max)) {
    std::ostringstream os;
    os << describe(def) << " = " << v << " is out of range [" << def.min << ", " << def.max << "]";
    throw error(os.str());
  }
}

}  // namespace

const attr_def* attr_schema::find(std::string_view name) const {
  for (const auto& d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

attr_def int_attr(std::string name, std::int64_t def, std::string doc, double min, double max) {
  return {std::move(name), attr_kind::integer, def, std::move(doc), {}, min, max};
}
attr_def real_attr(std::string name, double def, std::string doc) {
  return {std::move(name), attr_kind::real, def, std::move(doc), {}};
}
attr_def bool_attr(std::string name, bool def, std::string doc) {
  return {std::move(name), attr_kind::boolean, def, std::move(doc), {}};
}
attr_def choice_attr(std::string name, std::string def, std::vector<std::string> choices,
                     std::string doc) {
  return {std::move(name), attr_kind::choice, std::move(def), std::move(doc), std::move(choices)};
}
attr_def dims_attr(std::string name, opval::dims def, std::string doc) {
  return {std::move(name), attr_kind::dims, std::move(def), std::move(doc), {}};
}

attr_value parse_attr_value(const attr_def& def, std::string_view text) {
  switch (def.kind) {
    case attr_kind::integer: {
      std::int64_t v = parse_integer(def, text);
      check_range(def, static_cast<double>(v));
      if (v > max_integer || v < -max_integer)
        throw error(describe(def) + " = " + std::to_string(v) + " is beyond " + std::to_string(max_integer) +
                    " in magnitude, the largest integer opval takes");
      return v;
    }
    case attr_kind::real: {
      double v = parse_real(def, text);
      check_range(def, v);
      return v;
    }
    case attr_kind::boolean:
      if (text == "1" || text == "true" || text == "yes") return true;
      if (text == "0" || text == "false" || text == "no") return false;
      throw error(describe(def) + " expects 0/1 or true/false, got '" + std::string(text) + "'");
    case attr_kind::choice:
      for (const auto& c : def.choices)
        if (c == text) return c;
      {
        throw error(describe(def) + " expects one of " + fmt::format("{}", fmt::join(def.choices, "|")) +
                    ", got '" + std::string(text) + "'");
      }
    case attr_kind::dims: {
      opval::dims d;
      if (text == "scalar" || text.empty()) return d;
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t x = text.find('x', start);
        std::string_view part = text.substr(start, x == std::string_view::npos ? text.npos : x - start);
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 0)
          throw error(describe(def) + " expects dimensions like 2x3x4, got '" + std::string(text) + "'");
        if (v > max_integer)
          throw error(describe(def) + " has the extent " + std::to_string(v) + ", beyond " +
                      std::to_string(max_integer) + ", the largest opval takes");
        d.push_back(v);
        if (x == std::string_view::npos) break;
        start = x + 1;
      }
      return d;
    }
  }
  return {};
}

std::string format_attr_value(const attr_value& v) {
  struct visitor {
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      // Shortest text that reads back to the same double.
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
      return std::string(buf, end);
    }
    std::string operator()(bool b) const { return b ? "1" : "0"; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const opval::dims& d) const { return opval::to_string(d); }
  };
  return std::visit(visitor{}, v);
}

std::string_view to_string(attr_kind k) {
  switch (k) {
    case attr_kind::integer: return "int";
    case attr_kind::real: return "real";
    case attr_kind::boolean: return "bool";
    case attr_kind::choice: return "choice";
    case attr_kind::dims: return "dims";
  }
  return "?";
}

}  // namespace opval
