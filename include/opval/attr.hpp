#pragma once
// Operator attributes: a typed schema per op and the values one problem sets.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "opval/tensor.hpp"

namespace opval {

/// The kinds of attribute value. `dims` is written `2x3x4`, `list` as `a,b,c`.
enum class attr_kind : std::uint8_t { integer, real, boolean, choice, dims };

using attr_value = std::variant<std::int64_t, double, bool, std::string, opval::dims>;

/// One attribute of an op: name, kind, default, allowed range or choices, documentation.
struct attr_def {
  std::string name;
  attr_kind kind = attr_kind::integer;
  attr_value default_value;
  std::string doc;
  std::vector<std::string> choices;  ///< for `choice`
  double min = -1e300;               ///< for `integer` and `real`, inclusive
  double max = 1e300;
};

/// The attributes of an op, in the order they print.
class attr_schema {
 public:
  attr_schema() = default;
  attr_schema(std::initializer_list<attr_def> defs) : defs_(defs) {}
  explicit attr_schema(std::vector<attr_def> defs) : defs_(std::move(defs)) {}
  const attr_def* find(std::string_view name) const;
  const std::vector<attr_def>& defs() const { return defs_; }

 private:
  std::vector<attr_def> defs_;
};

/// Convenience constructors for schemas.
attr_def int_attr(std::string name, std::int64_t def, std::string doc, double min = -1e300,
                  double max = 1e300);
attr_def real_attr(std::string name, double def, std::string doc);
attr_def bool_attr(std::string name, bool def, std::string doc);
attr_def choice_attr(std::string name, std::string def, std::vector<std::string> choices,
                     std::string doc);
attr_def dims_attr(std::string name, opval::dims def, std::string doc);

/// "int", "real", "bool", "choice" or "dims".
std::string_view to_string(attr_kind k);

/// Parses `text` as a value of `def`; throws opval::error (message names the attribute).
attr_value parse_attr_value(const attr_def& def, std::string_view text);
/// Prints a value so that parse_attr_value reads it back identically.
std::string format_attr_value(const attr_value& v);

}  // namespace opval
