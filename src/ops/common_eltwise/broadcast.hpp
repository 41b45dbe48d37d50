#pragma once
// numpy broadcasting of two shapes.
#include <cstdint>
#include <utility>

#include "opval/tensor.hpp"

namespace opval::ops::eltwise {

/// How two shapes broadcast: the output shape and, aligned with its dimensions, each input's
/// row-major strides into its own logical elements (0 along dimensions it is broadcast in).
struct broadcast_plan {
  dims out;
  dims stride_a, stride_b;
  /// The logical (row-major) element of a and of b that output element `linear` reads.
  std::pair<std::int64_t, std::int64_t> sources(std::int64_t linear) const;
};

/// numpy's rule: align trailing dimensions; each pair must be equal or contain a 1. Throws
/// opval::error naming shape_a and shape_b when they do not broadcast.
broadcast_plan plan_broadcast(const dims& a, const dims& b);

}  // namespace opval::ops::eltwise
