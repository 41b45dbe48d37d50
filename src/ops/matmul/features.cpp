// matmul: the feature table of its generated suites (docs/COVERAGE.md).
#include <string>

#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"

namespace opval::ops::matmul {

feature_table matmul_spec::features() const {
  const std::vector<suite_feature> shapes = {{"sizes",
      {"m=1 n=1 k=1", "m=7 n=13 k=31", "m=13 n=7 k=67", "m=31 n=67 k=13", "m=1 n=257 k=3", "m=67 n=1 k=40",
      "m=63 n=65 k=127", "m=0 n=5 k=7", "m=4 n=0 k=7", "m=4 n=5 k=0", "m=64 n=64 k=1000"}},
      {"transpose", {"ta=1", "tb=1", "ta=1 tb=1"}},
      {"leading dimensions", {"lda=70 ldb=40 ldc=37"}},
      {"batch", {"batch_a=2x1 batch_b=3", "batch_a=4 batch_b=1", "batch_b=2x3", "batch_a=0x2 batch_b=1x2"}},
      // OCP MX (block=32, f8_e8m0 scales) and NVFP4 (block=16, f8_e4m3 scales) on the fp8 and the
      // block-scaled contracts; the latter get MX where no value sets the block. Each value sets
      // a k its block divides, so that it is never paired with a size it cannot run.
      {"block scaling", {"block=32 k=64", "block=16 block_scale=f8_e4m3 k=64"}}};
  feature_table t = common_gemm::gemm_feature_table("m=17 n=33 k=65", shapes, /*with_beta=*/true,
                                                    [](const problem& p) { return p.get_int("k"); });
  for (const char* c : {"f6_e2m3:f32:f32", "f6_e3m2:f32:bf16", "f4_e2m1:f32:f32", "f4_e2m1:f32:bf16"})
    t.contracts.push_back(parse_contract_types(c).types_string());
  // A block-scaled case needs its block, and k a multiple of it (the base's k rounded up).
  t.complete = [quant = t.complete](const problem& p) {
    std::string more = quant(p);
    std::int64_t block = p.get_int("block");
    if (block == 0 && !common_gemm::requires_block(p.dt)) return more;
    if (block == 0) block = 32;
    const std::int64_t k = p.get_int("k");
    return more + " block=" + std::to_string(block) + " k=" + std::to_string((k + block - 1) / block * block);
  };
  return t;
}

}  // namespace opval::ops::matmul
