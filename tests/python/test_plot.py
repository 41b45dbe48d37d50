"""python -m opval plot: the three plots from bench records (throughput against size, speed-up
against threads with the ideal line, the roofline under the machine's peaks), the notes when a
plot cannot be drawn, and bad input as one error line with exit 2."""
from __future__ import annotations

import json
import subprocess
import sys

import matplotlib  # scripts/setup installs it: a missing one fails here, never skips
import pytest

from opval.plot import load_records, plot


ENV = {"cpu_model": "Test CPU", "logical_cpus": 2, "kernel": "Linux 1.0"}


def record(n: int, threads: int, median: float, backend: str = "sim") -> dict:
    flops, bytes_ = 2.0 * n**3, 12.0 * n * n
    return {"schema": "opval-bench", "descriptor": f"matmul m={n} n={n} k={n} dt=f32:f32:f32", "op": "matmul",
            "contract": "f32:f32:f32", "backend": backend, "timed": True, "counts": {"flops": flops, "bytes": bytes_},
            "timing": {"median": median, "threads": threads, "gflops": flops / median / 1e9,
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
