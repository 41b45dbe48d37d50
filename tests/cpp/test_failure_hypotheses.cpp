// Explaining a failure by a known mechanism (op_spec::hypotheses, core/failure_hypotheses):
// a kernel written independently here that sums u8*s8 pairs in saturating int16 (as x86 does
// without VNNI) fails with that explanation; a kernel wrong in another way fails without it;
// a correct one passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common_gemm/gemm_core.hpp"
#include "opval/backend.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"

namespace {

using opval::state;

// A plain row-major matmul (no batch, no epilogue) with i32 accumulation; `pair_sum` decides
// how each pair of consecutive products enters the sum.
template <class PairSum>
class int8_matmul final : public opval::backend {
 public:
  int8_matmul(std::string name, PairSum pair_sum) : name_(std::move(name)), pair_sum_(pair_sum) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  opval::support supports(const opval::problem& p) const override { return opval::support::yes(); }
  opval::execution_info execute(const opval::problem& p, std::span<const opval::tensor> in,
                                std::span<opval::tensor> out) override {
    const std::int64_t m = p.get_int("m"), n = p.get_int("n"), k = p.get_int("k"), zp_a = p.get_int("zp_a");
    const std::vector<double> a = in[0].to_vector(), b = in[1].to_vector();
    std::vector<double> c(m * n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t sum = 0, b_col = 0;
        for (std::int64_t p2 = 0; p2 < k; p2 += 2) {
          const std::int64_t x = static_cast<std::int64_t>(a[i * k + p2]) * static_cast<std::int64_t>(b[p2 * n + j]);
          const std::int64_t y = p2 + 1 < k ? static_cast<std::int64_t>(a[i * k + p2 + 1]) *
                                                  static_cast<std::int64_t>(b[(p2 + 1) * n + j])
                                            : 0;
          sum += pair_sum_(x + y);
        }
        for (std::int64_t p2 = 0; p2 < k; ++p2) b_col += static_cast<std::int64_t>(b[p2 * n + j]);
        c[i * n + j] = static_cast<double>(sum - zp_a * b_col);  // zero point compensated exactly
      }
    out[0].assign(c);
    return {name_, ""};
  }

 private:
  std::string name_;
  PairSum pair_sum_;
};

opval::case_result run(opval::backend& b, const char* line) {
  return opval::run_case(opval::parse_problem(line), b, {});
}

// Full-range u8 A (zero point 128) and s8 B: pair sums reach +-64770, far past int16.
const char* full_range = "matmul m=9 n=17 k=34 zp_a=128 dt=u8xi8:i32:i32";

TEST(failure_hypotheses, a_kernel_summing_pairs_in_saturating_int16_is_explained) {
  int8_matmul saturating("saturating_pairs", [](std::int64_t s) { return std::clamp<std::int64_t>(s, -32768, 32767); });
  const opval::case_result r = run(saturating, full_range);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_NE(r.v.reason.find("as if computed with the u8*s8 products summed in pairs in int16 with saturation"),
            std::string::npos)
      << r.v.reason;
}

TEST(failure_hypotheses, a_kernel_wrong_in_another_way_is_not_explained_by_it) {
  // Wrapping int16 pair sums (no saturation): wrong, but not as the hypothesis says.
  int8_matmul wrapping("wrapping_pairs", [](std::int64_t s) { return static_cast<std::int64_t>(static_cast<std::int16_t>(s)); });
  const opval::case_result r = run(wrapping, full_range);
  ASSERT_EQ(r.v.st, state::failed) << r.v.reason;
  EXPECT_EQ(r.v.reason.find("as if computed"), std::string::npos) << r.v.reason;
}

TEST(failure_hypotheses, an_exact_kernel_passes) {
  int8_matmul exact("exact", [](std::int64_t s) { return s; });
  const opval::case_result r = run(exact, full_range);
  EXPECT_EQ(r.v.st, state::passed) << r.v.reason;
}

TEST(failure_hypotheses, saturating_pairs_clip_each_pair_and_compensate_zero_points_exactly) {
  // A = [255 255 1], B = [127 127 -3]^T: the pair 255*127*2 = 64770 clips to 32767, the tail adds -3.
  std::vector<double> acc(1);
  opval::ops::common_gemm::dot_int_saturating_pairs(1, 1, 3, std::vector<double>{255, 255, 1},
                                                    std::vector<double>{127, 127, -3}, false, 0, 0, acc);
  EXPECT_EQ(acc[0], 32767 - 3);
  // With zp_a = 128 the exact sum is 127*127*2 - 3*(1-128); only the raw pair is clipped.
  opval::ops::common_gemm::dot_int_saturating_pairs(1, 1, 3, std::vector<double>{255, 255, 1},
                                                    std::vector<double>{127, 127, -3}, false, 128, 0, acc);
  EXPECT_EQ(acc[0], (32767 - 3) - 128 * (127 + 127 - 3));
  // A signed A is shifted to u8 (+128) first: -128 -> 0, so nothing saturates.
  opval::ops::common_gemm::dot_int_saturating_pairs(1, 1, 2, std::vector<double>{-128, -128},
                                                    std::vector<double>{127, 127}, true, 0, 0, acc);
  EXPECT_EQ(acc[0], -128 * 127 * 2);
}

}  // namespace
