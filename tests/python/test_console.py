"""The console as a person sees it (issue 16): `opval run` in a pseudo-terminal of 80 and 120
columns fits the width (a problem too long for its row gets a line of its own, whole), is
coloured unless NO_COLOR says otherwise, shows progress on stderr, summarizes refusals and
failures; off a terminal, progress is a line every period; JSONL marks known failures; --junit
writes JUnit XML that a JUnit library reads as pytest's."""
import fcntl
import json
import os
import pty
import re
import shlex
import struct
import subprocess
import termios
from pathlib import Path

import pytest

import opval

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
# Failures with long reasons (a guessed tolerance on a correct kernel), long attention problems,
# refusals (oneDNN has no attention), on two backends.
FAILING_RUN = ["run", "--tag", "smoke", "--op", "matmul", "--op", "attention", "--contract", "bf16",
               "--backend", "sim,onednn", "--policy", "fixed:rtol=1e-3,atol=0"]


def cli():
    """The CLI under test: the installed package's, or $OPVAL_CLI (a build tree's, while developing)."""
    return os.environ.get("OPVAL_CLI") or opval.worker_executable()


def run_in_terminal(args, columns, env=None, timeout=300):
    """(exit code, everything written) of `opval ARGS` with stdout and stderr on a pseudo-terminal
    `columns` wide."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    environment.update(env or {})
    environment.setdefault("TERM", "xterm")
    proc = subprocess.Popen([cli(), *args], stdin=side, stdout=side, stderr=side, env=environment, cwd=ROOT)
    os.close(side)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=timeout)
    os.close(main)
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def screen_lines(text):
    """The lines left on the screen: each line's text after its last carriage return (progress
    redrawn in place, then cleared), colours removed."""
    return [ANSI.sub("", line.rstrip("\r").split("\r")[-1]) for line in text.split("\n")]


def progress_segments(text):
    """Every progress line drawn: the text between a carriage return and the next one."""
    return [ANSI.sub("", s) for line in text.split("\n") for s in line.split("\r")[1:]
            if ANSI.sub("", s).startswith("[")]


def records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.mark.parametrize("columns", [80, 120])
def test_output_fits_the_terminal_and_never_cuts_a_problem(tmp_path, columns):
    journal = tmp_path / "run.jsonl"
    code, text = run_in_terminal([*FAILING_RUN, "--jsonl", str(journal)], columns)
    assert code == 1, text
    descriptors = {r["descriptor"] for r in records(journal)}
    repros = {r["repro"] for r in records(journal)}
    lines = screen_lines(text)
    for line in lines:
        if len(line) <= columns:
            continue
        # Only what must be copied whole may run over: a problem on its own line, a repro
        # command, a failure's line in the short summary (state, repro, then its reason).
        whole = line.strip()
        assert (whole in descriptors or whole.removeprefix("repro: ") in repros
                or any(whole.split(" ", 1)[-1].startswith(r) for r in repros)), f"{len(line)} columns: {line!r}"
    shown = "\n".join(lines)
    for d in descriptors:
        assert d in shown, f"problem {d!r} is not shown whole"
    rows = [line for line in lines if re.match(r"(sim|onednn) +(PASSED|FAILED)", line)]
    assert rows and "..." not in "".join(rows)
    # A problem longer than the row's room sits on its own line, at least once at 80 columns.
    if columns == 80:
        assert any(line.strip() in descriptors and line.startswith("  ") for line in lines)
    # The progress line never wraps (a wrapped line could not be redrawn).
    segments = progress_segments(text)
    assert segments, "no progress on the terminal"
    assert all(len(s) < columns for s in segments)
    assert any(re.match(r"\[\d+/\d+\] \d+ passed, \d+ failed, ETA ", s) for s in segments)


def test_the_headline_is_err_over_bound_and_ulps_where_they_mean_something(tmp_path):
    journal = tmp_path / "run.jsonl"
    done = subprocess.run([cli(), "run", "--tag", "regression", "--op", "layer_norm", "--op", "reduce",
                           "--jsonl", str(journal)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    header = next(line for line in done.stdout.splitlines() if line.startswith("STATE"))
    assert header.split()[:4] == ["STATE", "ERR/BOUND", "ULPS", "TIME"]
    # Correct results near zero have huge ULP counts: left out of the headline ULPs.
    near_zero = [r for r in records(journal) if r["state"] == "PASSED"
                 and max(o["metrics"]["max_ulps"] for o in r["outputs"]) > 1000]
    assert near_zero, "the suites have no passing case with a ULP count over 1000 any more"
    for r in near_zero:
        m = r["outputs"][0]["metrics"]
        assert m["max_scaled_ulps"] <= m["max_ulps"]
    assert any(max(o["metrics"]["max_scaled_ulps"] for o in r["outputs"]) < 1000 for r in near_zero)


def test_colour_on_a_terminal_unless_no_color():
    problem = ["run", "--problems", "relu shape=64", "--problems", "relu shape=8 dt=f32:f32:bf16",
               "--policy", "fixed:rtol=1e-5,atol=0"]
    code, text = run_in_terminal(problem, 120)
    assert code == 1
    assert "\x1b[32mPASSED" in text and "\x1b[1;31mFAILED" in text
    code, text = run_in_terminal(problem, 120, env={"NO_COLOR": "1"})
    assert code == 1 and not COLOUR.search(text)
    piped = subprocess.run([cli(), *problem], capture_output=True, text=True, cwd=ROOT)
    assert not COLOUR.search(piped.stdout + piped.stderr)


def test_progress_off_a_terminal_is_a_line_every_period():
    done = subprocess.run([cli(), "run", "--tag", "regression", "--op", "layer_norm"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "OPVAL_PROGRESS_INTERVAL": "0.05"})
    assert done.returncode == 0
    lines = [line for line in done.stderr.splitlines() if line.startswith("opval: ")]
    assert lines, done.stderr
    cases = len(opval.suite_problems("regression", ["layer_norm"]))
    assert re.match(rf"opval: \d+ of {cases} cases done \(\d+ passed, 0 failed\) in [\d.]+s, about \S+ left", lines[0]), lines[0]
    assert "\r" not in done.stderr and "\x1b" not in done.stderr


def test_refusals_are_counted_per_backend_and_reason_and_listed_when_verbose():
    args = ["run", "--tag", "smoke", "--op", "matmul", "--backend", "openblas"]
    done = subprocess.run([cli(), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith(("PASSED", "UNIMPLEMENTED", "SKIPPED"))]
    assert rows and all(line.startswith("PASSED") for line in rows)
    summary = done.stdout.split("\nnot run: ", 1)[1]
    refused = int(summary.split()[0])
    assert refused > 30
    counted = sum(int(m.group(1)) for m in re.finditer(r"^  openblas (\d+) (?:UNIMPLEMENTED|SKIPPED): ", summary, re.M))
    more = sum(int(m.group(1)) for m in re.finditer(r"^  openblas (\d+) more", summary, re.M))
    assert counted + more == refused
    verbose = subprocess.run([cli(), *args, "--verbose"], capture_output=True, text=True, cwd=ROOT)
    listed = [line for line in verbose.stdout.splitlines() if line.startswith(("UNIMPLEMENTED", "SKIPPED"))]
    assert len(listed) == refused


def test_short_summary_of_failures_and_quiet(tmp_path):
    journal = tmp_path / "run.jsonl"
    args = [*FAILING_RUN, "--jsonl", str(journal)]
    done = subprocess.run([cli(), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1
    failed = [r for r in records(journal) if r["state"] in ("FAILED", "MISTRUSTED", "CRASH", "TIMEOUT")]
    assert failed
    summary = done.stdout.split("\nshort summary of failures (", 1)[1].splitlines()
    assert summary[0] == f"{len(failed)}):"
    lines = summary[1:1 + len(failed)]
    for r, line in zip(failed, lines):
        assert line.startswith(f"{r['state']} {r['repro']} - "), line
    quiet = subprocess.run([cli(), *FAILING_RUN, "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert quiet.returncode == 1
    out = quiet.stdout.splitlines()
    assert out[0] == "" and out[1].startswith("short summary of failures")
    assert out[2:2 + len(failed)] == lines
    assert out[-1].endswith("skipped") and len(out) == len(failed) + 3


# relu is exact: f32 passes any tolerance, a bf16 output fails rtol=1e-5. The first failure is
# listed as known, the second is not.
KNOWN_AND_NOT = ["--problems", "relu shape=64", "--problems", "relu shape=8 dt=f32:f32:bf16",
                 "--problems", "relu shape=9 dt=f32:f32:bf16", "--policy", "fixed:rtol=1e-5,atol=0"]
KNOWN = "relu shape=8 dt=f32:f32:bf16"


def known_list(tmp_path):
    path = tmp_path / "known.txt"
    path.write_text(f"[sim]\n# planted: the guessed tolerance\n{KNOWN}\n")
    return path


def test_jsonl_marks_known_failures_and_the_readme_jq_selects_what_needs_attention(tmp_path):
    journal = tmp_path / "run.jsonl"
    done = subprocess.run([cli(), "run", *KNOWN_AND_NOT, "--known-failures", str(known_list(tmp_path)),
                           "--jsonl", str(journal)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1, done.stdout
    by_problem = {r["descriptor"]: r for r in records(journal)}
    assert by_problem[KNOWN]["state"] == "FAILED"
    assert by_problem[KNOWN]["known_failure"] == "planted: the guessed tolerance"
    assert by_problem["relu shape=9 dt=f32:f32:bf16"]["state"] == "FAILED"
    assert "known_failure" not in by_problem["relu shape=9 dt=f32:f32:bf16"]
    readme = (ROOT / "README.md").read_text()
    jq = re.search(r"^jq (.*) results/regression\.jsonl$", readme, re.M)
    assert jq, "the README's jq example is gone"
    selected = subprocess.run(["jq", *shlex.split(jq.group(1)), str(journal)], capture_output=True, text=True)
    assert selected.returncode == 0, selected.stderr
    assert selected.stdout.strip() == by_problem["relu shape=9 dt=f32:f32:bf16"]["repro"]


junitparser = pytest.importorskip("junitparser")


def test_junit_xml_of_run_reads_as_pytests(tmp_path):
    xml, journal = tmp_path / "run.xml", tmp_path / "run.jsonl"
    done = subprocess.run([cli(), "run", *KNOWN_AND_NOT, "--problems", "matmul m=4 n=4 k=4", "--backend", "sim,openblas",
                           "--known-failures", str(known_list(tmp_path)), "--junit", str(xml), "--jsonl", str(journal)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    suites = list(junitparser.JUnitXml.fromfile(str(xml)))
    assert len(suites) == 1
    suite = suites[0]
    cases = {(c.classname, c.name): c for c in suite}
    recs = records(journal)
    assert len(cases) == len(recs) == suite.tests == 8
    for r in recs:
        case = cases[(f"opval.{r['backend']}.{r['op']}", r["descriptor"])]
        results = case.result
        if r["state"] == "PASSED":
            assert not results
        elif r.get("known_failure") is not None and r["state"] == "FAILED":
            assert isinstance(results[0], junitparser.Skipped) and "known failure" in results[0].message
        elif r["state"] == "FAILED":
            assert isinstance(results[0], junitparser.Failure)
            assert results[0].message == r["reason"] and r["repro"] in results[0].text
        else:
            assert isinstance(results[0], junitparser.Skipped) and results[0].message == r["reason"]
        assert case.time == pytest.approx(r["timings"]["total"], abs=1e-6)
    assert suite.failures == sum(1 for r in recs if r["state"] == "FAILED" and r.get("known_failure") is None)
    assert suite.skipped == sum(1 for r in recs if r["state"] in ("SKIPPED", "UNIMPLEMENTED")
                                or (r["state"] == "FAILED" and r.get("known_failure") is not None))
    assert suite.failures == 1 and suite.skipped == 4
    assert suite.errors == 0
    # The same file as the journal is refused: two formats cannot share it.
    clash = subprocess.run([cli(), "run", "--problems", "relu shape=8", "--jsonl", str(journal), "--junit", str(journal)],
                           capture_output=True, text=True, cwd=ROOT)
    assert clash.returncode == 2 and "name the same file" in clash.stderr


def test_junit_xml_of_bench(tmp_path):
    xml = tmp_path / "bench.xml"
    done = subprocess.run([cli(), "bench", "--problems", "relu shape=4096", "--problems", "relu shape=8 dt=f32:f32:bf16",
                           "--budget", "0.2", "--policy", "fixed:rtol=1e-5,atol=0", "--junit", str(xml)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 1, done.stdout
    suite = list(junitparser.JUnitXml.fromfile(str(xml)))[0]
    cases = {c.name: c for c in suite}
    timed = cases["relu shape=4096 dt=f32:f32:f32"]
    assert not timed.result
    props = {p.name: p.value for p in timed.child(junitparser.Properties)}
    assert float(props["median_seconds"]) > 0 and int(props["samples"]) > 0
    failed = cases["relu shape=8 dt=f32:f32:bf16"]
    assert isinstance(failed.result[0], junitparser.Failure)
