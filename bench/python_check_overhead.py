"""What validating a kernel through opval.check costs over the same cases run by the C++ CLI,
excluding the kernel itself (docs/PERFORMANCE.md, "Python layer").

Both sides run N cases of a trivial op (relu on 1000 f32 values) with every check on, in one
process each: opval.check on a NumPy kernel, and `opval run --isolation none` on the sim
backend's kernel, alternately ROUNDS times. Per case, the runner records its total time and
the kernel's (execute) time; the overhead is total - execute. Also reported: wall-clock time
per case, which includes Python's and the CLI's start-up spread over the N cases. Prints the
medians and the ratios Python / CLI.

    .venv/bin/python bench/python_check_overhead.py [N] [ROUNDS]
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import opval

DESCRIPTOR = "relu shape=1000 dt=f32"


def relu(x):
    return np.maximum(x, np.float32(0))


def python_round(n: int) -> tuple[float, float]:
    """(median overhead per case, wall per case) of opval.check over n cases, in seconds."""
    start = time.perf_counter()
    result = opval.check("relu", relu, contracts="f32", problems=[DESCRIPTOR] * n)
    wall = (time.perf_counter() - start) / n
    assert result.passed
    overheads = [r.timings["total"] - r.timings["execute"] for r in result.results]
    return statistics.median(overheads), wall


def cli_round(n: int, work: Path) -> tuple[float, float]:
    """The same for `opval run --isolation none`, the process start included in the wall time."""
    problems, jsonl = work / "problems.txt", work / "cli.jsonl"
    problems.write_text((DESCRIPTOR + "\n") * n)
    start = time.perf_counter()
    subprocess.run([opval.worker_executable(), "run", "--problems", str(problems), "--isolation", "none",
                    "--jsonl", str(jsonl)], check=True, stdout=subprocess.DEVNULL)
    wall = (time.perf_counter() - start) / n
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    overheads = [r["timings"]["total"] - r["timings"]["execute"] for r in records]
    return statistics.median(overheads), wall


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    py, cli = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            py.append(python_round(n))
            cli.append(cli_round(n, Path(tmp)))
    for name, runs in (("opval.check", py), ("opval run (CLI)", cli)):
        print(f"{name:18} overhead/case {statistics.median(r[0] for r in runs) * 1e6:8.1f} us   "
              f"wall/case {statistics.median(r[1] for r in runs) * 1e6:8.1f} us   ({rounds} rounds of {n} cases)")
    ratio = statistics.median(p[0] for p in py) / statistics.median(c[0] for c in cli)
    wall_ratio = statistics.median(p[1] for p in py) / statistics.median(c[1] for c in cli)
    print(f"Python / CLI: overhead per case {ratio:.2f}x, wall per case {wall_ratio:.2f}x (target: overhead <= 2x)")


if __name__ == "__main__":
    main()
