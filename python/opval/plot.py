"""Plots of `opval bench` results (docs/BENCHMARKING.md, "Sweeps and scaling"), with matplotlib.

    python -m opval plot RESULTS.jsonl [...] [--out DIR] [--format png|svg] [--machine-file PATH]

draws throughput against size, speed-up against threads (with the ideal line) and the roofline
(with this machine's peaks from `opval bench --machine`), from the bench JSON Lines records.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path


def load_records(paths: list[str | os.PathLike]) -> list[dict]:
    """The opval-bench records of the files; ValueError naming FILE:LINE for anything else."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{number}: not JSON ({e.msg})") from None
                if not isinstance(record, dict) or record.get("schema") != "opval-bench":
                    raise ValueError(f"{path}:{number}: not an opval bench record (opval bench --jsonl writes them)")
                records.append(record)
    return records


def default_machine_file() -> str:
    """Where `opval bench --machine` saves the peaks (the CLI's rule)."""
    if os.environ.get("OPVAL_MACHINE_FILE"):
        return os.environ["OPVAL_MACHINE_FILE"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "opval", "machine.json")
    return os.path.join(os.environ.get("HOME") or ".", ".cache", "opval", "machine.json")


def _label(record: dict, *fields: str) -> str:
    parts = [str(record[f]) for f in fields if record.get(f)]
    return " ".join(parts)


def _throughput(record: dict) -> tuple[float, str]:
    """GFLOP/s, or GB/s for an op that counts no FLOPs."""
    timing = record["timing"]
    return (timing["gflops"], "GFLOP/s") if record["counts"]["flops"] > 0 else (timing["gbytes_per_second"], "GB/s")


def _throughput_vs_size(plt, timed: list[dict], path: Path) -> Path:
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    unit = "GFLOP/s"
    for r in timed:
        counts = r["counts"]
        size = counts["flops"] if counts["flops"] > 0 else counts["bytes"]
        value, unit = _throughput(r)
        key = f"{r['backend']} {r['op']} {r['contract']}, {r['timing']['threads']} thread(s)"
        series[key].append((size, value))
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, points in sorted(series.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=key)
    ax.set_xscale("log")
    ax.set_xlabel("size (the case's FLOPs, or bytes for ops without FLOPs)")
    ax.set_ylabel(unit)
    ax.set_title("Throughput against size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _speedup_vs_threads(plt, timed: list[dict], path: Path) -> Path | None:
    groups: dict[str, dict[int, float]] = defaultdict(dict)
    for r in timed:
        groups[f"{r['backend']} {r['descriptor']}"][r["timing"]["threads"]] = r["timing"]["median"]
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    most = 1
    for key, by_threads in sorted(groups.items()):
        threads = sorted(by_threads)
        base = threads[0]
        ax.plot(threads, [by_threads[base] / by_threads[t] for t in threads], marker="o", label=key)
        most = max(most, threads[-1])
    fewest = min(min(v) for v in groups.values())
    ideal = list(range(fewest, most + 1))
    ax.plot(ideal, [t / fewest for t in ideal], "k--", label="ideal (linear)")
    ax.set_xlabel("threads")
    ax.set_ylabel(f"speed-up over {fewest} thread(s)")
    ax.set_title("Speed-up against threads")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _machine_of(record: dict) -> tuple:
    env = record.get("environment") or {}
    return env.get("cpu_model"), env.get("logical_cpus"), env.get("kernel")


def _roofline(plt, timed: list[dict], peaks: dict, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(8, 6))
    intensities = [r["timing"]["intensity"] for r in timed if r["timing"]["intensity"] > 0]
    low = min(intensities + [0.1]) / 4
    high = max(intensities + [10.0]) * 4
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    for level in peaks["levels"]:
        bandwidth = level["triad_gbs"]["all"]
        ax.plot(xs, [bandwidth * x for x in xs], "--", linewidth=1, label=f"{level['name']} {bandwidth:.3g} GB/s")
    for kind, figure in sorted(peaks["gflops"].items()):
        ax.axhline(figure["all"], linewidth=1, color="grey", alpha=0.7)
        ax.annotate(f"{kind} FMA {figure['all']:.4g}", (high, figure["all"]), ha="right", va="bottom", fontsize="small")
    by_backend: dict[str, list[dict]] = defaultdict(list)
    for r in timed:
        if r["timing"]["intensity"] > 0:
            by_backend[r["backend"]].append(r)
    for backend, results in sorted(by_backend.items()):
        ax.plot([r["timing"]["intensity"] for r in results], [r["timing"]["gflops"] for r in results], "o",
                label=f"{backend} ({len(results)} results)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    top = max([f["all"] for f in peaks["gflops"].values()] + [r["timing"]["gflops"] for r in timed])
    ax.set_ylim(top / 1e4, top * 3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Roofline: {peaks['cpu_model']}, {peaks['threads']} threads")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="x-small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot(paths: list[str | os.PathLike], out_dir: str | os.PathLike = ".", fmt: str = "png",
         machine_file: str | None = None) -> tuple[list[Path], list[str]]:
    """Draws the plots the records allow into out_dir; returns the files written and notes on
    the plots that could not be drawn (one thread count only, no peaks for this machine)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown plot format '{fmt}' (known: png svg)")
    records = load_records(paths)
    timed = [r for r in records if r.get("timed") and r.get("timing")]
    if not timed:
        raise ValueError("no timed result in " + ", ".join(str(p) for p in paths))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [_throughput_vs_size(plt, timed, out / f"throughput_vs_size.{fmt}")]
    notes = []
    speedup = _speedup_vs_threads(plt, timed, out / f"speedup_vs_threads.{fmt}")
    if speedup:
        written.append(speedup)
    else:
        notes.append("no speed-up plot: no case was timed at more than one thread count (--axis threads=1,2,...)")
    machine_file = machine_file or default_machine_file()
    try:
        with open(machine_file, encoding="utf-8") as f:
            peaks = json.load(f)
    except (OSError, json.JSONDecodeError):
        notes.append(f"no roofline: no machine peaks readable in {machine_file} (opval bench --machine)")
        return written, notes
    if (peaks.get("cpu_model"), peaks.get("logical_cpus"), peaks.get("kernel")) != _machine_of(timed[0]):
        notes.append(f"no roofline: the peaks in {machine_file} are another machine's than the results'")
        return written, notes
    written.append(_roofline(plt, timed, peaks, out / f"roofline.{fmt}"))
    return written, notes
