#pragma once
// A cheap confidence interval of a median, from two order statistics: what the sampler's
// stopping rule evaluates as samples arrive (docs/BENCHMARKING.md). It costs O(n), where the
// block bootstrap (bootstrap.hpp) costs O(n) per resample; the bootstrap stays the reported
// interval and confirms the stop.
#include <span>

#include "bench/bootstrap.hpp"

namespace opval {

/// The distribution-free interval of the median of `samples`: the order statistics at ranks
/// n/2 -+ z sqrt(n tau) / 2, z the normal quantile of `confidence`. tau = 1 + 2 (r_1 + ... + r_K)
/// widens it for dependence between samples, r_k being the lag-k autocorrelation of the samples'
/// sides of the median, summed up to the first lag that is not significant (at most 64): the
/// sample median's variance grows by that factor. Throws opval::error with fewer than 2
/// samples or a confidence outside (0, 1).
interval median_ci_by_ranks(std::span<const double> samples, double confidence = 0.95);

/// The standard normal quantile of p in (0, 1).
double normal_quantile(double p);

}  // namespace opval
