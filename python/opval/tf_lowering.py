"""An ONNX model as a TensorFlow program (docs/GRAPH.md, "TensorFlow"): every node of opval's
graph IR becomes the TensorFlow operation a TensorFlow user writes for it — tf.linalg.matmul,
tf.nn.conv2d (in TensorFlow's NHWC layout), tf.nn.max_pool2d / avg_pool2d, tf.nn.softmax,
tf.nn.gelu, tf.nn.moments with tf.nn.batch_normalization for LayerNormalization (Keras's own
arrangement), ... — so that a model runs eagerly or as a tf.function (Grappler, XLA), node for
node, with every value the ONNX graph names observable under that name.

    program = lower(model)
    values = program.run(inputs)                                    # eager, every value by name
    outputs = tf.function(program.function())(*program.feeds(inputs))

Why lowering and not a converter: the models opval reads are ONNX; tf2onnx converts the other
way (TensorFlow to ONNX), and onnx-tf, the ONNX-to-TensorFlow converter, is archived and does
not run on TensorFlow 2.21 with Keras 3. Shape operands given by constants are baked in (static
shapes under tf.function). Half-precision values compute in float32 and round once per node,
as in the JAX lowering (ROUNDING_OPS). An op type it does not lower is named in a ValueError.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .arrays import from_any
from .jax_lowering import ROUNDING_OPS, jax_dtype
from .lowering import (Program, axes_of, ceil_padding, gemm_scaled, ints, lower_model, onnx_pads, reduced_axes,
                       split_sizes)


def _tf():
    from .adapters.tensorflow_cpu import tf

    return tf


def _binary(name: str) -> Callable:
    def lower(a, b):
        return getattr(_tf().math, name)(a, b)
    return lower


def _div(a, b):
    tf = _tf()
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    return tf.math.divide(a, b) if a.dtype.is_floating else tf.math.truncatediv(a, b)  # ONNX integer Div truncates


def _gemm(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    tf = _tf()
    return gemm_scaled(tf.linalg.matmul(a, b, transpose_a=bool(transA), transpose_b=bool(transB)), c, alpha, beta)


def _softmax(fn_name: str) -> Callable:
    def lower(x, *, axis=None, opset=13):
        tf = _tf()
        fn = getattr(tf.nn, fn_name)
        if opset < 13:  # the old form: softmax of the input coerced to 2-D at `axis`
            axis = 1 if axis is None else axis
            shape = list(x.shape)
            flat = tf.reshape(x, (math.prod(shape[:axis % len(shape)]), -1))
            return tf.reshape(fn(flat, axis=-1), shape)
        return fn(x, axis=-1 if axis is None else axis)
    return lower


def _layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    """tf.nn.moments (two passes) and tf.nn.batch_normalization: x * inv + (bias - mean * inv),
    inv = scale * rsqrt(var + eps), TensorFlow's and Keras's arrangement."""
    tf = _tf()
    rank = len(x.shape)
    mean, var = tf.nn.moments(x, axes=list(range(axis % rank, rank)), keepdims=True)
    return tf.nn.batch_normalization(x, mean, var, offset=bias, scale=scale, variance_epsilon=epsilon)


def _rms_norm(x, scale=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    tf = _tf()
    rank = len(x.shape)
    y = x * tf.math.rsqrt(tf.reduce_mean(x * x, axis=list(range(axis % rank, rank)), keepdims=True) + epsilon)
    return y * scale if scale is not None else y


def _nhwc(x):
    return _tf().transpose(x, (0, 2, 3, 1))


def _nchw(x):
    return _tf().transpose(x, (0, 3, 1, 2))


def _two_d(x, op: str) -> None:
    if len(x.shape) != 4:
        raise ValueError(f"{op} of rank {len(x.shape)}: the TensorFlow lowering takes 2-D (NCHW) only")


def _window(kernel, strides, dilations):
    return list(kernel), list(strides or [1, 1]), list(dilations or [1, 1])


def _conv(x, w, b=None, *, pads=(), strides=None, dilations=None, group=1, auto_pad="NOTSET", kernel_shape=None):
    """tf.nn.conv2d on NHWC data and HWIO filters (the filter's input depth ic/group gives the
    groups), with the padding explicit."""
    tf = _tf()
    _two_d(x, "Conv")
    kernel, strides, dilations = _window(w.shape[2:], strides, dilations)
    padding = onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations)
    y = tf.nn.conv2d(_nhwc(x), tf.transpose(w, (2, 3, 1, 0)), strides=strides,
                     padding=[[0, 0], list(padding[0]), list(padding[1]), [0, 0]], dilations=dilations)
    y = _nchw(y)
    return y if b is None else y + tf.reshape(b, (1, -1, 1, 1))


def _pooled(x, kernel, strides, padding, pool, value: float):
    tf = _tf()
    padded = tf.pad(_nhwc(x), [[0, 0], list(padding[0]), list(padding[1]), [0, 0]], constant_values=value)
    return _nchw(pool(padded, kernel, strides, "VALID"))


def _max_pool(x, *, kernel_shape, pads=(), strides=None, dilations=None, ceil_mode=0, auto_pad="NOTSET",
              storage_order=0):
    """tf.nn.max_pool2d (no dilation in TensorFlow's) on the input padded with -inf."""
    _two_d(x, "MaxPool")
    kernel, strides, dilations = _window(kernel_shape, strides, dilations)
    if dilations != [1, 1]:
        raise ValueError("MaxPool with dilations has no TensorFlow lowering (tf.nn.max_pool2d has no dilation)")
    padding = ceil_padding(x, onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations),
                           kernel, strides, dilations, ceil_mode)
    return _pooled(x, kernel, strides, padding, _tf().nn.max_pool2d, -math.inf)


def _average_pool(x, *, kernel_shape, pads=(), strides=None, count_include_pad=0, ceil_mode=0, auto_pad="NOTSET",
                  dilations=None):
    """tf.nn.avg_pool2d of the zero-padded input (the window's mean, padding counted), divided
    by the mean of a padded ones where the padding does not count."""
    tf = _tf()
    _two_d(x, "AveragePool")
    kernel, strides, dilations = _window(kernel_shape, strides, dilations)
    if ceil_mode or dilations != [1, 1]:
        raise ValueError("AveragePool with ceil_mode or dilations has no TensorFlow lowering here")
    padding = onnx_pads(list(x.shape[2:]), pads, auto_pad, kernel, strides, dilations)
    mean = _pooled(x, kernel, strides, padding, tf.nn.avg_pool2d, 0.0)
    if count_include_pad or not any(a or b for a, b in padding):
        return mean
    ones = tf.ones((1, 1, *x.shape[2:]), x.dtype)
    return mean / _pooled(ones, kernel, strides, padding, tf.nn.avg_pool2d, 0.0)


def _reduce(name: str) -> Callable:
    def lower(x, axes=None, *, keepdims=1, noop_with_empty_axes=0, opset=18, **attrs):
        dims = reduced_axes(attrs.get("axes_attr", axes), len(x.shape), noop_with_empty_axes)
        if dims is None:
            return x
        return getattr(_tf(), name)(x, axis=dims, keepdims=bool(keepdims))
    return lower


def _reshape(x, shape, *, allowzero=0):
    target = ints(shape)
    if not allowzero:
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return _tf().reshape(x, target)


def _flatten(x, *, axis=1):
    shape = list(x.shape)
    axis = axis + len(shape) if axis < 0 else axis
    return _tf().reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))


def _split(x, split=None, *, axis=0, num_outputs=None, outputs=1, split_attr=None):
    sizes = split_sizes(x.shape[axis], split, split_attr, num_outputs or outputs)
    return tuple(_tf().split(x, sizes, axis=axis))


def _cast(x, *, to):
    return _tf().cast(x, jax_dtype(to))


def _in_float32(fn: Callable) -> Callable:
    """`fn` computing half-precision operands in float32, its float32 results rounded once to
    the operands' type; other operands as they are."""
    def lowered(*args, **attrs):
        tf = _tf()
        half = next((a.dtype for a in args if getattr(a, "dtype", None) in (tf.float16, tf.bfloat16)), None)
        if half is None:
            return fn(*args, **attrs)
        result = fn(*[tf.cast(a, tf.float32) if getattr(a, "dtype", None) == half else a for a in args], **attrs)
        narrowed = lambda r: tf.cast(r, half) if r.dtype == tf.float32 else r  # noqa: E731
        return tuple(map(narrowed, result)) if isinstance(result, tuple) else narrowed(result)
    return lowered


def _plain_lowerings() -> dict[str, Callable]:
    tf = _tf()
    return {
        "Add": _binary("add"), "Sub": _binary("subtract"), "Mul": _binary("multiply"), "Div": _div,
        "MatMul": tf.linalg.matmul, "Gemm": _gemm, "Relu": tf.nn.relu, "Tanh": tf.math.tanh, "Erf": tf.math.erf,
        "Sqrt": tf.math.sqrt, "Gelu": lambda x, *, approximate="none": tf.nn.gelu(x, approximate=approximate == "tanh"),
        "Identity": tf.identity, "Softmax": _softmax("softmax"), "LogSoftmax": _softmax("log_softmax"),
        "LayerNormalization": _layer_norm, "RMSNormalization": _rms_norm,
        "Conv": _conv, "MaxPool": _max_pool, "AveragePool": _average_pool,
        "GlobalAveragePool": lambda x: tf.reduce_mean(x, axis=list(range(2, len(x.shape))), keepdims=True),
        "ReduceMax": _reduce("reduce_max"), "ReduceMean": _reduce("reduce_mean"), "ReduceSum": _reduce("reduce_sum"),
        "Reshape": _reshape, "Flatten": _flatten, "Split": _split,
        "Transpose": lambda x, *, perm=None: tf.transpose(x, perm),
        "Concat": lambda *xs, axis: tf.concat(list(xs), axis),
        "Squeeze": lambda x, axes=None: tf.squeeze(x, None if axes is None else axes_of(axes, len(x.shape))),
        "Unsqueeze": lambda x, axes: tf.reshape(x, _unsqueezed(list(x.shape), axes)),
        "Cast": _cast,
    }


def _unsqueezed(shape: list[int], axes) -> list[int]:
    for a in sorted(axes_of(axes, len(shape) + len(ints(axes)))):
        shape.insert(a, 1)
    return shape


class TfProgram(Program):
    """A lowered ONNX model as TensorFlow (see the module's text)."""

    def function(self, observe: Sequence[str] | None = None) -> Callable:
        """A function of the graph inputs returning the values named in `observe` (default: the
        graph outputs), for tf.function."""
        names = tuple(observe if observe is not None else self.outputs)
        return lambda *feeds: self.forward(feeds, names)

    def feeds(self, inputs: Mapping[str, Any]) -> list:
        tf = _tf()
        self.check_feeds(inputs)
        return [tf.constant(np.asarray(inputs[n])) for n in self.inputs]

    def run(self, inputs: Mapping[str, Any], observe: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Eagerly: the values named in `observe` (default every value) as NumPy arrays."""
        names = list(observe if observe is not None else self.values)
        values = self.forward(self.feeds(inputs), names)
        return {n: from_any(np.asarray(v)) for n, v in zip(names, values)}


def lower(model: Any) -> TfProgram:
    """`model` (an ONNX path, bytes or onnx.ModelProto) as a TfProgram; an op type without a
    lowering raises ValueError naming the node."""
    table = {op: _in_float32(fn) if op in ROUNDING_OPS else fn for op, fn in _plain_lowerings().items()}
    return TfProgram(*lower_model(model, table, lambda a: _tf().constant(a), "TensorFlow"))
