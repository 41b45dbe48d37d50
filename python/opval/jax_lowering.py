"""An ONNX model as a JAX program (docs/GRAPH.md, "JAX"): every node of opval's graph IR becomes
the jax.numpy / jax.lax operation with its ONNX semantics — no maintained ONNX-to-JAX converter
exists — so that a model runs under jax.jit or op by op (jax.disable_jit), node for node, with
every value the ONNX graph names observable under that name.

    program = lower(model)
    values = program.run(inputs)                                   # op by op, every value by name
    compiled = jax.jit(program.function(program.values)).lower(*program.feeds(inputs)).compile()

Shapes stay static under jit: shape operands given by constants are baked in as Python tuples,
and the integer values a graph computes from shapes (Shape, then Gather, Concat, ...) are
computed with NumPy, outside the trace, wherever all their operands are NumPy arrays. Float64
needs jax_enable_x64, which lower() sets. An op type it does not lower is named in a
ValueError, never dropped.

Half-precision values (float16, bfloat16): each node that rounds (ROUNDING_OPS) computes in
float32 and rounds its outputs to the values' type once — the contract of an ONNX node of that
type (bf16:f32:bf16), as ONNX Runtime's and PyTorch's CPU kernels compute it. jax.numpy and
jax.nn would compute in the half type itself, rounding after every primitive: jax.nn.softmax of
bfloat16 rounds its exponentials, their sum and the quotient (up to 6.7 bfloat16 ULPs off), a
Gemm's product before its bias, an average pool's window sum before the division.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .arrays import from_any
from .lowering import (Program, axes_of, ceil_padding, flatten, gemm_scaled, ints, lower_model, onnx_pads, reduced_axes,
                       reshape, split_sizes)


def _jax():
    import jax

    from .adapters.jax_xla import enable_x64

    why = enable_x64()
    if why:
        raise RuntimeError(f"JAX cannot compute float64 here: {why}")
    return jax


def _xp(*arrays):
    """NumPy where every operand is a NumPy array (values known while tracing: shapes and
    what is computed from them), else jax.numpy."""
    if all(isinstance(a, (np.ndarray, np.generic, int, float)) for a in arrays if a is not None):
        return np
    import jax.numpy as jnp

    return jnp


def jax_dtype(onnx_type: int):
    """The NumPy / ml_dtypes type JAX takes for an ONNX element type."""
    import ml_dtypes
    import onnx

    types = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
             onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.BFLOAT16: ml_dtypes.bfloat16,
             onnx.TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, onnx.TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
             onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32, onnx.TensorProto.INT16: np.int16,
             onnx.TensorProto.INT8: np.int8, onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.BOOL: np.bool_}
    if onnx_type not in types:
        raise ValueError(f"ONNX element type {onnx.TensorProto.DataType.Name(onnx_type)} has no JAX type here")
    return types[onnx_type]


def _is_float(x) -> bool:
    """NumPy's floating types, and ml_dtypes' (bfloat16, fp8), which NumPy sees as kind V."""
    dt = np.dtype(x.dtype)
    return np.issubdtype(dt, np.floating) or dt.kind == "V"


# -- the lowerings: (inputs, attributes) -> outputs, each a jax operation with ONNX's semantics --


def _binary(name: str) -> Callable:
    def lower(a, b):
        return getattr(_xp(a, b), name)(a, b)
    return lower


def _div(a, b):
    xp = _xp(a, b)
    if _is_float(a):
        return xp.divide(a, b)
    if xp is np:
        return (np.trunc(a / b)).astype(a.dtype)
    import jax

    return jax.lax.div(a, b)  # ONNX integer Div truncates, as lax.div does


def _gemm(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    import jax.numpy as jnp

    a = jnp.swapaxes(a, -1, -2) if transA else a
    b = jnp.swapaxes(b, -1, -2) if transB else b
    return gemm_scaled(a @ b, c, alpha, beta)


def _softmax(fn_name: str) -> Callable:
    def lower(x, *, axis=None, opset=13):
        import jax

        fn = getattr(jax.nn, fn_name)
        if opset < 13:  # the old form: softmax of the input coerced to 2-D at `axis`
            axis = 1 if axis is None else axis
            shape = x.shape
            flat = x.reshape(math.prod(shape[:axis % x.ndim]), -1)
            return fn(flat, axis=-1).reshape(shape)
        return fn(x, axis=-1 if axis is None else axis)
    return lower


def _stashed(x, stash_type: int):
    """ONNX's stash_type=1: a normalization's statistics in float32 for narrower inputs."""
    import jax.numpy as jnp

    narrow = np.dtype(x.dtype).itemsize < 4
    return (x.astype(jnp.float32) if stash_type == 1 and narrow else x), x.dtype


def _normalized(x, axes: tuple[int, ...], epsilon: float, rms: bool):
    import jax.numpy as jnp

    if rms:
        return x / jnp.sqrt(jnp.mean(x * x, axis=axes, keepdims=True) + epsilon)
    mean = jnp.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    return centred / jnp.sqrt(jnp.mean(centred * centred, axis=axes, keepdims=True) + epsilon)


def _layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    wide, typ = _stashed(x, stash_type)
    y = _normalized(wide, tuple(range(axis % x.ndim, x.ndim)), epsilon, rms=False).astype(typ)
    y = y * scale if scale is not None else y
    return y + bias if bias is not None else y


def _rms_norm(x, scale=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    wide, typ = _stashed(x, stash_type)
    y = _normalized(wide, tuple(range(axis % x.ndim, x.ndim)), epsilon, rms=True).astype(typ)
    return y * scale if scale is not None else y


def _group_norm(x, scale, bias, *, num_groups, epsilon=1e-5, stash_type=1, opset=21):
    import jax.numpy as jnp

    channels = x.shape[1]
    if scale.size != channels:  # opset 18's per-group scale and bias
        scale, bias = (jnp.repeat(t, channels // num_groups) for t in (scale, bias))
    wide, typ = _stashed(x, stash_type)
    grouped = wide.reshape((x.shape[0], num_groups, -1))
    y = _normalized(grouped, (2,), epsilon, rms=False).reshape(x.shape).astype(typ)
    per_channel = (1, channels) + (1,) * (x.ndim - 2)
    return y * scale.reshape(per_channel) + bias.reshape(per_channel)


def _window(x, kernel, strides, dilations):
    n = x.ndim - 2
    return list(kernel), list(strides or [1] * n), list(dilations or [1] * n)


def _conv(x, w, b=None, *, pads=(), strides=None, dilations=None, group=1, auto_pad="NOTSET", kernel_shape=None):
    import jax

    kernel, strides, dilations = _window(x, w.shape[2:], strides, dilations)
    padding = onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations)
    spatial = "".join("DHW"[-len(kernel):])
    y = jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilations, feature_group_count=group,
                                     dimension_numbers=(f"NC{spatial}", f"OI{spatial}", f"NC{spatial}"))
    return y if b is None else y + b.reshape((1, -1) + (1,) * len(kernel))


def _max_pool(x, *, kernel_shape, pads=(), strides=None, dilations=None, ceil_mode=0, auto_pad="NOTSET",
              storage_order=0):
    import jax

    kernel, strides, dilations = _window(x, kernel_shape, strides, dilations)
    padding = ceil_padding(x, onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations),
                            kernel, strides, dilations, ceil_mode)
    return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 1, *kernel), (1, 1, *strides),
                                 [(0, 0), (0, 0), *padding], window_dilation=(1, 1, *dilations))


def _average_pool(x, *, kernel_shape, pads=(), strides=None, count_include_pad=0, ceil_mode=0, auto_pad="NOTSET",
                  dilations=None):
    import jax
    import jax.numpy as jnp

    kernel, strides, dilations = _window(x, kernel_shape, strides, dilations)
    padding = onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations)
    if ceil_mode:
        raise ValueError("AveragePool with ceil_mode has no JAX lowering here (its divisor past the padding "
                         "differs between ONNX Runtime and PyTorch)")
    window = dict(window_dimensions=(1, 1, *kernel), window_strides=(1, 1, *strides),
                  padding=[(0, 0), (0, 0), *padding], window_dilation=(1, 1, *dilations))
    summed = jax.lax.reduce_window(x, np.array(0, x.dtype), jax.lax.add, **window)
    if count_include_pad:
        return summed / math.prod(kernel)
    ones = jnp.ones((1, 1) + tuple(x.shape[2:]), x.dtype)
    return summed / jax.lax.reduce_window(ones, np.array(0, x.dtype), jax.lax.add, **window)


def _reduce(name: str) -> Callable:
    def lower(x, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=18, **attrs):
        dims = reduced_axes(attrs.get("axes_attr", axes), x.ndim, noop_with_empty_axes)
        if dims is None:
            return x
        return getattr(_xp(x), name)(x, axis=tuple(dims), keepdims=bool(keepdims))
    return lower


def _transpose(x, *, perm=None):
    return _xp(x).transpose(x, list(perm) if perm is not None else None)


def _concat(*xs, axis):
    return _xp(*xs).concatenate(list(xs), axis)


def _split(x, split=None, *, axis=0, num_outputs=None, outputs=1, split_attr=None):
    sizes = split_sizes(x.shape[axis], split, split_attr, num_outputs or outputs)
    return tuple(_xp(x).split(x, list(np.cumsum(sizes)[:-1]), axis))


def _slice(x, starts, ends, axes=None, steps=None):
    starts, ends = ints(starts), ints(ends)
    axes = axes_of(axes, x.ndim) if axes is not None else list(range(len(starts)))
    steps = ints(steps) if steps is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[axis] = slice(*slice(start, end, step).indices(x.shape[axis]))
    return x[tuple(index)]


def _gather(x, indices, *, axis=0):
    xp = _xp(x, indices)
    axis %= x.ndim
    idx = xp.where(indices < 0, indices + x.shape[axis], indices)
    return xp.take(x, idx, axis=axis)


def _squeeze(x, axes=None):
    xp = _xp(x)
    return xp.squeeze(x) if axes is None else xp.squeeze(x, tuple(axes_of(axes, x.ndim)))


def _unsqueeze(x, axes):
    rank = x.ndim + len(ints(axes))
    return _xp(x).expand_dims(x, tuple(sorted(axes_of(axes, rank))))


def _expand(x, shape):
    xp = _xp(x)
    return xp.broadcast_to(x, np.broadcast_shapes(tuple(x.shape), tuple(ints(shape))))


def _shape(x, *, start=0, end=None):
    return np.array(list(x.shape)[start:end], np.int64)  # known while tracing: NumPy


def _constant_of_shape(shape, *, value=None):
    fill = np.asarray(value) if value is not None else np.zeros(1, np.float32)
    return np.full(tuple(ints(shape)), fill.reshape(-1)[0], dtype=fill.dtype)


def _cast(x, *, to):
    return _xp(x).asarray(x).astype(jax_dtype(to))


def _gelu(x, *, approximate="none"):
    import jax

    return jax.nn.gelu(x, approximate=approximate == "tanh")


#: The op types whose lowering rounds: for half-precision values, computed in float32.
ROUNDING_OPS = frozenset({"Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "Tanh", "Erf", "Gelu", "Softmax", "LogSoftmax",
                          "LayerNormalization", "RMSNormalization", "GroupNormalization", "Conv", "AveragePool",
                          "GlobalAveragePool", "ReduceMean", "ReduceSum"})


def _in_float32(fn: Callable) -> Callable:
    """`fn` computing half-precision operands in float32, its float32 results rounded once to
    the operands' type (see the module's text); other operands as they are."""
    import jax.numpy as jnp

    half_types = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))

    def lowered(*args, **attrs):
        half = next((a.dtype for a in args if getattr(a, "dtype", None) in half_types), None)
        if half is None:
            return fn(*args, **attrs)
        result = fn(*[a.astype(np.float32) if getattr(a, "dtype", None) == half else a for a in args], **attrs)
        narrowed = lambda r: r.astype(half) if r.dtype == np.float32 else r  # noqa: E731
        return tuple(map(narrowed, result)) if isinstance(result, tuple) else narrowed(result)
    return lowered


def _lowerings() -> dict[str, Callable]:
    table = _plain_lowerings()
    return {op: _in_float32(fn) if op in ROUNDING_OPS else fn for op, fn in table.items()}


def _plain_lowerings() -> dict[str, Callable]:
    import jax
    import jax.numpy as jnp

    return {
        "Add": _binary("add"), "Sub": _binary("subtract"), "Mul": _binary("multiply"), "Div": _div,
        "MatMul": jnp.matmul, "Gemm": _gemm, "Relu": jax.nn.relu, "Tanh": jnp.tanh, "Erf": jax.lax.erf,
        "Gelu": _gelu, "Identity": lambda x: x,
        "Softmax": _softmax("softmax"), "LogSoftmax": _softmax("log_softmax"),
        "LayerNormalization": _layer_norm, "RMSNormalization": _rms_norm, "GroupNormalization": _group_norm,
        "Conv": _conv, "MaxPool": _max_pool, "AveragePool": _average_pool,
        "GlobalAveragePool": lambda x: jnp.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True),
        "ReduceMax": _reduce("max"), "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"),
        "Reshape": reshape, "Flatten": flatten, "Transpose": _transpose, "Concat": _concat, "Split": _split,
        "Slice": _slice, "Gather": _gather, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Expand": _expand,
        "Shape": _shape, "ConstantOfShape": _constant_of_shape, "Cast": _cast,
        "CastLike": lambda x, like, **_: _xp(x).asarray(x).astype(like.dtype),
    }


class JaxProgram(Program):
    """A lowered ONNX model as JAX (see the module's text)."""

    def function(self, observe: Sequence[str] | None = None) -> Callable:
        """A pure function of the graph inputs returning the values named in `observe`
        (default: the graph outputs), for jax.jit."""
        names = tuple(observe if observe is not None else self.outputs)
        return lambda *feeds: self.forward(feeds, names)

    def feeds(self, inputs: Mapping[str, Any]) -> list:
        import jax.numpy as jnp

        self.check_feeds(inputs)
        return [jnp.asarray(np.asarray(inputs[n])) for n in self.inputs]

    def run(self, inputs: Mapping[str, Any], observe: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Op by op (jax.disable_jit): the values named in `observe` (default every value) as
        NumPy arrays."""
        jax = _jax()
        names = list(observe if observe is not None else self.values)
        with jax.disable_jit():
            values = self.forward(self.feeds(inputs), names)
        return {n: from_any(np.asarray(v)) for n, v in zip(names, values)}


def lower(model: Any) -> JaxProgram:
    """`model` (an ONNX path, bytes or onnx.ModelProto) as a JaxProgram (constants stay NumPy
    arrays); an op type without a lowering raises ValueError naming the node."""
    _jax()
    return JaxProgram(*lower_model(model, _lowerings(), np.asarray, "JAX"))
