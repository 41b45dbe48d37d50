#pragma once
// matmul's fp64 reference GEMM, callable standalone (benchmarks, other ops' references).
// The implementation is shared with conv2d and lives in src/ops/common_gemm/.
#include "ops/common_gemm/blocked_gemm.hpp"

namespace opval::ops::matmul {

/// C = A * B in fp64 (see common_gemm::reference_gemm for the strided form).
using common_gemm::reference_gemm;

}  // namespace opval::ops::matmul
