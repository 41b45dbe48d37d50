// conv2d's suites: ResNet-like shapes, stride 2, dilation 2, groups, depthwise, asymmetric
// padding, NHWC, every epilogue attribute and every contract.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/common_gemm/gemm_core.hpp"
#include "ops/conv2d/conv2d.hpp"

namespace opval::ops::conv2d {
namespace {

struct geometry {
  const char* attrs;  // everything but the contract
  std::int64_t k;     // ic/g*kh*kw, for the quantization scales
};

std::string line(const geometry& gm, const std::string& extra, const std::string& dt,
                 const std::string& fill = "") {
  return std::string("conv2d ") + gm.attrs + extra +
         common_gemm::suite_quant_attrs(parse_contract_types(dt), gm.k) + " dt=" + dt +
         (fill.empty() ? "" : " fill=" + fill);
}

bool fp8_or_int(const contract& c) { return !is_float(c.src) || traits(c.src).size_bytes == 1; }

}  // namespace

std::vector<std::string> conv2d_suite(std::string_view tag) {
  std::vector<std::string> out;
  const auto contracts = common_gemm::gemm_contracts();
  const geometry small{"ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1", 27};
  const geometry strided{"ic=4 oc=5 ih=7 iw=6 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1 layout=nhwc", 36};
  if (tag == "smoke") {
    for (const auto& dt : contracts) {
      out.push_back(line(small, "", dt));
      out.push_back(line(strided, " bias=1 act=relu", dt));
    }
    return out;
  }
  if (tag != "regression") return out;
  const geometry shapes[] = {
      {"ic=16 oc=16 ih=14 iw=14 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1", 144},            // ResNet 3x3
      {"ic=8 oc=16 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1", 72},    // stride 2, odd sizes
      {"ic=32 oc=24 ih=7 iw=7", 32},                                             // 1x1
      {"ic=16 oc=32 ih=14 iw=14 sh=2 sw=2", 16},                                 // 1x1 downsample
      {"ic=4 oc=6 ih=12 iw=11 kh=3 kw=3 dh=2 dw=2 pt=2 pb=2 pl=2 pr=2", 36},     // dilation 2
      {"ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 g=4", 18},                                // groups
      {"ic=16 oc=16 ih=10 iw=10 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 g=16", 9},         // depthwise
      {"ic=5 oc=7 ih=8 iw=9 kh=2 kw=3 pb=1 pl=2", 30},                           // asymmetric pad
      {"ic=3 oc=8 ih=23 iw=23 kh=7 kw=7 sh=2 sw=2 pt=3 pb=3 pl=3 pr=3", 147},    // ResNet stem
      {"mb=2 ic=6 oc=10 ih=6 iw=5 kh=3 kw=1 pt=1 pb=1", 18},                     // minibatch
      {"ic=1 oc=1 ih=1 iw=1", 1},                                                // size 1
  };
  const geometry nhwc[] = {
      {"ic=16 oc=16 ih=14 iw=14 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 layout=nhwc", 144},
      {"ic=16 oc=16 ih=10 iw=10 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 g=16 layout=nhwc", 9},
      {"ic=8 oc=12 ih=9 iw=9 kh=3 kw=3 g=4 sh=2 sw=2 layout=nhwc", 18},
  };
  const geometry f{"ic=8 oc=16 ih=15 iw=13 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1", 72};
  const char* features[] = {" bias=1", " bias=1 act=relu", " bias=1 act=gelu", " act=gelu_tanh",
                            " bias=1 act=silu", " residual=1", " alpha=0.5 bias=1 act=relu residual=1"};
  for (const auto& dt : contracts) {
    const contract c = parse_contract_types(dt);
    for (const auto& s : shapes) out.push_back(line(s, "", dt));
    for (const auto& s : nhwc) out.push_back(line(s, " bias=1 residual=1", dt));
    for (const char* x : features) out.push_back(line(f, x, dt));
    if (fp8_or_int(c)) out.push_back(line(f, " scale_b_mode=per_channel bias=1 act=relu", dt));
  }
  for (const char* dt : {"f32:f32:f32", "bf16:f32:bf16", "f16:f32:f16", "u8xi8:i32:f32"}) {
    const std::string d = parse_contract_types(dt).types_string();
    for (const char* fl : {"uniform", "positive", "exact", "wide", "cancel"})
      out.push_back(line(f, " bias=1", d, fl));
  }
  out.push_back(line(f, " bias=1 act=relu", parse_contract_types("f32:f32:f32").types_string(), "special"));
  // ResNet-sized layers.
  const geometry big{"ic=64 oc=64 ih=28 iw=28 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1 layout=nhwc", 576};
  const geometry big_s2{"mb=2 ic=32 oc=64 ih=28 iw=28 kh=3 kw=3 sh=2 sw=2 pt=1 pb=1 pl=1 pr=1", 288};
  out.push_back(line(big, " bias=1 act=relu", "bf16:f32:bf16"));
  out.push_back(line(big_s2, " bias=1 residual=1", parse_contract_types("f8_e4m3:f32:bf16").types_string()));
  out.push_back(line(big, " bias=1", "u8xi8:i32:f32"));
  // Empty tensors, as real graphs make them: an empty batch, no output channels.
  const geometry empty_batch{"mb=0 ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1", 27};
  const geometry no_channels{"ic=3 oc=0 ih=5 iw=6 kh=3 kw=3", 27};
  for (const char* dt : {"f32:f32:f32", "bf16:f32:bf16", "u8xi8:i32:f32"}) {
    const std::string d = parse_contract_types(dt).types_string();
    out.push_back(line(empty_batch, " bias=1 act=relu", d));
    out.push_back(line(no_channels, " bias=1", d));
  }
  return out;
}

std::vector<std::string> conv2d_spec::suite(std::string_view tag) const { return conv2d_suite(tag); }

}  // namespace opval::ops::conv2d
