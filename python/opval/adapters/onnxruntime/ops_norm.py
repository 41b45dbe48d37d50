"""Normalizations and reductions in ONNX: softmax, log_softmax, layer_norm, rms_norm, reduce.

softmax / log_softmax: Softmax / LogSoftmax (opset 13+ semantics: one axis).
layer_norm: LayerNormalization (opset 17) over axis = -norm_axes, epsilon, stash_type=1;
  affine=0 passes Scale = ones (Scale is a required input; x * 1 is exact) and no B; stats=1
  takes its Mean and InvStdDev outputs.
rms_norm: RMSNormalization (opset 23) likewise.
  epsilon is a float32 attribute in both: the computation is float32 anyway.
reduce: ReduceSum / ReduceMean / ReduceMax (opset 18: axes as an int64 input), keepdims;
  i32 sources Cast to float64 first (the accumulation type: exact sums, a mean rounded once
  by the adapter; ORT's int32 ReduceMean would divide in integers).
"""
from __future__ import annotations

import numpy as np

from .case import is_float, onnx_op
from .graph import Graph, TensorProto, onnx_type


def _softmax(op_type: str):
    def build(p, x, compute):
        g = Graph(p.op)
        g.output(g.op(op_type, g.input("x", x["x"]), axis=p.get("axis")), p.outputs()[0].shape)
        return g

    return build


def _norm(op_type: str):
    def build(p, x, compute):
        g = Graph(p.op)
        src = x["x"]
        axes = p.get("norm_axes")
        normalized = src.shape[src.ndim - axes:]
        inputs = [g.input("x", src)]
        inputs.append(g.input("gamma", x["gamma"]) if "gamma" in x else g.const(np.ones(normalized), compute))
        if "beta" in x:
            inputs.append(g.input("beta", x["beta"]))
        stats = p.op == "layer_norm" and p.get("stats")
        # With stats=1, LayerNormalization's optional Mean and InvStdDev outputs (float32 with
        # stash_type=1, shaped as x with the normalized dims 1: opval's mean and inv_std).
        out_types = (None, TensorProto.FLOAT, TensorProto.FLOAT) if stats else (None,)
        outs = g.op_outputs(op_type, *inputs, out_types=out_types, axis=-axes, epsilon=p.get("eps"), stash_type=1)
        for value, operand in zip(outs, p.outputs()):
            g.output(value, operand.shape)
        return g

    return build


_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}


def _reduce(p, x, compute):
    g = Graph("reduce")
    src = x["x"]
    v = g.input("x", src)
    if not is_float(src.dtype):
        v = g.op("Cast", v, to=onnx_type(compute), out_type=onnx_type(compute))
    axes = sorted({a % src.ndim for a in p.get("axes")}) if src.ndim else []
    y = g.op(_REDUCE[p.get("kind")], v, g.const(axes, np.int64), keepdims=int(p.get("keepdims")),
             noop_with_empty_axes=1)
    g.output(y, p.outputs()[0].shape)
    return g


NORM_OPS = {
    "softmax": onnx_op(_softmax("Softmax")),
    "log_softmax": onnx_op(_softmax("LogSoftmax")),
    "layer_norm": onnx_op(_norm("LayerNormalization")),
    "rms_norm": onnx_op(_norm("RMSNormalization")),
    "reduce": onnx_op(_reduce),
}
