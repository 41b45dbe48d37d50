"""Faults planted in real stacks for graph triage's tests and demonstration (docs/GRAPH.md,
"Triage"). The stacks' own code cannot be edited, so each fault is a test-only wrapper that
triage sees only through the Stack interface (run, fired_passes, levels, thread_choices) and
never inside:

- Rewriting (RewritingOrt, RewritingJax): ONNX Runtime, or JAX under jit, behind one more graph
  pass that rewrites the model wrongly from a level up (a compiler fault), turned off by name
  like the stack's own passes;
- inductor_pass: an Inductor custom post-grad pass (torch._inductor.config's
  post_grad_custom_post_pass) that rewrites one pattern of the compiled graph wrongly (a
  compiler fault of torch.compile), given to TorchCompileStack as Inductor config;
- DispatchingStack: opval's sim backend with one matmul dispatched to a float16-accumulating
  kernel, with more than one thread or for one weight layout (runtime faults) or always (a
  kernel fault).
"""
from __future__ import annotations

import numpy as np

import opval
from opval import graph
from opval.graph_stacks import OrtStack, Stack, StackConfig, StackRun


def f16_accumulating_matmul(a, b, *bias):
    """A matmul kernel that keeps its running sums in float16 (a planted bug: the contract
    promises float32 accumulation); a Gemm's bias is added to them in float32."""
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], np.float16)
    for k in range(a.shape[-1]):
        acc = (acc + (a[..., :, k:k + 1] * b[..., k:k + 1, :]).astype(np.float16)).astype(np.float16)
    return acc.astype(np.float32) + (bias[0].astype(np.float32) if bias else np.float32(0))


class Rewriting(Stack):
    """A stack (`inner`) behind one more graph pass, `pass_name`, which from level `from_level`
    up rewrites the model with `rewrite` before the stack compiles it (a compiler fault), and
    is turned off like the stack's own passes (StackConfig.disabled)."""

    def __init__(self, inner: Stack, pass_name: str, rewrite, from_level: str):
        self.inner, self.pass_name, self.rewrite, self.from_level = inner, pass_name, rewrite, from_level
        self.levels, self.thread_choices, self.runtime_options = inner.levels, inner.thread_choices, inner.runtime_options
        self.name = f"{inner.name}+{pass_name}"
        super().__init__(inner.config)

    def _fires(self, level: str | None) -> bool:
        return self.levels.index(level or self.levels[-1]) >= self.levels.index(self.from_level)

    def run(self, model, inputs, config):
        active = self._fires(config.level) and self.pass_name not in config.disabled
        inner_config = config.but(disabled=tuple(p for p in config.disabled if p != self.pass_name))
        run = self.inner.run(self.rewrite(model) if active else model, inputs, inner_config)
        if active:
            run.graph_digest += f"+{self.pass_name}"
        return run

    def fired_passes(self, model, level):
        fires = self._fires(level)  # the stack's own passes of the model it compiles there
        return self.inner.fired_passes(self.rewrite(model) if fires else model, level) + ([self.pass_name] if fires else [])


def RewritingOrt(pass_name: str, rewrite, from_level: str = "extended") -> Rewriting:  # noqa: N802 (a stack's name)
    """ONNX Runtime behind one more graph pass (Rewriting)."""
    return Rewriting(OrtStack(), pass_name, rewrite, from_level)


def RewritingJax(pass_name: str, rewrite) -> Rewriting:  # noqa: N802
    """JAX under jit behind one more graph pass (Rewriting): XLA's own passes cannot be edited."""
    from opval.jax_stack import JaxStack

    return Rewriting(JaxStack(), pass_name, rewrite, "jit")


def gelu_to_tanh(model):
    """The rewrite of a compiler that approximates every exact (erf) Gelu by its tanh form."""
    import onnx
    from onnx import helper

    rewritten = onnx.ModelProto.FromString(model.SerializeToString())
    for n in rewritten.graph.node:
        if n.op_type == "Gelu":
            n.attribute.append(helper.make_attribute("approximate", "tanh"))
    return rewritten


def gemm_scale_misfolded(node_name: str):
    """The rewrite of a compiler that folds a scale into Gemm `node_name` with a wrong constant
    (alpha 1 + 2^-10)."""
    import onnx
    from onnx import helper

    def rewrite(model):
        rewritten = onnx.ModelProto.FromString(model.SerializeToString())
        node = next(n for n in rewritten.graph.node if n.name == node_name)
        node.attribute.append(helper.make_attribute("alpha", 1.0 + 2.0 ** -10))
        return rewritten
    return rewrite


class DispatchingStack(Stack):
    """Every op node on opval's sim backend, except that the matmul of one shape is dispatched
    to a kernel accumulating in float16: `fault` "threads" with more than one thread only, or
    "layout" when its weights are laid out column-major (runtime faults: its runtime option
    `layout`, configured column_major here), or "always" at every dispatch (a kernel
    fault)."""
    name = "dispatching"
    thread_choices = (1, 2)
    runtime_options = {"layout": ("row_major", "column_major")}

    def __init__(self, shape, fault: str = "threads"):
        if fault not in ("threads", "layout", "always"):
            raise ValueError(f"fault is threads, layout or always, not {fault!r}")
        super().__init__(StackConfig(runtime=(("layout", "column_major"),)) if fault == "layout" else None)
        m, n, k = shape
        self.fault = fault
        self.bad = opval.kernel_backend(
            "matmul", f16_accumulating_matmul, contracts="f32",
            supports=lambda p: True if (p.get("m"), p.get("n"), p.get("k")) == (m, n, k) else "another node's shape",
            name="f16_accumulating")

    def _dispatches_bad(self, config: StackConfig) -> bool:
        if self.fault == "threads":
            return (config.threads or 2) > 1
        if self.fault == "layout":
            return config.option("layout", self.runtime_options) == "column_major"
        return True

    def run(self, model, inputs, config):
        values, _ = graph.run_on_backend(model, inputs, self.bad if self._dispatches_bad(config) else "sim")
        return StackRun(stack=self.name, captured=values)


def bias_misfolded(bias: str):
    """The rewrite of a compiler that folds the initializer `bias` into a fused MatMul + Add +
    Relu with a relative error of 2^-10 (a fault inside the fusion)."""
    import onnx
    from onnx import numpy_helper

    def rewrite(model):
        rewritten = onnx.ModelProto.FromString(model.SerializeToString())
        t = next(t for t in rewritten.graph.initializer if t.name == bias)
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(1 + 2.0 ** -10), bias))
        return rewritten
    return rewrite


def inductor_pass(name: str, rewrite):
    """An Inductor custom post-grad pass named `name` that applies `rewrite(graph)` to the
    compiled FX graph (a CustomGraphPass, whose uuid keeps Inductor's caches honest)."""
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class Rewrite(CustomGraphPass):
        def __call__(self, g):
            rewrite(g)

        def uuid(self):
            return name

    return Rewrite()


def variance_unbiased(g):
    """A post-grad rewrite that gives every var_mean Bessel's correction (divides by n - 1): a
    layer norm's variance computed as the unbiased estimate, a classic wrong rewrite (the
    normalized values off by a factor sqrt(n / (n - 1)))."""
    import torch

    aten = torch.ops.aten
    for node in [n for n in g.nodes if n.target is aten.var_mean.correction]:
        node.kwargs = {**node.kwargs, "correction": 1}


def addmm_bias_misscaled(g):
    """A post-grad rewrite that folds a scale of 1 + 2^-9 into the bias of every addmm (a
    Gemm's, or a MatMul + Add that Inductor fused): a wrong constant, an error of 2^-9 of the
    bias. (Rounding the bias to bfloat16 and back would not do: Inductor drops casts inside a
    fused kernel unless emulate_precision_casts is set.)"""
    import torch

    aten = torch.ops.aten
    for node in [n for n in g.nodes if n.target is aten.addmm.default]:
        bias = node.args[0]
        with g.inserting_before(node):
            scaled = g.call_function(aten.mul.Tensor, (bias, 1 + 2.0 ** -9))
            scaled.meta["val"] = bias.meta["val"] * (1 + 2.0 ** -9)
        node.args = (scaled,) + tuple(node.args[1:])
