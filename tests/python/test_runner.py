"""opval.run and `python -m opval run`: the CLI's records and tables, from Python."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import opval
from opval.runner import run

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "build" / "opval"


def records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def without_measurements(record):
    """A record less what differs from run to run: timings, memory, and the build's identity."""
    return {k: v for k, v in record.items() if k not in ("timings", "memory", "opval_version", "git_sha", "repro")}


def test_python_run_writes_the_clis_records(tmp_path):
    py_jsonl, cli_jsonl = tmp_path / "py.jsonl", tmp_path / "cli.jsonl"
    outcome = run(["sim", "openblas"], ops=["matmul", "softmax"], jsonl=str(py_jsonl), out=open(tmp_path / "out.txt", "w"))
    assert outcome.passed
    cli = opval.worker_executable()
    subprocess.run([cli, "run", "--op", "matmul", "--op", "softmax", "--backend", "sim,openblas", "--jsonl", str(cli_jsonl)],
                   check=True, stdout=subprocess.DEVNULL)
    ours, theirs = records(py_jsonl), records(cli_jsonl)
    assert len(ours) == len(theirs) == outcome.summary.total
    assert [without_measurements(r) for r in ours] == [without_measurements(r) for r in theirs]


def test_python_kernels_run_beside_cpp_backends(tmp_path, capsys):
    def relu(x):
        return np.maximum(x, x.dtype.type(0))

    outcome = run(["sim", opval.kernel_backend("relu", relu, contracts="f32")], ops=["relu"])
    text = capsys.readouterr().out
    assert "side by side" in text and "python:relu" in text
    assert outcome.passed and outcome.summary.passed > 0


def test_module_entry_point_exit_codes_and_errors(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "opval", "run", "--op", "relu", "--contract", "f32",
                         "--jsonl", str(tmp_path / "r.jsonl"), "--log-file", str(tmp_path / "log.txt"),
                         "--log-level", "debug"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().splitlines()[-1].endswith("passed, 0 failed, 0 skipped")
    assert "started worker process" in (tmp_path / "log.txt").read_text()
    bad = subprocess.run([sys.executable, "-m", "opval", "run", "--op", "nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("opval: error:") and "nosuch" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_crashing_plugin_is_a_crash_verdict_and_the_run_goes_on(tmp_path):
    plugin = ROOT / "build/examples/plugins/libmisbehaving_gemm_segfault.so"
    assert plugin.exists(), f"{plugin} is missing: build the C++ tree first (scripts/setup does)"
    outcome = run([str(plugin)], problems=["matmul m=8 n=8 k=8 dt=f32", "matmul m=4 n=4 k=4 dt=f32"],
                  out=open(tmp_path / "out.txt", "w"))
    assert [r.state for r in outcome.results] == ["CRASH", "CRASH"]
    assert "SIGSEGV" in outcome.results[0].reason


def test_python_backends_by_name_run_in_a_worker_process(tmp_path, monkeypatch):
    """A framework or 'module:function' backend that crashes or hangs costs its case a CRASH
    or TIMEOUT verdict; the run goes on with a fresh worker."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    problems = ["relu shape=64 dt=f32", "relu shape=8 dt=f32"]
    outcome = run(["crashing_backends:segfault_backend", "crashing_backends:relu_backend", "sim"], problems=problems,
                  out=open(tmp_path / "out.txt", "w"))
    states = [(r.backend, r.state) for r in outcome.results]
    assert states == [("python:segfault", "CRASH"), ("python:relu", "PASSED"), ("sim", "PASSED")] * 2
    crash = outcome.results[0]
    assert "SIGSEGV" in crash.reason and "relu shape=64" in crash.reason
    assert crash.repro.startswith("python -m opval run --backend crashing_backends:segfault_backend")

    hung = run(["crashing_backends:hang_backend"], problems=problems[:1], timeout=2, worker_startup=0, out=open(tmp_path / "out2.txt", "w"))
    assert hung.results[0].state == "TIMEOUT" and "time limit" in hung.results[0].reason


def test_unknown_module_backend_is_a_value_error():
    with pytest.raises(ValueError, match="nosuchmodule"):
        run(["nosuchmodule:backend"], problems=["relu shape=8 dt=f32"])
