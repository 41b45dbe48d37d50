"""opval.run: the automation entry point. Runs suites (or problems) across backends — C++
backends in a worker process, Python kernels and framework adapters in this one — writes the
CLI's JSON Lines schema, and reports with the CLI's tables. `python -m opval run ...` is the
command a CI job calls (docs/PYTHON.md, "Automation").
"""
from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import IO, Iterable, Sequence

from . import _opval
from .check import make_options

__all__ = ["run", "RunResult", "resolve_backend"]

logger = logging.getLogger("opval")


@dataclass
class RunResult:
    results: list[_opval.CaseResult]
    summary: _opval.RunSummary

    @property
    def passed(self) -> bool:
        """No case failed (known failures apart) and at least one ran."""
        ran = self.summary.total - self.summary.skipped - self.summary.unimplemented
        return self.summary.failures - self.summary.known_failed == 0 and ran > 0


def resolve_backend(spec: str | _opval.Backend) -> _opval.Backend:
    """A Backend from a registered name ('onednn'), a plugin path (a file ending in .so), or
    the Backend itself."""
    if isinstance(spec, _opval.Backend):
        return spec
    if spec.endswith(".so") or os.sep in spec:
        return _opval.load_plugin(spec)
    return _opval.Backend(spec)


def _select(tag: str, ops: Sequence[str], contracts: Sequence[str], problems: Sequence[str] | None):
    if problems:
        selected = []
        for item in problems:
            if os.path.isfile(item):
                selected += _opval.read_problem_file(item)
            else:
                selected.append((_opval.Problem(item), "<opval.run>"))
    else:
        for op in ops:
            _opval.find_op(op)  # an unknown op is an error, not an empty selection
        selected = _opval.suite_problems(tag, list(ops))
    wanted = {_opval.Contract(c).types_string() for c in contracts}
    selected = [(p, s) for p, s in selected if (not ops or p.op in ops) and (not wanted or p.contract.types_string() in wanted)]
    if not selected:
        raise ValueError("no problems selected: the filters (ops, contracts, tag) match none")
    return selected


def run(backends: Iterable[str | _opval.Backend] = ("sim",), *, tag: str = "smoke", ops: Sequence[str] = (),
        contracts: Sequence[str] = (), problems: Sequence[str] | None = None, policy: str = "bound", seed: int = 1,
        jsonl: str | None = None, known_failures: str | None = None, isolation: str = "process",
        timeout: float = 60.0, verbose: bool = False, out: IO[str] | None = None, guard: bool = True,
        poison: bool = True, input_check: bool = True, perturb: bool = True) -> RunResult:
    """Runs every selected problem on every backend (the same seed, so the same inputs) and
    reports as `opval run` does: the console table, a side-by-side table for several
    backends, and the closing line; `jsonl` gets one record per case in the CLI's schema.
    isolation="process" runs registered backends and plugins in a worker process (a crash is
    a CRASH verdict); Python backends always run in this process."""
    if isolation not in ("process", "none"):
        raise ValueError(f"isolation must be 'process' or 'none', not '{isolation}'")
    out = out or sys.stdout
    chosen = [resolve_backend(b) for b in backends]
    if not chosen:
        raise ValueError("no backend given")
    selected = _select(tag, ops, contracts, problems)
    known = _opval.KnownFailures.load(known_failures) if known_failures else None
    options = make_options(policy, seed, guard=guard, poison=poison, input_check=input_check, perturb=perturb)
    options.backend = ",".join(b.name for b in chosen)
    several = len(chosen) > 1
    reporters = ([_opval.Reporter.side_by_side()] if several else []) + [_opval.Reporter.console(verbose, several)]
    worker = None
    if isolation == "process" and any(b.isolatable for b in chosen):
        from . import worker_executable

        worker = _opval.Worker(worker_executable(), timeout)
    journal = None
    if jsonl:
        os.makedirs(os.path.dirname(os.path.abspath(jsonl)), exist_ok=True)
        journal = open(jsonl, "w", encoding="utf-8")
    summary = _opval.RunSummary()
    results = []
    start = time.monotonic()
    try:
        for r in reporters:
            out.write(r.start(options))
        for p, source in selected:
            for b in chosen:
                result = (worker.run(p, b, options, source) if worker and b.isolatable
                          else _opval.run_case(p, b, options, source))
                if known is not None:
                    result.known_failure = known.cause(result.backend, result.descriptor)
                summary.add(result)
                results.append(result)
                for r in reporters:
                    out.write(r.result(result))
                if journal:
                    journal.write(result.to_json() + "\n")
                    journal.flush()
        summary.seconds = time.monotonic() - start
        for r in reporters:
            out.write(r.finish(summary))
    finally:
        if journal:
            journal.close()
    outcome = RunResult(results, summary)
    if summary.total - summary.skipped - summary.unimplemented == 0:
        logger.warning("no case ran (all skipped or unimplemented)")
    return outcome
