#!/usr/bin/env bash
# What the memory checks of docs/SAFETY.md (guarded buffers, poisoned outputs with the second
# kernel run, input hashes) add to a validation run of the default regression suites: the
# same run with every check on and with every check off, interleaved RUNS times. ISOLATION is
# opval's --isolation: process (the default, each case in the worker process, which gets every
# run option) or none. Prints each run's wall and user CPU seconds (the worker's included),
# the medians, and the median overhead of "on" over "off". A third configuration,
# --no-poison, shows guards and input hashes alone.
#
#   bench/checks_overhead.sh [OPVAL_BINARY] [RUNS] [BACKEND] [ISOLATION]
#   bench/checks_overhead.sh build/opval 5 sim process
#
# The machine may be shared: interleaving spreads background load over all configurations,
# and the medians and ratios are what to compare.
set -euo pipefail

opval=${1:-build/opval}
runs=${2:-5}
backend=${3:-sim}
isolation=${4:-process}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A flags=(
  [on]=""
  [off]="--no-guard --no-poison --no-input-check"
  [no-poison]="--no-poison"
)
configs=(on off no-poison)

for i in $(seq 1 "$runs"); do
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086  # the flags are words
    /usr/bin/time -f "%e %U" -o "$work/$c.$i.time" \
      "$opval" run --tag regression --isolation "$isolation" --backend "$backend" \
      --known-failures "$here/tests/known_failures.txt" ${flags[$c]} > "$work/$c.$i.out" 2>&1 || true
    echo "run $i $c: $(tail -n 1 "$work/$c.$i.out"); wall, user s: $(cat "$work/$c.$i.time")"
  done
done

python3 - "$work" "$runs" "${configs[@]}" <<'PY'
import statistics, sys
work, runs, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = {}
for c in configs:
    wall, user = zip(*(map(float, open(f"{work}/{c}.{i}.time").read().split()[-2:]) for i in range(1, runs + 1)))
    med[c] = (statistics.median(wall), statistics.median(user))
    print(f"{c:10s} median wall {med[c][0]:7.2f} s, user CPU {med[c][1]:7.2f} s")
for c in configs:
    if c != "off":
        print(f"{c} over off: wall {100 * (med[c][0] / med['off'][0] - 1):+.1f}%, "
              f"user CPU {100 * (med[c][1] / med['off'][1] - 1):+.1f}%")
PY
