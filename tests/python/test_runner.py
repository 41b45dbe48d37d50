"""opval.run and `python -m opval run`: the CLI's records and tables, from Python."""
import io
import json
import re
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


def test_outputs_never_overwrite_inputs_nor_lose_records(tmp_path):
    """The session's output files from Python as from the CLI: the problems file refused as the
    journal, a full disk an error saying how many records reached it, an empty path refused."""
    problems = tmp_path / "p.txt"
    problems.write_text("relu shape=8\nmatmul m=4 n=4 k=4\n")
    with pytest.raises(ValueError, match="is also an input of this run"):
        run(["sim"], problems=[str(problems)], jsonl=str(problems), out=io.StringIO())
    assert problems.read_text() == "relu shape=8\nmatmul m=4 n=4 k=4\n"
    if Path("/dev/full").exists():
        with pytest.raises(ValueError, match=r"'/dev/full' failed \(No space left on device\): 0 of 2 records reached it"):
            run(["sim"], problems=[str(problems)], jsonl="/dev/full", out=io.StringIO())
    done = subprocess.run([sys.executable, "-m", "opval", "run", "--problems", str(problems), "--jsonl", ""],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr == "opval: error: run: argument --jsonl: an empty path: give a file name\n"


def test_a_crashing_plugin_is_a_crash_verdict_and_the_run_goes_on(tmp_path):
    plugin = ROOT / "build/examples/plugins/libmisbehaving_gemm_segfault.so"
    assert plugin.exists(), f"{plugin} is missing: build the C++ tree first (scripts/setup does)"
    outcome = run([str(plugin)], problems=["matmul m=8 n=8 k=8 dt=f32", "matmul m=4 n=4 k=4 dt=f32"],
                  out=open(tmp_path / "out.txt", "w"))
    assert [r.state for r in outcome.results] == ["CRASH", "CRASH"]
    assert "SIGSEGV" in outcome.results[0].reason


@pytest.mark.parametrize("fault, message", [("crash", "worker killed by SIGSEGV"),
                                            ("exit", "worker exited with status 7 while loading it"),
                                            ("hang", "did not finish loading within 2 s")])
def test_a_plugin_that_fails_while_loading_is_one_error_naming_it(fault, message):
    """opval's worker loads the plugin: its constructor crashing, exiting or hanging never
    reaches this process."""
    plugin = ROOT / f"build/examples/plugins/libbroken_load_constructor_{fault}.so"
    assert plugin.exists(), f"{plugin} is missing: build the C++ tree first (scripts/setup does)"
    with pytest.raises(ValueError, match=f"plugin '{re.escape(str(plugin))}'.*{message}"):
        run([str(plugin)], problems=["matmul m=4 n=4 k=4"], out=io.StringIO(), timeout=2)


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


# Every selection form of `opval run` (docs/CLI.md), as (tag, ops, contracts, problems); the
# batch file is written by the test. openblas refuses all but matmul at once, so the CLI lists
# its selection in its records without running a case.
SELECTIONS = {
    "descriptor": ("smoke", [], [], ["softmax shape=3x5 dt=bf16"]),
    "batch file": ("smoke", [], [], ["{batch}"]),
    "shape set": ("smoke", [], [], ["resnet50_conv"]),
    "shape set filtered by contract": ("smoke", [], ["f32"], ["bert_base_attention"]),
    "tag": ("regression", ["log_softmax"], [], []),
    "op": ("smoke", ["softmax", "add"], [], []),
    "contract": ("smoke", ["softmax"], ["bf16"], []),
}


def cli_selection(tmp_path, tag, ops, contracts, problems):
    jsonl = tmp_path / "cli.jsonl"
    args = [opval.worker_executable(), "run", "--backend", "openblas", "--tag", tag, "--jsonl", str(jsonl)]
    for flag, values in (("--op", ops), ("--contract", contracts), ("--problems", problems)):
        for v in values:
            args += [flag, v]
    # exit 1: no case ran (openblas refuses them), which is what this run is for
    assert subprocess.run(args, stdout=subprocess.DEVNULL, cwd=ROOT).returncode in (0, 1)
    return [(r["descriptor"], r["source"]) for r in records(jsonl)]


@pytest.mark.parametrize("form", list(SELECTIONS))
def test_every_selection_form_selects_the_clis_cases(form, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the shape sets are found as the CLI finds them, from here
    batch = tmp_path / "batch.txt"
    batch.write_text("# two problems\nmatmul m=3 n=4 k=5\n\nsoftmax shape=4x7 axis=0 dt=f16\n")
    tag, ops, contracts, problems = SELECTIONS[form]
    problems = [p.format(batch=batch) for p in problems]
    cli = cli_selection(tmp_path, tag, ops, contracts, problems)
    assert cli, "the CLI selected nothing"
    inline = lambda source, label: "<command line>" if source == label else source

    py_jsonl = tmp_path / "py.jsonl"
    run(["openblas"], tag=tag, ops=ops, contracts=contracts, problems=problems or None, jsonl=str(py_jsonl),
        out=open(tmp_path / "out.txt", "w"))
    assert [(r["descriptor"], inline(r["source"], "<opval.run>")) for r in records(py_jsonl)] == cli

    # opval.check validates one op's kernel: checked op by op, it selects each op's part of the
    # selection (its contracts say what the kernel supports: no filter, so no contract form).
    from opval.check import _problems
    if contracts:
        return
    for op in sorted({d.split()[0] for d, _ in cli}):
        mine = [(str(p), inline(s, "<opval.check>")) for p, s in _problems(op, tag, problems or None)]
        assert mine == [c for c in cli if c[0].split()[0] == op], op
