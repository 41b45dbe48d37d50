"""An ONNX model as a PyTorch program (docs/GRAPH.md, "PyTorch"): every node of opval's graph IR
becomes the torch operation with its ONNX semantics, so that a model — written in ONNX or
exported from PyTorch — runs eagerly and under torch.compile, node for node, and every value
the ONNX graph names can be observed under that name.

    program = lower(model)
    values = program.run(inputs)                  # eager, every value by name
    compiled = torch.compile(program.module(observe=program.values), backend="inductor")

The program is plain Python data (op functions, value names, attributes as Python constants),
so TorchDynamo traces straight through it: the graph it captures holds only the model's torch
operations. An op type it does not lower is named in a ValueError, never dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .arrays import from_any


def _torch():
    import torch

    return torch


def torch_dtype(onnx_type: int):
    """The torch type of an ONNX element type."""
    import onnx

    torch = _torch()
    types = {onnx.TensorProto.FLOAT: torch.float32, onnx.TensorProto.DOUBLE: torch.float64,
             onnx.TensorProto.FLOAT16: torch.float16, onnx.TensorProto.BFLOAT16: torch.bfloat16,
             onnx.TensorProto.FLOAT8E4M3FN: torch.float8_e4m3fn, onnx.TensorProto.FLOAT8E5M2: torch.float8_e5m2,
             onnx.TensorProto.INT64: torch.int64, onnx.TensorProto.INT32: torch.int32,
             onnx.TensorProto.INT16: torch.int16, onnx.TensorProto.INT8: torch.int8,
             onnx.TensorProto.UINT8: torch.uint8, onnx.TensorProto.BOOL: torch.bool}
    if onnx_type not in types:
        raise ValueError(f"ONNX element type {onnx.TensorProto.DataType.Name(onnx_type)} has no torch type here")
    return types[onnx_type]


def to_torch(array: Any):
    """A NumPy array (ml_dtypes' bfloat16 and fp8 included) as a CPU torch tensor."""
    import ml_dtypes

    torch = _torch()
    a = np.ascontiguousarray(array)
    views = {np.dtype(ml_dtypes.bfloat16): (np.uint16, torch.bfloat16),
             np.dtype(ml_dtypes.float8_e4m3fn): (np.uint8, torch.float8_e4m3fn),
             np.dtype(ml_dtypes.float8_e5m2): (np.uint8, torch.float8_e5m2)}
    if a.dtype in views:
        raw, typ = views[a.dtype]
        return torch.from_numpy(a.view(raw).copy()).view(typ)
    return torch.from_numpy(a.copy())


# -- the lowerings: (inputs, attributes) -> outputs, each a torch operation with ONNX's semantics --


def _axes(value, rank: int) -> list[int]:
    return [a % rank for a in _ints(value)]


def _ints(value) -> list[int]:
    """A shape-like operand: a tuple baked in at lowering, or a tensor computed by the graph."""
    return [int(v) for v in (value.tolist() if hasattr(value, "tolist") else value)]


def _div(a, b):
    torch = _torch()
    if a.dtype.is_floating_point:
        return a / b
    return torch.div(a, b, rounding_mode="trunc")  # ONNX integer Div truncates


def _gemm(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    a = a.transpose(-1, -2) if transA else a
    b = b.transpose(-1, -2) if transB else b
    if c is not None:  # one op, as ONNX's Gemm is: the bias added before the one rounding to the output type
        return _torch().addmm(c, a, b, beta=beta, alpha=alpha)
    out = a @ b
    return out * alpha if alpha != 1.0 else out


def _softmax(fn_name: str) -> Callable:
    def lower(x, *, axis=None, opset=13):
        if opset < 13:  # the old form: softmax of the input coerced to 2-D at `axis`
            axis = 1 if axis is None else axis
            shape = x.shape
            flat = x.reshape(math.prod(shape[:axis % x.dim()]), -1)
            return getattr(flat, fn_name)(-1).reshape(shape)
        return getattr(x, fn_name)(-1 if axis is None else axis)
    return lower


def _layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    torch = _torch()
    return torch.nn.functional.layer_norm(x, tuple(x.shape[axis % x.dim():]), scale, bias, epsilon)


def _rms_norm(x, scale=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    torch = _torch()
    return torch.nn.functional.rms_norm(x, tuple(x.shape[axis % x.dim():]), scale, epsilon)


def _group_norm(x, scale, bias, *, num_groups, epsilon=1e-5, stash_type=1, opset=21):
    torch = _torch()
    channels = x.shape[1]
    if scale.numel() != channels:  # opset 18's per-group scale and bias
        scale, bias = (t.repeat_interleave(channels // num_groups) for t in (scale, bias))
    return torch.nn.functional.group_norm(x, num_groups, scale, bias, epsilon)


def _spatial_pads(x, pads: Sequence[int], auto_pad: str, kernel: Sequence[int], strides: Sequence[int],
                  dilations: Sequence[int]) -> list[int]:
    """ONNX's pads (begins then ends per spatial axis; auto_pad SAME_* computed) in
    torch.nn.functional.pad's order (last axis first)."""
    spatial = list(x.shape[2:])
    n = len(spatial)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * n)
        for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            pads[i], pads[i + n] = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
    elif auto_pad == "VALID" or not pads:
        pads = [0] * (2 * n)
    out = []
    for i in reversed(range(n)):
        out += [int(pads[i]), int(pads[i + n])]
    return out


def _conv(x, w, b=None, *, pads=(), strides=None, dilations=None, group=1, auto_pad="NOTSET", kernel_shape=None):
    torch = _torch()
    n = x.dim() - 2
    strides, dilations = list(strides or [1] * n), list(dilations or [1] * n)
    padded = torch.nn.functional.pad(x, _spatial_pads(x, pads, auto_pad, list(w.shape[2:]), strides, dilations))
    conv = getattr(torch.nn.functional, f"conv{n}d")
    return conv(padded, w, b, stride=strides, dilation=dilations, groups=group)


def _max_pool(x, *, kernel_shape, pads=(), strides=None, dilations=None, ceil_mode=0, auto_pad="NOTSET",
              storage_order=0):
    torch = _torch()
    n = x.dim() - 2
    strides, dilations = list(strides or [1] * n), list(dilations or [1] * n)
    pad = _spatial_pads(x, pads, auto_pad, kernel_shape, strides, dilations)
    padded = torch.nn.functional.pad(x, pad, value=-math.inf) if any(pad) else x
    pool = getattr(torch.nn.functional, f"max_pool{n}d")
    return pool(padded, list(kernel_shape), strides, 0, dilations, ceil_mode=bool(ceil_mode))


def _average_pool(x, *, kernel_shape, pads=(), strides=None, count_include_pad=0, ceil_mode=0, auto_pad="NOTSET",
                  dilations=None):
    torch = _torch()
    n = x.dim() - 2
    strides = list(strides or [1] * n)
    pad = _spatial_pads(x, pads, auto_pad, kernel_shape, strides, [1] * n)
    symmetric = all(pad[2 * i] == pad[2 * i + 1] for i in range(n))
    pool = getattr(torch.nn.functional, f"avg_pool{n}d")
    if symmetric:
        return pool(x, list(kernel_shape), strides, [pad[2 * (n - 1 - i)] for i in range(n)], ceil_mode=bool(ceil_mode),
                    count_include_pad=bool(count_include_pad))
    summed = pool(torch.nn.functional.pad(x, pad), list(kernel_shape), strides, 0, ceil_mode=bool(ceil_mode),
                  count_include_pad=True, divisor_override=1)
    if count_include_pad:
        return summed / math.prod(kernel_shape)
    ones = torch.nn.functional.pad(torch.ones_like(x[:1, :1]), pad)
    counts = pool(ones, list(kernel_shape), strides, 0, ceil_mode=bool(ceil_mode), count_include_pad=True,
                  divisor_override=1)
    return summed / counts


def _reduce(name: str) -> Callable:
    def lower(x, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=18, **attrs):
        axes = attrs.get("axes_attr", axes)
        if axes is None or len(_ints(axes)) == 0:
            if noop_with_empty_axes:
                return x
            dims = list(range(x.dim()))
        else:
            dims = _axes(axes, x.dim())
        torch = _torch()
        if name == "max":
            return torch.amax(x, dims, keepdim=bool(keepdims))
        return getattr(torch, name)(x, dims, keepdim=bool(keepdims))
    return lower


def _reshape(x, shape, *, allowzero=0):
    target = _ints(shape)
    if not allowzero:
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return x.reshape(target)


def _flatten(x, *, axis=1):
    axis = axis + x.dim() if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def _transpose(x, *, perm=None):
    return x.permute(list(perm) if perm is not None else list(reversed(range(x.dim()))))


def _concat(*xs, axis):
    return _torch().cat(list(xs), axis)


def _split(x, split=None, *, axis=0, num_outputs=None, outputs=1, split_attr=None):
    sizes = _ints(split) if split is not None else split_attr
    dim = x.shape[axis]
    if sizes is None:
        parts = num_outputs or outputs
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    return tuple(x.split(list(sizes), axis))


def _slice(x, starts, ends, axes=None, steps=None):
    torch = _torch()
    starts, ends = _ints(starts), _ints(ends)
    axes = _axes(axes, x.dim()) if axes is not None else list(range(len(starts)))
    steps = _ints(steps) if steps is not None else [1] * len(starts)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        first, stop, stride = slice(start, end, step).indices(x.shape[axis])
        x = x.index_select(axis, torch.arange(first, stop, stride, device=x.device))
    return x


def _gather(x, indices, *, axis=0):
    axis %= x.dim()
    idx = indices.to(_torch().int64)
    idx = _torch().where(idx < 0, idx + x.shape[axis], idx)
    out = x.index_select(axis, idx.reshape(-1))
    return out.reshape(tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))


def _squeeze(x, axes=None):
    if axes is None:
        return x.squeeze()
    for a in sorted(_axes(axes, x.dim()), reverse=True):
        x = x.squeeze(a)
    return x


def _unsqueeze(x, axes):
    rank = x.dim() + len(_ints(axes))
    for a in sorted(_axes(axes, rank)):
        x = x.unsqueeze(a)
    return x


def _expand(x, shape):
    torch = _torch()
    return x.expand(torch.broadcast_shapes(tuple(x.shape), tuple(_ints(shape))))


def _shape(x, *, start=0, end=None):
    return _torch().tensor(list(x.shape)[start:end], dtype=_torch().int64)


def _constant_of_shape(shape, *, value=None):
    torch = _torch()
    fill = value if value is not None else torch.zeros(1, dtype=torch.float32)
    return torch.full(tuple(_ints(shape)), fill.reshape(-1)[0].item(), dtype=fill.dtype)


def _cast(x, *, to):
    return x.to(torch_dtype(to))


def _gelu(x, *, approximate="none"):
    return _torch().nn.functional.gelu(x, approximate=approximate)


def _lowerings() -> dict[str, Callable]:
    torch = _torch()
    return {
        "Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": _div, "MatMul": torch.matmul, "Gemm": _gemm,
        "Relu": torch.relu, "Tanh": torch.tanh, "Erf": torch.erf, "Gelu": _gelu, "Identity": lambda x: x,
        "Softmax": _softmax("softmax"), "LogSoftmax": _softmax("log_softmax"),
        "LayerNormalization": _layer_norm, "RMSNormalization": _rms_norm, "GroupNormalization": _group_norm,
        "Conv": _conv, "MaxPool": _max_pool, "AveragePool": _average_pool,
        "GlobalAveragePool": lambda x: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
        "ReduceMax": _reduce("max"), "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"),
        "Reshape": _reshape, "Flatten": _flatten, "Transpose": _transpose, "Concat": _concat, "Split": _split,
        "Slice": _slice, "Gather": _gather, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Expand": _expand,
        "Shape": _shape, "ConstantOfShape": _constant_of_shape, "Cast": _cast,
        "CastLike": lambda x, like, **_: x.to(like.dtype),
    }


#: The operands that are shapes, axes or slice bounds, by position: where a constant gives them
#: they are baked into the program as Python ints, so that TorchDynamo sees static shapes (a
#: tensor's .tolist() would break its graph).
_SHAPE_OPERANDS = {"Reshape": (1,), "Slice": (1, 2, 3, 4), "Squeeze": (1,), "Unsqueeze": (1,), "Expand": (1,),
                   "ReduceMax": (1,), "ReduceMean": (1,), "ReduceSum": (1,), "Split": (1,), "ConstantOfShape": (0,)}

#: Attributes whose ONNX name is an operand's name in the lowering (older opsets' attribute forms).
_ATTRIBUTE_OPERANDS = {("ReduceMax", "axes"): "axes_attr", ("ReduceMean", "axes"): "axes_attr",
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
    outputs by name (see the module's text)."""

    def __init__(self, steps: list[Step], constants: dict[str, Any], inputs: list[str], outputs: list[str]):
        self.steps, self.constants, self.inputs, self.outputs = steps, constants, inputs, outputs
        #: Every value a node writes, in execution order: what `module(observe=...)` can return.
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

    def module(self, observe: Sequence[str] | None = None):
        """A torch.nn.Module whose forward(*inputs) returns the values named in `observe`
        (default: the graph outputs), for torch.compile."""
        torch = _torch()
        program, names = self, tuple(observe if observe is not None else self.outputs)

        class Lowered(torch.nn.Module):
            def forward(self, *feeds):
                return program.forward(feeds, names)

        return Lowered()

    def feeds(self, inputs: Mapping[str, Any]) -> list:
        missing = [n for n in self.inputs if n not in inputs]
        if missing:
            raise ValueError(f"no value for graph input{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return [to_torch(np.asarray(inputs[n])) if not hasattr(inputs[n], "dtype") or isinstance(inputs[n], np.ndarray)
                else inputs[n] for n in self.inputs]

    def run(self, inputs: Mapping[str, Any], observe: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Eager PyTorch: the values named in `observe` (default every value) as NumPy arrays."""
        torch = _torch()
        names = list(observe if observe is not None else self.values)
        with torch.no_grad():
            values = self.forward(self.feeds(inputs), names)
        return {n: from_any(v) for n, v in zip(names, values)}


def _attribute_values(node, op_type: str, opset: int) -> dict[str, Any]:
    from onnx import helper, numpy_helper

    out = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode()
        elif hasattr(value, "dims"):  # a TensorProto (Constant's value, ConstantOfShape's value)
            value = to_torch(numpy_helper.to_array(value))
        elif isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        out[_ATTRIBUTE_OPERANDS.get((op_type, a.name), a.name)] = value
    if op_type in ("Softmax", "LogSoftmax", "GroupNormalization"):
        out["opset"] = opset
    if op_type == "Split" and "num_outputs" not in out:
        out["outputs"] = len(node.output)
    return out


def _constant(node) -> Any:
    """The value of a Constant node (value, or one of the value_* attributes)."""
    from onnx import helper

    torch = _torch()
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if a.name == "value":
            from onnx import numpy_helper

            return to_torch(numpy_helper.to_array(v))
        if a.name in ("value_float", "value_floats"):
            return torch.tensor(v, dtype=torch.float32)
        if a.name in ("value_int", "value_ints"):
            return torch.tensor(v, dtype=torch.int64)
    raise ValueError(f"Constant node '{node.name}' has no value attribute this lowering reads")


def lower(model: Any) -> Program:
    """`model` (an ONNX path, bytes or onnx.ModelProto) as a Program. Integer initializers stay
    tensors; an op type without a lowering raises ValueError naming the node."""
    from onnx import numpy_helper

    from .graph_stacks import _as_model

    m = _as_model(model)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 13)
    constants = {t.name: to_torch(numpy_helper.to_array(t)) for t in m.graph.initializer}
    lowerings = _lowerings()
    steps = []
    for i, n in enumerate(m.graph.node):
        name = n.name or f"{n.op_type}_{i}"
        if n.domain not in ("", "ai.onnx"):
            raise ValueError(f"node '{name}' is of domain '{n.domain}': only ONNX's own ops are lowered to PyTorch")
        if n.op_type == "Constant":
            value = _constant(n)
            steps.append(Step(name, n.op_type, lambda v=value: v, (), tuple(n.output), ()))
            if not value.dtype.is_floating_point and n.output[0] not in constants:
                constants[n.output[0]] = value  # known now: a shape operand it feeds is baked in
            continue
        if n.op_type not in lowerings:
            raise ValueError(f"node '{name}' ({n.op_type}) has no PyTorch lowering (lowered: "
                             f"{', '.join(sorted(lowerings))}, Constant)")
        inputs = list(n.input)
        for k in _SHAPE_OPERANDS.get(n.op_type, ()):
            if k < len(inputs) and inputs[k] in constants:
                static = f"{inputs[k]}#static"
                constants[static] = tuple(int(v) for v in constants[inputs[k]].reshape(-1).tolist())
                inputs[k] = static
        steps.append(Step(name, n.op_type, lowerings[n.op_type], tuple(inputs), tuple(n.output),
                          tuple(_attribute_values(n, n.op_type, opset).items())))
    inputs = [vi.name for vi in m.graph.input if vi.name not in constants]
    return Program(steps, constants, inputs, [o.name for o in m.graph.output])
