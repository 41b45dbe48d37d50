"""TensorFlow as a stack for graph validation and triage (docs/GRAPH.md, "TensorFlow").

The model is lowered node for node to TensorFlow operations (opval.tf_lowering) and run at one
of two levels: eager (each operation dispatched to its kernel as it is called) and function
(the whole graph traced into a tf.function, which Grappler optimizes when it is first run).

Grappler's optimizers are the passes: those on by default (GRAPPLER_DEFAULT_ON: constant
folding, arithmetic optimization, the remapper that fuses into oneDNN kernels, ...) are turned
off by name through tf.config.optimizer.set_experimental_options, which TensorFlow applies to
functions made after it; the options a deployment may turn on (TF_OPTIONS: oneDNN bf16 auto
mixed precision, XLA auto-clustering, XLA compilation of the whole function) are given to the
stack (TfStack(options=...), on the command line `tensorflow:function:+xla_jit_compile`) and are
candidates too. Which of them fired is read from Grappler's own output: the traced graph
optimized offline (tensorflow.python.grappler.tf_optimizer) under the same settings, once with
each candidate off; each run fingerprints that optimized graph. The process-wide settings are
restored after each run.

Intermediates: as for torch.compile and JAX, each function run traces twice — the plain
function, whose outputs are the run's outputs, and one returning every value, whose values are
judged (Grappler cannot fuse away a value that is returned) — and says when their final outputs
differ. TensorFlow's thread pools are sized when it starts, so the stack has one dispatch.
"""
from __future__ import annotations

import contextlib
import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

from .arrays import from_any
from .graph_stacks import Stack, StackConfig, StackRun, checked_options, lowered_once, note_if_observing_changed

#: From op by op to the whole graph optimized.
TF_LEVELS = ("eager", "function")
#: Grappler's optimizers that are on by default: each can be turned off by name.
GRAPPLER_DEFAULT_ON = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping",
                       "arithmetic_optimization", "dependency_optimization", "loop_optimization",
                       "function_optimization", "debug_stripper", "implementation_selector")
#: What a deployment may turn on, off by default: oneDNN's bf16 auto mixed precision (a Grappler
#: optimizer), XLA auto-clustering (tf.config.optimizer.set_jit), the whole function compiled by
#: XLA (jit_compile=True).
TF_OPTIONS = ("auto_mixed_precision_onednn_bfloat16", "xla_auto_clustering", "xla_jit_compile")


@contextlib.contextmanager
def _settings(grappler: Mapping[str, bool], auto_clustering: bool):
    """Grappler's optimizers and XLA auto-clustering set for what runs inside; the previous
    settings back after (they are process-wide)."""
    from .adapters.tensorflow_cpu import tf

    before, jit = tf.config.optimizer.get_experimental_options(), tf.config.optimizer.get_jit()
    tf.config.optimizer.set_experimental_options(dict(grappler))
    tf.config.optimizer.set_jit("autoclustering" if auto_clustering else "")
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({**{k: True for k in GRAPPLER_DEFAULT_ON},
                                                      "auto_mixed_precision_onednn_bfloat16": False, **before})
        tf.config.optimizer.set_jit(jit or "")


def optimized_graph_digest(concrete, grappler: Mapping[str, bool]) -> str:
    """What Grappler makes of a traced function's graph under `grappler`'s settings, as a digest
    of its nodes (op and inputs, in order; node names left out as far as they are not inputs)."""
    from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, rewriter_config_pb2
    from tensorflow.python.grappler import tf_optimizer

    from .adapters.tensorflow_cpu import tf

    meta = tf.compat.v1.train.export_meta_graph(graph_def=concrete.graph.as_graph_def(), graph=concrete.graph)
    fetch = meta_graph_pb2.CollectionDef()
    fetch.node_list.value.extend(t.name for t in concrete.outputs)
    meta.collection_def["train_op"].CopyFrom(fetch)
    config = config_pb2.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    for name, on in grappler.items():
        setattr(rewrite, name, rewriter_config_pb2.RewriterConfig.ON if on else rewriter_config_pb2.RewriterConfig.OFF)
    optimized = tf_optimizer.OptimizeGraph(config, meta)
    h = hashlib.sha256()
    for n in optimized.node:
        h.update(repr((n.op, list(n.input))).encode())
    return h.hexdigest()[:16]


class TfStack(Stack):
    """A model lowered to TensorFlow, eagerly or as a tf.function (see the module's text)."""
    name = "tensorflow"
    levels = TF_LEVELS

    def __init__(self, config: StackConfig | None = None, options: Sequence[str] = ()):
        super().__init__(config)
        self.options = checked_options(options, TF_OPTIONS, "TensorFlow")
        self._programs: dict[str, Any] = {}
        self._last_feeds: dict[tuple, list] = {}

    def program(self, model: Any):
        from .tf_lowering import lower

        return lowered_once(self._programs, model, lower)

    def _switches(self, config: StackConfig) -> tuple[dict[str, bool], bool, bool]:
        """(Grappler's optimizers, XLA auto-clustering, jit_compile) for `config`."""
        known = GRAPPLER_DEFAULT_ON + self.options
        unknown = [d for d in config.disabled if d not in known]
        if unknown:
            raise ValueError(f"tensorflow: '{unknown[0]}' is neither one of Grappler's default optimizers nor one of "
                             f"this stack's options ({', '.join(known)})")
        on = {o for o in self.options if o not in config.disabled}
        if "xla_auto_clustering" in on:
            from .adapters import tensorflow_cpu

            if not tensorflow_cpu.CPU_AUTO_CLUSTERING:
                raise ValueError("tensorflow: XLA auto-clustering on the CPU needs TF_XLA_FLAGS=--tf_xla_cpu_global_jit "
                                 "when TensorFlow starts; it was imported before opval without it")
        grappler = {name: name not in config.disabled for name in GRAPPLER_DEFAULT_ON}
        grappler["auto_mixed_precision_onednn_bfloat16"] = "auto_mixed_precision_onednn_bfloat16" in on
        return grappler, "xla_auto_clustering" in on, "xla_jit_compile" in on

    def _function(self, program, observe: Sequence[str], jit_compile: bool):
        from .adapters.tensorflow_cpu import tf

        return tf.function(program.function(observe), autograph=False, jit_compile=jit_compile)

    def run(self, model: Any, inputs: Mapping[str, Any], config: StackConfig) -> StackRun:
        if config.threads:
            raise ValueError("tensorflow: its thread pools are sized when TensorFlow starts; the stack takes no threads=")
        level = config.level or self.levels[-1]
        if level not in self.levels:
            raise ValueError(f"unknown TensorFlow level '{level}' (known: {', '.join(self.levels)})")
        program = self.program(model)
        feeds = program.feeds(inputs)
        self._last_feeds[tuple(program.inputs)] = feeds
        run = StackRun(stack=f"{self.name}:{level}")
        if level == "eager":
            if config.disabled:
                raise ValueError(f"tensorflow: passes are turned off in a function only ({', '.join(config.disabled)})")
            run.captured = program.run(inputs)
            run.outputs = {n: run.captured[n] for n in program.outputs}
            return run
        grappler, auto_clustering, jit_compile = self._switches(config)
        with _settings(grappler, auto_clustering):
            plain = self._function(program, program.outputs, jit_compile)
            run.outputs = {n: from_any(np.asarray(v)) for n, v in zip(program.outputs, plain(*feeds))}
            observed = self._function(program, program.values, jit_compile)
            run.captured = {n: from_any(np.asarray(v)) for n, v in zip(program.values, observed(*feeds))}
            digest = optimized_graph_digest(plain.get_concrete_function(*feeds), grappler)
        run.graph_digest = f"{digest}{'+autoclustering' if auto_clustering else ''}{'+jit_compile' if jit_compile else ''}"
        note_if_observing_changed(run)
        return run

    def fired_passes(self, model: Any, level: str) -> list[str]:
        """At `function`: Grappler's default optimizers and the stack's Grappler options whose
        turning off changes the optimized graph (traced for the inputs last run with these graph
        inputs), and the stack's XLA options (each changes what runs by itself); none eagerly."""
        if level != "function":
            return []
        program = self.program(model)
        feeds = self._last_feeds.get(tuple(program.inputs))
        if feeds is None:
            raise ValueError("tensorflow: fired_passes needs a run of a model with these inputs first (their shapes)")
        config = StackConfig(level=level)
        concrete = self._function(program, program.outputs, False).get_concrete_function(*feeds)
        everything = optimized_graph_digest(concrete, self._switches(config)[0])
        fired = [name for name in GRAPPLER_DEFAULT_ON + ("auto_mixed_precision_onednn_bfloat16",)
                 if (name in GRAPPLER_DEFAULT_ON or name in self.options)
                 and optimized_graph_digest(concrete, self._switches(config.but(disabled=(name,)))[0]) != everything]
        return fired + [o for o in self.options if o.startswith("xla_")]

    def command_line(self, config: StackConfig) -> list[str] | None:
        if config.disabled:
            return None
        return ["--stack", f"tensorflow:{config.level or self.levels[-1]}" + "".join(f":+{o}" for o in self.options)]
