#!/usr/bin/env python3
"""Validate time over kernel time for f32 GEMM (issue 19 §5): the whole case's wall time, every
check included (`timings.total` of the record), over one execution of the kernel
(`timings.execute`), for each backend, size and verification method, as medians over runs.

    .venv/bin/python bench/verify_speed.py [--opval build/opval] [--backends openblas,onednn]
        [--cases full:1024,sampled:1024,sampled:4096,full:4096,sampled:8192] [--runs 3]
    .venv/bin/python bench/verify_speed.py --backends onednn --methods full,sampled \
        --descriptor 'conv2d mb=32 ic=256 oc=256 ih=28 iw=28 kh=3 kw=3 pt=1 pb=1 pl=1 pr=1'

--descriptor (repeatable) times those problems under each of --methods instead of the matmuls.

Each case runs in its own `opval run` (process isolation, as users run it); the runs alternate
between the cases so that a noisy neighbour spreads over all of them. Prints one line per
backend and case: kernel ms, case ms, their ratio, and the case's time split.

--warm-up N runs each case N more times right before each of its timed runs, discarded. On a
VM whose balloon takes freed memory back (free page reporting), the first touch of memory a
process did not just use costs the host's faults: a case after other work pays them (at
8192³ about 0.7 s of "other"), the same case again does not, as on bare metal.
"""
import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

STAGES = ("fill", "execute", "reference", "bound", "compare")


def run_case(opval: str, backend: str, method: str, line: str, jsonl: Path) -> dict:
    subprocess.run([opval, "run", "--backend", backend, "--problems", line, "--verify", method, "--timeout", "3600",
                    "--jsonl", str(jsonl)], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    record = json.loads(jsonl.read_text().splitlines()[-1])
    jsonl.unlink()
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opval", default="build/opval")
    parser.add_argument("--backends", default="openblas,onednn")
    parser.add_argument("--cases", default="full:1024,sampled:1024,sampled:4096,full:4096")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--descriptor", action="append", default=[],
                        help="a problem to time instead of the f32 matmuls (repeatable), under each of --methods")
    parser.add_argument("--methods", default="full,sampled")
    parser.add_argument("--warm-up", type=int, default=0,
                        help="discarded runs of each case right before each timed one (memory the host has not reclaimed)")
    args = parser.parse_args()
    if args.descriptor:
        cases = [(m, line) for line in args.descriptor for m in args.methods.split(",")]
    else:
        cases = [(m, f"matmul m={n} n={n} k={n} dt=f32:f32:f32") for m, n in (c.split(":") for c in args.cases.split(","))]
    results: dict = {}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.runs):
            for backend in args.backends.split(","):
                for method, line in cases:
                    for _ in range(args.warm_up):
                        run_case(args.opval, backend, method, line, Path(work) / "case.jsonl")
                    r = run_case(args.opval, backend, method, line, Path(work) / "case.jsonl")
                    results.setdefault((backend, method, line), []).append(r)
    print(f"{'backend':<9} {'verify':<8} {'problem':>5} {'state':<7} {'kernel ms':>10} {'case ms':>9} {'case/kernel':>12}  split (ms)")
    for (backend, method, line), records in results.items():
        n = line.split()[1][2:] if line.startswith("matmul m=") and " dt=f32:f32:f32" in line else line
        t = {k: statistics.median(r["timings"][k] for r in records) for k in STAGES + ("total",)}
        other = t["total"] - sum(t[k] for k in STAGES)
        split = ", ".join(f"{k} {t[k] * 1e3:.0f}" for k in STAGES) + f", other {other * 1e3:.0f}"
        states = "/".join(sorted({r["state"] for r in records}))
        print(f"{backend:<9} {method:<8} {n:>5} {states:<7} {t['execute'] * 1e3:>10.1f} {t['total'] * 1e3:>9.1f} "
              f"{t['total'] / t['execute']:>12.2f}  {split}")


if __name__ == "__main__":
    main()
