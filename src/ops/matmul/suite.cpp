// matmul's suites: every contract at sizes where GEMM kernels break (1, primes, non-multiples
// of the vector and tile widths, non-square), every layout and epilogue attribute, and fills.
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/gemm_core.hpp"
#include "ops/matmul/matmul.hpp"

namespace opval::ops::matmul {
namespace {

struct mnk {
  int m, n, k;
};

std::string shape(const mnk& s) {
  return "matmul m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

std::string line(const mnk& s, const std::string& extra, const std::string& dt, const std::string& fill = "") {
  const contract c = parse_contract_types(dt);
  return shape(s) + extra + common_gemm::suite_quant_attrs(c, s.k) + " dt=" + dt + (fill.empty() ? "" : " fill=" + fill);
}

bool fp8_or_int(const contract& c) { return !is_float(c.src) || traits(c.src).size_bytes == 1; }

}  // namespace

std::vector<std::string> matmul_suite(std::string_view tag) {
  std::vector<std::string> out;
  const auto contracts = common_gemm::gemm_contracts();
  if (tag == "smoke") {
    for (const auto& dt : contracts) {
      out.push_back(line({7, 5, 9}, "", dt));
      out.push_back(line({4, 17, 13}, " alpha=0.5 bias=1 act=relu", dt));
    }
    out.push_back(line({5, 6, 7}, " batch_a=2x1 batch_b=3 ta=1 tb=1 beta=0.5 residual=1 act=gelu", "f32:f32:f32"));
    return out;
  }
  if (tag != "regression") return out;
  const mnk shapes[] = {{1, 1, 1},  {7, 13, 31}, {13, 7, 67},  {17, 33, 65}, {31, 67, 13},
                        {1, 257, 3}, {67, 1, 40}, {33, 17, 129}, {63, 65, 127}};
  const mnk f{17, 33, 65};
  const std::string features[] = {
      " ta=1 lda=40",
      " tb=1 ldb=70",
      " ta=1 tb=1",
      " lda=70 ldb=40 ldc=37",
      " alpha=0.5 beta=0.25 ldc=40",
      " alpha=-1.5 beta=1",
      " bias=1",
      " bias=1 act=relu",
      " bias=1 act=gelu",
      " act=gelu_tanh",
      " bias=1 act=silu",
      " residual=1",
      " beta=0.5 bias=1 act=gelu residual=1",
  };
  for (const auto& dt : contracts) {
    const contract c = parse_contract_types(dt);
    for (const auto& s : shapes) out.push_back(line(s, "", dt));
    for (const auto& x : features) out.push_back(line(f, x, dt));
    out.push_back(line({7, 13, 31}, " batch_a=2x1 batch_b=3", dt));
    out.push_back(line({5, 9, 16}, " batch_a=4 batch_b=1 bias=1", dt));
    out.push_back(line({6, 10, 12}, " batch_b=2x3 tb=1 ldb=20 beta=1 ldc=11", dt));
    if (fp8_or_int(c)) {
      out.push_back(line(f, " scale_b_mode=per_channel", dt));
      out.push_back(line(f, " scale_b_mode=per_channel bias=1 act=relu alpha=2", dt));
    }
  }
  // Fills, for the contract families that are most used.
  const char* float_fills[] = {"uniform", "positive", "exact", "wide", "cancel"};
  for (const char* dt : {"f32:f32:f32", "bf16:f32:bf16", "f16:f32:f16", "f32@tf32:f32:f32", "f8_e4m3:f32:bf16", "f16:f16:f16"}) {
    const std::string d = parse_contract_types(dt).types_string();
    for (const char* fl : float_fills) {
      out.push_back(line(f, "", d, fl));
      out.push_back(line({31, 20, 100}, " alpha=0.5 beta=2 bias=1 act=relu residual=1", d, fl));
    }
  }
  for (const char* dt : {"f32:f32:f32", "bf16:f32:bf16"}) {
    const std::string d = parse_contract_types(dt).types_string();
    out.push_back(line(f, "", d, "special"));
    out.push_back(line({128, 96, 160}, " bias=1", d));
  }
  // Integer fills. Not `exact` with an integer dst: its outputs sit on a coarse lattice of
  // values whose rounding errors do not average out, which the rounding-bias test reads as bias.
  for (const char* dt : {"u8xi8:i32:f32", "i8xi8:i32:i8", "u8xi8:i32:u8"})
    for (const char* fl : {"normal", "positive"}) out.push_back(line(f, " bias=1", parse_contract_types(dt).types_string(), fl));
  out.push_back(line(f, " bias=1", parse_contract_types("u8xi8:i32:f32").types_string(), "exact"));
  out.push_back(line({96, 128, 256}, " bias=1 act=gelu", "f32:f32:f32"));
  out.push_back(line({64, 64, 1000}, "", "bf16:f32:bf16"));
  // A few realistic sizes (BERT-like projection, tf32, quantized) where blocking matters.
  out.push_back(line({384, 768, 768}, " bias=1 act=gelu residual=1", "bf16:f32:bf16"));
  out.push_back(line({256, 512, 1024}, " tb=1", parse_contract_types("f32@tf32:f32:f32").types_string()));
  out.push_back(line({128, 256, 512}, " scale_b_mode=per_channel bias=1", "u8xi8:i32:f32"));
  // Empty tensors, as real graphs make them: no rows, no columns, an empty batch, and k=0,
  // whose dst is the epilogue of a zero product (beta C + bias).
  for (const char* dt : {"f32:f32:f32", "bf16:f32:bf16", "u8xi8:i32:f32"}) {
    const std::string d = parse_contract_types(dt).types_string();
    out.push_back(line({0, 5, 7}, "", d));
    out.push_back(line({4, 0, 7}, "", d));
    out.push_back(line({4, 5, 0}, "", d));
    out.push_back(line({4, 5, 3}, " batch_a=0x2 batch_b=1x2", d));
    out.push_back(line({4, 5, 0}, " alpha=0.5 beta=1 bias=1 act=relu", d));
  }
  // Block-scaled contracts (OCP MX, NVFP4): each at k a multiple of its block, with
  // transposed elements, broadcast batches and the epilogue.
  for (const auto& dt : common_gemm::block_scaled_contracts()) {
    out.push_back(line({17, 33, 128}, " block=32", dt));
    out.push_back(line({7, 13, 64}, " block=32 ta=1 tb=1 lda=80 batch_a=2x1 batch_b=3", dt));
    out.push_back(line({17, 33, 64}, " block=16 block_scale=f8_e4m3 beta=0.5 bias=1 act=gelu", dt));
  }
  return out;
}

std::vector<std::string> matmul_spec::suite(std::string_view tag) const { return matmul_suite(tag); }

}  // namespace opval::ops::matmul
