// matmul: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"

namespace opval::ops::matmul {

feature_table matmul_spec::features() const {
  const std::vector<suite_feature> shapes = {{"sizes",
      {"m=1 n=1 k=1", "m=7 n=13 k=31", "m=13 n=7 k=67", "m=31 n=67 k=13", "m=1 n=257 k=3", "m=67 n=1 k=40",
      "m=63 n=65 k=127", "m=0 n=5 k=7", "m=4 n=0 k=7", "m=4 n=5 k=0", "m=64 n=64 k=1000"}},
      {"transpose", {"ta=1", "tb=1", "ta=1 tb=1"}},
      {"leading dimensions", {"lda=70 ldb=40 ldc=37"}},
      {"batch", {"batch_a=2x1 batch_b=3", "batch_a=4 batch_b=1", "batch_b=2x3", "batch_a=0x2 batch_b=1x2"}}};
  return common_gemm::gemm_feature_table("m=17 n=33 k=65", shapes, /*with_beta=*/true,
                                         [](const problem& p) { return p.get_int("k"); });
}

}  // namespace opval::ops::matmul
