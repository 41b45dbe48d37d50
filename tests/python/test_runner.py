"""opval.run and `python -m opval run`: the CLI's records and tables, from Python."""
import inspect
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import opval
from argument_testing import assert_names
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


def test_a_kernel_declining_in_the_python_worker_is_skipped_with_its_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    for isolation in ("process", "none"):
        outcome = run(["crashing_backends:declining_backend"], problems=["relu shape=8 dt=f32"], isolation=isolation,
                      out=open(tmp_path / f"{isolation}.txt", "w"))
        r = outcome.results[0]
        assert (r.state, r.reason) == ("SKIPPED", "relu of 8 elements declined at run time"), isolation


def test_unknown_module_backend_is_a_value_error():
    with pytest.raises(ValueError, match="nosuchmodule"):
        run(["nosuchmodule:backend"], problems=["relu shape=8 dt=f32"])


# (parameter, bad value, the error): a wrong type is a TypeError, a value out of range a ValueError.
BAD_RUN_ARGUMENTS = [
    ("backends", 3, TypeError), ("backends", [], ValueError), ("backends", ["sim", 3], TypeError),
    ("tag", 5, TypeError), ("ops", 5, TypeError), ("ops", ["relu", 5], TypeError), ("contracts", 32, TypeError),
    ("problems", 3, TypeError), ("policy", 3, TypeError), ("seed", -1, ValueError), ("seed", "1", TypeError),
    ("jsonl", 3, TypeError), ("known_failures", 3, TypeError), ("isolation", "thread", ValueError),
    ("isolation", None, TypeError), ("timeout", 0, ValueError), ("timeout", "60", TypeError),
    ("timeout", float("nan"), ValueError), ("worker_startup", -1, ValueError), ("verbose", "x", TypeError),
    ("out", 3, TypeError), ("guard", 1, TypeError), ("worst", -1, ValueError), ("threads", 4, TypeError),
    ("threads", [4097], ValueError), ("leak_check", 1001, ValueError), ("reference", 3, TypeError),
    ("reference", opval.Backend("sim"), TypeError),
]


@pytest.mark.parametrize("parameter, value, error", BAD_RUN_ARGUMENTS,
                         ids=[f"{p}={v!r}" for p, v, _ in BAD_RUN_ARGUMENTS])
def test_a_bad_argument_is_one_error_naming_the_parameter(parameter, value, error):
    out = io.StringIO()
    arguments = {"backends": ["sim"], "problems": ["relu shape=8 dt=f32"], "out": out, parameter: value}
    with pytest.raises(error) as caught:
        run(**arguments)
    assert_names(caught, "opval.run", parameter)
    assert out.getvalue() == ""


def test_every_parameter_of_run_is_checked_before_anything_runs():
    """Every public parameter, an object of no type it takes: a TypeError naming it."""
    for parameter in inspect.signature(run).parameters:
        out = io.StringIO()
        arguments = {"problems": ["relu shape=8 dt=f32"], "out": out, parameter: object()}
        with pytest.raises(TypeError) as caught:
            run(**arguments)
        assert_names(caught, "opval.run", parameter)
        assert out.getvalue() == ""


def test_one_string_is_one_backend_op_or_contract():
    outcome = run("sim", ops="relu", contracts="f32", out=io.StringIO())
    assert outcome.passed and {r.descriptor.split()[0] for r in outcome.results} == {"relu"}


def test_module_entry_point_names_the_flag_of_a_value_out_of_range():
    bad = subprocess.run([sys.executable, "-m", "opval", "run", "--op", "relu", "--worst", "-1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2, bad.stdout
    assert bad.stderr == "opval: error: --worst must be an integer from 0 to 1000, not -1\n"


def test_a_timeout_without_a_worker_to_stop_is_an_error():
    """A hang in this process could not be stopped: an explicit timeout with isolation='none'
    is refused, as `opval run --timeout 5 --isolation none` is; the default is no limit there."""
    with pytest.raises(ValueError, match="timeout cannot be kept with isolation='none'"):
        run(["sim"], problems=["relu shape=8 dt=f32"], isolation="none", timeout=5, out=io.StringIO())
    assert run(["sim"], problems=["relu shape=8 dt=f32"], isolation="none", out=io.StringIO()).passed
    bad = subprocess.run([sys.executable, "-m", "opval", "run", "--problems", "relu shape=8", "--isolation", "none",
                          "--timeout", "5"], capture_output=True, text=True)
    assert bad.returncode == 2, bad.stdout
    assert bad.stderr.startswith("opval: error: --timeout cannot be kept with --isolation none"), bad.stderr


def _interrupt_after(args: list[str], cases: int, signo: int) -> subprocess.CompletedProcess:
    """`python -m opval ARGS`, sent `signo` once `cases` cases passed: to its whole process
    group for SIGINT (a terminal's Ctrl-C reaches the workers too), to it alone for SIGTERM."""
    proc = subprocess.Popen([sys.executable, "-m", "opval", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        passed = 0
        while passed < cases:  # cases are running: the table is being written
            line = proc.stdout.readline()
            assert line, f"the run ended before it was interrupted: {proc.stderr.read()}"
            passed += "PASSED" in line
        if signo == signal.SIGINT:
            os.killpg(proc.pid, signo)
        else:
            proc.send_signal(signo)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_ctrl_c_ends_python_m_opval_run_with_one_line_and_130():
    """Ctrl-C during a run of several seconds: no traceback, one line saying how far it got,
    the shell's exit code for SIGINT."""
    done = _interrupt_after(["run", "--tag", "regression"], 20, signal.SIGINT)
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.splitlines()[-1]
    assert re.fullmatch(r"opval: interrupted by SIGINT after \d+ of \d+ cases; no journal to resume from "
                        r"\(give --jsonl FILE to be able to resume\)", last), done.stderr
    assert done.returncode == 130


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_says_how_to_resume_and_resuming_finishes_it(tmp_path, signo):
    journal = tmp_path / "run.jsonl"
    args = ["run", "--tag", "regression", "--op", "matmul", "--op", "softmax", "--jsonl", str(journal)]
    done = _interrupt_after(args, 20, signo)
    name = signal.Signals(signo).name
    assert done.returncode == 128 + signo, done.stderr
    said = re.search(rf"opval: interrupted by {name} after (\d+) of (\d+) cases; resume with: (.*)$", done.stderr)
    assert said, done.stderr
    ran, total, command = int(said[1]), int(said[2]), said[3]
    assert 20 <= ran < total
    assert len(journal.read_text().splitlines()) == ran
    assert "CRASH" not in journal.read_text()
    assert command == shlex.join([sys.executable, "-m", "opval", *args, "--resume", str(journal)])
    finished = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    assert f"{ran} cases taken from the journal, {total - ran} run now" in finished.stderr
    assert len(journal.read_text().splitlines()) == total


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


def test_sampled_verification_from_python(tmp_path):
    """verify='sampled' reaches the worker and the record says how the case was verified; the
    repro carries it."""
    jsonl = tmp_path / "sampled.jsonl"
    line = "matmul m=300 n=260 k=128 dt=f32:f32:f32"
    outcome = run(["openblas"], problems=[line], verify="sampled", jsonl=str(jsonl), out=io.StringIO())
    assert outcome.passed
    result = outcome.results[0]
    assert result.verification["method"] == "sampled"
    assert "16x16 tile" in result.verification["sample"] and "Freivalds" in result.verification["checksums"]
    assert "--verify sampled" in result.repro
    assert records(jsonl)[0]["verification"]["method"] == "sampled"
    full = run(["openblas"], problems=[line], out=io.StringIO()).results[0]
    assert full.verification["method"] == "full" and "verification" not in json.loads(full.to_json())
    with pytest.raises(ValueError, match="verify"):
        run(["openblas"], problems=[line], verify="quick")
