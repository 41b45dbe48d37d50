// Per-node and per-op-type contract overrides (model::contracts): which nodes they name.
#include <fmt/format.h>

#include <algorithm>

#include "opval/error.hpp"
#include "opval/graph.hpp"

namespace opval::graph {

model with_contracts(model m, std::map<std::string, std::string, std::less<>> contracts) {
  for (const auto& [key, text] : contracts) {
    // A plain reference for the lambda: clang before 16 cannot capture a structured binding.
    const std::string& name = key;
    const bool names_a_node = std::ranges::any_of(m.nodes, [&](const node& n) {
      return n.name == name || n.op_type == name;
    });
    if (!names_a_node)
      throw error(fmt::format("{}: contract override '{}={}': no node of the model is named '{}' or has that op type",
                              m.source, key, text, key));
  }
  m.contracts = std::move(contracts);
  return m;
}

const std::string* contract_override(const model& m, const node& n) {
  if (auto it = m.contracts.find(n.name); !n.name.empty() && it != m.contracts.end()) return &it->second;
  if (auto it = m.contracts.find(n.op_type); it != m.contracts.end()) return &it->second;
  return nullptr;
}

}  // namespace opval::graph
