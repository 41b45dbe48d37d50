// A fused region judged as one (graph/region_judging.hpp): the nodes a fused node of the stack
// replaced, recomputed from the values the stack gave, held to their bounds carried along.
#include "graph/region_judging.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/output_judging.hpp"
#include "graph/graph_value.hpp"
#include "graph/node_context.hpp"
#include "graph/node_reference.hpp"
#include "graph/op_nodes.hpp"
#include "ops/common_eltwise/binary_spec.hpp"
#include "ops/common_eltwise/unary_spec.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"

namespace opval::graph {
namespace {

using value_map = std::map<std::string, value, std::less<>>;

// The most nodes one region may hold: a fused node replaces a handful; more means the stack
// exposes almost nothing, and the region would be the graph.
constexpr std::size_t max_region_nodes = 32;

// The nodes of a region in execution order (node k last), and the reason it has none.
struct region {
  std::vector<std::size_t> nodes;
  std::string why_not;
};

// Node k and the producers of every value it needs that the stack does not give, back to
// values it gives (or, failing that, why not).
region collect_region(const model& m, std::size_t k, const stack_value_fn& stack_value) {
  std::map<std::string, std::size_t, std::less<>> producer;
  for (std::size_t i = 0; i < k; ++i)
    for (const std::string& o : m.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::set<std::size_t> members{k};
  std::vector<std::size_t> pending{k};
  while (!pending.empty()) {
    const node& n = m.nodes[pending.back()];
    pending.pop_back();
    for (const std::string& name : n.inputs) {
      if (name.empty() || stack_value(name)) continue;
      const auto p = producer.find(name);
      if (p == producer.end()) return {{}, fmt::format("'{}' is neither given by the stack nor computed before", name)};
      if (members.insert(p->second).second) pending.push_back(p->second);
      if (members.size() > max_region_nodes)
        return {{}, fmt::format("more than {} nodes lie between it and values the stack gives", max_region_nodes)};
    }
  }
  return {{members.begin(), members.end()}, ""};
}

// Whether each output element of `n` depends on the same element of each input alone (or
// moves, selects or converts them): then a value moved by its bound moves the outputs by
// exactly the node's sensitivity, to first order, with no cancellation between elements.
bool elementwise(const model& m, const node& n, const node_context& c) {
  if (map_node(m, n).role == node_role::structural) return true;
  const mapped_op* op = find_mapped_op(n);
  const std::optional<op_call> call = op ? op->mapper(c) : std::nullopt;
  if (!call || !call->prob) return true;
  const op_spec& spec = call->prob->spec();
  return dynamic_cast<const ops::eltwise::unary_spec*>(&spec) || dynamic_cast<const ops::eltwise::binary_spec*>(&spec);
}

// A row normalizer — softmax or log_softmax — as the region's last node: the fused consumer
// of an elementwise producer (a scale, a mask). Its problem's shape and axis give the rows.
struct row_normalizer {
  bool log = false;
  dims shape;
  std::int64_t axis = 0;
};

std::optional<row_normalizer> as_row_normalizer(const node& n, const node_context& c) {
  const mapped_op* op = find_mapped_op(n);
  if (!op || (op->opval_op != "softmax" && op->opval_op != "log_softmax")) return std::nullopt;
  const std::optional<op_call> call = op->mapper(c);
  if (!call || !call->prob) return std::nullopt;
  return row_normalizer{op->opval_op == "log_softmax", call->prob->get_dims("shape"), call->prob->get_int("axis")};
}

// How far a row normalizer's outputs may move when each input element moves by up to
// delta[e]: softmax is shift-invariant and logsumexp is 1-Lipschitz in the max norm, so
// log p_j moves by at most delta_j + max over its row of delta — log_softmax by that, softmax
// by p_j expm1(that). Exact, not first order: no cancellation between elements to assume.
std::vector<double> carried_by_row_normalizer(const row_normalizer& r, const std::vector<double>& delta,
                                              const value& output) {
  const std::int64_t length = r.shape[static_cast<std::size_t>(r.axis)];
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(r.axis) + 1; d < r.shape.size(); ++d) inner *= r.shape[d];
  const auto row_of = [&](std::size_t e) {
    const auto i = static_cast<std::int64_t>(e);
    return (i / (length * inner)) * inner + i % inner;
  };
  std::map<std::int64_t, double> row_max;
  for (std::size_t e = 0; e < delta.size(); ++e) row_max[row_of(e)] = std::fmax(row_max[row_of(e)], delta[e]);
  std::vector<double> out(delta.size());
  for (std::size_t e = 0; e < delta.size() && e < output.data.size(); ++e) {
    const double shift = delta[e] + row_max[row_of(e)];
    out[e] = r.log ? shift : std::fabs(output.data[e]) * std::expm1(shift);
  }
  return out;
}

// The region run on opval's references: the values of every node's outputs, starting from
// `fixed` (values set from outside: a hidden value moved by its bound) and the stack's values.
class region_run {
 public:
  region_run(const model& m, const region& r, const stack_value_fn& stack_value)
      : m_(m), r_(r), stack_value_(stack_value) {}

  // Runs the region's nodes in order, keeping what `fixed` sets.
  void run(const value_map& fixed) {
    for (const auto& [name, v] : fixed) values_[name] = v;
    for (std::size_t i = 0; i < r_.nodes.size(); ++i) {
      const node& n = m_.nodes[r_.nodes[i]];
      const node_context c(m_, n, inputs_of(n));
      node_run record{n.name, n.op_type, node_role::unsupported, std::nullopt, false};
      std::vector<value> out = node_reference(c, record);
      for (std::size_t j = 0; j < n.outputs.size() && j < out.size(); ++j)
        if (!n.outputs[j].empty() && !fixed.contains(n.outputs[j])) values_[n.outputs[j]] = std::move(out[j]);
    }
  }

  std::vector<const value*> inputs_of(const node& n) const {
    std::vector<const value*> in;
    for (const std::string& name : n.inputs) {
      const auto it = values_.find(name);
      in.push_back(name.empty() ? nullptr : it != values_.end() ? &it->second : stack_value_(name));
    }
    return in;
  }

  const value& at(const std::string& name) const { return values_.at(name); }

 private:
  const model& m_;
  const region& r_;
  const stack_value_fn& stack_value_;
  value_map values_;
};

// Node n's bound per element of each output on the inputs the run gave it, as judge() would
// hold it to under o's policy; zeros for a node that computes nothing (structural).
std::vector<std::vector<double>> node_bounds(const model& m, const node& n, const region_run& run,
                                             const run_options& o) {
  const node_context c(m, n, run.inputs_of(n));
  std::vector<std::vector<double>> out;
  const mapped_op* op = find_mapped_op(n);
  const std::optional<op_call> call = op && map_node(m, n).role == node_role::op ? op->mapper(c) : std::nullopt;
  std::vector<tensor> totals;
  if (call && call->prob) totals = detail::bounds_at(*call->prob, input_tensors(*call), o);
  for (std::size_t j = 0; j < n.outputs.size(); ++j) {
    const std::size_t count = n.outputs[j].empty() ? 0 : run.at(n.outputs[j]).data.size();
    std::vector<double> b(count, 0.0);
    if (j < totals.size() && totals[j].numel() == static_cast<std::int64_t>(count))
      for (std::size_t e = 0; e < count; ++e) b[e] = totals[j].at(static_cast<std::int64_t>(e));
    out.push_back(std::move(b));
  }
  return out;
}

// move[e] = the larger of move[e] and |shifted - ideal| at e (sized on first use); a move to or
// from NaN or infinity is infinite: no bound holds there.
void widen_by_move(const value& shifted, const value& ideal, std::vector<double>& move) {
  move.resize(ideal.data.size(), 0.0);
  for (std::size_t e = 0; e < move.size() && e < shifted.data.size(); ++e) {
    const double a = shifted.data[e], b = ideal.data[e];
    const double d = a == b ? 0.0 : std::fabs(a - b);
    move[e] = std::fmax(move[e], std::isnan(d) ? INFINITY : d);
  }
}

// The region's bound on node k's outputs: k's own bound, plus for each value hidden inside the
// region the largest move of k's outputs when it moves by its own bound, up or down. A row
// normalizer k instead gets the largest moves of its input, summed over the hidden values,
// carried through it exactly (carried_by_row_normalizer).
std::vector<std::vector<double>> region_bounds(const model& m, const region& r, const stack_value_fn& stack_value,
                                               const region_run& ideal, const run_options& o) {
  const node& last = m.nodes[r.nodes.back()];
  std::vector<std::vector<double>> total = node_bounds(m, last, ideal, o);
  const std::optional<row_normalizer> normalizer = as_row_normalizer(last, node_context(m, last, ideal.inputs_of(last)));
  std::vector<double> input_move;  // of a row normalizer's input, summed over the hidden values
  for (std::size_t i = 0; i + 1 < r.nodes.size(); ++i) {
    const node& hidden = m.nodes[r.nodes[i]];
    const std::vector<std::vector<double>> own = node_bounds(m, hidden, ideal, o);
    for (std::size_t j = 0; j < hidden.outputs.size(); ++j) {
      if (hidden.outputs[j].empty() || std::ranges::all_of(own[j], [](double b) { return b == 0; })) continue;
      std::vector<std::vector<double>> moves(last.outputs.size());
      std::vector<double> moved_input;
      for (const double sign : {1.0, -1.0}) {
        value moved = ideal.at(hidden.outputs[j]);
        for (std::size_t e = 0; e < moved.data.size(); ++e) moved.data[e] += sign * own[j][e];
        region_run shifted(m, r, stack_value);
        shifted.run({{hidden.outputs[j], moved}});
        if (normalizer) {
          widen_by_move(shifted.at(last.inputs[0]), ideal.at(last.inputs[0]), moved_input);
          continue;
        }
        for (std::size_t q = 0; q < last.outputs.size(); ++q)
          if (!last.outputs[q].empty()) widen_by_move(shifted.at(last.outputs[q]), ideal.at(last.outputs[q]), moves[q]);
      }
      input_move.resize(moved_input.size(), 0.0);
      for (std::size_t e = 0; e < moved_input.size(); ++e) input_move[e] += moved_input[e];
      for (std::size_t q = 0; q < moves.size(); ++q)
        for (std::size_t e = 0; e < moves[q].size(); ++e) total[q][e] += moves[q][e];
    }
  }
  if (normalizer && !input_move.empty()) {
    const std::vector<double> carried = carried_by_row_normalizer(*normalizer, input_move, ideal.at(last.outputs[0]));
    for (std::size_t e = 0; e < carried.size() && e < total[0].size(); ++e) total[0][e] += carried[e];
  }
  return total;
}

std::string names_of(const model& m, const region& r) {
  std::vector<std::string> names;
  for (std::size_t i : r.nodes) names.push_back(m.nodes[i].name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// The stack's outputs of the region against its recomputed ones, within `bounds`.
void compare(const node& last, const std::vector<const value*>& got, const region_run& ideal,
             const std::vector<std::vector<double>>& bounds, region_verdict& v) {
  for (std::size_t q = 0; q < last.outputs.size(); ++q) {
    if (last.outputs[q].empty() || !got[q]) continue;
    const value& want = ideal.at(last.outputs[q]);
    std::size_t beyond = 0, worst = 0;
    double worst_excess = -1;
    for (std::size_t e = 0; e < want.data.size() && e < got[q]->data.size(); ++e) {
      const double g = got[q]->data[e], w = want.data[e];
      if (g == w || (std::isnan(g) && std::isnan(w))) continue;
      const double err = std::isnan(g) || std::isnan(w) ? INFINITY : std::fabs(g - w);
      if (!(err <= bounds[q][e])) {
        ++beyond;
        if (err - bounds[q][e] > worst_excess || std::isnan(err - bounds[q][e])) {
          worst_excess = err - bounds[q][e];
          worst = e;
        }
      }
    }
    if (beyond == 0 || v.failed) continue;
    v.failed = true;
    const double g = got[q]->data[worst], w = want.data[worst];
    v.reason = fmt::format("output '{}' of the fused region: {} of {} elements beyond the region's bound; worst at {}: "
                           "expected {:.9g}, got {:.9g}, |err| {:.3g} vs bound {:.3g} (each node's bound on its inputs, "
                           "carried to the output to first order)",
                           last.outputs[q], beyond, want.data.size(), detail::format_index(unravel(static_cast<std::int64_t>(worst), want.shape)),
                           w, g, std::fabs(g - w), bounds[q][worst]);
  }
}

}  // namespace

region_verdict judge_region(const model& m, std::size_t k, const stack_value_fn& stack_value,
                            const std::vector<const value*>& got, const run_options& o) {
  region_verdict v;
  const region r = collect_region(m, k, stack_value);
  if (r.nodes.empty()) {
    v.note = fmt::format("not judged with the nodes a fused node of the stack hides: {}", r.why_not);
    return v;
  }
  region_run ideal(m, r, stack_value);
  ideal.run({});
  std::set<std::string, std::less<>> hidden;
  for (std::size_t i = 0; i + 1 < r.nodes.size(); ++i)
    for (const std::string& out : m.nodes[r.nodes[i]].outputs) hidden.insert(out);
  for (std::size_t i : r.nodes) {
    const node& n = m.nodes[i];
    const bool reads_hidden = std::ranges::any_of(n.inputs, [&](const std::string& in) { return hidden.contains(in); });
    if (!reads_hidden) continue;
    const node_context c(m, n, ideal.inputs_of(n));
    if (!elementwise(m, n, c) && !(i == k && as_row_normalizer(n, c))) {
      v.note = fmt::format("not judged alone: the stack hides its inputs inside a fused node, and the region ({}) "
                           "carries a hidden value through '{}' ({}), whose error is carried only elementwise or into "
                           "a last softmax",
                           names_of(m, r), n.name, n.op_type);
      return v;
    }
  }
  compare(m.nodes[k], got, ideal, region_bounds(m, r, stack_value, ideal, o), v);
  v.judged = true;
  for (std::size_t i : r.nodes) v.nodes.push_back(m.nodes[i].name);
  v.note = fmt::format("judged with the nodes a fused node of the stack hides: the region {} recomputed from the values "
                       "the stack gave it", names_of(m, r));
  return v;
}

}  // namespace opval::graph
