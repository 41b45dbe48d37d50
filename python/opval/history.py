"""The run history (docs/FLEET.md, "History"): the SQLite file that opval.run(history=...),
opval.merge(history=...), `opval run|merge|bench --history` and `opval history record` fill,
asked as `opval history` asks it. Thin callers of the library's (src/history/)."""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

from . import _opval

QUESTIONS = ("failing", "flaky", "trends", "slowest", "tiers", "runs")


def ask(database: str | os.PathLike, question: str = "failing", *, op: str | None = None, backend: str | None = None,
        case: str | None = None, limit: int = 20, metric: str = "latency", all: bool = False,
        recent: int = 5) -> list[dict[str, Any]]:
    """`opval history QUESTION --json`: the answer as a list of dicts (docs/CLI.md). question:
    failing (since which commit each failing case fails), flaky (different verdicts at one
    commit), trends (performance over runs with change points; metric 'latency' or
    'case-time', all=True for every case), slowest, tiers, runs. op, backend and case (text the
    descriptor contains) narrow it; limit rows at most (0: all). A missing or foreign database
    or an unknown question raises ValueError naming it."""
    if question not in QUESTIONS:
        raise ValueError(f"opval.history.ask: unknown question {question!r} (known: {', '.join(QUESTIONS)})")
    try:
        text = _opval.history_answer(os.fspath(database), question, op or "", backend or "", case or "", limit, metric,
                                     all, recent)
    except RuntimeError as e:
        raise ValueError(f"opval.history.ask: {e}") from None
    return json.loads(text)


def record(database: str | os.PathLike, files: Sequence[str | os.PathLike], *, commit: str | None = None,
           tier: str | None = None, label: str | None = None) -> list[int]:
    """`opval history record`: each `opval run` journal or `opval bench --jsonl` file recorded
    as one run (commit detected when None); returns the runs' ids. An unreadable or unfinished
    file raises ValueError naming it."""
    if isinstance(files, (str, os.PathLike)):
        raise TypeError("opval.history.record: files is a list of paths, not one path")
    try:
        return list(_opval.record_history(os.fspath(database), [os.fspath(f) for f in files], commit or "",
                                          tier or "", label or ""))
    except RuntimeError as e:
        raise ValueError(f"opval.history.record: {e}") from None
