#include "ops/common_eltwise/suite_lines.hpp"

#include <algorithm>

namespace opval::ops::eltwise {
namespace {

std::string line_of(std::string_view op, std::span<const suite_axis> axes,
                    const std::vector<std::size_t>& pick, const std::string& contract) {
  std::string s(op);
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (!axes[a][pick[a]].empty()) s += " " + axes[a][pick[a]];
  return s + " dt=" + contract;
}

}  // namespace

std::vector<std::string> covering_lines(std::string_view op, std::span<const suite_axis> axes,
                                        std::span<const std::string> contracts) {
  std::vector<std::string> lines;
  for (const auto& c : contracts) {
    std::vector<std::size_t> pick(axes.size(), 0);
    lines.push_back(line_of(op, axes, pick, c));
    for (std::size_t a = 0; a < axes.size(); ++a) {
      for (std::size_t v = 1; v < axes[a].size(); ++v) {
        pick[a] = v;
        lines.push_back(line_of(op, axes, pick, c));
      }
      pick[a] = 0;
    }
  }
  return lines;
}

suite_axis unary_shapes(bool smoke) {
  if (smoke) return {"shape=257", "shape=1", "shape=13x61 stride_pad=3", "shape=5x7x9 step=2"};
  return {"shape=4099",
          "shape=1",
          "shape=scalar",
          "shape=2",
          "shape=3",
          "shape=17",
          "shape=31",
          "shape=127",
          "shape=1000",
          "shape=65537",
          "shape=3x100003",
          "shape=33x65",
          "shape=3x5x7x11",
          "shape=257x129 stride_pad=5",
          "shape=61x67 step=2",
          "shape=7x9x13 stride_pad=1 step=3",
          "shape=0",  // empty tensors, as real graphs make them
          "shape=3x0x5 stride_pad=2"};
}

suite_axis generic_fills(bool smoke, bool exact_on_integers) {
  if (smoke) return {"", "fill=special"};
  suite_axis fills{"", "fill=uniform", "fill=wide", "fill=large", "fill=special", "fill=cancel", "fill=positive"};
  // The exact fill's few distinct values repeat the same rounding errors, which the bias test
  // reads as a systematic bias; use it only where results are exact.
  if (exact_on_integers) fills.push_back("fill=exact");
  return fills;
}

suite_axis contract_option_values(bool smoke, const op_spec& op) {
  if (smoke) return {""};
  // Not dst_round=rz: the runner's bias test does not know the rounding was promised
  // directed and fails the (correct) sim. Tested directly in the op tests instead.
  suite_axis axis{""};
  const std::vector<std::string_view> reads = op.contract_options();
  for (const char* option : {"acc_round=rz", "denorm=ftz"})
    if (std::find(reads.begin(), reads.end(), std::string_view(option).substr(0, std::string_view(option).find('='))) !=
        reads.end())
      axis.emplace_back(option);
  return axis;
}

feature_table axes_table(std::span<const named_axis> axes, std::vector<std::string> contracts) {
  feature_table t;
  t.contracts = std::move(contracts);
  for (const named_axis& a : axes) {
    if (a.values.empty()) continue;
    if (!a.values.front().empty()) t.base += (t.base.empty() ? "" : " ") + a.values.front();
    if (a.values.size() > 1) t.features.push_back({a.name, {a.values.begin() + 1, a.values.end()}});
  }
  return t;
}

void append(std::vector<std::string>& a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
}

}  // namespace opval::ops::eltwise
