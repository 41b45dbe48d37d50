"""opval.run: the automation entry point. Runs suites (or problems) across backends — C++
backends and plugins in opval's worker process, framework adapters in a Python worker process,
Python kernels in this one — writes the
CLI's JSON Lines schema, and reports with the CLI's tables. `python -m opval run ...` is the
command a CI job calls (docs/PYTHON.md, "Automation").
"""
from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import IO, Iterable, Sequence

from . import _opval
from .arguments import checked
from .backends import resolve_backend, resolve_reference, runs_in_python_worker
from .check import generated, make_options, select

__all__ = ["run", "RunResult", "resolve_backend", "PythonWorker", "worker_main"]

logger = logging.getLogger("opval")


@dataclass
class RunResult:
    results: list[_opval.CaseResult]
    summary: _opval.RunSummary
    coverage: list = field(default_factory=list)  #: opval.Coverage per op and backend of a generated suite

    @property
    def passed(self) -> bool:
        """No case failed (known failures apart) and at least one ran."""
        ran = self.summary.total - self.summary.skipped - self.summary.unimplemented
        return self.summary.failures - self.summary.known_failed == 0 and ran > 0


def _exit_text(returncode: int) -> str:
    if returncode < 0:
        sig = signal.Signals(-returncode)
        return f"worker killed by {sig.name} ({signal.strsignal(sig)})"
    return f"worker exited with status {returncode} during the case"


class PythonWorker:
    """Runs cases of framework adapters (torch, torch.compile, ...) in a child Python process,
    `python -m opval __worker`, kept from case to case: a crash or hang in the framework is a
    CRASH or TIMEOUT verdict and the run goes on with a fresh child, as the C++ worker does for
    C++ backends. The limit per case is `timeout` plus 10 s per GFLOP, plus `startup` for the
    first case of a child (importing the framework, a first compilation)."""

    def __init__(self, timeout: float, startup: float = 180.0):
        self.timeout, self.startup = timeout, startup
        self._proc: subprocess.Popen | None = None
        self._fresh = False

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def _start(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "opval", "__worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, bufsize=1)
        self._fresh = True
        logger.debug("started Python worker process %d", self._proc.pid)

    def _read_line(self, deadline: float) -> str | None:
        """One line from the child, or None at its end or at the deadline (then it is killed)."""
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            if not sel.select(max(0.0, deadline - time.monotonic())):
                self._proc.kill()
                return None
        line = self._proc.stdout.readline()
        return line or None

    def run(self, p: _opval.Problem, source: str, name: str, backend: _opval.Backend, options: _opval.RunOptions,
            settings: dict) -> _opval.CaseResult:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        limit = self.timeout + 10.0 * p.counts()[0] / 1e9 + (self.startup if self._fresh else 0.0)
        self._fresh = False
        start = time.monotonic()
        try:
            self._proc.stdin.write(json.dumps({"problem": str(p), "source": source, "backend": name, "settings": settings}) + "\n")
            self._proc.stdin.flush()
            line = self._read_line(start + limit)
        except BrokenPipeError:
            line = None
        if line is not None and line.startswith("result: "):
            return _opval.CaseResult.from_json(line[len("result: "):])
        timed_out = self._proc.poll() is None or time.monotonic() - start >= limit
        if self._proc.poll() is None:
            self._proc.kill()
        returncode = self._proc.wait()
        self._proc = None
        where = f" while running '{p}' on {name}"
        if timed_out and returncode == -signal.SIGKILL:
            state, reason = "TIMEOUT", f"no result within the time limit of {limit:g} s: worker killed with SIGKILL{where}"
        else:
            state, reason = "CRASH", _exit_text(returncode) + where
        logger.info("lost the Python worker process (%s): %s; the next case starts a new one", state, reason)
        return _opval.unfinished_case(p, source, backend, options, state, reason)


def worker_main() -> int:
    """The child of PythonWorker: one JSON request per line on stdin, one `result: ` line per
    case on its original stdout (stdout itself goes to stderr, so that prints cannot corrupt
    the answers)."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    backends: dict[str, _opval.Backend] = {}
    for line in sys.stdin:
        request = json.loads(line)
        name = request["backend"]
        if name not in backends:
            backends[name] = resolve_backend(name)
        options = make_options(**request["settings"])
        result = _opval.run_case(_opval.Problem(request["problem"]), backends[name], options, request["source"])
        answers.write("result: " + result.to_json() + "\n")
    return 0


def _made_in_worker(spec) -> bool:
    """Backends given by a registered name or a plugin path: opval's worker makes them, so a
    plugin's loading never runs in this process."""
    return isinstance(spec, str) and not runs_in_python_worker(spec)


def _in_worker(worker: _opval.Worker, spec: str) -> _opval.Backend:
    plugin = spec.endswith(".so") or os.sep in spec
    return worker.make(plugin=spec) if plugin else worker.make(name=spec)


def coverage(backends: Iterable[str | _opval.Backend] = ("sim",), *, ops: Sequence[str] = (),
             contracts: Sequence[str] = (), seed: int = 1, suite_budget: int = 200) -> list[_opval.Coverage]:
    """What the generated suite covers of each op on each backend, from their supports() answers
    alone: no kernel runs (docs/COVERAGE.md). Backends as opval.run takes them: a registered name
    or a plugin path is made and asked in opval's worker process (a plugin's code never runs
    here); a Backend object (a Python kernel from opval.kernel_backend) here. One opval.Coverage
    per op and backend: .text() is the console report, .json() the JSON Lines record."""
    a = checked("opval.coverage", locals())
    worker = None
    if any(_made_in_worker(b) for b in a.backends):
        from . import worker_executable

        worker = _opval.Worker(worker_executable(), _DEFAULT_TIMEOUT)
    chosen = [_in_worker(worker, b) if worker and _made_in_worker(b) else resolve_backend(b) for b in a.backends]
    return generated(chosen, a.ops, a.contracts or [], a.seed, a.suite_budget, worker)[1]


# The limit per case when no timeout is given: `opval run`'s --timeout default.
_DEFAULT_TIMEOUT = next(o["default"] for o in _opval.session_options() if o["keyword"] == "timeout")


def run(backends: Iterable[str | _opval.Backend] = ("sim",), *, tag: str | None = None, ops: Sequence[str] = (),
        contracts: Sequence[str] = (), problems: Sequence[str] | None = None, policy: str = "bound", seed: int = 1,
        jsonl: str | None = None, known_failures: str | None = None, isolation: str = "process",
        timeout: float | None = None, worker_startup: float = 180.0, verbose: bool = False, out: IO[str] | None = None, guard: bool = True,
        guard_before: bool = False, guard_tight: bool = False, poison: bool = True, input_check: bool = True,
        perturb: bool = True, worst: int = 5, threads: Sequence[int] = (), leak_check: int = 0, max_memory: float = 0.0,
        verify: str = "auto", reference: str | None = None, resume: str | None = None, shard: str | None = None,
        command: str | None = None, suite_budget: int = 200, history: str | None = None, commit: str | None = None,
        tier: str | None = None, label: str | None = None, budget: str | float | None = None,
        changes: str | None = None, seeds: int = 0) -> RunResult:
    """Runs every selected problem on every backend (the same seed, so the same inputs) and
    reports as `opval run` does: the console table, a side-by-side table for several
    backends, and the closing line; `jsonl` gets one record per case in the CLI's schema.
    isolation="process" makes and runs registered backends and plugins given by name in opval's
    worker process (a plugin that crashes, exits or hangs while loading raises ValueError
    naming it; its code never runs here), and
    framework adapters and 'module:function' backends given by name in a Python worker process
    (a crash or a hang is a CRASH or TIMEOUT verdict); Backend objects made here (a Python
    kernel from opval.kernel_backend) run in this process.
    reference: judge against a framework in float64 ('torch', 'onnxruntime', 'jax') or any
    backend at the contract ('onednn', 'torch@contract', a plugin path) instead of opval's
    fp64 reference (opval.backends.resolve_reference). A reference only Python can make (a
    framework, 'module:function') sends every backend given by name to the Python worker.
    One string is one backend, op, contract or problem. A bad argument is a TypeError or
    ValueError naming it, before a worker starts (opval.arguments); so is a selection that
    matches nothing (an unknown tag or op).
    tag="generated": each op's suite made for the backends from their supports() answers (in
    the worker for one made there), with suite_budget cases per op and contract, and its
    coverage reported; RunResult.coverage holds it (docs/COVERAGE.md).
    resume: finish the run whose `jsonl` journal this is (the same selection and options).
    shard: 'I/N' runs only shard I of N of the cases (balanced by estimated cost; 'auto': the
    shard the engine's environment names), each record saying its place in the whole run;
    opval.merge joins the shards' journals (docs/FLEET.md).
    history: an SQLite run history (made when missing) to record the run in, with `commit`
    (default: the CI's variable or `git rev-parse HEAD`), `tier` and `label`; opval.history
    asks it. tier 'smoke', 'regression' or 'nightly' also chooses the suite (tag None), the
    seeds (0) and the budget (None) not given. budget: a duration ('10m', or seconds): only the
    cases that fit it by their recorded or estimated times, most important first (recent
    failures and flaky cases from `history`, the ops and backends `changes` — a git revision or
    a file of paths — touches, then feature coverage); each result's `choice` says why.
    seeds: each case at that many seeds from `seed` (0: 1, or the tier's).
    verify: 'full' (every output element against the fp64 reference), 'sampled' (a stratified
    sample of elements and the op's checksums, one kernel run) or 'auto' (sampled from 8e9 FLOPs
    up); each result's `verification` says which (docs/NUMERICS.md, "Sampled verification").
    Ctrl-C or SIGTERM ends the run between two cases and raises KeyboardInterrupt saying how
    many ran and how to resume (`command`, the command line that started the run, is what it
    says to resume with; python -m opval run gives its own)."""
    a = checked("opval.run", locals())
    _check_combinations(a)
    a.timeout = _DEFAULT_TIMEOUT if a.timeout is None else a.timeout
    out = a.out or sys.stdout
    budget = "" if a.budget is None else str(a.budget)
    tag, seeds, budget = _opval.apply_tier(a.tier or "", a.tag or "", a.seeds, budget)
    if budget:
        _opval.parse_budget(budget)  # a bad duration is bad input before any worker starts
    if a.changes and not budget:
        raise ValueError("opval.run: changes orders the cases a budget chooses: give budget (or a tier with one)")
    generate = tag == _opval.GENERATED_TAG and not a.problems
    selected = [] if generate else select(tag, a.ops, a.contracts or [], a.problems)
    settings = dict(policy=a.policy, seed=a.seed, guard=a.guard, guard_before=a.guard_before, guard_tight=a.guard_tight,
                    poison=a.poison, input_check=a.input_check, perturb=a.perturb, worst=a.worst, threads=a.threads,
                    leak_check=a.leak_check, max_memory=a.max_memory, verify=a.verify, reference=a.reference)
    options = make_options(**settings)
    specs, reference, isolation = a.backends, a.reference, a.isolation
    worker = None
    if isolation == "process" and any(_made_in_worker(b) for b in specs):
        from . import worker_executable

        worker = _opval.Worker(worker_executable(), a.timeout)
    chosen = [_in_worker(worker, b) if worker and _made_in_worker(b) else resolve_backend(b) for b in specs]
    # Backends named by string that Python can make again run in a Python worker process; all
    # of them do when the reference is one only Python can make (the C++ worker cannot).
    python_reference = reference is not None and not resolve_reference(reference)[0].isolatable
    adapter_names = [b if runs_in_python_worker(b) or (python_reference and isinstance(b, str)) else None for b in specs]
    python_repro = [(b if isinstance(b, str) else c.name) if runs_in_python_worker(b) or python_reference else None
                    for b, c in zip(specs, chosen)]
    options.backend = ",".join(b.name for b in chosen)
    if isolation == "process" and any(b.isolatable for b in chosen) and worker is None:
        from . import worker_executable

        worker = _opval.Worker(worker_executable(), a.timeout)
    coverage = []
    if generate:
        selected, coverage = generated(chosen, a.ops, a.contracts or [], a.seed, a.suite_budget,
                                       worker if isolation == "process" else None)
    python_worker = PythonWorker(a.timeout, a.worker_startup) if isolation == "process" and any(adapter_names) else None

    def route(b: _opval.Backend, adapter: str | None, repro_name: str | None):
        """How b's cases run, and the repro in Python's words when the CLI cannot rerun them."""
        run_there = None
        if python_worker and adapter:
            def run_there(p, source, adapter=adapter, b=b):
                return python_worker.run(p, source, adapter, b, options, settings)
        style = "python_run" if repro_name else ""
        return (run_there, style, repro_name or "", reference or "", "")

    interrupted: list[str] = []

    def warn(line: str) -> None:
        """The session's notes to the logger; the interruption's becomes the KeyboardInterrupt."""
        text = line.removeprefix("opval: ")
        if text.startswith("interrupted by "):
            interrupted.append(text)
        else:
            logger.warning("%s", text)

    try:
        # The library's session: the reporters, the journal, known failures, the summary.
        code, summary, results = _opval.run_session(
            selected, options, chosen, [route(*x) for x in zip(chosen, adapter_names, python_repro)],
            worker if isolation == "process" else None, out=out, warn=warn, jsonl=a.jsonl or "",
            known_failures=a.known_failures or "", verbose=a.verbose, resume=a.resume or "", command=a.command or "",
            coverage=coverage, shard=a.shard or "", history=a.history or "", commit=a.commit or "",
            tier=a.tier or "", label=a.label or "", budget=budget, changes=a.changes or "", seeds=seeds)
    finally:
        if python_worker:
            python_worker.close()
    if interrupted:
        raise KeyboardInterrupt(_in_python_words(interrupted[0], a.command, a.resume or a.jsonl))
    return RunResult(results, summary, coverage)


def merge(journals: Sequence[str], *, jsonl: str | None = None, verbose: bool = False,
          out: IO[str] | None = None, history: str | None = None, commit: str | None = None,
          tier: str | None = None, label: str | None = None) -> RunResult:
    """Joins the journals of a sharded run's shards (opval.run(..., shard="I/N", jsonl=...)), in
    any order, into the whole run: its results in the unsharded run's order, reported as
    opval.run reports them; `jsonl` gets the records as the unsharded run writes them. A
    missing, duplicated or unfinished shard, or journals of different runs, raise ValueError
    naming it (docs/FLEET.md). `history` records the whole run there, as opval.run does."""
    if isinstance(journals, str):
        raise TypeError("opval.merge: journals is a list of paths, not one string")
    try:
        code, summary, results = _opval.merge_session([str(j) for j in journals], out=out or sys.stdout,
                                                      warn=lambda line: logger.info("%s", line.removeprefix("opval: ")),
                                                      jsonl=jsonl or "", verbose=verbose, history=history or "",
                                                      commit=commit or "", tier=tier or "", label=label or "")
    except RuntimeError as e:
        raise ValueError(f"opval.merge: {e}") from None
    return RunResult(results, summary, [])


def _check_combinations(a) -> None:
    """Arguments that are each fine but do not go together: a ValueError naming them."""
    if a.timeout is not None and a.isolation == "none":
        e = ValueError("opval.run: timeout cannot be kept with isolation='none': the case runs in this process, "
                       "with no worker to stop; drop one of them")
        # How python -m opval run says it, under its flags (its _error_line).
        e.parameter = "timeout"
        e.wording = "cannot be kept with --isolation none: the case runs in this process, with no worker to stop"
        raise e
    if a.resume and a.jsonl and a.resume != a.jsonl:
        raise ValueError("opval.run: resume appends to its journal: give no jsonl, or the same file")


def _in_python_words(message: str, command: str | None, journal: str | None) -> str:
    """The session's interruption message; called as opval.run (no command line), it says to
    resume with opval.run's `resume` rather than with the CLI's --resume."""
    head, _, _ = message.partition("; resume with --resume ")
    if command or not journal or head == message:
        return message
    return f"{head}; resume with: opval.run(<the same arguments>, resume={journal!r})"
