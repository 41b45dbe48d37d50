"""IREE as a stack for graph validation and triage (docs/GRAPH.md, "IREE").

The ONNX model is imported by IREE's ONNX importer, compiled by iree-compile for the CPU
(llvm-cpu, the host's features) and run by IREE's runtime (opval.iree_compiler), at one of
IREE's global optimization levels (--iree-opt-level, O0 to O3; the stack's default is O3,
everything on; IREE's own default is O0).

The compiler options that change numerics — reassociating floating-point reductions, data
tiling (matmuls through packed microkernels), aggressive fusion, the fast min/max (arith.maxf,
which may drop NaN), demoting contraction inputs to bf16, demoting f64 to f32 (IREE_OPTIONS) —
are off in IREE's default compile. A stack made with some of them (IreeStack(options=...), on
the command line `iree:O3:+data-tiling`) compiles with them at every level but O0, the
baseline triage compares against; they are the candidates its bisection turns off one by one
(`disabled`), so that a divergence they cause is blamed on the option by name. IREE offers no
switch per pass of its pipelines, so a divergence that none of them explains is blamed on the
level.

Intermediates: IREE can print each dispatch's tensors as it runs (--iree-flow-trace-dispatch-
tensors), but a dispatch is a fused region of the program, not an ONNX node, and is named by
its ordinal, with no map back to node names. So each run compiles twice, as the torch.compile
and JAX stacks do: the model as it is, whose outputs are the run's outputs, and the model with
every value it names made a graph output — the graph cut at every node — whose values are
judged; IREE must then materialize values it would have kept inside a dispatch, and the run
says when the two compiles' final outputs differ. Dispatch runs on IREE's `local-task` driver
(a thread pool over the cores) or `local-sync` (one thread, inline): the runtime option
`driver`.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

from .graph_stacks import Stack, StackConfig, StackRun, checked_options, _as_model, spec_suffix

#: IREE's global optimization levels, from none to all.
IREE_LEVELS = ("O0", "O1", "O2", "O3")
#: The compiler options that change numerics, off in IREE's default compile: name -> the flags
#: that turn it on.
IREE_OPTIONS: dict[str, tuple[str, ...]] = {
    "reassociate-fp-reductions": ("--iree-llvmcpu-reassociate-fp-reductions=true",),
    "data-tiling": ("--iree-opt-data-tiling=true",),
    "aggressive-fusion": ("--iree-dispatch-creation-enable-aggressive-fusion=true",),
    "fast-min-max": ("--iree-llvmcpu-use-fast-min-max-ops=true",),
    "demote-contractions-to-bf16": ("--iree-global-opt-demote-contraction-inputs-type=bf16",
                                    "--iree-global-opt-demote-contraction-inputs-operations=all"),
    "demote-f64-to-f32": ("--iree-input-demote-f64-to-f32=true",),
}
#: The runtime's dispatch: IREE's HAL drivers for the CPU, the default first.
IREE_RUNTIME_OPTIONS = {"driver": ("local-task", "local-sync")}


def with_outputs(model, names: Sequence[str]):
    """A copy of `model` whose graph outputs also hold `names` (their types and shapes from ONNX
    shape inference): the graph cut after every node that writes one."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    infos = {vi.name: vi for vi in inferred.graph.value_info}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    present = {o.name for o in out.graph.output}
    for name in names:
        if name not in present:
            if name not in infos:
                raise ValueError(f"iree: the type of '{name}' is not known (ONNX shape inference gives none)")
            out.graph.output.append(infos[name])
    return out


class IreeStack(Stack):
    """An ONNX model compiled by IREE for the CPU (see the module's text)."""
    name = "iree"
    levels = IREE_LEVELS
    runtime_options = IREE_RUNTIME_OPTIONS

    def __init__(self, config: StackConfig | None = None, options: Sequence[str] = ()):
        super().__init__(config)
        self.options = checked_options(options, IREE_OPTIONS, "IREE")

    def flags(self, config: StackConfig) -> list[str]:
        """iree-compile's flags for `config`: the level, and the stack's options but those
        disabled (none at O0)."""
        level = config.level or self.levels[-1]
        if level not in self.levels:
            raise ValueError(f"unknown IREE level '{level}' (known: {', '.join(self.levels)})")
        unknown = [d for d in config.disabled if d not in self.options]
        if unknown:
            raise ValueError(f"iree: '{unknown[0]}' is not one of this stack's options ({', '.join(self.options) or 'none'})")
        options = [] if level == "O0" else [o for o in self.options if o not in config.disabled]
        return [f"--iree-opt-level={level}"] + [f for o in options for f in IREE_OPTIONS[o]]

    def _compiled(self, model, config: StackConfig):
        from .iree_compiler import compile_onnx

        if config.threads:
            raise ValueError("iree: the thread count is the driver's (driver=local-task|local-sync), not threads=")
        driver = config.option("driver", self.runtime_options)
        return compile_onnx(model, self.flags(config), driver=driver)

    def run(self, model: Any, inputs: Mapping[str, Any], config: StackConfig) -> StackRun:
        original = _as_model(model)
        weights = {t.name for t in original.graph.initializer}
        names = [i.name for i in original.graph.input if i.name not in weights]
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError(f"no value for graph input{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        feeds = [np.asarray(inputs[n]) for n in names]
        outputs = [o.name for o in original.graph.output]
        run = StackRun(stack=f"{self.name}:{config.level or self.levels[-1]}" + spec_suffix(config))
        plain = self._compiled(original, config)
        run.outputs = dict(zip(outputs, plain.run(feeds)))
        values = [o for n in original.graph.node for o in n.output if o and o not in outputs]
        run.captured = {**self._observed(original, values, config, feeds, run), **run.outputs}
        run.graph_digest = hashlib.sha256(plain.vmfb).hexdigest()[:16]
        return run

    def _observed(self, model, values: list[str], config: StackConfig, feeds, run: StackRun) -> dict[str, np.ndarray]:
        """`values` from the model compiled with them as graph outputs (and its own outputs,
        checked against the plain compile's). Where IREE fails to compile that model (it does,
        at O2 and O3, for some: an internal error of its vector codegen), the values are split
        in halves, each compiled alone, and the run says so; a value that fails alone is not
        observable."""
        from .iree_compiler import IreeCompileError

        groups, observed, errors, cuts, changed = [values], {}, [], 0, set()
        while groups:
            group = groups.pop()
            try:
                cut = self._compiled(with_outputs(model, group), config)
            except IreeCompileError as e:
                errors.append(str(e))
                if len(group) == 1:
                    run.not_observable.append(group[0])
                else:
                    groups += [group[:len(group) // 2], group[len(group) // 2:]]
                continue
            cuts += 1
            got = dict(zip([o.name for o in model.graph.output] + group, cut.run(feeds)))
            observed.update({v: got[v] for v in group})
            changed |= {n for n, v in run.outputs.items() if not np.array_equal(got[n], v, equal_nan=True)}
        for name in sorted(changed):
            run.notes.append(f"output '{name}' differs between the plain compile and one that also returns "
                             "intermediates: observing them changed what was compiled; the nodes are judged on the "
                             "observed values, the outputs are the plain one's")
        if errors:
            run.notes.append(f"IREE could not compile the model with every intermediate as an output ({errors[0]}); "
                             f"they were taken from {cuts} compiles of smaller cuts"
                             + (f", {len(run.not_observable)} not observable" if run.not_observable else ""))
        return observed

    def fired_passes(self, model: Any, level: str) -> list[str]:
        """The stack's options that change what is compiled at `level` (none at O0): each turned
        off alone must compile another module."""
        if level == "O0" or not self.options:
            return []
        from .iree_compiler import compile_mlir, import_onnx

        mlir = import_onnx(_as_model(model))
        config = StackConfig(level=level)
        everything = compile_mlir(mlir, self.flags(config))
        return [o for o in self.options if compile_mlir(mlir, self.flags(config.but(disabled=(o,)))) != everything]

    def command_line(self, config: StackConfig) -> list[str] | None:
        if config.disabled:
            return None  # the command line names the options to turn on, not those turned off
        return ["--stack", f"iree:{config.level or self.levels[-1]}" + "".join(f":+{o}" for o in self.options)
                + spec_suffix(config)]
