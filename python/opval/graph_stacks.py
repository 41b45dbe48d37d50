"""Running a graph on a stack and capturing its intermediates (docs/GRAPH.md), for
opval.graph.judge. ONNX Runtime first:

    run = ort_run(model, inputs, level="all")
    judgements = opval.graph.judge(model, inputs, run.captured)

Intermediates are observed without changing what is compiled: the session at `level` saves
its optimized graph (optimized_model_filepath); that graph — fusions already applied, fused
nodes in the com.microsoft domain — gets its tensors that the original model also has as extra
outputs and runs with every optimization off, so its kernels are the ones the first session
chose. The run says when the instrumented graph's final outputs differ from the plain
session's (instrumentation changed the result), and which values the optimized graph no longer
has (consumed inside a fused node).
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import graph

#: ONNX Runtime's graph optimization levels by the names opval's stacks use.
ORT_LEVELS = ("disable_all", "basic", "extended", "layout", "all")


@dataclass
class StackRun:
    """One run of a model on a stack: its final outputs (from the uninstrumented run), the
    values captured by name, and notes on how they were observed."""
    stack: str
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    captured: dict[str, np.ndarray] = field(default_factory=dict)
    not_observable: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: A fingerprint of what the stack compiled (ONNX Runtime: its optimized graph's nodes), so
    #: that a run with a pass disabled can be shown to have compiled something else; "" when
    #: the stack compiles nothing.
    graph_digest: str = ""
    #: Which kernel ran each node of the model, where the stack says (ONNX Runtime's profile:
    #: the kernel and the execution provider of the optimized node it ran inside), by node name.
    kernels: dict[str, str] = field(default_factory=dict)


def _graph_digest(model) -> str:
    """What a graph computes, as a digest of its nodes in order (op, domain, inputs, outputs,
    attributes): names and doc strings that do not change the computation are left out."""
    h = hashlib.sha256()
    for n in model.graph.node:
        h.update(repr((n.op_type, n.domain, list(n.input), list(n.output),
                       [a.SerializeToString() for a in n.attribute])).encode())
    return h.hexdigest()[:16]


def _ort_level(name: str):
    import onnxruntime as ort

    levels = {"disable_all": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
              "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
              "layout": ort.GraphOptimizationLevel.ORT_ENABLE_LAYOUT,
              "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    if name not in levels:
        raise ValueError(f"unknown ONNX Runtime optimization level '{name}' (known: {', '.join(ORT_LEVELS)})")
    return levels[name]


def _as_model(model: Any):
    import onnx

    if isinstance(model, (str, os.PathLike)):
        return onnx.load(os.fspath(model))
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    return model


#: ONNX Runtime's dispatch options (OrtStack.runtime_options), the default first: weights
#: prepacked for MLAS's GEMM and convolution kernels or not (`session.disable_prepacking`, another
#: kernel path), the CPU memory arena and memory-pattern planning (buffers reused across
#: nodes), sequential or parallel execution of independent nodes.
ORT_RUNTIME_OPTIONS = {"prepacking": ("on", "off"), "arena": ("on", "off"), "execution": ("sequential", "parallel")}
#: Providers that run no kernels of their own here (Azure's calls a remote endpoint).
_NOT_COMPUTE_PROVIDERS = {"AzureExecutionProvider"}


def ort_runtime_options() -> dict[str, tuple[str, ...]]:
    """ORT_RUNTIME_OPTIONS, and `provider` where this ONNX Runtime has an execution provider
    besides the CPU's (CUDA's, DirectML's, ...): each is another set of kernels."""
    import onnxruntime as ort

    options = dict(ORT_RUNTIME_OPTIONS)
    others = [p for p in ort.get_available_providers() if p not in _NOT_COMPUTE_PROVIDERS | {"CPUExecutionProvider"}]
    if others:
        options["provider"] = ("CPUExecutionProvider", *others)
    return options


def _session(model_bytes: bytes, level: str, threads: int | None, disabled: Sequence[str], optimized_path: str | None,
             config: Mapping[str, str] | None, profile_prefix: str | None = None, runtime: Mapping[str, str] | None = None):
    import onnxruntime as ort

    runtime = dict(runtime or {})
    so = ort.SessionOptions()
    if runtime.get("prepacking") == "off":
        so.add_session_config_entry("session.disable_prepacking", "1")
    if runtime.get("arena") == "off":
        so.enable_cpu_mem_arena = False
        so.enable_mem_pattern = False
    if runtime.get("execution") == "parallel":
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    provider = runtime.get("provider", "CPUExecutionProvider")
    providers = [provider] + (["CPUExecutionProvider"] if provider != "CPUExecutionProvider" else [])
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    so.graph_optimization_level = _ort_level(level)
    so.log_severity_level = 3  # errors only: not the warning that a layout-optimized graph is machine-specific
    if threads:
        so.intra_op_num_threads = threads
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    for key, value in (config or {}).items():
        so.add_session_config_entry(key, value)
    return ort.InferenceSession(model_bytes, so, providers=providers, disabled_optimizers=list(disabled) or None)


def _value_types(model) -> dict[str, int]:
    """The element type of every value of the model, by name (ONNX shape inference)."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    types = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    for t in inferred.graph.initializer:
        types[t.name] = t.data_type
    return types


def ort_run(model: Any, inputs: Mapping[str, Any], *, level: str = "all", threads: int | None = None,
            disabled_optimizers: Sequence[str] = (), config: Mapping[str, str] | None = None,
            runtime: Mapping[str, str] | None = None) -> StackRun:
    """Runs `model` on ONNX Runtime's CPU provider at optimization `level` and captures every
    value of the original model that the optimized graph still has (see the module's text).
    runtime: dispatch options by name (ort_runtime_options), applied to both sessions."""
    import onnx
    from onnx import helper

    original = _as_model(model)
    feeds = {k: np.asarray(v) for k, v in inputs.items()}
    config_of_run = StackConfig(threads=threads)
    for name, value in (runtime or {}).items():  # an option or value ONNX Runtime does not have: its error
        config_of_run = config_of_run.with_option(name, value, ort_runtime_options())
    runtime = dict(config_of_run.runtime)
    run = StackRun(stack=f"ort:{level}" + spec_suffix(config_of_run))
    with tempfile.TemporaryDirectory() as tmp:
        optimized_path = os.path.join(tmp, "optimized.onnx")
        plain = _session(original.SerializeToString(), level, threads, disabled_optimizers, optimized_path, config,
                         profile_prefix=os.path.join(tmp, "profile"), runtime=runtime)
        names = [o.name for o in plain.get_outputs()]
        run.outputs = dict(zip(names, plain.run(None, feeds)))
        optimized = onnx.load(optimized_path)
        run.kernels = _kernels_from_profile(plain.end_profiling(), original, optimized)
    run.graph_digest = _graph_digest(optimized)
    wanted = {o for n in original.graph.node for o in n.output if o}
    types = _value_types(original)
    present = {o for n in optimized.graph.node for o in n.output}
    observed = [n for n in sorted(wanted & present) if n not in names and n in types]
    run.not_observable = sorted(wanted - present)
    for name in observed:
        optimized.graph.output.append(helper.make_tensor_value_info(name, types[name], None))
    instrumented = _session(optimized.SerializeToString(), "disable_all", threads, (), None, None, runtime=runtime)
    out_names = [o.name for o in instrumented.get_outputs()]
    values = dict(zip(out_names, instrumented.run(None, feeds)))
    for name in names:
        if not np.array_equal(values[name], run.outputs[name], equal_nan=True):
            run.notes.append(f"output '{name}' of the instrumented optimized graph differs from the plain session's: "
                             "observing the intermediates changed the result; the plain outputs are kept")
    run.captured = {**values, **run.outputs}
    if run.not_observable:
        run.notes.append(f"{len(run.not_observable)} values exist only inside fused nodes of the optimized graph")
    return run


def _kernels_from_profile(profile_path: str, original, optimized) -> dict[str, str]:
    """From ONNX Runtime's profile of a run: for each node of the original model, the kernel and
    provider of the optimized node that computed its outputs ("FusedGemm on CPUExecutionProvider,
    as fused fc0/MatMulAddFusion" for a node fused into another)."""
    import json

    with open(profile_path) as f:
        events = json.load(f)
    ran = {e["name"][:-len("_kernel_time")]: f"{e['args'].get('op_name', '?')} on {e['args'].get('provider', '?')}"
           for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")}
    computed_by = {o: n.name for n in optimized.graph.node for o in n.output}
    out = {}
    for n in original.graph.node:
        inside = next((computed_by[o] for o in n.output if o in computed_by), None)
        if inside in ran:
            out[n.name] = ran[inside] + ("" if inside == n.name else f", as {inside}")
    return out


def ort_fired_passes(model: Any, *, level: str = "all", config: Mapping[str, str] | None = None) -> list[str]:
    """The graph transformers that changed the graph at `level` (with the session `config`
    entries), in the order they ran, from ONNX Runtime's verbose log (`GraphTransformer <name>
    modified: 1`): the names disabled_optimizers takes (it ignores unknown names silently, so
    names must come from here)."""
    import subprocess
    import sys

    code = ("import onnxruntime as ort, sys\n"
            "so = ort.SessionOptions(); so.log_severity_level = 0\n"
            f"so.graph_optimization_level = ort.GraphOptimizationLevel.{_ort_level(level).name}\n"
            f"for k, v in {dict(config or {})!r}.items(): so.add_session_config_entry(k, v)\n"
            "ort.InferenceSession(sys.stdin.buffer.read(), so, providers=['CPUExecutionProvider'])\n")
    # ONNX Runtime logs to the process's stderr, outside Python's reach: a child process.
    done = subprocess.run([sys.executable, "-c", code], input=_as_model(model).SerializeToString(),
                          capture_output=True, check=False)
    fired = re.findall(rb"GraphTransformer (\S+) modified: 1", done.stderr)
    return list(dict.fromkeys(f.decode() for f in fired))


def threads_text(threads: int | None, default: str = "default threads") -> str:
    """A thread count in words: "1 thread", "2 threads", or `default` for the stack's own."""
    return f"{threads} thread{'s' if threads != 1 else ''}" if threads else default


@dataclass(frozen=True)
class StackConfig:
    """One way of running a stack: the compiler's optimization level (None: the stack's own
    default), the compiler passes turned off, the thread count (None: the stack's default), and
    the runtime's dispatch options that are not the default, as sorted (name, value) pairs
    (Stack.runtime_options: ONNX Runtime's prepacking, torch's oneDNN kernels, a layout)."""
    level: str | None = None
    disabled: tuple[str, ...] = ()
    threads: int | None = None
    runtime: tuple[tuple[str, str], ...] = ()

    def but(self, **changes) -> "StackConfig":
        return replace(self, **changes)

    def option(self, name: str, options: Mapping[str, tuple[str, ...]]) -> str:
        """The value of runtime option `name` in this configuration: its own, else the default
        (the first of `options[name]`, a stack's runtime_options); ValueError for a name the
        stack does not have."""
        if name not in options:
            raise ValueError(f"no runtime option '{name}' (known: {', '.join(options) or 'none'})")
        return dict(self.runtime).get(name, options[name][0])

    def with_option(self, name: str, value: str, options: Mapping[str, tuple[str, ...]]) -> "StackConfig":
        """This configuration with runtime option `name` set to `value` (left out at its default,
        the first of `options[name]`); ValueError for a name or value the stack does not have."""
        if value not in options.get(name, (value,)):
            raise ValueError(f"{name}= takes {', '.join(options[name])}, not '{value}'")
        self.option(name, options)  # a name the stack does not have: its error
        default = options[name][0]
        kept = {k: v for k, v in self.runtime if k != name}
        if value != default:
            kept[name] = value
        return replace(self, runtime=tuple(sorted(kept.items())))

    def __str__(self) -> str:
        parts = [self.level or "default level"]
        if self.disabled:
            parts.append("without " + ", ".join(self.disabled))
        parts.append(threads_text(self.threads))
        parts += [f"{k}={v}" for k, v in self.runtime]
        return ", ".join(parts)


class Stack:
    """A stack as triage sees it (opval.triage): it runs a model in a StackConfig and returns
    the values it computed; it says which knobs it has. Triage changes only those knobs and
    never looks inside, so any runtime can be wrapped by subclassing (run, and optionally
    fired_passes)."""
    name = "stack"
    #: The compiler's optimization levels, from everything off to everything on; () when the
    #: stack compiles nothing.
    levels: tuple[str, ...] = ()
    #: The thread counts its dispatch can be tried with; () when there is one way only.
    thread_choices: tuple[int, ...] = ()
    #: The runtime's other dispatch options — each a name and its values, the default first —
    #: which change the kernels chosen or how they are run but not the graph compiled.
    runtime_options: Mapping[str, tuple[str, ...]] = {}

    def __init__(self, config: StackConfig | None = None):
        self.config = config or StackConfig(level=self.levels[-1] if self.levels else None)

    def run(self, model: Any, inputs: Mapping[str, Any], config: StackConfig) -> StackRun:
        raise NotImplementedError

    def fired_passes(self, model: Any, level: str) -> list[str]:
        """The compiler passes that changed the graph at `level`: the candidates to bisect."""
        return []

    def compiler_bisect(self, model: Any, inputs: Mapping[str, Any], config: StackConfig,
                        clears: Callable[[StackRun], tuple[bool, str]],
                        note: Callable[[str, str, str, str], None]) -> tuple[str | None, int] | None:
        """The stack's own bisector of its compiler at `config.level`, for a stack that has one
        (torch.compile's): runs it with `clears` (whether a run no longer shows the divergence,
        and what the run says of the node) as the test, noting each experiment with `note(hypothesis, experiment, outcome,
        conclusion)`; returns the culprit (None: not found) and the number of runs. None when the
        stack has no bisector of its own: triage then halves the passes of fired_passes."""
        return None

    def command_line(self, config: StackConfig) -> list[str] | None:
        """The `opval graph` options that run this stack in `config`; None when the command
        line cannot name it (a Stack made in Python)."""
        return None

    def __str__(self) -> str:
        return self.name


def checked_options(options, known, framework: str) -> tuple[str, ...]:
    """A stack's options (the compile options it is made with) in order, each once; ValueError
    for one `known` does not hold."""
    unknown = [o for o in options if o not in known]
    if unknown:
        raise ValueError(f"unknown {framework} option '{unknown[0]}' (known: {', '.join(known)})")
    return tuple(dict.fromkeys(options))


def lowered_once(cache: dict[str, Any], model: Any, lower: Callable[[Any], Any]) -> Any:
    """`lower(model)`, kept in `cache` per model (by its bytes: weights and types included)."""
    m = _as_model(model)
    key = hashlib.sha256(m.SerializeToString()).hexdigest()
    if key not in cache:
        cache[key] = lower(m)
    return cache[key]


def note_if_observing_changed(run: StackRun) -> None:
    """For a stack that compiles twice — the plain graph for the outputs, one returning every
    value for the captures — a note on each final output the two compiles disagree on."""
    for name, value in run.outputs.items():
        if not np.array_equal(value, run.captured[name], equal_nan=True):
            # Each node is judged on the observed compile's values alone: its inputs and
            # outputs must come from one computation.
            run.notes.append(f"output '{name}' differs between the plain compile and the one that returns every "
                             "intermediate: observing them changed what was compiled; the nodes are judged on "
                             "the observed compile, the outputs are the plain one's")


def one_or_every_core() -> tuple[int, ...]:
    """The thread counts a CPU stack's dispatch is tried at: one, and every core."""
    return tuple(sorted({1, os.cpu_count() or 1}))


class OrtStack(Stack):
    """ONNX Runtime's CPU provider through ort_run: its five optimization levels, its passes
    from the verbose log, one thread or every core."""
    name = "ort"
    levels = ORT_LEVELS

    def __init__(self, config: StackConfig | None = None, session_config: Mapping[str, str] | None = None):
        super().__init__(config)
        self.thread_choices = one_or_every_core()
        self.runtime_options = ort_runtime_options()
        self.session_config = dict(session_config or {})

    def run(self, model, inputs, config):
        return ort_run(model, inputs, level=config.level or "all", threads=config.threads,
                       disabled_optimizers=config.disabled, config=self.session_config, runtime=dict(config.runtime))

    def fired_passes(self, model, level):
        return ort_fired_passes(model, level=level, config=self.session_config)

    def command_line(self, config):
        if config.disabled:
            return None  # the command line does not take disabled_optimizers
        spec = f"ort:{config.level or 'all'}" + spec_suffix(config)
        return ["--stack", spec] + [a for k, v in self.session_config.items() for a in ("--ort-config", f"{k}={v}")]


class BackendStack(Stack):
    """One of opval's backends running every op node it implements (opval.graph.run_on_backend):
    nothing compiled, one dispatch."""

    def __init__(self, backend: Any = "sim"):
        super().__init__()
        self.backend = backend
        self.name = backend if isinstance(backend, str) else getattr(backend, "name", "backend")

    def command_line(self, config):
        return None if self.name.startswith("python:") else ["--stack", self.name]  # a Python kernel has no name there

    def run(self, model, inputs, config):
        run = graph.backend_run(model, inputs, self.backend)
        names = graph.load(model).output_names
        return StackRun(stack=self.name, outputs={n: run.values[n] for n in names if n in run.values},
                        captured=run.values, notes=[f"op nodes ran on: {', '.join(sorted(set(run.ran_on.values())))}"],
                        kernels={n: f"{b}: {run.implementations[n]}" if n in run.implementations else b
                                 for n, b in run.ran_on.items()})


def stack_from_spec(spec: str, ort_config: Mapping[str, str] | None = None) -> Stack:
    """A stack from its command-line name: `ort[:LEVEL][:threads=N][:NAME=VALUE...]` (ONNX
    Runtime, LEVEL one of ORT_LEVELS, default all, NAME=VALUE its runtime options,
    ort_runtime_options; `ort_config`: its session config entries, such as
    optimization.enable_gelu_approximation), `torch_compile[:LEVEL][:threads=N][:NAME=VALUE...]`
    (the model lowered to PyTorch under torch.compile, LEVEL one of
    opval.torch_stack.TORCH_LEVELS, default inductor, runtime options TORCH_RUNTIME_OPTIONS), `jax[:disable_jit|jit]` (the model lowered to JAX, op by op or under jax.jit, default
    jit; `jax_jit` is jax:jit), `iree[:O0|O1|O2|O3][:+OPTION...][:driver=local-task|local-sync]`
    (the model compiled by IREE, default O3, OPTION one of opval.iree_stack.IREE_OPTIONS),
    `tensorflow[:eager|function][:+OPTION...]` (the model lowered to TensorFlow, default function,
    OPTION one of opval.tf_stack.TF_OPTIONS), or an opval backend (a registered name such as sim or onednn, or a plugin path)
    running every op node it implements."""
    head, *rest = spec.split(":")
    if head == "iree":
        from .iree_stack import IREE_LEVELS, IREE_RUNTIME_OPTIONS, IreeStack

        options, rest = _plus_options(rest)
        return IreeStack(_spec_config(spec, rest, IREE_LEVELS, takes_threads=False, runtime_options=IREE_RUNTIME_OPTIONS),
                         options)
    if head == "tensorflow":
        from .tf_stack import TF_LEVELS, TfStack

        options, rest = _plus_options(rest)
        return TfStack(_spec_config(spec, rest, TF_LEVELS, takes_threads=False), options)
    if head in ("jax", "jax_jit"):
        from .jax_stack import JAX_LEVELS, JaxStack

        if head == "jax_jit" and rest:
            raise ValueError(f"stack '{spec}': jax_jit is jax:jit and takes no options")
        return JaxStack(_spec_config(spec, rest, JAX_LEVELS, takes_threads=False))
    if head == "torch_compile":
        from .torch_stack import TORCH_LEVELS, TORCH_RUNTIME_OPTIONS, TorchCompileStack

        return TorchCompileStack(_spec_config(spec, rest, TORCH_LEVELS, runtime_options=TORCH_RUNTIME_OPTIONS))
    if head == "ort":
        return OrtStack(_spec_config(spec, rest, ORT_LEVELS, runtime_options=ort_runtime_options()),
                        session_config=ort_config)
    if rest or ort_config:
        raise ValueError(f"stack '{spec}': an opval backend takes no options (only ort, torch_compile, jax, iree and tensorflow do)")
    from .backends import resolve_backend

    return BackendStack(resolve_backend(head))


def _plus_options(parts: Sequence[str]) -> tuple[list[str], list[str]]:
    """A spec's `+OPTION` parts (the compile options a stack is made with), and the others."""
    return [p[1:] for p in parts if p.startswith("+")], [p for p in parts if not p.startswith("+")]


def _spec_config(spec: str, options: Sequence[str], levels: Sequence[str], takes_threads: bool = True,
                 runtime_options: Mapping[str, tuple[str, ...]] | None = None) -> StackConfig:
    """A stack spec's options: one of `levels` (default the last, everything on), where the
    stack's dispatch takes it threads=N, and NAME=VALUE for each of its runtime options."""
    runtime_options = runtime_options or {}
    config = StackConfig(level=levels[-1])
    for part in options:
        name, equals, value = part.partition("=")
        if name == "threads" and equals and takes_threads:
            threads = int(value) if value.isdigit() else 0
            if threads <= 0:
                raise ValueError(f"stack '{spec}': threads= takes a positive count")
            config = config.but(threads=threads)
        elif name in runtime_options and equals:
            try:
                config = config.with_option(name, value, runtime_options)
            except ValueError as e:
                raise ValueError(f"stack '{spec}': {e}") from None
        elif part in levels:
            config = config.but(level=part)
        else:
            known = f"levels: {', '.join(levels)}" + ("; threads=N" if takes_threads else "") + "".join(
                f"; {k}={'|'.join(v)}" for k, v in runtime_options.items())
            raise ValueError(f"stack '{spec}': unknown option '{part}' ({known})")
    return config


def spec_suffix(config: StackConfig) -> str:
    """The `:threads=N:NAME=VALUE...` part of a stack's command-line name for `config`."""
    return (f":threads={config.threads}" if config.threads else "") + "".join(f":{k}={v}" for k, v in config.runtime)
