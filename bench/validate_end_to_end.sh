#!/usr/bin/env bash
# End-to-end validation of real model shape sets on a backend, with the time split over the
# stages of a case (fill, prepare, kernel, reference, bound, compare, other), so the next
# bottleneck is visible. Each set runs RUNS times; the per-stage totals printed are medians
# over the runs (the machine may be shared: compare the percentages, not the seconds).
#
#   bench/validate_end_to_end.sh [OPVAL_BINARY] [RUNS] [BACKEND] [SET...]
#   bench/validate_end_to_end.sh build/opval 3 onednn bert_base_matmul resnet50_conv
#
# "other" is what no stage accounts for: the capability query, allocation, the verdict, and
# the perturbation re-run (a second fill, prepare, kernel and fp64 reference on one re-filled
# input). A last run per set with --no-perturb shows the split without that re-run.
set -euo pipefail

opval=${1:-build/opval}
runs=${2:-3}
backend=${3:-onednn}
shift $(( $# < 3 ? $# : 3 ))
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(bert_base_matmul resnet50_conv)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Median over runs of each stage's total over cases that ran, from the JSONL timings.
summarize() {
  python3 - "$@" <<'PY'
import json, statistics, sys
stages = ["fill", "prepare", "execute", "reference", "bound", "compare"]
per_run, states = [], {}
for path in sys.argv[1:]:
    totals = dict.fromkeys(stages + ["total"], 0.0)
    states = {}
    for line in open(path):
        r = json.loads(line)
        states[r["state"]] = states.get(r["state"], 0) + 1
        if r["state"] in ("SKIPPED", "UNIMPLEMENTED"):
            continue
        for k in totals:
            totals[k] += r["timings"].get(k, 0.0)
    totals["other"] = max(0.0, totals["total"] - sum(totals[s] for s in stages))
    per_run.append(totals)
med = {k: statistics.median(t[k] for t in per_run) for k in per_run[0]}
total = med["total"] or 1.0
names = {"execute": "kernel"}
print("  states: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())))
print(f"  case time (median of {len(per_run)} runs) {med['total']:.2f} s: " + ", ".join(
    f"{names.get(k, k)} {med[k]:.2f} s ({100 * med[k] / total:.0f}%)" for k in stages + ["other"]))
PY
}

for set in "${sets[@]}"; do
  echo "== $set on $backend (f32), $runs runs"
  files=()
  for i in $(seq 1 "$runs"); do
    f="$work/$set.$i.jsonl"
    start=$(date +%s.%N)
    "$opval" run --backend "$backend" --problems "$set" --contract f32 --jsonl "$f" > "$work/$set.$i.out" || true
    end=$(date +%s.%N)
    echo "  run $i: $(tail -n 1 "$work/$set.$i.out"), wall $(python3 -c "print(f'{$end - $start:.2f}')") s"
    files+=("$f")
  done
  summarize "${files[@]}"
  grep '^time split' "$work/$set.1.out" | sed 's/^/  console: /' || true
  f="$work/$set.noperturb.jsonl"
  "$opval" run --backend "$backend" --problems "$set" --contract f32 --no-perturb --jsonl "$f" > /dev/null || true
  echo "  with --no-perturb (1 run):"
  summarize "$f"
done
