"""rms_norm for IREE: its ONNX importer (3.13) has no lowering for RMSNormalization (opset
23), so the case's model is the decomposition exporters wrote before that opset:
    y = x * Reciprocal(Sqrt(ReduceMean(x * x, normalized axes) + eps)) * gamma
in the compute type. Every other op's model is the onnxruntime adapter's."""
from __future__ import annotations

import numpy as np

from ..onnxruntime.case import onnx_op
from ..onnxruntime.graph import Graph


def _rms_norm(p, x, compute):
    g = Graph("rms_norm")
    src = x["x"]
    v = g.input("x", src)
    axes = list(range(src.ndim - p.get("norm_axes"), src.ndim))
    mean_square = g.op("ReduceMean", g.op("Mul", v, v), g.const(axes, np.int64), keepdims=1)
    inverse = g.op("Reciprocal", g.op("Sqrt", g.op("Add", mean_square, g.const(p.get("eps"), compute))))
    y = g.op("Mul", v, inverse)
    if "gamma" in x:
        y = g.op("Mul", y, g.input("gamma", x["gamma"]))
    g.output(y, p.outputs()[0].shape)
    return g


NORM_OPS = {"rms_norm": onnx_op(_rms_norm)}
