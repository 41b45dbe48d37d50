#pragma once
// A backend's handlers, one per op it runs, found by the problem's op name: no op-name chains,
// no default. An op without a handler is UNIMPLEMENTED, naming the ops the backend runs, so an
// op added to opval (or to a family a backend half-covers) can never run as another one.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "opval/backend.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"

namespace opval::detail {

template <class Handler>
class op_handlers {
 public:
  /// The handlers of backend `backend`, by op name. Every name must be a registered op (an
  /// opval::error otherwise: a misspelt entry would never match).
  op_handlers(std::string backend, std::vector<std::pair<std::string, Handler>> entries)
      : backend_(std::move(backend)), entries_(std::move(entries)) {
    for (const auto& [op, handler] : entries_) (void)find_op(op);
  }

  /// The handler of p's op, or null.
  const Handler* find(const problem& p) const {
    for (const auto& [op, handler] : entries_)
      if (op == p.op()) return &handler;
    return nullptr;
  }

  /// The handler of p's op; an opval::error when there is none (supports() said no).
  const Handler& at(const problem& p) const {
    if (const Handler* h = find(p)) return *h;
    throw error(fmt::format("{} backend: called for op {}, which it does not run", backend_, p.op()));
  }

  /// UNIMPLEMENTED, naming what the backend runs.
  support unimplemented(const problem& p) const {
    return support::unimplemented(
        fmt::format("{} backend: no {} kernel (it runs {})", backend_, p.op(), fmt::join(ops(), ", ")));
  }

  /// The ops with a handler, in registration order.
  std::vector<std::string> ops() const {
    std::vector<std::string> names;
    for (const auto& [op, handler] : entries_) names.push_back(op);
    return names;
  }

 private:
  std::string backend_;
  std::vector<std::pair<std::string, Handler>> entries_;
};

}  // namespace opval::detail
