"""JAX as a stack for graph validation and triage (docs/GRAPH.md, "JAX").

The model is lowered node for node to jax.numpy / jax.lax (opval.jax_lowering) and run at one
of two levels: disable_jit (op by op: each operation compiled and run alone by XLA, nothing
fused across nodes) and jit (the whole graph compiled by XLA's CPU pipeline). At jit, the HLO
passes that changed the module are read from XLA's own per-pass dumps (xla_dump_hlo_pass_re)
and can be turned off by name (xla_disable_hlo_passes, given per compile as compiler
options, the same as the XLA_FLAGS option): XLA ignores a name it does not know, so the names
come from the dumps, and each run fingerprints the optimized HLO it compiled, so that a pass
turned off is seen to change it.

Intermediates: as for torch.compile, each jit run compiles twice — the plain function, whose
outputs are the run's outputs, and one returning every value, whose values are judged — and
says when their final outputs differ. XLA's CPU thread pool is sized when JAX starts, so the
stack has one dispatch.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Any, Mapping, Sequence

import numpy as np

from .arrays import from_any
from .graph_stacks import Stack, StackConfig, StackRun, lowered_once, note_if_observing_changed

#: From op by op to the whole graph compiled.
JAX_LEVELS = ("disable_jit", "jit")


def _compiler_options(disabled: Sequence[str], dump_to: str | None = None) -> dict[str, str] | None:
    options = {}
    if disabled:
        options["xla_disable_hlo_passes"] = ",".join(disabled)
    if dump_to:
        options.update(xla_dump_to=dump_to, xla_dump_hlo_pass_re=".*")
    return options or None


def hlo_digest(hlo_text: str) -> str:
    """What an optimized HLO module computes, as a digest of its computations: the source
    locations (the FileNames ... StackFrames tables, and each instruction's metadata) name the
    Python lines that traced it, which differ from call to call, and are left out."""
    body = hlo_text[hlo_text.find("\n%") if "\n%" in hlo_text else 0:]
    return hashlib.sha256(re.sub(r", metadata=\{[^}]*\}", "", body).encode()).hexdigest()[:16]


#: A dump of the module after a pass that changed it: `...<pipeline>.after_<pass>.before_<next>.txt`.
_AFTER_PASS = re.compile(r"\.after_([A-Za-z0-9_-]+)\.before_")


class JaxStack(Stack):
    """A model lowered to JAX, op by op or under jax.jit (see the module's text)."""
    name = "jax"
    levels = JAX_LEVELS

    def __init__(self, config: StackConfig | None = None):
        super().__init__(config)
        self._programs: dict[str, Any] = {}
        self._last_feeds: dict[tuple, list] = {}  # per graph input names: the inputs last run on

    def program(self, model: Any):
        from .jax_lowering import lower

        return lowered_once(self._programs, model, lower)

    def _compile(self, program, observe: Sequence[str], feeds, disabled: Sequence[str], dump_to: str | None = None):
        import jax

        lowered = jax.jit(program.function(observe)).lower(*feeds)
        return lowered.compile(compiler_options=_compiler_options(disabled, dump_to))

    def run(self, model: Any, inputs: Mapping[str, Any], config: StackConfig) -> StackRun:
        import jax

        if config.threads:
            raise ValueError("jax: XLA's CPU thread pool is sized when JAX starts; the stack takes no threads=")
        level = config.level or self.levels[-1]
        if level not in self.levels:
            raise ValueError(f"unknown JAX level '{level}' (known: {', '.join(self.levels)})")
        if config.disabled and level != "jit":
            raise ValueError(f"jax: passes are turned off under jit only ({', '.join(config.disabled)})")
        program = self.program(model)
        feeds = program.feeds(inputs)
        self._last_feeds[tuple(program.inputs)] = feeds
        run = StackRun(stack=f"{self.name}:{level}")
        if level == "disable_jit":
            with jax.disable_jit():
                values = program.forward(feeds, program.values)
            run.captured = {n: from_any(np.asarray(v)) for n, v in zip(program.values, values)}
            run.outputs = {n: run.captured[n] for n in program.outputs}
            return run
        observed = self._compile(program, program.values, feeds, config.disabled)
        run.captured = {n: from_any(np.asarray(v)) for n, v in zip(program.values, observed(*feeds))}
        plain = self._compile(program, program.outputs, feeds, config.disabled)
        run.outputs = {n: from_any(np.asarray(v)) for n, v in zip(program.outputs, plain(*feeds))}
        run.graph_digest = hlo_digest(plain.as_text())
        note_if_observing_changed(run)
        return run

    def fired_passes(self, model: Any, level: str) -> list[str]:
        """The HLO passes that changed the plain function's module under jit and can be turned
        off, in the order they first ran, from XLA's per-pass dumps (compiled for the inputs
        last run with these graph inputs: what is compiled depends on their types and shapes
        only); none op by op. Some passes XLA cannot compile without (which ones depends on the
        model: flatten-call-graph, layout-assignment, dot_decomposer here): they are found by
        halving and left out, so that every set of the others can be turned off."""
        if level != "jit":
            return []
        program = self.program(model)
        feeds = self._last_feeds.get(tuple(program.inputs))
        if feeds is None:
            raise ValueError("jax: fired_passes needs a run of a model with these inputs first (their shapes)")
        with tempfile.TemporaryDirectory() as dump:
            self._compile(program, program.outputs, feeds, (), dump_to=dump)
            names = sorted(os.listdir(dump))
        fired = [m.group(1) for f in names if (m := _AFTER_PASS.search(f)) and m.group(1) != "pipeline-start"]
        fired = list(dict.fromkeys(fired))
        needed = self._needed(program, feeds, fired)
        return [p for p in fired if p not in needed]

    def _needed(self, program, feeds, passes: list[str]) -> set[str]:
        """The passes among `passes` without which XLA does not compile, by halving: a set that
        compiles without all of its passes holds none (XLA fails without a superset of one)."""
        def compiles_without(names: list[str]) -> bool:
            try:  # both compiles of a run: the plain one and the one returning every value
                self._compile(program, program.outputs, feeds, names)
                self._compile(program, program.values, feeds, names)
                return True
            except Exception:  # XLA's error for a missing pass: FAILED_PRECONDITION and others
                return False

        def search(names: list[str]) -> set[str]:
            if not names or compiles_without(names):
                return set()
            if len(names) == 1:
                return set(names)
            half = len(names) // 2
            return search(names[:half]) | search(names[half:])

        return search(passes)

    def command_line(self, config: StackConfig) -> list[str] | None:
        if config.disabled:
            return None  # the command line does not take the passes to turn off
        return ["--stack", f"jax:{config.level or self.levels[-1]}"]
