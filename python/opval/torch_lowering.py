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
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .arrays import from_any
from .lowering import (Program, axes_of as _axes, flatten, ints as _ints, lower_model, onnx_pads, reduced_axes, reshape,
                       split_sizes)


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
    """ONNX's pads in torch.nn.functional.pad's order (last axis first)."""
    out = []
    for begin, end in reversed(onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations)):
        out += [begin, end]
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
        dims = reduced_axes(attrs.get("axes_attr", axes), x.dim(), noop_with_empty_axes)
        if dims is None:
            return x
        torch = _torch()
        if name == "max":
            return torch.amax(x, dims, keepdim=bool(keepdims))
        return getattr(torch, name)(x, dims, keepdim=bool(keepdims))
    return lower


def _transpose(x, *, perm=None):
    return x.permute(list(perm) if perm is not None else list(reversed(range(x.dim()))))


def _concat(*xs, axis):
    return _torch().cat(list(xs), axis)


def _split(x, split=None, *, axis=0, num_outputs=None, outputs=1, split_attr=None):
    return tuple(x.split(split_sizes(x.shape[axis], split, split_attr, num_outputs or outputs), axis))


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
        "Reshape": reshape, "Flatten": flatten, "Transpose": _transpose, "Concat": _concat, "Split": _split,
        "Slice": _slice, "Gather": _gather, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Expand": _expand,
        "Shape": _shape, "ConstantOfShape": _constant_of_shape, "Cast": _cast,
        "CastLike": lambda x, like, **_: x.to(like.dtype),
    }


class TorchProgram(Program):
    """A lowered ONNX model as PyTorch (see the module's text)."""

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
        self.check_feeds(inputs)
        return [to_torch(np.asarray(inputs[n])) if not hasattr(inputs[n], "dtype") or isinstance(inputs[n], np.ndarray)
                else inputs[n] for n in self.inputs]

    def run(self, inputs: Mapping[str, Any], observe: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Eager PyTorch: the values named in `observe` (default every value) as NumPy arrays."""
        torch = _torch()
        names = list(observe if observe is not None else self.values)
        with torch.no_grad():
            values = self.forward(self.feeds(inputs), names)
        return {n: from_any(v) for n, v in zip(names, values)}


def lower(model: Any) -> TorchProgram:
    """`model` (an ONNX path, bytes or onnx.ModelProto) as a TorchProgram. Integer initializers
    stay tensors; an op type without a lowering raises ValueError naming the node."""
    return TorchProgram(*lower_model(model, _lowerings(), to_torch, "PyTorch"))
