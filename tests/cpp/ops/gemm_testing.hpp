#pragma once
// What matmul's and conv2d's tests share: the epilogue features of their tables (alpha, bias,
// activation, residual, per-channel scale, special values) each with a planted bug that must
// fail at every seed, one function serving both ops.
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_testing.hpp"

namespace opval::testing {

/// A kernel whose epilogue applies relu as fmax(x, 0) after the correct sim: NaN (a special
/// value in an input) comes out as 0 instead of NaN.
inline kernel_fn relu_dropping_nan() {
  return [](const problem& p, std::span<const tensor> in, std::span<tensor> out) {
    p.spec().simulate(p, in, out);
    std::vector<double> y = out[0].to_vector();
    for (double& v : y) v = std::fmax(v, 0.0);
    out[0].assign(y);
  };
}

/// The epilogue's planted bugs on `op` ("matmul m=17 n=33 k=65" or a conv2d geometry): each
/// fails at every seed on a float contract and a bf16 one (per-channel scale: on `quantized`,
/// the op's problem with an integer contract and its scales).
inline void expect_epilogue_bugs_fail_at_every_seed(const std::string& op, const std::string& quantized) {
  auto both = [&](const std::string& attrs) {
    return std::vector<std::string>{op + " " + attrs + " dt=f32:f32:f32", op + " " + attrs + " dt=bf16:f32:bf16"};
  };
  expect_fails_at_every_seed("alpha_ignored", simulating_as([](problem& q) { q.set("alpha", 1.0); }),
                             both("alpha=0.5 bias=1"));
  expect_fails_at_every_seed("bias_ignored", ignoring_input("bias"), both("bias=1 act=relu"));
  expect_fails_at_every_seed("residual_ignored", ignoring_input("residual"), both("residual=1 bias=1"));
  // gelu's tanh approximation differs from erf's by up to 5e-4 (|x| near 2): beyond f32's bound,
  // within bf16's rounding, so only the f32 contract can tell them apart.
  expect_fails_at_every_seed("gelu_tanh_for_erf", simulating_as([](problem& q) { q.set("act", std::string("gelu_tanh")); }),
                             {op + " act=gelu dt=f32:f32:f32", op + " act=gelu bias=1 dt=f32:f32:f32 fill=uniform"});
  expect_fails_at_every_seed("relu_dropping_nan", relu_dropping_nan(), both("act=relu fill=special"), "NaN");
  // Every output channel scaled by channel 0's scale (a per-tensor scale read).
  expect_fails_at_every_seed("per_channel_scale_as_per_tensor", simulating_on([](const problem& p, std::vector<tensor>& x) {
                               tensor& s = x[input_index(p, "scale_b")];
                               s = remapped(s, [](const tensor& t, const dims&) { return t.at(0); });
                             }),
                             {quantized + " scale_b_mode=per_channel"});
}

}  // namespace opval::testing
