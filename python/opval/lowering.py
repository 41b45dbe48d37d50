"""What lowering an ONNX model to a framework's program shares across frameworks (docs/GRAPH.md):
the program as steps (one per node: the lowering, the names it reads and writes, the
attributes as Python values), constants and shape operands baked in as Python tuples (so that
a tracer — TorchDynamo, jax.jit — sees static shapes), ONNX's padding rules, and the run of the
steps that every value the ONNX graph names can be observed by. opval.torch_lowering and
opval.jax_lowering give the per-op lowerings and the framework's array type.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np


def ints(value) -> list[int]:
    """A shape-like operand: a tuple baked in at lowering, or a tensor computed by the graph."""
    return [int(v) for v in (value.tolist() if hasattr(value, "tolist") else value)]


def axes_of(value, rank: int) -> list[int]:
    return [a % rank for a in ints(value)]


def reshape(x, shape, *, allowzero=0):
    """ONNX Reshape of any array with .reshape (a 0 copies the input's extent unless allowzero)."""
    target = ints(shape)
    return x.reshape(target if allowzero else [x.shape[i] if d == 0 else d for i, d in enumerate(target)])


def flatten(x, *, axis=1):
    """ONNX Flatten of any array with .reshape: the axes before `axis` and from it on, each
    multiplied out."""
    axis = axis + len(x.shape) if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def gemm_scaled(product, c=None, alpha: float = 1.0, beta: float = 1.0):
    """ONNX Gemm from A·B: alpha·(A·B) + beta·C, each scaling left out where it is 1 (an exact
    multiplication by 1 is still a rounding step in half precision)."""
    out = product * alpha if alpha != 1.0 else product
    if c is not None:
        out = out + (c * beta if beta != 1.0 else c)
    return out


def reduced_axes(axes, rank: int, noop_with_empty_axes: int) -> list[int] | None:
    """A reduction's axes (every axis when none are given), or None for ONNX's no-op."""
    if axes is None or len(ints(axes)) == 0:
        return None if noop_with_empty_axes else list(range(rank))
    return axes_of(axes, rank)


def split_sizes(dim: int, split, split_attr, parts: int) -> list[int]:
    """Split's part sizes: given (as an operand or, in older opsets, an attribute), or `parts`
    parts of ceil(dim / parts), the last one smaller."""
    sizes = ints(split) if split is not None else split_attr
    if sizes is None:
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    return list(sizes)


def onnx_pads(spatial: Sequence[int], pads: Sequence[int], auto_pad: str, kernel: Sequence[int],
              strides: Sequence[int], dilations: Sequence[int]) -> list[tuple[int, int]]:
    """ONNX's pads (begins then ends per spatial axis; auto_pad SAME_* computed) as (begin, end)
    per spatial axis, first axis first."""
    n = len(spatial)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            out.append((small, large) if auto_pad == "SAME_UPPER" else (large, small))
        return out
    if auto_pad == "VALID" or not pads:
        return [(0, 0)] * n
    return [(int(pads[i]), int(pads[i + n])) for i in range(n)]


def ceil_padding(x, padding, kernel, strides, dilations, ceil_mode: int):
    """Padding at the end of each spatial axis for ceil_mode: as many output positions as the
    ceiling gives, less one whose window would start inside the end padding (ONNX, PyTorch)."""
    if not ceil_mode:
        return padding
    out = []
    for size, (lo, hi), k, s, d in zip(x.shape[2:], padding, kernel, strides, dilations):
        span = size + lo + hi - (k - 1) * d - 1
        count = -(-span // s) + 1
        if (count - 1) * s >= size + lo:
            count -= 1
        out.append((lo, max(hi, (count - 1) * s + (k - 1) * d + 1 - size - lo)))
    return out


#: The operands that are shapes, axes or slice bounds, by position: where a constant gives them
#: they are baked into the program as Python ints, so that a tracer sees static shapes (a
#: tensor's .tolist() would break its graph).
SHAPE_OPERANDS = {"Reshape": (1,), "Slice": (1, 2, 3, 4), "Squeeze": (1,), "Unsqueeze": (1,), "Expand": (1,),
                  "ReduceMax": (1,), "ReduceMean": (1,), "ReduceSum": (1,), "Split": (1,), "ConstantOfShape": (0,)}

#: Attributes whose ONNX name is an operand's name in the lowering (older opsets' attribute forms).
ATTRIBUTE_OPERANDS = {("ReduceMax", "axes"): "axes_attr", ("ReduceMean", "axes"): "axes_attr",
                      ("ReduceSum", "axes"): "axes_attr", ("Split", "split"): "split_attr"}


@dataclass(frozen=True)
class Step:
    """One node: its lowering, the names it reads ("" for an absent optional input) and
    writes, and its attributes as Python values."""
    name: str
    op_type: str
    fn: Callable
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...]


class Program:
    """A lowered ONNX model: its steps in execution order, its weights and its graph inputs and
    outputs by name. A framework's program adds how to feed it and how to compile it."""

    def __init__(self, steps: list[Step], constants: dict[str, Any], inputs: list[str], outputs: list[str]):
        self.steps, self.constants, self.inputs, self.outputs = steps, constants, inputs, outputs
        #: Every value a node writes, in execution order: what a run can observe.
        self.values = [o for s in steps for o in s.outputs if o]

    def forward(self, feeds: Sequence[Any], observe: Sequence[str]) -> tuple:
        """The values named in `observe`, computed from the graph inputs `feeds` (in
        self.inputs' order)."""
        env = dict(self.constants)
        env.update(zip(self.inputs, feeds))
        for s in self.steps:
            args = [env[i] if i else None for i in s.inputs]
            while args and args[-1] is None:
                args.pop()
            result = s.fn(*args, **dict(s.attrs))
            for name, value in zip(s.outputs, result if isinstance(result, tuple) else (result,)):
                if name:
                    env[name] = value
        return tuple(env[n] for n in observe)

    def check_feeds(self, inputs: Mapping[str, Any]) -> None:
        missing = [n for n in self.inputs if n not in inputs]
        if missing:
            raise ValueError(f"no value for graph input{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def attribute_values(node, op_type: str, opset: int, to_array: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    """A node's attributes as Python values (a tensor attribute through `to_array`), renamed
    where the lowering takes them as an operand, with the opset where the op's meaning
    changed with it."""
    from onnx import helper, numpy_helper

    out = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode()
        elif hasattr(value, "dims"):  # a TensorProto (Constant's value, ConstantOfShape's value)
            value = to_array(numpy_helper.to_array(value))
        elif isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        out[ATTRIBUTE_OPERANDS.get((op_type, a.name), a.name)] = value
    if op_type in ("Softmax", "LogSoftmax", "GroupNormalization"):
        out["opset"] = opset
    if op_type == "Split" and "num_outputs" not in out:
        out["outputs"] = len(node.output)
    return out


def constant_value(node) -> np.ndarray:
    """The value of a Constant node (value, or one of the value_* attributes), as NumPy."""
    from onnx import helper, numpy_helper

    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if a.name == "value":
            return numpy_helper.to_array(v)
        if a.name in ("value_float", "value_floats"):
            return np.array(v, np.float32)
        if a.name in ("value_int", "value_ints"):
            return np.array(v, np.int64)
    raise ValueError(f"Constant node '{node.name}' has no value attribute this lowering reads")


def lower_model(model: Any, lowerings: Mapping[str, Callable], to_array: Callable[[np.ndarray], Any],
                framework: str) -> tuple[list[Step], dict[str, Any], list[str], list[str]]:
    """`model` (an ONNX path, bytes or onnx.ModelProto) as steps with `lowerings`, constants made
    arrays by `to_array`; returns (steps, constants, graph inputs, graph outputs). Integer
    constants that feed a shape operand are baked in; an op type without a lowering raises
    ValueError naming the node and what `framework` lowers."""
    from onnx import numpy_helper

    from .graph_stacks import _as_model

    m = _as_model(model)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 13)
    raw = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    constants = {name: to_array(a) for name, a in raw.items()}
    steps = []
    for i, n in enumerate(m.graph.node):
        name = n.name or f"{n.op_type}_{i}"
        if n.domain not in ("", "ai.onnx"):
            raise ValueError(f"node '{name}' is of domain '{n.domain}': only ONNX's own ops are lowered to {framework}")
        if n.op_type == "Constant":
            value = constant_value(n)
            array = to_array(value)
            steps.append(Step(name, n.op_type, lambda v=array: v, (), tuple(n.output), ()))
            if not np.issubdtype(value.dtype, np.floating) and n.output[0] not in constants:
                raw[n.output[0]] = value  # known now: a shape operand it feeds is baked in
                constants[n.output[0]] = array
            continue
        if n.op_type not in lowerings:
            raise ValueError(f"node '{name}' ({n.op_type}) has no {framework} lowering (lowered: "
                             f"{', '.join(sorted(lowerings))}, Constant)")
        inputs = list(n.input)
        for k in SHAPE_OPERANDS.get(n.op_type, ()):
            if k < len(inputs) and inputs[k] in raw:
                static = f"{inputs[k]}#static"
                constants[static] = tuple(int(v) for v in raw[inputs[k]].reshape(-1).tolist())
                inputs[k] = static
        steps.append(Step(name, n.op_type, lowerings[n.op_type], tuple(inputs), tuple(n.output),
                          tuple(attribute_values(n, n.op_type, opset, to_array).items())))
    inputs = [vi.name for vi in m.graph.input if vi.name not in constants]
    return steps, constants, inputs, [o.name for o in m.graph.output]
