// A CUDA kernel validated through the plugin ABI: row softmax in f32 (contract f32:f32:f32)
// over any axis of a contiguous tensor, one thread block per row, two passes with warp-shuffle
// reductions (max, then the sum of exp(x - max)), then exp(x - max) / sum. It asks for device
// tensors (opval_plugin_device) and enqueues its kernel on opval's stream.
//
// Semantics as opval's softmax: a row holding NaN or +Inf, or only -Inf, comes out all NaN
// (0/0 in PyTorch). expf (2 ULP) and IEEE division (nvcc's default -prec-div=true) are what
// the f32 contract's default accuracy claims; build without --use_fast_math.
//
// PLANT_BUG=1 builds cuda_softmax_buggy: the warp reduction of the sum stops one shuffle step
// early (offset > 1 instead of offset > 0), so each warp adds only half of its lanes.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "opval/plugin.h"

namespace {

constexpr int block_threads = 256;
#if PLANT_BUG
constexpr int last_sum_offset = 2;
#else
constexpr int last_sum_offset = 1;
#endif

__device__ float nan_max(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : fmaxf(a, b); }

__device__ float warp_max(float v) {
  for (int off = 16; off >= 1; off >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

__device__ float warp_sum(float v) {
  for (int off = 16; off >= last_sum_offset; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Reduces v over the block with the warp reduction `warp_op` (`identity` pads the warps that
// do not exist); every thread gets the result.
template <float (*warp_op)(float)>
__device__ float block_reduce(float v, float identity, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_op(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const float w = warp_op(lane < warps ? scratch[lane] : identity);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  const float r = scratch[32];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// Row r = (o, i) of a contiguous tensor viewed as [outer, len, inner]: x[(o*len + j)*inner + i].
__global__ void softmax_rows(const float* x, float* y, std::int64_t len, std::int64_t inner) {
  __shared__ float scratch[33];
  const std::int64_t row = blockIdx.x, o = row / inner, i = row % inner;
  const float* xr = x + o * len * inner + i;
  float* yr = y + o * len * inner + i;
  float m = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    const float v = xr[j * inner];
    m = v == INFINITY ? NAN : nan_max(m, v);
  }
  m = block_reduce<warp_max>(m, -INFINITY, scratch);
  if (isnan(m) || m == -INFINITY) {  // a NaN / +Inf row, or an all -Inf one
    for (std::int64_t j = threadIdx.x; j < len; j += blockDim.x) yr[j * inner] = NAN;
    return;
  }
  float s = 0.0f;
  for (std::int64_t j = threadIdx.x; j < len; j += blockDim.x) s += expf(xr[j * inner] - m);
  s = block_reduce<warp_sum>(s, 0.0f, scratch);
  for (std::int64_t j = threadIdx.x; j < len; j += blockDim.x) yr[j * inner] = expf(xr[j * inner] - m) / s;
}

const char* attr(const opval_problem* p, const char* name) {
  for (size_t i = 0; i < p->n_attrs; ++i)
    if (std::strcmp(p->attrs[i].name, name) == 0) return p->attrs[i].value;
  return nullptr;
}

bool contiguous(const opval_tensor& t) {
  std::int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

}  // namespace

OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }

// Minor 1: p->contract carries the options too, so f32 below means f32 with the default ones.
OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_minor_version(void) { return OPVAL_PLUGIN_ABI_MINOR_VERSION; }

OPVAL_PLUGIN_EXPORT const char* opval_plugin_name(void) {
#if PLANT_BUG
  return "cuda_softmax_buggy";
#else
  return "cuda_softmax";
#endif
}

OPVAL_PLUGIN_EXPORT int32_t opval_plugin_device(void) { return OPVAL_DEVICE_CUDA; }

OPVAL_PLUGIN_EXPORT int opval_plugin_supports(const opval_problem* p, char* reason, size_t reason_size) {
  if (std::strcmp(p->op, "softmax") != 0) {
    std::snprintf(reason, reason_size, "cuda_softmax implements softmax only, not %s", p->op);
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  if (std::strcmp(p->contract, "f32:f32:f32") != 0) {
    std::snprintf(reason, reason_size, "cuda_softmax implements contract f32:f32:f32 only, not %s", p->contract);
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  return OPVAL_PLUGIN_SUPPORTED;
}

OPVAL_PLUGIN_EXPORT int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in,
                                             opval_tensor* out, size_t n_out, void* stream, char* error,
                                             size_t error_size) {
  if (n_in != 1 || n_out != 1 || in[0].device != OPVAL_DEVICE_CUDA || out[0].device != OPVAL_DEVICE_CUDA) {
    std::snprintf(error, error_size, "cuda_softmax expects one input and one output in CUDA device memory");
    return 1;
  }
  if (!contiguous(in[0]) || !contiguous(out[0])) {
    std::snprintf(error, error_size, "cuda_softmax expects contiguous tensors");
    return 1;
  }
  const char* axis_text = attr(p, "axis");
  const int rank = in[0].rank;
  int axis = axis_text ? std::atoi(axis_text) : -1;
  if (axis < 0) axis += rank;
  std::int64_t outer = 1, len = 1, inner = 1;
  for (int d = 0; d < rank; ++d) (d < axis ? outer : d == axis ? len : inner) *= in[0].shape[d];
  const std::int64_t rows = outer * inner;
  if (rows > 0 && len > 0)
    softmax_rows<<<static_cast<unsigned>(rows), block_threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), len, inner);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::snprintf(error, error_size, "softmax_rows launch failed: %s", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
