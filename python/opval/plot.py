"""Plots of `opval bench` results (docs/BENCHMARKING.md, "Sweeps and scaling"), with matplotlib.

    python -m opval plot RESULTS.jsonl [...] [--out DIR] [--format png|svg] [--machine-file PATH]

draws throughput against size (with the median's interval), speed-up against threads (with the
ideal line) and the roofline (one panel per thread count, under this machine's roofs at that count
from `opval bench --machine`, every point labelled), from the bench JSON Lines records.
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


def _throughput(record: dict) -> tuple[float, str]:
    """GFLOP/s, or GB/s for an op that counts no FLOPs."""
    timing = record["timing"]
    return (timing["gflops"], "GFLOP/s") if record["counts"]["flops"] > 0 else (timing["gbytes_per_second"], "GB/s")


def _throughput_interval(record: dict) -> tuple[float, float]:
    """The throughput at the ends of the median's confidence interval (the slower end first);
    the figure itself, twice, when the record has no interval."""
    value, _ = _throughput(record)
    timing = record["timing"]
    low, high = timing.get("ci_low") or 0, timing.get("ci_high") or 0
    if not (0 < low <= timing["median"] <= high):
        return value, value
    return value * timing["median"] / high, value * timing["median"] / low


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def size_axis(timed: list[dict]) -> str | None:
    """The sweep axis that is the size: the first, in the records' order, with numeric values
    that vary (threads aside). None when there is none: the plot then uses the case's bytes."""
    values: dict[str, set[str]] = {}
    for r in timed:
        for name, value in (r.get("sweep") or {}).items():
            if name != "threads":
                values.setdefault(name, set()).add(str(value))
    for name, seen in values.items():
        if len(seen) > 1 and all(_is_number(v) for v in seen):
            return name
    return None


def _series_key(record: dict, exclude: set[str]) -> str:
    """A line of a plot: the backend, op and contract, and the sweep values not in `exclude`."""
    others = [f"{k}={v}" for k, v in (record.get("sweep") or {}).items() if k not in exclude | {"threads", "backend"}]
    threads = record["timing"]["threads"]
    return " ".join([record["backend"], record["op"], record["contract"], *others]) + \
        f", {threads} thread{'s' if threads != 1 else ''}"


def throughput_figure(timed: list[dict]):
    """Throughput against the sweep's size axis (or the case's bytes), one line per backend, op,
    contract, thread count and other axes' values, each point with its confidence interval."""
    from matplotlib.figure import Figure

    axis = size_axis(timed)
    series: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)
    unit = "GFLOP/s"
    for r in timed:
        size = float(r["sweep"][axis]) if axis and axis in (r.get("sweep") or {}) else r["counts"]["bytes"]
        value, unit = _throughput(r)
        slow, fast = _throughput_interval(r)
        # Never a negative bar: a degenerate interval (its end at the median) must not fail the plot.
        series[_series_key(r, {axis} if axis else set())].append((size, value, max(0.0, value - slow),
                                                                   max(0.0, fast - value)))
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for key, points in sorted(series.items()):
        points.sort()
        ax.errorbar([p[0] for p in points], [p[1] for p in points], yerr=[[p[2] for p in points], [p[3] for p in points]],
                    marker="o", capsize=3, label=key)
    ax.set_xscale("log", base=2 if axis else 10)
    if axis:
        sizes = sorted({p[0] for points in series.values() for p in points})
        ax.set_xticks(sizes, [f"{v:g}" for v in sizes])
        ax.set_xlabel(f"{axis} (the sweep's size axis)")
    else:
        ax.set_xlabel("bytes the case moves (its counts.bytes)")
    ax.set_ylabel(f"{unit} (bars: the median's 95% interval)")
    ax.set_title("Throughput against size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def speedup_figure(timed: list[dict]):
    """Speed-up over the fewest threads per case, with the ideal line; None when no case was
    timed at two thread counts."""
    from matplotlib.figure import Figure

    groups: dict[str, dict[int, float]] = defaultdict(dict)
    for r in timed:
        groups[f"{r['backend']} {r['descriptor']}"][r["timing"]["threads"]] = r["timing"]["median"]
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups:
        return None
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for key, by_threads in groups.items():  # in the records' order: sizes ascending as swept
        threads = sorted(by_threads)
        base = threads[0]
        ax.plot(threads, [by_threads[base] / by_threads[t] for t in threads], marker="o", label=key)
    counts = sorted({t for v in groups.values() for t in v})
    fewest = counts[0]
    ax.plot(counts, [t / fewest for t in counts], "k--", label="ideal (linear)")
    ax.set_xticks(counts, [str(t) for t in counts])  # thread counts are whole: no 1.5 threads
    ax.set_xlabel("threads")
    ax.set_ylabel(f"speed-up over {fewest} thread{'s' if fewest != 1 else ''}")
    ax.set_title("Speed-up against threads")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def _machine_of(record: dict) -> tuple:
    env = record.get("environment") or {}
    return env.get("cpu_model"), env.get("logical_cpus"), env.get("kernel")


def at_threads(figure: dict, threads: int) -> float:
    """A peak at `threads` threads, as opval bench places results (roofline.cpp): the one-thread
    figure times threads, capped at the all-threads figure."""
    return min(figure["one"] * max(threads, 1), max(figure["all"], figure["one"]))


def hierarchy_problems(peaks: dict, thread_counts: list[int]) -> list[str]:
    """Levels whose triad bandwidth, at a thread count of the results, is below the next
    level's: a file measured on a loaded machine before opval bench --machine checked it."""
    problems = []
    levels = peaks["levels"]
    for threads in thread_counts:
        for near, far in zip(levels, levels[1:]):
            a, b = at_threads(near["triad_gbs"], threads), at_threads(far["triad_gbs"], threads)
            if a < 0.9 * b:  # machine_peaks.hpp's tolerance: 10%
                problems.append(f"{near['name']} {a:.3g} GB/s below {far['name']}'s {b:.3g} GB/s on {threads} thread(s)")
    return problems


def roofs(peaks: dict, threads: int, low: float, high: float,
          types: set[str] | None = None) -> list[tuple[str, list[float], list[float]]]:
    """The roofs at `threads` threads over intensities [low, high], each (label, xs, ys): every
    level's bandwidth line, clipped where it meets the highest compute peak, then the compute
    peak of each of `types` (all when None), highest first, from where it meets the fastest
    bandwidth."""
    gflops = {k: v for k, v in peaks["gflops"].items() if types is None or k in types} or peaks["gflops"]
    top = max(at_threads(f, threads) for f in gflops.values())
    fastest = max(at_threads(level["triad_gbs"], threads) for level in peaks["levels"])
    lines = []
    for level in peaks["levels"]:
        bandwidth = at_threads(level["triad_gbs"], threads)
        ridge = min(top / bandwidth, high)
        lines.append((f"{level['name']} {bandwidth:.3g} GB/s", [low, ridge], [bandwidth * low, bandwidth * ridge]))
    for kind, figure in sorted(gflops.items(), key=lambda item: -at_threads(item[1], threads)):
        peak = at_threads(figure, threads)
        lines.append((f"{kind} FMA {peak:.4g}", [max(peak / fastest, low), high], [peak, peak]))
    return lines


def _point_label(record: dict) -> str:
    """What a point is: its sweep values (threads aside: the panel says them), else its descriptor."""
    sweep = {k: v for k, v in (record.get("sweep") or {}).items() if k not in ("threads", "backend")}
    if sweep:
        return " ".join(f"{k}={v}" for k, v in sweep.items())
    text = record["descriptor"]
    return text if len(text) <= 32 else text[:29] + "..."


def roofline_figure(timed: list[dict], peaks: dict):
    """One panel per thread count of the results: its points, each labelled, under the roofs at
    that thread count (a 1-thread result never sits under 2-thread roofs)."""
    from matplotlib.figure import Figure

    placed = [r for r in timed if r["timing"]["intensity"] > 0]
    counts = sorted({r["timing"]["threads"] for r in placed}) or [peaks["threads"]]
    # The peaks of the types the results were placed under (opval bench records them), so that
    # the bandwidths stop at the roof that applies; every type's when no record says.
    types = {(r["timing"].get("roofline") or {}).get("peak_type") for r in placed} - {None} or None
    intensities = [r["timing"]["intensity"] for r in placed]
    low = min(intensities + [0.1]) / 4
    high = max(intensities + [10.0]) * 4
    fig = Figure(figsize=(8 * len(counts), 6))
    axes = fig.subplots(1, len(counts), squeeze=False)[0]
    for ax, threads in zip(axes, counts):
        lines = roofs(peaks, threads, low, high, types)
        last_peak = None
        for label, xs, ys in lines:
            compute = "FMA" in label
            ax.plot(xs, ys, "-" if compute else "--", linewidth=1, color="grey" if compute else None, label=label)
            # A bandwidth's label where its line starts, a peak's at its right end: above the
            # line, or below it when the previous peak is within 15% (their labels would overlap).
            close = compute and last_peak is not None and max(ys[1], last_peak) / min(ys[1], last_peak) < 1.15
            ax.annotate(label, (xs[1], ys[1]) if compute else (xs[0], ys[0]), ha="right" if compute else "left",
                        va="top" if close else "bottom", fontsize="x-small")
            if compute:
                last_peak = None if close else ys[1]
        by_backend: dict[str, list[dict]] = defaultdict(list)
        for r in placed:
            if r["timing"]["threads"] == threads:
                by_backend[r["backend"]].append(r)
        for backend, results in sorted(by_backend.items()):
            xs = [r["timing"]["intensity"] for r in results]
            ys = [r["timing"]["gflops"] for r in results]
            ax.plot(xs, ys, "o", label=f"{backend} ({len(results)} results)")
            for r, x, y in zip(results, xs, ys):
                ax.annotate(_point_label(r), (x, y), xytext=(4, 4), textcoords="offset points", fontsize="x-small")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, high)
        top = max([ys[1] for _, _, ys in lines] + [r["timing"]["gflops"] for r in placed])
        ax.set_ylim(min([ys[0] for _, _, ys in lines] + [r["timing"]["gflops"] / 2 for r in placed] + [top / 1e4]),
                    top * 3)
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{threads} thread{'s' if threads != 1 else ''}: roofs at {threads} thread{'s' if threads != 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small", loc="lower right")
    fig.suptitle(f"Roofline: {peaks['cpu_model']} (measured {peaks.get('measured_at', '?')})")
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> Path:
    fig.savefig(path)
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
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [_save(throughput_figure(timed), out / f"throughput_vs_size.{fmt}")]
    notes = []
    speedup = speedup_figure(timed)
    if speedup:
        written.append(_save(speedup, out / f"speedup_vs_threads.{fmt}"))
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
    problems = hierarchy_problems(peaks, sorted({r["timing"]["threads"] for r in timed}))
    if problems:
        notes.append(f"no roofline: the peaks in {machine_file} are not a consistent hierarchy ({'; '.join(problems)}): "
                     "opval bench --machine measures them again")
        return written, notes
    written.append(_save(roofline_figure(timed, peaks), out / f"roofline.{fmt}"))
    return written, notes
