"""torch.compile as a stack for graph validation and triage (docs/GRAPH.md, "PyTorch").

The model is lowered node for node to PyTorch (opval.torch_lowering) and run under
torch.compile at one of the levels of Inductor's own bisector — eager (TorchDynamo alone),
aot_eager (with AOTAutograd), aot_eager_decomp_partition (with decompositions and the
partitioner), inductor — with torch's thread count, ATen's oneDNN kernels and the inputs'
memory format as the dispatch knobs.

Intermediates: a compiled graph that returns every value must store values an optimized graph
would keep in registers, which can change what Inductor fuses, so each run compiles twice —
the plain graph, whose outputs are the run's outputs, and the observed one, whose values are
captured and judged (a node's inputs and outputs from one computation) — and says when their
final outputs differ (observing changed what was compiled).

Below a failing level, the compiler is bisected with torch._inductor.compiler_bisector: it
reruns the compile with each of Inductor's subsystems (pre-grad, joint-graph and post-grad
passes, config changes, lowerings) turned off and, for a subsystem applied many times, halves
the number of applications to the one that makes the node fail (see compiler_bisect).
"""
from __future__ import annotations

import contextlib
import io
from typing import Any, Callable, Mapping

from .arrays import from_any
from .graph_stacks import (Stack, StackConfig, StackRun, lowered_once, note_if_observing_changed, one_or_every_core,
                           spec_suffix)
from .torch_export import _quiet

#: Inductor's bisection levels, from TorchDynamo alone to the whole compiler.
TORCH_LEVELS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
#: The dispatch options of the stack's runtime, the default first: ATen's oneDNN (mkldnn)
#: kernels on or off (off: its native convolutions and matmuls), and the memory format of the
#: 4-D inputs (channels_last: NHWC strides, which steer the convolutions' kernels and layouts).
TORCH_RUNTIME_OPTIONS = {"mkldnn": ("on", "off"), "layout": ("contiguous", "channels_last")}


@contextlib.contextmanager
def _dispatch(config: StackConfig):
    """The thread count and ATen's oneDNN kernels as `config` says, for what runs inside."""
    import torch

    threads, mkldnn = torch.get_num_threads(), torch._C._get_mkldnn_enabled()
    if config.threads:
        torch.set_num_threads(config.threads)
    # Only the switch: torch.backends.mkldnn.flags() would also reset oneDNN's TF32 setting.
    torch._C._set_mkldnn_enabled(config.option("mkldnn", TORCH_RUNTIME_OPTIONS) == "on")
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch._C._set_mkldnn_enabled(mkldnn)


def _laid_out(feeds: list, config: StackConfig) -> list:
    """The inputs in the memory format `config` says: 4-D tensors channels-last on request."""
    import torch

    if config.option("layout", TORCH_RUNTIME_OPTIONS) != "channels_last":
        return feeds
    return [f.contiguous(memory_format=torch.channels_last) if f.dim() == 4 else f for f in feeds]


class TorchCompileStack(Stack):
    """A model lowered to PyTorch under torch.compile (see the module's text). `inductor_config`:
    torch._inductor.config entries patched for every compile at the inductor level (a custom
    pass such as post_grad_custom_post_pass is one)."""
    name = "torch_compile"
    levels = TORCH_LEVELS

    runtime_options = TORCH_RUNTIME_OPTIONS

    def __init__(self, config: StackConfig | None = None, inductor_config: Mapping[str, Any] | None = None):
        super().__init__(config)
        self.thread_choices = one_or_every_core()
        self.inductor_config = dict(inductor_config or {})
        self._programs: dict[str, Any] = {}

    def program(self, model: Any):
        """The lowered model, kept per model (by its bytes: weights and types included)."""
        from .torch_lowering import lower

        return lowered_once(self._programs, model, lower)

    def compile_settings(self, config: StackConfig) -> dict[str, Any]:
        """The torch._inductor.config entries for a compile in `config`."""
        return dict(self.inductor_config) if config.level == "inductor" else {}

    def _compiled(self, program, observe, config: StackConfig, feeds) -> tuple:
        import torch
        import torch._inductor.config as inductor_config

        torch._dynamo.reset()  # a new compile: no code cached from another configuration
        # Inductor's C++ toolchain probe warns that no CUDA runtime is found: noise on the CPU.
        with inductor_config.patch(self.compile_settings(config)), _quiet("torch.utils.cpp_extension"):
            compiled = torch.compile(program.module(observe), backend=config.level or self.levels[-1])
            return compiled(*feeds)

    def run(self, model, inputs, config):
        return self.observed_run(model, inputs, config, plain=True)

    def observed_run(self, model: Any, inputs: Mapping[str, Any], config: StackConfig, plain: bool) -> StackRun:
        """One run in `config`: every value the program writes captured from the observed
        compile; with `plain`, the outputs from a second, uninstrumented compile (else the
        observed one's)."""
        import torch

        if config.disabled:
            raise ValueError(f"{self.name} turns passes off through torch's compiler bisector, not by name "
                             f"({', '.join(config.disabled)})")
        program = self.program(model)
        feeds = _laid_out(program.feeds(inputs), config)
        level = config.level or self.levels[-1]
        run = StackRun(stack=f"{self.name}:{level}" + spec_suffix(config))
        with torch.no_grad(), _dispatch(config):
            observed = self._compiled(program, program.values, config, feeds)
            run.captured = {n: from_any(v) for n, v in zip(program.values, observed)}
            if plain:
                outputs = self._compiled(program, program.outputs, config, feeds)
                run.outputs = {n: from_any(v) for n, v in zip(program.outputs, outputs)}
            else:
                run.outputs = {n: run.captured[n] for n in program.outputs}
        note_if_observing_changed(run)
        return run

    def compiler_bisect(self, model: Any, inputs: Mapping[str, Any], config: StackConfig,
                        clears: Callable[[StackRun], tuple[bool, str]],
                        note: Callable[[str, str, str, str], None]) -> tuple[str | None, int]:
        """torch._inductor.compiler_bisector driven with `clears` (whether a run no longer shows
        the divergence, and what the run says of the node) as its test, each run noted as
        evidence. Returns the culprit — the backend, the subsystem and the application that
        make the divergence, with the pass's name where the bisector records one — or None
        when no backend reproduces it, and the number of runs. The bisector retries a
        subsystem it has already turned off when none clears the divergence (torch 2.x walks
        every suffix of the list): a configuration already run is answered from memory."""
        from torch._inductor.compiler_bisector import CompilerBisector, ConfigChange

        answers: dict[tuple, bool] = {}

        def test() -> bool:
            backend, subsystem = CompilerBisector.get_backend(), CompilerBisector.get_subsystem()
            state = CompilerBisector.get_run_state(backend, subsystem) if subsystem else None
            span = CompilerBisector.get_bisect_range(backend, subsystem) if state == "bisect" else None
            key = (backend, subsystem, state, span)
            if key in answers:
                return answers[key]
            cleared, said = clears(self.observed_run(model, inputs, config.but(level="inductor"), plain=False))
            experiment = f"compiler bisector: backend {backend}"
            if subsystem:
                what = _STATES[state][0]
                changed = CompilerBisector.get_subsystem_object(backend, subsystem)
                if isinstance(changed, ConfigChange):
                    what = f"({changed.config_name} config {changed.config_field}) set to {changed.config_value}"
                experiment += f", {subsystem} {what}" + (" [{}, {}]".format(*span) if span else "")
                conclusion = _STATES[state][1 if cleared else 2]
            else:
                conclusion = "this backend does not make it" if cleared else "this backend makes it"
            note("compiler", experiment, said, conclusion)
            answers[key] = cleared
            return cleared

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):  # the bisector prints its progress
            result = CompilerBisector.do_bisect(test)
        runs = len(answers)
        if result is None:
            return None, runs
        if not result.subsystem:
            return f"backend {result.backend} (none of its subsystems alone clears it)", runs
        if result.debug_info and result.debug_info != result.subsystem:
            return f"pass {result.debug_info} ({result.subsystem} application {result.bisect_number}) " \
                   f"of backend {result.backend}", runs
        return f"{result.subsystem} of backend {result.backend}", runs

    def command_line(self, config):
        if self.inductor_config:
            return None  # the command line takes no Inductor config
        return ["--stack", f"torch_compile:{config.level or self.levels[-1]}" + spec_suffix(config)]


#: The bisector's run states for the evidence: what the run did, and what it means when the
#: divergence is gone, or still there.
_STATES = {"test_disable": ("turned off", "implicated", "not this subsystem"),
           "find_max_bounds": ("on, its applications counted", "(unexpected: it should fail)", "the range to halve"),
           "bisect": ("applied up to the midpoint of its range only", "the faulty application is above it",
                      "the faulty application is at or below it")}
