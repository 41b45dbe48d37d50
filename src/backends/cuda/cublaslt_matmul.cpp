// matmul on cuBLASLt: one cublasLtMatmul (strided batch) or one per batch element when a
// broadcast batch is not a single stride. cuBLASLt is column-major, so the row-major
// D = A.B is computed as D^T = B^T.A^T, each operand described by its own strides (a
// transposed or padded operand is an op and a leading dimension, never a copy).
// The epilogue D = act(alpha*A.B + beta*C + bias) is cuBLASLt's own
// (CUBLASLT_EPILOGUE_{BIAS,RELU,GELU}...); residual, silu, erf-gelu and quantization have no
// exact cuBLASLt form and are UNIMPLEMENTED with that reason.
#include <cublasLt.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_plan.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "opval/error.hpp"

namespace opval::cuda {

void* cuda_context::cublaslt() {
  if (!lt_) {
    cublasLtHandle_t h = nullptr;
    const cublasStatus_t s = cublasLtCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) throw error(std::string("cuBLASLt: cublasLtCreate failed: ") + cublasLtGetStatusString(s));
    lt_ = std::shared_ptr<void>(h, [](void* p) { cublasLtDestroy(static_cast<cublasLtHandle_t>(p)); });
  }
  return lt_.get();
}

namespace {

using ops::common_gemm::activation;
using ops::common_gemm::epilogue_spec;

// The workspace cuBLASLt may use (split-K and stream-K algorithms need one).
constexpr std::size_t lt_workspace_bytes = 32u << 20;

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw error(std::string("cuBLASLt: ") + what + " failed: " + cublasLtGetStatusString(s));
}

refusal unimplemented(const std::string& why) { return refusal{support::unimplemented("cuda backend: " + why)}; }

// The descriptors of one matmul, destroyed together.
struct lt_descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~lt_descriptors() {
    for (cublasLtMatrixLayout_t l : {a, b, c, d})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op) cublasLtMatmulDescDestroy(op);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
  }
};

std::optional<cudaDataType_t> cuda_type(dtype t) {
  switch (t) {
    case dtype::f64: return CUDA_R_64F;
    case dtype::f32: return CUDA_R_32F;
    case dtype::f16: return CUDA_R_16F;
    case dtype::bf16: return CUDA_R_16BF;
    default: return std::nullopt;
  }
}

// The compute and scale types of a contract.
struct gemm_types {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  const char* compute_name;
};

gemm_types types_of(const contract& c) {
  const bool f32_io = c.src == dtype::f32 && c.wei == dtype::f32 && c.acc == dtype::f32 && c.dst == dtype::f32;
  if (c.src == dtype::f64 && c.wei == dtype::f64 && c.acc == dtype::f64 && c.dst == dtype::f64)
    return {CUBLAS_COMPUTE_64F, CUDA_R_64F, "CUBLAS_COMPUTE_64F"};
  if (f32_io && c.math == dtype::f32) return {CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F"};
  if (f32_io && c.math == dtype::tf32) return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, "CUBLAS_COMPUTE_32F_FAST_TF32"};
  if (f32_io && c.math == dtype::bf16) return {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, "CUBLAS_COMPUTE_32F_FAST_16BF"};
  const bool half_in = (c.src == dtype::f16 || c.src == dtype::bf16) && c.wei == c.src && c.math == c.src;
  if (half_in && c.acc == dtype::f32 && (c.dst == c.src || c.dst == dtype::f32))
    return {CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F"};
  if (half_in && c.src == dtype::f16 && c.acc == dtype::f16 && c.dst == dtype::f16)
    return {CUBLAS_COMPUTE_16F, CUDA_R_16F, "CUBLAS_COMPUTE_16F"};
  throw unimplemented("contract " + c.types_string() +
                      " is not mapped onto cuBLASLt (mapped: f32, tf32, f32@bf16, f16/bf16 inputs with f32 "
                      "accumulation, f16:f16:f16, f64; fp8 and int8 not yet)");
}

// cuBLASLt's epilogue for e; refuses what cuBLASLt cannot compute exactly as the contract says.
cublasLtEpilogue_t epilogue_of(const problem& p, const epilogue_spec& e) {
  if (e.has_residual) throw unimplemented("residual=true: cuBLASLt epilogues have no addition after the activation");
  epilogue_spec quant = e;  // what is left once the features cuBLASLt has are removed
  quant.has_bias = false;
  quant.act = activation::none;
  if (const std::string f = ops::common_gemm::non_gemm_feature(p, quant); !f.empty())
    throw unimplemented("matmul with " + f + " is not mapped onto cuBLASLt yet");
  switch (e.act) {
    case activation::none: return e.has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case activation::relu: return e.has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case activation::gelu_tanh: return e.has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case activation::gelu:
      throw unimplemented("act=gelu (erf form): cuBLASLt's GELU epilogue is the tanh approximation (act=gelu_tanh)");
    case activation::silu: throw unimplemented("act=silu: cuBLASLt has no SiLU epilogue");
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

// A logical rows x cols matrix with element strides (rs, cs) as cuBLASLt sees it: a stored
// column-major matrix with leading dimension ld, used as is (N) or transposed (T).
struct blas_matrix {
  bool transposed = false;
  std::int64_t rows = 0, cols = 0, ld = 0;  ///< of the stored matrix
};

std::optional<blas_matrix> column_major(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  // A dimension of extent 1 has no meaningful stride, so either reading may apply.
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows))
    return blas_matrix{false, rows, cols, cols == 1 ? rows : cs};
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols))
    return blas_matrix{true, cols, rows, rows == 1 ? cols : rs};
  return std::nullopt;
}

// The transpose of the matrix part of v (the last two dims), as cuBLASLt sees it.
blas_matrix transposed_view(const operand_view& v, const char* name) {
  const std::size_t r = v.shape.size();
  const auto m = column_major(v.shape[r - 1], v.shape[r - 2], v.strides[r - 1], v.strides[r - 2]);
  if (!m) throw unimplemented(std::string("operand ") + name + "'s strides have no BLAS leading dimension");
  return *m;
}

std::vector<std::int64_t> batch_offsets(const dims& out_batch, const operand_view& v) {
  return ops::common_gemm::batch_offsets(out_batch, v.shape, v.strides);
}

// The single batch stride of offsets, if they are one (0 for a single batch element).
std::optional<std::int64_t> single_stride(const std::vector<std::int64_t>& offsets) {
  const std::int64_t stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (std::size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != offsets[0] + static_cast<std::int64_t>(i) * stride) return std::nullopt;
  return stride;
}

// The largest power of two <= 256 dividing every byte offset (cuBLASLt's pointer alignment).
std::uint32_t alignment_of(const std::vector<std::int64_t>& offsets, std::size_t element_size) {
  std::uint64_t g = 256;
  for (std::int64_t o : offsets) g = std::gcd(g, static_cast<std::uint64_t>(o) * element_size);
  return static_cast<std::uint32_t>(g & (~g + 1));
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, const blas_matrix& m, std::int32_t batch, std::int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check_lt(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(m.rows), static_cast<std::uint64_t>(m.cols), m.ld),
           "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    check_lt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), "batch count");
    check_lt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "batch stride");
  }
  return l;
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v, const char* what) {
  check_lt(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v), what);
}

// alpha and beta in the scale type, as bytes cuBLASLt reads through a host pointer.
struct scalars {
  alignas(8) unsigned char alpha[8]{}, beta[8]{};
};

scalars scalars_of(cudaDataType_t scale, double alpha, double beta) {
  scalars s;
  auto put = [&](unsigned char* dst, double v) {
    if (scale == CUDA_R_64F) {
      std::memcpy(dst, &v, sizeof v);
    } else if (scale == CUDA_R_32F) {
      const float f = static_cast<float>(v);
      std::memcpy(dst, &f, sizeof f);
    } else {
      const __half h = __double2half(v);
      std::memcpy(dst, &h, sizeof h);
    }
  };
  put(s.alpha, alpha);
  put(s.beta, beta);
  return s;
}

// "cublasLtMatmul algo 21 tile 18 stages 3 splitK 1 ..." from the algorithm's configuration.
std::string describe(const cublasLtMatmulAlgo_t& algo, const char* compute, std::size_t calls) {
  auto config = [&](cublasLtMatmulAlgoConfigAttributes_t attr) {
    std::int32_t v = -1;  // every attribute below is a 32-bit integer (the size must match)
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return std::string("?");
    return std::to_string(v);
  };
  std::string s = std::string("cublasLtMatmul ") + compute + " algo " + config(CUBLASLT_ALGO_CONFIG_ID) + " tile " +
                  config(CUBLASLT_ALGO_CONFIG_TILE_ID) + " stages " + config(CUBLASLT_ALGO_CONFIG_STAGES_ID) +
                  " splitK " + config(CUBLASLT_ALGO_CONFIG_SPLITK_NUM) + " reduction " +
                  config(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  if (calls > 1) s += " x" + std::to_string(calls) + " calls (broadcast batch)";
  return s;
}

}  // namespace

cuda_plan matmul_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                      cuda_context* ctx) {
  require_plain_rounding(p, "cuBLASLt");
  const gemm_types types = types_of(p.dt);
  const epilogue_spec e = ops::common_gemm::read_epilogue(p, true);
  const cublasLtEpilogue_t epilogue = epilogue_of(p, e);
  const operand_view &a = in[0], &b = in[1], &d = out[0];
  const bool has_c = e.beta != 0.0;
  const operand_view& c = has_c ? in[2] : d;
  const std::size_t bias_index = has_c ? 3 : 2;

  // D^T (n x m) = B^T (n x k) . A^T (k x m): cuBLASLt's A is our B and its B our A.
  const blas_matrix lt_a = transposed_view(b, "B"), lt_b = transposed_view(a, "A");
  const blas_matrix lt_d = transposed_view(d, "dst"), lt_c = transposed_view(c, "C");
  if (lt_d.transposed || lt_c.transposed) throw unimplemented("dst and C must have contiguous rows");
  const dims out_batch(d.shape.begin(), d.shape.end() - 2);
  const auto off_a = batch_offsets(out_batch, a), off_b = batch_offsets(out_batch, b);
  const auto off_c = batch_offsets(out_batch, c), off_d = batch_offsets(out_batch, d);
  const auto sa = single_stride(off_a), sb = single_stride(off_b), sc = single_stride(off_c), sd = single_stride(off_d);
  const bool strided = sa && sb && sc && sd;
  const std::int32_t batch = strided ? static_cast<std::int32_t>(off_d.size()) : 1;
  const std::size_t calls = strided ? 1 : off_d.size();
  cuda_context& cx = require_device(ctx);

  auto desc = std::make_shared<lt_descriptors>();
  check_lt(cublasLtMatmulDescCreate(&desc->op, types.compute, types.scale), "cublasLtMatmulDescCreate");
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSA, lt_a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, "TRANSA");
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSB, lt_b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, "TRANSB");
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE");
  desc->a = make_layout(*cuda_type(b.type), lt_a, batch, sb.value_or(0));
  desc->b = make_layout(*cuda_type(a.type), lt_b, batch, sa.value_or(0));
  desc->c = make_layout(*cuda_type(c.type), lt_c, batch, sc.value_or(0));
  desc->d = make_layout(*cuda_type(d.type), lt_d, batch, sd.value_or(0));

  check_lt(cublasLtMatmulPreferenceCreate(&desc->pref), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t ws = lt_workspace_bytes;
  check_lt(cublasLtMatmulPreferenceSetAttribute(desc->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
           "workspace preference");
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(off_b, traits(b.type).size_bytes)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(off_a, traits(a.type).size_bytes)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(off_c, traits(c.type).size_bytes)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(off_d, traits(d.type).size_bytes)}};
  for (const auto& [attr, bytes] : aligns)
    check_lt(cublasLtMatmulPreferenceSetAttribute(desc->pref, attr, &bytes, sizeof bytes), "alignment preference");

  auto lt = static_cast<cublasLtHandle_t>(cx.cublaslt());
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(lt, desc->op, desc->a, desc->b, desc->c, desc->d, desc->pref, 1, &result, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    throw refusal{support::skipped(std::string("cuBLASLt has no algorithm for this case (") + types.compute_name +
                                   "): " + cublasLtGetStatusString(hs))};

  cuda_plan plan;
  plan.implementation = describe(result.algo, types.compute_name, calls);
  if (p.dt.math == dtype::tf32 && tf32_disabled_by_environment())
    plan.actual_contract = "f32:f32:f32 (NVIDIA_TF32_OVERRIDE=0 disables TF32)";
  plan.workspace_bytes = lt_workspace_bytes;
  const scalars sc_ab = scalars_of(types.scale, e.alpha, e.beta);
  const std::size_t ea = traits(a.type).size_bytes, eb = traits(b.type).size_bytes;
  const std::size_t ec = traits(c.type).size_bytes, ed = traits(d.type).size_bytes;
  const bool has_bias = e.has_bias;
  plan.launch = [=](cuda_context& ctx, const device_args& args) {
    if (has_bias) set_desc(desc->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, args.in[bias_index], "BIAS_POINTER");
    const auto* pa = static_cast<const std::byte*>(args.in[0]);
    const auto* pb = static_cast<const std::byte*>(args.in[1]);
    auto* pd = static_cast<std::byte*>(args.out[0]);
    const auto* pc = has_c ? static_cast<const std::byte*>(args.in[2]) : pd;
    for (std::size_t i = 0; i < calls; ++i)
      check_lt(cublasLtMatmul(static_cast<cublasLtHandle_t>(ctx.cublaslt()), desc->op, sc_ab.alpha, pb + off_b[i] * eb,
                              desc->a, pa + off_a[i] * ea, desc->b, sc_ab.beta, pc + off_c[i] * ec, desc->c,
                              pd + off_d[i] * ed, desc->d, &result.algo, ctx.workspace(), ctx.workspace_bytes(),
                              stream()),
               "cublasLtMatmul");
  };
  return plan;
}

}  // namespace opval::cuda
