// attention: the feature table of its generated suites (docs/COVERAGE.md).
#include "ops/attention/attention.hpp"

namespace opval::ops::attention {

feature_table attention_spec::features() const {
  feature_table t;
  t.base = "b=2 h=2 lq=13 lk=29 d=24";
  t.contracts = {"f32", "tf32", "bf16:f32:bf16", "bf16:f32:bf16 mid=bf16", "f16:f32:f16", "f16:f32:f16 mid=f16"};
  t.features = {{"sizes",
                 {"b=1 h=1 lq=1 lk=1 d=1", "b=1 lq=1 lk=13 d=1", "b=2 h=3 lq=7 lk=7 d=64", "b=1 lq=31 lk=31 d=80",
                  "b=1 lq=17 lk=33 d=128", "b=1 h=1 lq=128 lk=128 d=64", "lq=37 lk=5 d=16", "b=1 lq=40 lk=300 d=128",
                  "b=0", "lq=0"}},
                {"causal", {"causal=top_left", "causal=bottom_right"}},
                {"grouped heads", {"h=4 hkv=2", "h=6 hkv=1"}},
                {"mask", {"mask=bias", "mask=bias mask_shape=b_1_lq_lk", "mask=bias mask_shape=1_h_lq_lk",
                          "mask=bias mask_shape=b_h_lq_lk"}},
                {"soft-capping", {"softcap=5", "softcap=30"}},
                {"sliding window", {"window_left=0", "window_left=3", "window_left=8 window_right=2", "window_left=20"}},
                {"key lengths", {"key_lengths=1"}},
                {"value head size", {"dv=8", "dv=80"}},
                {"scale", {"scale=0.5"}},
                {"fill", {"fill=uniform", "fill=large", "fill=special"}}};
  return t;
}

}  // namespace opval::ops::attention
