// attention: the suites. smoke: one problem per contract family; regression: edge sizes,
// causal alignments, GQA, bias and key lengths, soft-capping, sliding windows and bias shapes in turn, then every contract and every fill on
// one ragged masked GQA problem.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ops/attention/attention.hpp"

namespace opval::ops::attention {

std::vector<std::string> attention_spec::suite(std::string_view tag) const {
  std::vector<std::string> lines;
  auto add = [&](const std::string& attrs, const std::string& dt, const std::string& fill) {
    lines.push_back(fmt::format("attention {} dt={} fill={}", attrs, dt, fill));
  };
  if (tag == "smoke") {
    add("b=1 h=2 lq=5 lk=7 d=8", "f32", "normal");
    add("b=2 h=4 hkv=2 lq=9 lk=5 d=16 causal=bottom_right mask=bias key_lengths=1", "bf16:f32:bf16 mid=bf16",
        "large");
    add("b=1 h=2 lq=7 lk=19 d=32 causal=top_left", "tf32", "uniform");
    add("b=1 h=3 hkv=1 lq=11 lk=9 d=64", "f16:f32:f16 mid=f16", "normal");
    return lines;
  }
  if (tag != "regression") return lines;
  const std::vector<std::string> contracts = {"f32",         "tf32", "bf16:f32:bf16", "bf16:f32:bf16 mid=bf16",
                                              "f16:f32:f16", "f16:f32:f16 mid=f16"};
  const std::vector<std::string> fills = {"normal", "uniform", "large", "special"};
  const std::vector<std::string> shapes = {
      "b=1 h=1 lq=1 lk=1 d=1",
      "b=1 h=1 lq=1 lk=13 d=1",
      "b=2 h=3 lq=7 lk=7 d=64",
      "b=1 h=2 lq=31 lk=31 d=80",
      "b=1 h=2 lq=17 lk=33 d=128",
      "b=1 h=1 lq=128 lk=128 d=64",
      "b=2 h=2 lq=5 lk=37 d=16",
      "b=2 h=2 lq=37 lk=5 d=16",
      "b=1 h=2 lq=7 lk=19 d=32 causal=top_left",
      "b=1 h=2 lq=19 lk=7 d=32 causal=top_left",
      "b=1 h=2 lq=7 lk=19 d=32 causal=bottom_right",
      "b=1 h=2 lq=19 lk=7 d=32 causal=bottom_right",
      "b=1 h=4 hkv=2 lq=23 lk=23 d=64 causal=bottom_right",
      "b=1 h=6 hkv=1 lq=11 lk=29 d=64",
      "b=2 h=2 lq=13 lk=29 d=24 mask=bias",
      "b=3 h=2 lq=13 lk=29 d=24 key_lengths=1",
      "b=3 h=4 hkv=2 lq=21 lk=18 d=40 dv=24 causal=top_left mask=bias key_lengths=1",
      "b=1 h=2 lq=16 lk=48 d=32 dv=80 scale=0.5",
      // Long rows (many online-softmax rescalings) and realistic head sizes.
      "b=1 h=2 lq=40 lk=300 d=128 causal=bottom_right",
      "b=2 h=8 hkv=2 lq=100 lk=100 d=64 causal=top_left key_lengths=1",
      "b=1 h=2 lq=257 lk=65 d=80 causal=bottom_right mask=bias",
      // Empty tensors: an empty batch, an empty query sequence.
      "b=0 h=2 lq=7 lk=9 d=16 mask=bias",
      "b=2 h=4 hkv=2 lq=0 lk=9 d=16 causal=bottom_right key_lengths=1",
      // Features the peer suites use, each alone once, then together: score soft-capping,
      // sliding windows (with and without causal), bias broadcast from every SDPA shape.
      "b=1 h=2 lq=16 lk=40 d=64 softcap=5",
      "b=1 h=2 lq=16 lk=40 d=64 softcap=30 causal=top_left",
      "b=1 h=2 lq=32 lk=48 d=32 causal=bottom_right window_left=8",
      "b=2 h=2 lq=20 lk=20 d=16 window_left=3 window_right=2",
      "b=1 h=2 lq=24 lk=24 d=16 causal=top_left window_left=0",
      "b=3 h=2 lq=9 lk=20 d=16 mask=bias mask_shape=b_1_lq_lk",
      "b=1 h=3 lq=9 lk=20 d=16 mask=bias mask_shape=1_h_lq_lk",
      "b=2 h=4 hkv=2 lq=9 lk=20 d=16 mask=bias mask_shape=b_h_lq_lk",
      "b=2 h=4 hkv=2 lq=19 lk=70 d=64 causal=bottom_right window_left=20 softcap=5 mask=bias mask_shape=b_h_lq_lk "
      "key_lengths=1",
  };
  std::size_t i = 0;
  for (const auto& shape : shapes) {
    add(shape, contracts[i % contracts.size()], fills[i % fills.size()]);
    ++i;
  }
  // Every contract, every fill, on one ragged masked GQA problem.
  for (const auto& dt : contracts)
    for (const auto& fill : fills)
      add("b=2 h=4 hkv=2 lq=19 lk=35 d=64 causal=bottom_right mask=bias key_lengths=1", dt, fill);
  return lines;
}

}  // namespace opval::ops::attention
