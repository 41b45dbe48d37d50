"""Element-wise ops in ONNX: relu, gelu, silu, tanh, erf, add, mul, div, cast.

relu, tanh, erf: Relu, Tanh, Erf. gelu: Gelu (opset 20, approximate none|tanh). silu: Mul(x, Sigmoid(x)) (opset 23
has no single SiLU/Swish op). add, mul, div: Add, Mul, Div (NumPy broadcasting, as opval;
integer contracts in the operands' own type, which ORT wraps modulo 2^bits, as the contract does).
cast: y = Cast(x * scale):
  - x arrives in the accumulation type (float sources, converted exactly), or as it is
    (integer and bool sources), then Cast to the accumulation type in the graph;
  - scale != 1: Mul by scale rounded to the accumulation type;
  - float8 dst: Cast with `saturate` (ONNX's tables: saturate=1 sends finite overflow to
    +-max, Inf to +-max; saturate=0 sends overflow to NaN for e4m3fn, Inf for e5m2), except
    e5m2 with saturate=1, where opval keeps +-Inf as +-Inf and ONNX makes it +-max: there the
    finite values are clipped to +-max (Where(IsInf, x, Clip)) and Cast runs with saturate=0;
  - f16 / bf16 / f32 dst: ONNX's Cast has no saturate for them (+-Inf past the range), so
    opval's saturate=1 is the same finite clip before the Cast;
  - bool dst: Cast (nonzero, NaN included, is True, as opval);
  - integer dst: ONNX leaves out-of-range conversions undefined and ORT truncates, where opval
    rounds half to even, saturates and maps NaN to 0: the graph outputs x * scale in the
    accumulation type and the adapter's final rounding converts it, as the torch adapter does.
"""
from __future__ import annotations

import numpy as np

from ... import _opval
from ...arrays import numpy_dtype
from .case import is_float, onnx_op
from .graph import Graph, TensorProto, onnx_type


def _unary(op_type: str, **attrs):
    def build(p, x, compute):
        g = Graph(p.op)
        y = g.op(op_type, g.input("x", x["x"]), **attrs)
        g.output(y, p.outputs()[0].shape)
        return g

    return build


def _gelu(p, x, compute):
    g = Graph("gelu")
    g.output(g.op("Gelu", g.input("x", x["x"]), approximate=p.get("approximate")), p.outputs()[0].shape)
    return g


def _silu(p, x, compute):
    g = Graph("silu")
    v = g.input("x", x["x"])
    g.output(g.op("Mul", v, g.op("Sigmoid", v)), p.outputs()[0].shape)
    return g


def _binary(op_type: str):
    def build(p, x, compute):
        g = Graph(p.op)
        g.output(g.op(op_type, g.input("a", x["a"]), g.input("b", x["b"])), p.outputs()[0].shape)
        return g

    return build


def clip_finite(g: Graph, v: str, low: float, high: float, dtype) -> str:
    """Finite values clipped to [low, high]; +-Inf and NaN unchanged."""
    clipped = g.op("Clip", v, g.const(low, dtype), g.const(high, dtype))
    return g.op("Where", g.op("IsInf", v, out_type=TensorProto.BOOL), v, clipped)


def _cast(p: _opval.Problem, x: dict, compute: np.dtype) -> Graph:
    g = Graph("cast")
    v = g.input("x", x["x"])
    if not is_float(x["x"].dtype):
        v = g.op("Cast", v, to=onnx_type(compute), out_type=onnx_type(compute))
    scale = p.get("scale")
    if scale != 1:
        v = g.op("Mul", v, g.const(scale, compute))
    dst = p.contract.dst
    info = _opval.dtype_info(dst)
    want = numpy_dtype(dst)
    saturate = bool(p.get("saturate"))
    if dst == _opval.dtype.f8_e4m3:
        v = g.op("Cast", v, to=onnx_type(want), saturate=int(saturate), out_type=onnx_type(want))
    elif dst == _opval.dtype.f8_e5m2 and saturate and p.get("saturate_inf"):
        # ONNX's own saturating Cast, which maps +-Inf to +-57344: what saturate_inf=1 contracts
        v = g.op("Cast", v, to=onnx_type(want), saturate=1, out_type=onnx_type(want))
    elif info.is_float and np.dtype(want) != np.dtype(compute):
        cast_attrs = {}
        if saturate:
            v = clip_finite(g, v, info.lowest, info.max, compute)
        if dst == _opval.dtype.f8_e5m2:
            cast_attrs["saturate"] = 0  # overflow cannot happen after the clip; Inf stays Inf
        v = g.op("Cast", v, to=onnx_type(want), out_type=onnx_type(want), **cast_attrs)
    elif dst == _opval.dtype.bool:
        v = g.op("Cast", v, to=TensorProto.BOOL, out_type=TensorProto.BOOL)
    g.output(v, p.outputs()[0].shape)
    return g


ELTWISE_OPS = {
    "relu": onnx_op(_unary("Relu")),
    "gelu": onnx_op(_gelu),
    "silu": onnx_op(_silu),
    "tanh": onnx_op(_unary("Tanh")),
    "erf": onnx_op(_unary("Erf")),
    "add": onnx_op(_binary("Add")),
    "mul": onnx_op(_binary("Mul")),
    "div": onnx_op(_binary("Div")),
    "cast": onnx_op(_cast),
}
