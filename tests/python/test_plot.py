"""python -m opval plot: the three plots from bench records (throughput against size, speed-up
against threads with the ideal line, the roofline under the machine's peaks), the notes when a
plot cannot be drawn, and bad input as one error line with exit 2; then what a performance
engineer checks on each: the size axis and error bars, whole thread ticks, roofs in hierarchy
order, clipped at the compute peak, at the points' own thread count, and every point labelled."""
from __future__ import annotations

import json
import subprocess
import sys

import matplotlib  # scripts/setup installs it: a missing one fails here, never skips
import pytest

from matplotlib.container import ErrorbarContainer

from opval.plot import (hierarchy_problems, load_records, plot, roofline_figure, roofs, size_axis, speedup_figure,
                        throughput_figure)


ENV = {"cpu_model": "Test CPU", "logical_cpus": 2, "kernel": "Linux 1.0"}


def record(n: int, threads: int, median: float, backend: str = "sim") -> dict:
    flops, bytes_ = 2.0 * n**3, 12.0 * n * n
    return {"schema": "opval-bench", "descriptor": f"matmul m={n} n={n} k={n} dt=f32:f32:f32", "op": "matmul",
            "contract": "f32:f32:f32", "backend": backend, "timed": True, "counts": {"flops": flops, "bytes": bytes_},
            "timing": {"median": median, "ci_low": 0.95 * median, "ci_high": 1.1 * median, "threads": threads,
                       "gflops": flops / median / 1e9,
                       "gbytes_per_second": bytes_ / median / 1e9, "intensity": flops / bytes_},
            "sweep": {"n": str(n), "threads": str(threads)}, "environment": ENV}


def peaks() -> dict:
    level = lambda name, size, gbs: {"name": name, "bytes_per_cpu": size, "copy_gbs": {"one": gbs, "all": gbs},
                                     "triad_gbs": {"one": gbs, "all": 2 * gbs}}
    return {"schema": "opval-machine", "schema_version": 1, **ENV, "threads": 2, "isa": "avx512",
            "measured_at": "2026-01-01T00:00:00Z", "gflops": {"f32": {"one": 100, "all": 200}},
            "levels": [level("L2", 1 << 20, 50), level("DRAM", 0, 10)], "stream_array_bytes": 1 << 26}


def write_jsonl(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_the_three_plots_are_drawn(tmp_path):
    assert matplotlib.__version__
    results = write_jsonl(tmp_path / "r.jsonl", [record(n, t, 1e-6 * n**3 / (t * 50)) for n in (64, 128) for t in (1, 2)])
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps(peaks()))
    written, notes = plot([results], tmp_path / "plots", "png", str(machine))
    assert [p.name for p in written] == ["throughput_vs_size.png", "speedup_vs_threads.png", "roofline.png"]
    assert notes == []
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size > 10000
    svg, _ = plot([results], tmp_path / "svg", "svg", str(machine))
    assert all(p.read_text().lstrip().startswith("<?xml") for p in svg)
    # The speed-up plot holds the ideal line: its label is in the SVG.
    assert "ideal (linear)" in (tmp_path / "svg" / "speedup_vs_threads.svg").read_text()


def test_plots_that_cannot_be_drawn_are_named(tmp_path):
    results = write_jsonl(tmp_path / "r.jsonl", [record(64, 1, 1e-3), record(128, 1, 8e-3)])
    elsewhere = peaks() | {"cpu_model": "Other CPU"}
    (tmp_path / "other.json").write_text(json.dumps(elsewhere))
    written, notes = plot([results], tmp_path, "png", str(tmp_path / "other.json"))
    assert [p.name for p in written] == ["throughput_vs_size.png"]
    assert notes[0].startswith("no speed-up plot: no case was timed at more than one thread count")
    assert "another machine's" in notes[1]
    _, notes = plot([results], tmp_path, "png", str(tmp_path / "missing.json"))
    assert notes[1].startswith("no roofline: no machine peaks readable in")


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "run.jsonl"
    bad.write_text(json.dumps({"schema": "opval-run"}) + "\n")
    with pytest.raises(ValueError, match=r"run.jsonl:1: not an opval bench record"):
        load_records([bad])
    untimed = write_jsonl(tmp_path / "u.jsonl", [record(8, 1, 1e-6) | {"timed": False, "timing": None}])
    for args, culprit in ((["plot", str(bad)], "run.jsonl:1"), (["plot", untimed], "no timed result"),
                          (["plot", str(tmp_path / "none.jsonl")], "none.jsonl")):
        done = subprocess.run([sys.executable, "-m", "opval", *args, "--out", str(tmp_path)], capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("opval: error: ") and culprit in lines[0], done.stderr
    with pytest.raises(ValueError, match="unknown plot format 'gif'"):
        plot([untimed], tmp_path, "gif")


def sweep_records() -> list[dict]:
    return [record(n, t, 1e-6 * n**3 / (t * 50)) for n in (64, 128, 256) for t in (1, 2)]


def test_throughput_is_against_the_size_axis_with_the_intervals_as_error_bars():
    timed = sweep_records()
    assert size_axis(timed) == "n"
    ax = throughput_figure(timed).axes[0]
    assert ax.get_xlabel().startswith("n ")
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2  # one line per thread count
    line = bars[0].lines[0]
    assert list(line.get_xdata()) == [64, 128, 256]  # the sizes, not 2 n^3 FLOPs
    # The bar of n=64 on one thread spans the throughput at ci_high and at ci_low.
    r = timed[0]
    segments = bars[0].lines[2][0].get_segments()
    low, high = sorted(y for _, y in segments[0])
    assert low == pytest.approx(r["timing"]["gflops"] / 1.1) and high == pytest.approx(r["timing"]["gflops"] / 0.95)
    # Records from no sweep: the case's bytes.
    plain = [record(n, 1, 1e-3) | {"sweep": None} for n in (64, 128)]
    assert size_axis(plain) is None
    assert throughput_figure(plain).axes[0].get_xlabel().startswith("bytes")


def test_speedup_ticks_are_the_thread_counts():
    ax = speedup_figure(sweep_records() + [record(64, 4, 1e-6 * 64**3 / 150)]).axes[0]
    assert list(ax.get_xticks()) == [1, 2, 4]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4"]


def test_roofs_are_in_hierarchy_order_and_clipped_at_the_compute_peak():
    p = peaks() | {"gflops": {"f32": {"one": 100, "all": 200}, "f64": {"one": 50, "all": 100}}}
    for threads, top in ((1, 100), (2, 200)):
        lines = {label.split()[0]: (xs, ys) for label, xs, ys in roofs(p, threads, 0.01, 1000)}
        # One thread: L2 50 GB/s over DRAM 10; two: 100 over 20 (one-thread x 2, capped at all).
        assert lines["L2"][1][0] > lines["DRAM"][1][0]
        assert lines["L2"][1][0] == pytest.approx(0.01 * 50 * threads)
        for name in ("L2", "DRAM"):
            assert max(lines[name][1]) == pytest.approx(top), "a bandwidth line stops at the highest peak"
        assert lines["f32"][1] == [top, top]
        assert lines["f32"][0][0] == pytest.approx(top / (50 * threads)), "a peak starts at its ridge"


def test_the_roofline_has_a_panel_per_thread_count_and_labels_every_point():
    timed = sweep_records()
    fig = roofline_figure(timed, peaks())
    assert [ax.get_title() for ax in fig.axes] == ["1 thread: roofs at 1 thread", "2 threads: roofs at 2 threads"]
    for ax, threads in zip(fig.axes, (1, 2)):
        points = [line for line in ax.lines if line.get_marker() == "o"]
        assert len(points) == 1 and len(points[0].get_xdata()) == 3
        expected = sorted(r["timing"]["gflops"] for r in timed if r["timing"]["threads"] == threads)
        assert sorted(points[0].get_ydata()) == pytest.approx(expected), "only this thread count's results"
        texts = {t.get_text() for t in ax.texts}
        assert {"n=64", "n=128", "n=256"} <= texts
        assert "L2 100 GB/s" in texts if threads == 2 else "L2 50 GB/s" in texts
        low, high = ax.get_ylim()
        assert all(low < y < high for y in expected), "no point falls off the panel"


def test_the_roofline_draws_the_peaks_its_results_were_placed_under():
    p = peaks() | {"gflops": {"f32": {"one": 100, "all": 200}, "int8": {"one": 400, "all": 800}}}
    assert {label.split()[0] for label, _, _ in roofs(p, 1, 0.01, 1000)} == {"L2", "DRAM", "int8", "f32"}
    lines = roofs(p, 1, 0.01, 1000, {"f32"})
    assert [label for label, _, _ in lines] == ["L2 50 GB/s", "DRAM 10 GB/s", "f32 FMA 100"]
    assert max(lines[0][2]) == pytest.approx(100), "clipped at f32's peak, not int8's"
    placed = [r | {"timing": r["timing"] | {"roofline": {"peak_type": "f32"}}} for r in sweep_records()]
    texts = {t.get_text() for ax in roofline_figure(placed, p).axes for t in ax.texts}
    assert "f32 FMA 100" in texts and not any(t.startswith("int8") for t in texts)


def test_an_impossible_hierarchy_draws_no_roofline(tmp_path):
    bad = peaks()  # a file saved before opval bench --machine checked its hierarchy, on a loaded machine
    bad["levels"][0]["triad_gbs"] = {"one": 50, "all": 50}  # L2 on 2 threads no faster than on one
    bad["levels"][1]["triad_gbs"] = {"one": 40, "all": 80}
    assert hierarchy_problems(bad, [1]) == []
    assert hierarchy_problems(bad, [2]) == ["L2 50 GB/s below DRAM's 80 GB/s on 2 thread(s)"]
    bad["levels"][0]["triad_gbs"] = {"one": 5, "all": 5}
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps(bad))
    written, notes = plot([write_jsonl(tmp_path / "r.jsonl", sweep_records())], tmp_path / "plots", "png", str(machine))
    assert [p.name for p in written] == ["throughput_vs_size.png", "speedup_vs_threads.png"]
    assert "not a consistent hierarchy (L2 5 GB/s below DRAM's 40 GB/s on 1 thread(s); L2 5 GB/s below DRAM's 80 GB/s on " \
        "2 thread(s)): opval bench --machine measures them again" in notes[0]
