#pragma once
// Summation in a chosen order with every addition rounded as a contract says. The sim backend
// uses the forward order; tests use the others as legitimately different kernels (a bound that
// only holds for one order is unsound). Shared by reduce and the normalization ops.
#include <cstdint>

namespace opval::ops::reduce {

/// The order in which a kernel adds n terms.
enum class sum_order : std::uint8_t {
  forward,   ///< ((t0 + t1) + t2) + ...: what a simple loop does
  reversed,  ///< from the last term to the first
  pairwise,  ///< recursive halving (numpy, tree reductions, split-K): error grows as log n
};

namespace detail {
template <class Term, class Round>
double pairwise_sum(std::int64_t lo, std::int64_t hi, const Term& term, const Round& round) {
  if (hi - lo == 1) return round(term(lo));
  const std::int64_t mid = lo + (hi - lo) / 2;
  return round(pairwise_sum(lo, mid, term, round) + pairwise_sum(mid, hi, term, round));
}
}  // namespace detail

/// Sum of term(i) for i in [0, n), each partial sum passed through round() (the contract's
/// accumulation rounding); 0 (the identity of +) for n == 0.
template <class Term, class Round>
double ordered_sum(std::int64_t n, sum_order order, const Term& term, const Round& round) {
  if (n <= 0) return 0.0;
  if (order == sum_order::pairwise) return detail::pairwise_sum(0, n, term, round);
  double s = round(term(order == sum_order::forward ? 0 : n - 1));
  for (std::int64_t k = 1; k < n; ++k) s = round(s + term(order == sum_order::forward ? k : n - 1 - k));
  return s;
}

}  // namespace opval::ops::reduce
