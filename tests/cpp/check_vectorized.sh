#!/bin/sh
# check_vectorized.sh LIBRARY FUNCTION MIN: FAILS unless the AVX-512 clone FUNCTION of LIBRARY
# (an awk pattern over the mangled name) holds at least MIN instructions on zmm registers. The comparison's main pass
# (src/core/compare.cpp, finite_chunk_avx512) is written for the compiler to vectorize, and one
# std::floor once made GCC keep it scalar, halving its speed with no test failing: a build whose
# hot loop is no longer vectorized fails here instead.
set -eu
library=$1 function=$2 minimum=$3
count=$(objdump -d --no-show-raw-insn "$library" |
  awk -v f="$function" '$0 ~ "^[0-9a-f]+ <.*" f ".*>:$" {inside = 1; next} inside && /^$/ {inside = 0} inside' |
  grep -c zmm || true)
echo "$function in $(basename "$library"): $count instructions on zmm registers (at least $minimum expected)"
[ "$count" -ge "$minimum" ]
