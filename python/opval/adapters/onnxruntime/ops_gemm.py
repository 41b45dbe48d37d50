"""GEMM-like ops in ONNX: matmul and conv2d, with opval's epilogue as ONNX nodes.

The product: float contracts MatMul / Conv in the compute type (fp8 operands arrive widened
exactly to float32); integer contracts (u8xi8, i8xi8) ORT's quantized operators on the stored
integers, MatMulInteger / ConvInteger with the zero points as their a/b_zero_point inputs (the
exact i32 sums; ConvInteger pads with the zero point, which is opval's padding), then Cast to
the compute type, float64.
Conv: pads [pt, pl, pb, pr] (ONNX's begin/end order), strides, dilations, group; the
operands come as logical NCHW / OIHW arrays whatever opval's layout.

The epilogue follows src/ops/common_gemm/epilogue.hpp (as the torch adapter's ops_gemm.py),
one ONNX node per step in the compute type:
    z   = (alpha * scale_a * scale_b[ch]) * s + beta * C + bias[ch]     Mul, Mul, Add, Add
    y   = act(z) + residual        Relu | Gelu | Gelu(approximate=tanh) | Mul(z, Sigmoid(z)); Add
    dst = y                        (float dst; the adapter rounds to dst)
    dst = y / scale_dst + zp_dst   (integer dst: Div, Add; the adapter rounds half to even and saturates)
Per-channel vectors (bias, scale_b) are fed as [n] for matmul and [oc, 1, 1] for conv2d.
ORT's graph optimizations (the default, ORT_ENABLE_ALL) may fuse these nodes (MatMul+Mul into
FusedMatMul, Conv+Add/Relu into FusedConv, ...): what ORT does with such a model is tested.
"""
from __future__ import annotations

import numpy as np

from ... import _opval
from .case import is_float, onnx_op
from .graph import Graph, TensorProto, onnx_type

_ACTIVATIONS = {
    "none": lambda g, z: z,
    "relu": lambda g, z: g.op("Relu", z),
    "gelu": lambda g, z: g.op("Gelu", z, approximate="none"),  # opval's gelu is the erf form
    "gelu_tanh": lambda g, z: g.op("Gelu", z, approximate="tanh"),
    "silu": lambda g, z: g.op("Mul", z, g.op("Sigmoid", z)),
}


def _integer_product(g: Graph, op_type: str, a: np.ndarray, b: np.ndarray, p: _opval.Problem, compute, names, **attrs) -> str:
    """MatMulInteger / ConvInteger with the zero points, Cast to the compute type."""
    zp_a = g.const(p.get("zp_a"), a.dtype)
    zp_b = g.const(p.get("zp_b"), b.dtype)
    s = g.op(op_type, g.input(names[0], a), g.input(names[1], b), zp_a, zp_b, out_type=TensorProto.INT32, **attrs)
    return g.op("Cast", s, to=onnx_type(compute), out_type=onnx_type(compute))


def _epilogue(g: Graph, p: _opval.Problem, x: dict, s: str, compute, channel_shape: tuple[int, ...]) -> str:
    """From the products s (compute type) to the value before the final rounding to dst."""
    def channel(name: str) -> str:
        return g.input(name, x[name].reshape(channel_shape))

    z = s
    head = p.get("alpha") * p.get("scale_a")
    if p.get("scale_b_mode") == "per_channel":
        # The scale_b operand already holds scale_b * its per-channel values (opval's fill).
        z = g.op("Mul", z, g.op("Mul", g.const(head, compute), channel("scale_b")))
    elif head * p.get("scale_b") != 1.0:
        z = g.op("Mul", z, g.const(head * p.get("scale_b"), compute))
    beta = p.get("beta") if "beta" in p.attrs else 0.0
    if beta != 0.0:
        z = g.op("Add", z, g.op("Mul", g.const(beta, compute), g.input("C", x["C"])))
    if p.get("bias"):
        z = g.op("Add", z, channel("bias"))
    y = _ACTIVATIONS[p.get("act")](g, z)
    if p.get("residual"):
        y = g.op("Add", y, g.input("residual", x["residual"]))
    if not _opval.dtype_info(p.contract.dst).is_float:
        if p.get("scale_dst") != 1.0:
            y = g.op("Div", y, g.const(p.get("scale_dst"), compute))
        if p.get("zp_dst") != 0:
            y = g.op("Add", y, g.const(float(p.get("zp_dst")), compute))
    return y


def _matmul(p: _opval.Problem, x: dict, compute) -> Graph:
    """A [batch_a..., m, k] @ B [batch_b..., k, n], batch dims broadcast NumPy-style (as
    opval). ta/tb/lda/ldb only shape the strided views, fed contiguous."""
    g = Graph("matmul")
    a, b = x["A"], x["B"]
    if is_float(a.dtype):
        s = g.op("MatMul", g.input("A", a), g.input("B", b))
    else:
        s = _integer_product(g, "MatMulInteger", a, b, p, compute, ("A", "B"))
    g.output(_epilogue(g, p, x, s, compute, (-1,)), p.outputs()[0].shape)
    return g


def _conv2d(p: _opval.Problem, x: dict, compute) -> Graph:
    g = Graph("conv2d")
    attrs = dict(pads=[p.get("pt"), p.get("pl"), p.get("pb"), p.get("pr")], strides=[p.get("sh"), p.get("sw")],
                 dilations=[p.get("dh"), p.get("dw")], group=p.get("g"))
    src, wei = x["src"], x["weights"]
    if is_float(src.dtype):
        s = g.op("Conv", g.input("src", src), g.input("weights", wei), **attrs)
    else:
        s = _integer_product(g, "ConvInteger", src, wei, p, compute, ("src", "weights"), **attrs)
    g.output(_epilogue(g, p, x, s, compute, (-1, 1, 1)), p.outputs()[0].shape)
    return g


def _matmul_refusal(p: _opval.Problem) -> str | None:
    """Found by opval's empty-tensor cases (docs/REFERENCES.md): refused rather than listed as
    a known failure, since garbage may happen to be right and the case would then pass."""
    if p.get("k") == 0 and not _opval.dtype_info(p.contract.src).is_float:
        return ("ONNX Runtime's MatMulInteger with k = 0 leaves its output uninitialized (garbage that differs "
                "from run to run) instead of zeros")
    return None


GEMM_OPS = {
    "matmul": onnx_op(_matmul, _matmul_refusal),
    "conv2d": onnx_op(_conv2d),
}
