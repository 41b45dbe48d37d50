"""The ONNX backend node tests through opval's fp64 graph reference (docs/GRAPH.md).

The onnx package generates them (onnx.backend.test.loader.load_model_tests(kind="node")): one
small model per case with its inputs and the outputs ONNX's NumPy reference computed. Each case
whose every node opval maps (an opval op or a structural op) is run by opval.graph.reference and
its outputs compared as ONNX's own backend runner does (|ours - expected| <= atol + rtol *
|expected|, the case's rtol and atol; integers and booleans exactly). The `_expanded` cases, an
op's function-body decomposition, are also compared with the fused case's output, computed by
opval too: a fused-versus-decomposed pair.

    python -m opval.onnx_node_tests [--markdown] [--op OPTYPE ...]

prints passed / mapped / total per ONNX op type and the cases that did not pass, with why.
"""
from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import onnx
import onnx.numpy_helper

from . import _opval, graph

_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


@dataclass
class CaseResult:
    name: str
    subject: str        # the ONNX op type the case tests
    expanded: bool      # a function-body decomposition of it
    mapped: bool        # every node is an op or structural op opval maps
    passed: bool = False
    why: str = ""
    outputs: list | None = None  # opval's outputs, for the fused-versus-decomposed comparison


def load_cases() -> list:
    """The node test cases of the installed onnx package (generated in memory, ~10 s)."""
    from onnx.backend.test import loader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own NumPy warnings (divide by zero, ...)
        return loader.load_model_tests(kind="node")


def subject_of(case) -> str:
    """The op type a case tests: its one node's (Constant nodes feeding it aside)."""
    types = {n.op_type for n in case.model.graph.node if n.op_type != "Constant"}
    if len(types) == 1:
        return types.pop()
    types = {n.op_type for n in case.model.graph.node}
    return types.pop() if len(types) == 1 else "(several ops)"


def _close(ours: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> tuple[bool, str]:
    if tuple(ours.shape) != tuple(expected.shape):
        return False, f"shape {list(ours.shape)}, expected {list(expected.shape)}"
    if expected.dtype.kind in "iub":
        bad = ours.astype(np.int64) != expected.astype(np.int64)
        return (not bad.any()), (f"{int(bad.sum())} integer elements differ" if bad.any() else "")
    e = expected.astype(np.float64)
    nan = np.isnan(e) | np.isnan(ours)
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities compare equal above
        same = (np.isnan(e) == np.isnan(ours)) & ((ours == e) | (np.abs(ours - e) <= atol + rtol * np.abs(e)) | nan)
    if same.all():
        return True, ""
    worst = np.nanmax(np.where(same, 0, np.abs(ours - e)))
    return False, f"{int((~same).sum())} of {same.size} elements outside rtol={rtol:g} atol={atol:g} (max |diff| {worst:.3g})"


def _array(a) -> np.ndarray:
    """A data set's array: some cases hold TensorProtos (bf16 and fp8 as ml_dtypes arrays)."""
    if isinstance(a, onnx.TensorProto):
        return onnx.numpy_helper.to_array(a)
    return np.asarray(a)


def _inputs_of(case, arrays: list) -> dict:
    initializers = {t.name for t in case.model.graph.initializer}
    names = [i.name for i in case.model.graph.input if i.name not in initializers]
    return dict(zip(names, (_array(a) for a in arrays)))


def run_case(case, subject: str) -> CaseResult:
    result = CaseResult(case.name, subject, bool(_EXPANDED.search(case.name)), False)
    try:
        nodes = graph.info(case.model)
    except ValueError as e:
        result.why = f"the model does not read: {e}"
        return result
    unsupported = sorted({n["op_type"] for n in nodes if n["role"] == "unsupported"})
    if unsupported:
        result.why = "unmapped: " + ", ".join(unsupported)
        return result
    result.mapped = True
    try:
        for inputs, expected in case.data_sets:
            ref = graph.reference(case.model, _inputs_of(case, inputs))
            names = [o.name for o in case.model.graph.output]
            ours = [ref.values[n] for n in names]
            for name, o, e in zip(names, ours, expected):
                ok, why = _close(o, _array(e), case.rtol, case.atol)
                if not ok:
                    result.why = f"output '{name}': {why}"
                    return result
            result.outputs = ours
    except graph.Unsupported as e:
        result.mapped = False
        result.why = f"unmapped form: {e}"
        return result
    except ValueError as e:
        result.why = f"error: {e}"
        return result
    result.passed = True
    return result


def fused_versus_decomposed(results: Iterable[CaseResult]) -> list[tuple[str, str]]:
    """Each expanded case that passed against its fused partner (both run by opval) where the
    two disagree beyond 1e-12 relative: (case, why). The two are the same function in exact
    arithmetic; opval's fp64 references of each must agree to fp64 rounding."""
    by_name = {r.name: r for r in results}
    disagreements = []
    for r in by_name.values():
        if not (r.expanded and r.passed):
            continue
        fused = by_name.get(_EXPANDED.sub("", r.name))
        if not fused or not fused.passed:
            continue
        for a, b in zip(fused.outputs, r.outputs):
            if a.dtype.kind == "f" and not np.allclose(a, b, rtol=1e-12, atol=1e-300, equal_nan=True):
                with np.errstate(invalid="ignore"):
                    disagreements.append((r.name, f"max |fused - expanded| {np.nanmax(np.abs(a - b)):.3g}"))
    return disagreements


def run_all(op_types: set[str] | None = None) -> list[CaseResult]:
    """Every node test of the op types opval maps (or of `op_types`)."""
    mapped, structural = _opval.graph_op_types()
    wanted = op_types or set(mapped) | set(structural)
    cases = load_cases()
    # An expanded case tests what its fused partner tests.
    subjects = {c.name: subject_of(c) for c in cases if not _EXPANDED.search(c.name)}
    results = []
    for case in cases:
        subject = subjects.get(_EXPANDED.sub("", case.name), "(several ops)")
        if subject in wanted:
            results.append(run_case(case, subject))
    return results


def table(results: list[CaseResult], markdown: bool) -> str:
    rows = defaultdict(lambda: [0, 0, 0, 0, 0])  # passed, mapped, total; expanded passed, expanded total
    for r in results:
        row = rows[r.subject]
        if r.expanded:
            row[3] += r.passed
            row[4] += 1
        else:
            row[0] += r.passed
            row[1] += r.mapped
            row[2] += 1
    mapped, _ = _opval.graph_op_types()
    lines = []
    head = ("ONNX op", "opval", "passed / mapped / total", "expanded: passed / total")
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "| --- | --- | --- | --- |"]
    for op in sorted(rows):
        p, m, t, ep, et = rows[op]
        cells = (op, mapped.get(op, "structural"), f"{p} / {m} / {t}", f"{ep} / {et}" if et else "-")
        lines.append("| " + " | ".join(cells) + " |" if markdown else f"{cells[0]:<20} {cells[1]:<16} {cells[2]:<24} {cells[3]}")
    totals = [sum(r[i] for r in rows.values()) for i in range(5)]
    summary = (f"all: {totals[0]} passed of {totals[1]} mapped of {totals[2]} cases; expanded: {totals[3]} passed of "
               f"{totals[4]}")
    lines.append(summary)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opval.onnx_node_tests", description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", action="append", help="only the cases of this ONNX op type (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown (docs/GRAPH.md)")
    args = parser.parse_args(argv)
    results = run_all(set(args.op) if args.op else None)
    print(table(results, args.markdown))
    failed = [r for r in results if r.mapped and not r.passed]
    for r in failed:
        print(f"FAILED {r.name} ({r.subject}): {r.why}")
    for name, why in fused_versus_decomposed(results):
        print(f"DISAGREE {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
