#pragma once
// Internals of the reduce op that tests use to run legitimately different kernels.
#include <span>

#include "opval/problem.hpp"
#include "opval/tensor.hpp"
#include "ops/reduce/summation.hpp"

namespace opval::ops::reduce {

/// max with the semantics reduce promises: NaN wins; +0 is larger than -0 (as IEEE 754-2019
/// maximum); the identity (empty reduction) is -inf.
double max_of(double a, double b);

/// The sim backend's kernel with a chosen summation order (forward is what simulate() uses).
void reduce_simulate(const problem& p, std::span<const tensor> in, std::span<tensor> out, sum_order order);

}  // namespace opval::ops::reduce
