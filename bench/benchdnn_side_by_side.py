#!/usr/bin/env python3
"""opval against oneDNN's benchdnn in correctness mode (issue 19 §5): the same shapes on the same
oneDNN kernels, as whole processes, run in turn (A B A B ...) so that a noisy neighbour spreads
over both; medians of wall time and peak memory, cases per second, time per case, and the ratio
opval / benchdnn pair by pair.

    .venv/bin/python bench/benchdnn_side_by_side.py --benchdnn DIR [--opval build/opval] [--runs 5]
        [--workloads matmul:1024,matmul:4096,resnet50,matmul_batch:shapes_2d_ci]

DIR is benchdnn's build folder (it holds the `benchdnn` binary and its `inputs/`; benchdnn is built
from oneDNN's public source outside the project: docs/PERFORMANCE.md says how). Workloads:

- matmul:N    one f32 NxNxN matmul: `benchdnn --matmul --mode=C NxN:NxN` against
              `opval run --backend onednn --problems 'matmul m=N n=N k=N'` (auto: full below 8e9
              FLOPs, sampled from there up; add :full or :sampled to force opval's method).
- resnet50    the 23 distinct ResNet-50 convolutions at minibatch 1, f32, NCHW
              (tests/problems/resnet50_conv.txt, written out as a benchdnn batch file).
- matmul_batch:NAME
              a benchdnn matmul shape batch (inputs/matmul/NAME, its --batch includes followed),
              f32, written out as opval problems: shapes_2d_ci is the 2-D shape set of benchdnn's
              CI batch test_matmul_ci (v2.6.3 has no smoke batch; test_matmul_ci itself crosses
              those shapes with every data type and post-op and runs for over 15 minutes here).
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_measured(argv: list[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB (the child's own rusage, os.wait4) and the output of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, out


def benchdnn_cases(out: str) -> tuple[int, int]:
    """(tests, passed) from benchdnn's summary line."""
    m = re.search(r"tests:(\d+) passed:(\d+)", out)
    if not m:
        raise SystemExit("benchdnn printed no summary line:\n" + out[-2000:])
    return int(m.group(1)), int(m.group(2))


def opval_cases(out: str) -> tuple[int, int]:
    """(cases that ran, passed) from opval's last line 'P passed, F failed, S skipped'."""
    m = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", out)
    if not m:
        raise SystemExit("opval printed no summary line:\n" + out[-2000:])
    return int(m.group(1)) + int(m.group(2)), int(m.group(1))


def resnet50_batch(path: Path) -> int:
    """Writes tests/problems/resnet50_conv.txt as benchdnn conv descriptors; returns the count."""
    lines = []
    for line in (ROOT / "tests/problems/resnet50_conv.txt").read_text().splitlines():
        if not line.startswith("conv2d"):
            continue
        a = {"mb": 1, "kh": 1, "kw": 1, "sh": 1, "sw": 1, "pt": 0, "pl": 0, "pb": 0, "pr": 0}
        a.update({k: int(v) for k, v in (f.split("=") for f in line.split()[1:])})
        if a["pt"] != a["pb"] or a["pl"] != a["pr"]:
            raise SystemExit(f"asymmetric padding has no benchdnn descriptor here: {line}")
        oh = (a["ih"] + 2 * a["pt"] - a["kh"]) // a["sh"] + 1
        ow = (a["iw"] + 2 * a["pl"] - a["kw"]) // a["sw"] + 1
        lines.append(f"mb{a['mb']}ic{a['ic']}ih{a['ih']}iw{a['iw']}oc{a['oc']}oh{oh}ow{ow}"
                     f"kh{a['kh']}kw{a['kw']}sh{a['sh']}sw{a['sw']}ph{a['pt']}pw{a['pl']}")
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def matmul_batch(benchdnn: Path, name: str, path: Path) -> int:
    """Writes benchdnn's matmul shape batch `name` (MxK:KxN lines, --batch= includes) as opval
    problems; returns the count."""
    lines = []

    def read(batch: Path) -> None:
        for raw in batch.read_text().splitlines():
            line = raw.split("#")[0].strip()
            if line.startswith("--batch="):
                read(batch.parent / line[len("--batch="):])
            elif line and not line.startswith("--"):
                m = re.fullmatch(r"(\d+)x(\d+):(\d+)x(\d+)(n\".*\")?", line)
                if not m or m.group(2) != m.group(3):
                    raise SystemExit(f"{batch}: '{line}' is not a 2-D MxK:KxN shape")
                lines.append(f"matmul m={m.group(1)} n={m.group(4)} k={m.group(2)} dt=f32:f32:f32")

    read(benchdnn / "inputs/matmul" / name)
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def workloads(args, work: Path) -> list[tuple[str, list[str], list[str]]]:
    """(name, benchdnn argv, opval argv) per workload."""
    benchdnn = str(Path(args.benchdnn) / "benchdnn")
    out = []
    for w in args.workloads.split(","):
        if w.startswith("matmul:"):
            parts = w.split(":")
            n, method = int(parts[1]), parts[2] if len(parts) > 2 else "auto"
            out.append((f"matmul {n}^3 f32 ({method})", [benchdnn, "--matmul", "--mode=C", f"{n}x{n}:{n}x{n}"],
                        [args.opval, "run", "--backend", "onednn", "--verify", method, "--timeout", "3600",
                         "--problems", f"matmul m={n} n={n} k={n} dt=f32:f32:f32"]))
        elif w == "resnet50":
            batch = work / "resnet50_conv.benchdnn"
            resnet50_batch(batch)
            out.append(("ResNet-50 convs mb=1 f32", [benchdnn, "--conv", "--mode=C", f"--batch={batch}"],
                        [args.opval, "run", "--backend", "onednn", "--problems", "resnet50_conv", "--contract", "f32"]))
        elif w.startswith("matmul_batch:"):
            name = w.split(":", 1)[1]
            problems = work / f"{name}.txt"
            count = matmul_batch(Path(args.benchdnn), name, problems)
            out.append((f"matmul batch {name} f32 ({count} shapes)",
                        [benchdnn, "--matmul", "--mode=C", f"--batch=inputs/matmul/{name}"],
                        [args.opval, "run", "--backend", "onednn", "--problems", str(problems)]))
        else:
            raise SystemExit(f"unknown workload '{w}' (matmul:N[:full|sampled], resnet50, matmul_batch:NAME)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchdnn", required=True, help="benchdnn's build folder (the binary and inputs/)")
    parser.add_argument("--opval", default=str(ROOT / "build/opval"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workloads", default="matmul:1024,resnet50,matmul_batch:shapes_2d_ci")
    args = parser.parse_args()
    cwd = Path(args.benchdnn)
    with tempfile.TemporaryDirectory() as tmp:
        for name, bd_argv, ov_argv in workloads(args, Path(tmp)):
            bd, ov = [], []
            for _ in range(args.runs):
                wall, rss, out = run_measured(bd_argv, cwd)
                bd.append((wall, rss, *benchdnn_cases(out)))
                wall, rss, out = run_measured(ov_argv, ROOT)
                ov.append((wall, rss, *opval_cases(out)))
            print(f"== {name}: {args.runs} runs each, in turn")
            for tool, rows in (("benchdnn", bd), ("opval", ov)):
                wall = statistics.median(r[0] for r in rows)
                rss = statistics.median(r[1] for r in rows)
                cases, passed = rows[-1][2], rows[-1][3]
                print(f"  {tool:<9} {cases:>4} cases ({passed} passed)  wall median {wall:8.3f} s "
                      f"(min {min(r[0] for r in rows):.3f}, max {max(r[0] for r in rows):.3f})  "
                      f"{1e3 * wall / max(cases, 1):8.1f} ms/case  {cases / wall:7.2f} cases/s  peak {rss:7.1f} MiB")
            ratios = [o[0] / b[0] for o, b in zip(ov, bd)]
            print(f"  opval / benchdnn wall, pair by pair: median {statistics.median(ratios):.2f} "
                  f"(min {min(ratios):.2f}, max {max(ratios):.2f}); peak memory "
                  f"{statistics.median(r[1] for r in ov) / statistics.median(r[1] for r in bd):.2f}x")


if __name__ == "__main__":
    main()
