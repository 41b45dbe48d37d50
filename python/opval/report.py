"""The HTML report to share (docs/REPORTS.md): a thin call to the library's, as `opval report`."""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from . import _opval

Trend = tuple[str, str, Sequence[tuple[str, float]]]


def _paths(what: str, files: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> list[str]:
    if isinstance(files, (str, os.PathLike)):
        raise TypeError(f"opval.report: {what} is a list of paths, not one path")
    return [os.fspath(f) for f in files]


def report(journals: Iterable[str | os.PathLike[str]] = (), *, output: str | os.PathLike[str],
           bench: Iterable[str | os.PathLike[str]] = (), title: str = "opval report",
           trends: Iterable[Trend] = (), history: str | os.PathLike[str] | None = None) -> str:
    """Writes one self-contained HTML file to `output` from run journals (opval.run(..., jsonl=...))
    and bench records (opval bench --jsonl): the summary, every failure with its worst elements
    and heatmap, the error and ULP histograms, the bias test, scaling, the roofline, and the
    performance trends (`trends`: (case, unit, [(run label, value), ...]) per case; `history`: a
    run history's, with their change points, and its tiers' wall times). Returns
    what the report holds, in words. A file that cannot be read, or holds a line that is not one
    of its records, raises ValueError naming it, and nothing is written."""
    try:
        return _opval.write_html_report(_paths("journals", journals), _paths("bench", bench), os.fspath(output), title,
                                        [(name, unit, [(str(r), float(v)) for r, v in points])
                                         for name, unit, points in trends], os.fspath(history) if history else "")
    except RuntimeError as e:
        raise ValueError(f"opval.report: {e}") from None
