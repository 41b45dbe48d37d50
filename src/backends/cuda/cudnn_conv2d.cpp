// conv2d on cuDNN 9's convolution API (cudnnConvolutionForward, and
// cudnnConvolutionBiasActivationForward for bias / relu), NCHW or NHWC described by the
// tensors' own strides. The algorithm is cuDNN's heuristic choice (get_v7) among the
// dot-product algorithms (implicit GEMM, precomputed implicit GEMM, GEMM, direct): FFT and
// Winograd transform the operands, so their error is not that of the contract's K-term dot
// products and judging them by its bound would be meaningless.
#include "backends/cuda/cuda_plan.hpp"
#include "opval/error.hpp"

#ifndef OPVAL_HAVE_CUDNN

namespace opval::cuda {

void* cuda_context::cudnn() { throw error("cuda backend built without cuDNN"); }

cuda_plan conv2d_plan(const problem&, const std::vector<operand_view>&, const std::vector<operand_view>&,
                      cuda_context*) {
  throw refusal{support::unimplemented("cuda backend built without cuDNN (OPVAL_CUDNN=OFF or cuDNN 9 not found)")};
}

}  // namespace opval::cuda

#else

#include <cudnn.h>

#include <array>
#include <memory>
#include <string>

#include "backends/cuda/cuda_runtime.hpp"
#include "ops/common_gemm/epilogue.hpp"
#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"

// cuDNN 9 marks its legacy convolution API deprecated (in favour of the graph API); it is
// still the documented, supported path for a single convolution.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opval::cuda {

void* cuda_context::cudnn() {
  if (!dnn_) {
    cudnnHandle_t h = nullptr;
    const cudnnStatus_t s = cudnnCreate(&h);
    if (s != CUDNN_STATUS_SUCCESS) throw error(std::string("cuDNN: cudnnCreate failed: ") + cudnnGetErrorString(s));
    dnn_ = std::shared_ptr<void>(h, [](void* p) { cudnnDestroy(static_cast<cudnnHandle_t>(p)); });
    cudnnSetStream(h, stream());
  }
  return dnn_.get();
}

namespace {

using ops::common_gemm::activation;
using ops::common_gemm::epilogue_spec;

// Algorithms whose workspace exceeds this are passed over.
constexpr std::size_t max_workspace_bytes = std::size_t{1} << 30;

void check_dnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw error(std::string("cuDNN: ") + what + " failed: " + cudnnGetErrorString(s));
}

refusal unimplemented(const std::string& why) { return refusal{support::unimplemented("cuda backend: " + why)}; }

// The descriptors of one convolution, destroyed together.
struct dnn_descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  ~dnn_descriptors() {
    for (cudnnTensorDescriptor_t t : {x, y, bias})
      if (t) cudnnDestroyTensorDescriptor(t);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (act) cudnnDestroyActivationDescriptor(act);
  }
};

// cuDNN's data, compute and math types of a contract.
struct conv_types {
  cudnnDataType_t data, compute;
  cudnnMathType_t math;
};

conv_types types_of(const contract& c) {
  const bool same = c.src == c.wei && c.src == c.dst;
  if (same && c.src == dtype::f32 && c.acc == dtype::f32) {
    if (c.math == dtype::f32) return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH};
    if (c.math == dtype::tf32) return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
  }
  if (same && c.math == c.src && c.acc == dtype::f32 && c.src == dtype::f16)
    return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH};
  if (same && c.math == c.src && c.acc == dtype::f32 && c.src == dtype::bf16)
    return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH};
  if (same && c.src == dtype::f64 && c.acc == dtype::f64) return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH};
  throw unimplemented("contract " + c.types_string() +
                      " is not mapped onto cuDNN (mapped: f32, tf32, f16:f32:f16, bf16:f32:bf16, f64)");
}

// Whether the fused bias/activation call is needed; refuses what cuDNN cannot compute exactly.
bool fused_epilogue(const problem& p, const epilogue_spec& e, const contract& c) {
  if (e.has_residual) throw unimplemented("residual=true: cuDNN's fused call adds z before the activation, not after");
  epilogue_spec quant = e;
  quant.has_bias = false;
  quant.act = activation::none;
  if (const std::string f = ops::common_gemm::non_gemm_feature(p, quant); !f.empty())
    throw unimplemented("conv2d with " + f + " is not mapped onto cuDNN yet");
  if (e.act != activation::none && e.act != activation::relu)
    throw unimplemented("act=" + p.get_choice("act") + ": cuDNN's fused convolution has relu only");
  if (e.act == activation::relu && !e.has_bias) throw unimplemented("act=relu without bias=1 (cuDNN fuses relu with a bias)");
  const bool fused = e.has_bias;
  if (fused && c.src != dtype::f32 && c.src != dtype::f64)
    throw unimplemented("bias with " + c.types_string() + " is not mapped onto cuDNN yet (f32 and f64 only)");
  return fused;
}

// The filter format of packed OIHW (NCHW) or OHWI (NHWC) weights.
cudnnTensorFormat_t filter_format(const operand_view& w) {
  const std::int64_t i = w.shape[1], h = w.shape[2], x = w.shape[3];
  if (w.strides == dims{i * h * x, h * x, x, 1}) return CUDNN_TENSOR_NCHW;
  if (w.strides == dims{h * x * i, 1, x * i, i}) return CUDNN_TENSOR_NHWC;
  throw unimplemented("weights must be packed OIHW or OHWI for cuDNN");
}

void set_tensor(cudnnTensorDescriptor_t t, cudnnDataType_t type, const operand_view& v) {
  auto i = [](std::int64_t x) { return static_cast<int>(x); };
  check_dnn(cudnnSetTensor4dDescriptorEx(t, type, i(v.shape[0]), i(v.shape[1]), i(v.shape[2]), i(v.shape[3]),
                                         i(v.strides[0]), i(v.strides[1]), i(v.strides[2]), i(v.strides[3])),
            "cudnnSetTensor4dDescriptorEx");
}

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    default: return "other";
  }
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
  }
  return "?";
}

bool dot_product_algo(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

// cuDNN's first-ranked usable algorithm: a dot-product one, within the workspace limit, in
// the contract's math (no tensor-op kernel for an f32 contract); precomputed implicit GEMM
// only when the fused call has no activation (cuDNN's rule for CUDNN_ACTIVATION_IDENTITY).
cudnnConvolutionFwdAlgoPerf_t choose_algo(cudnnHandle_t h, const dnn_descriptors& d, const conv_types& t,
                                          bool identity_fused) {
  std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
  int returned = 0;
  check_dnn(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, static_cast<int>(perf.size()), &returned,
                                                   perf.data()),
            "cudnnGetConvolutionForwardAlgorithm_v7");
  for (int i = 0; i < returned; ++i) {
    const auto& pf = perf[static_cast<std::size_t>(i)];
    if (pf.status != CUDNN_STATUS_SUCCESS || !dot_product_algo(pf.algo) || pf.memory > max_workspace_bytes) continue;
    // DEFAULT_MATH permits TF32 on Ampere and later: an f32 contract takes FMA kernels only.
    if (t.math == CUDNN_FMA_MATH && pf.mathType != CUDNN_FMA_MATH) continue;
    if (identity_fused && pf.algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) continue;
    return pf;
  }
  throw refusal{support::skipped("cuDNN offers no dot-product algorithm (implicit GEMM, GEMM, direct) for this case among its " +
                                 std::to_string(returned) + " ranked algorithms")};
}

}  // namespace

cuda_plan conv2d_plan(const problem& p, const std::vector<operand_view>& in, const std::vector<operand_view>& out,
                      cuda_context* ctx) {
  require_plain_rounding(p, "cuDNN");
  const conv_types types = types_of(p.dt);
  const ops::conv2d::conv_shape s = ops::conv2d::read_shape(p);
  const epilogue_spec e = ops::common_gemm::read_epilogue(p, false);
  const bool fused = fused_epilogue(p, e, p.dt);
  if (s.pt != s.pb || s.pl != s.pr)
    throw unimplemented("asymmetric padding (pt=" + std::to_string(s.pt) + " pb=" + std::to_string(s.pb) +
                        " pl=" + std::to_string(s.pl) + " pr=" + std::to_string(s.pr) + "): cuDNN pads symmetrically");
  const cudnnTensorFormat_t wformat = filter_format(in[1]);
  cuda_context& cx = require_device(ctx);

  auto d = std::make_shared<dnn_descriptors>();
  check_dnn(cudnnCreateTensorDescriptor(&d->x), "cudnnCreateTensorDescriptor");
  check_dnn(cudnnCreateTensorDescriptor(&d->y), "cudnnCreateTensorDescriptor");
  check_dnn(cudnnCreateFilterDescriptor(&d->w), "cudnnCreateFilterDescriptor");
  check_dnn(cudnnCreateConvolutionDescriptor(&d->conv), "cudnnCreateConvolutionDescriptor");
  set_tensor(d->x, types.data, in[0]);
  set_tensor(d->y, types.data, out[0]);
  auto i = [](std::int64_t x) { return static_cast<int>(x); };
  check_dnn(cudnnSetFilter4dDescriptor(d->w, types.data, wformat, i(s.oc), i(s.icg()), i(s.kh), i(s.kw)),
            "cudnnSetFilter4dDescriptor");
  check_dnn(cudnnSetConvolution2dDescriptor(d->conv, i(s.pt), i(s.pl), i(s.sh), i(s.sw), i(s.dh), i(s.dw),
                                            CUDNN_CROSS_CORRELATION, types.compute),
            "cudnnSetConvolution2dDescriptor");
  check_dnn(cudnnSetConvolutionGroupCount(d->conv, i(s.g)), "cudnnSetConvolutionGroupCount");
  check_dnn(cudnnSetConvolutionMathType(d->conv, types.math), "cudnnSetConvolutionMathType");
  int n = 0, c = 0, h = 0, w = 0;
  check_dnn(cudnnGetConvolution2dForwardOutputDim(d->conv, d->x, d->w, &n, &c, &h, &w), "cudnnGetConvolution2dForwardOutputDim");
  if (n != s.mb || c != s.oc || h != s.oh || w != s.ow)
    throw error("cuDNN computes a " + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
                std::to_string(w) + " output for this conv2d, opval " + to_string(out[0].shape));
  if (fused) {
    check_dnn(cudnnCreateTensorDescriptor(&d->bias), "cudnnCreateTensorDescriptor");
    check_dnn(cudnnSetTensor4dDescriptor(d->bias, CUDNN_TENSOR_NCHW, types.data, 1, i(s.oc), 1, 1), "bias descriptor");
    check_dnn(cudnnCreateActivationDescriptor(&d->act), "cudnnCreateActivationDescriptor");
    // NaN propagates through relu, as the contract (and torch.relu) says.
    check_dnn(cudnnSetActivationDescriptor(d->act, e.act == activation::relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                           CUDNN_PROPAGATE_NAN, 0.0),
              "cudnnSetActivationDescriptor");
  }
  auto handle = static_cast<cudnnHandle_t>(cx.cudnn());
  const cudnnConvolutionFwdAlgoPerf_t pf = choose_algo(handle, *d, types, fused && e.act == activation::none);
  check_dnn(cudnnSetConvolutionMathType(d->conv, pf.mathType), "cudnnSetConvolutionMathType");

  cuda_plan plan;
  plan.implementation = std::string(fused ? "cudnnConvolutionBiasActivationForward" : "cudnnConvolutionForward") +
                        " algo " + algo_name(pf.algo) + " math " + math_name(pf.mathType) + " workspace " +
                        std::to_string(pf.memory);
  if (p.dt.math == dtype::tf32 && (pf.mathType == CUDNN_FMA_MATH || tf32_disabled_by_environment()))
    plan.actual_contract = "f32:f32:f32 (cuDNN chose an FMA kernel or NVIDIA_TF32_OVERRIDE=0)";
  plan.workspace_bytes = pf.memory;
  // Scaling factors are double for double data, float otherwise (cuDNN's rule).
  const bool dbl = types.data == CUDNN_DATA_DOUBLE;
  const double alpha_d = e.alpha, zero_d = 0.0;
  const float alpha_f = static_cast<float>(e.alpha), zero_f = 0.0f;
  const cudnnConvolutionFwdAlgo_t algo = pf.algo;
  plan.launch = [=](cuda_context& ctx, const device_args& a) {
    const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
    auto h = static_cast<cudnnHandle_t>(ctx.cudnn());
    if (fused)
      check_dnn(cudnnConvolutionBiasActivationForward(h, alpha, d->x, a.in[0], d->w, a.in[1], d->conv, algo,
                                                      ctx.workspace(), ctx.workspace_bytes(), zero, d->y, a.out[0],
                                                      d->bias, a.in[2], d->act, d->y, a.out[0]),
                "cudnnConvolutionBiasActivationForward");
    else
      check_dnn(cudnnConvolutionForward(h, alpha, d->x, a.in[0], d->w, a.in[1], d->conv, algo, ctx.workspace(),
                                        ctx.workspace_bytes(), zero, d->y, a.out[0]),
                "cudnnConvolutionForward");
  };
  return plan;
}

}  // namespace opval::cuda

#endif  // OPVAL_HAVE_CUDNN
