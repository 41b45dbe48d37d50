"""torch.compile (Inductor, CPU) for the torch backend. Each case gets a fresh Dynamo state
(torch._dynamo.reset), so no recompilation limit silently sends a case to eager; its result
counts only when Dynamo's counters show that a compiled graph ran. A case that Dynamo runs
eagerly (no graph captured) is SKIPPED with what the counters say."""
from __future__ import annotations

from typing import Callable

import torch
from torch._dynamo.utils import counters

from ... import _opval


def _graphs_ran() -> int:
    return counters["stats"]["unique_graphs"]


def _fallback_reason() -> str:
    breaks = ", ".join(f"{reason} (x{n})" for reason, n in counters["graph_break"].items())
    return "torch.compile ran the op eagerly: Dynamo captured no graph" + (f"; graph breaks: {breaks}" if breaks else "")


class CompiledCases:
    """Compiles each case's op once (in supports, on inputs of the case's shapes and types)
    and runs the compiled function in execute."""

    def __init__(self) -> None:
        self._compiled: dict[str, Callable] = {}

    def prepare(self, p: _opval.Problem, fn: Callable, operands: dict[str, torch.Tensor], compute: torch.dtype) -> str | None:
        """Compiles and runs once; None when a compiled graph ran, else why not."""
        torch._dynamo.reset()
        counters.clear()

        def op(**x):
            return fn(p, x, compute)

        compiled = torch.compile(op, backend="inductor", dynamic=False)
        with torch.no_grad():
            compiled(**operands)
        if _graphs_ran() == 0:
            return _fallback_reason()
        self._compiled = {str(p): compiled}  # only the case about to run is kept
        return None

    def run(self, p: _opval.Problem, operands: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        compiled = self._compiled.get(str(p))
        if compiled is None:
            raise RuntimeError(f"torch.compile: '{p}' was not prepared (supports() compiles each case first)")
        captured = counters["stats"]["calls_captured"]
        with torch.no_grad():
            results = compiled(**operands)
        if counters["stats"]["calls_captured"] < captured or _graphs_ran() == 0:
            raise RuntimeError(_fallback_reason())
        return results
