#include "bench/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "opval/error.hpp"

namespace opval {
namespace {

bool valid_name(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// A dimension of the product: the axes (indices into the axis list) that advance together.
std::vector<std::vector<std::size_t>> dimensions(const std::vector<sweep_axis>& axes,
                                                 const std::vector<std::vector<std::string>>& zipped) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (!index.emplace(axes[i].name, i).second) throw error("sweep axis '" + axes[i].name + "' is given twice");
  std::vector<int> group_of(axes.size(), -1);
  for (std::size_t g = 0; g < zipped.size(); ++g) {
    if (zipped[g].size() < 2) throw error("--zip needs two axes or more, got '" + fmt::format("{}", fmt::join(zipped[g], ",")) + "'");
    for (const std::string& name : zipped[g]) {
      const auto it = index.find(name);
      if (it == index.end()) throw error("--zip names '" + name + "', which no --axis defines");
      if (group_of[it->second] >= 0) throw error("axis '" + name + "' is zipped twice");
      group_of[it->second] = static_cast<int>(g);
      if (axes[it->second].values.size() != axes[index.at(zipped[g][0])].values.size())
        throw error(fmt::format("zipped axes must be as long as each other: '{}' has {} values, '{}' {}", zipped[g][0],
                                axes[index.at(zipped[g][0])].values.size(), name, axes[it->second].values.size()));
    }
  }
  std::vector<std::vector<std::size_t>> dims;
  std::map<int, std::size_t> dim_of_group;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (group_of[i] < 0) {
      dims.push_back({i});
    } else if (const auto [it, added] = dim_of_group.emplace(group_of[i], dims.size()); added) {
      dims.push_back({i});
    } else {
      dims[it->second].push_back(i);
    }
  }
  return dims;
}

}  // namespace

const std::string* sweep_point::find(std::string_view axis) const {
  for (const auto& [name, value] : values)
    if (name == axis) return &value;
  return nullptr;
}

sweep_axis parse_axis(std::string_view text) {
  const std::size_t eq = text.find('=');
  sweep_axis a;
  if (eq == std::string_view::npos || !valid_name(text.substr(0, eq)))
    throw error("--axis '" + std::string(text) + "': expected NAME=V1,V2,... (NAME a letter or _, then letters, digits, _)");
  a.name = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  std::set<std::string, std::less<>> seen;
  for (std::size_t start = 0;;) {
    const std::size_t comma = rest.find(',', start);
    const std::string value(rest.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (value.empty() || value.find_first_of(" \t{}") != std::string::npos)
      throw error("--axis '" + std::string(text) + "': empty value, or one with a space or brace");
    if (!seen.insert(value).second) throw error("--axis '" + std::string(text) + "': '" + value + "' is given twice");
    a.values.push_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return a;
}

std::vector<sweep_point> sweep_points(const std::vector<sweep_axis>& axes, const std::vector<std::vector<std::string>>& zipped) {
  const std::vector<std::vector<std::size_t>> dims = dimensions(axes, zipped);
  std::vector<std::size_t> at(dims.size(), 0);  // the index along each dimension, an odometer
  std::vector<sweep_point> points;
  if (axes.empty()) return points;
  for (;;) {
    std::vector<std::string> value_of(axes.size());
    for (std::size_t d = 0; d < dims.size(); ++d)
      for (std::size_t axis : dims[d]) value_of[axis] = axes[axis].values[at[d]];
    sweep_point p;
    for (std::size_t i = 0; i < axes.size(); ++i) p.values.emplace_back(axes[i].name, value_of[i]);
    points.push_back(std::move(p));
    std::size_t d = dims.size();
    while (d > 0 && ++at[d - 1] == axes[dims[d - 1][0]].values.size()) at[--d] = 0;
    if (d == 0) return points;
  }
}

std::vector<std::string> placeholders(std::string_view text) {
  std::vector<std::string> names;
  for (std::size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) throw error("'" + std::string(text) + "': a '{' without its '}'");
    std::string name(text.substr(open + 1, close - open - 1));
    if (!valid_name(name)) throw error("'" + std::string(text) + "': '{" + name + "}' is no placeholder name");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string instantiate(std::string_view text, const sweep_point& p) {
  std::string out(text);
  for (const std::string& name : placeholders(text)) {
    const std::string* value = p.find(name);
    if (!value) throw error("'" + std::string(text) + "': no --axis gives {" + name + "}");
    for (std::size_t at = out.find("{" + name + "}"); at != std::string::npos; at = out.find("{" + name + "}", at))
      out.replace(at, name.size() + 2, *value);
  }
  return out;
}

}  // namespace opval
