"""The models opval's graph validation is demonstrated and tested on (docs/GRAPH.md), built
as ONNX with onnx.helper: an MLP, a small CNN and a transformer block (layer_norm, attention,
gelu), each in a chosen element type, with seeded weights.

    from models import mlp, cnn, transformer_block
    model, inputs = transformer_block(np.float32)
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper

_ONNX_TYPES = {np.float32: onnx.TensorProto.FLOAT, np.float64: onnx.TensorProto.DOUBLE,
               np.float16: onnx.TensorProto.FLOAT16, ml_dtypes.bfloat16: onnx.TensorProto.BFLOAT16}
OPSET = 20  # Gelu is an ONNX op from opset 20


class _Builder:
    def __init__(self, dtype, seed: int):
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.initializers: list = []

    def weight(self, name: str, shape, scale: float = None) -> str:
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0] if len(shape) > 1 else 1.0)
        data = (self.rng.standard_normal(shape) * scale).astype(self.dtype)
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def ints(self, name: str, values) -> str:
        self.initializers.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def scalar(self, name: str, v: float) -> str:
        self.initializers.append(numpy_helper.from_array(np.array(v, self.dtype), name))
        return name

    def node(self, op: str, inputs, name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def model(self, name: str, inputs: dict, output: str, output_shape, opset: int = OPSET) -> onnx.ModelProto:
        t = _ONNX_TYPES[self.dtype]
        graph = helper.make_graph(self.nodes, name,
                                  [helper.make_tensor_value_info(k, t, list(v.shape)) for k, v in inputs.items()],
                                  [helper.make_tensor_value_info(output, t, list(output_shape))], self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opval-examples")


def mlp(dtype=np.float32, seed: int = 0, batch: int = 8, widths=(32, 64, 64, 10)):
    """x -> [MatMul, Add, Relu] x 2 -> Gemm -> Softmax."""
    b = _Builder(dtype, seed)
    h = "x"
    for i, (fan_in, fan_out) in enumerate(zip(widths[:-2], widths[1:-1])):
        h = b.node("MatMul", [h, b.weight(f"w{i}", (fan_in, fan_out))], f"fc{i}")
        h = b.node("Add", [h, b.weight(f"b{i}", (fan_out,), 0.1)], f"bias{i}")
        h = b.node("Relu", [h], f"relu{i}")
    h = b.node("Gemm", [h, b.weight("w_out", (widths[-2], widths[-1])), b.weight("b_out", (widths[-1],), 0.1)], "head")
    y = b.node("Softmax", [h], "probs", axis=-1)
    inputs = {"x": b.rng.standard_normal((batch, widths[0])).astype(dtype)}
    return b.model("mlp", inputs, y, (batch, widths[-1])), inputs


def cnn(dtype=np.float32, seed: int = 0, batch: int = 2, size: int = 16):
    """conv -> relu -> maxpool -> conv -> relu -> avgpool -> global pool -> flatten -> gemm."""
    b = _Builder(dtype, seed)
    h = b.node("Conv", ["x", b.weight("c1_w", (8, 3, 3, 3), 0.2), b.weight("c1_b", (8,), 0.1)], "conv1", pads=[1, 1, 1, 1])
    h = b.node("Relu", [h], "relu1")
    h = b.node("MaxPool", [h], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    h = b.node("Conv", [h, b.weight("c2_w", (16, 8, 3, 3), 0.1), b.weight("c2_b", (16,), 0.1)], "conv2", pads=[1, 1, 1, 1])
    h = b.node("Relu", [h], "relu2")
    h = b.node("AveragePool", [h], "pool2", kernel_shape=[2, 2], strides=[2, 2])
    h = b.node("GlobalAveragePool", [h], "gap")
    h = b.node("Flatten", [h], "flat")
    y = b.node("Gemm", [h, b.weight("fc_w", (16, 10)), b.weight("fc_b", (10,), 0.1)], "fc")
    inputs = {"x": b.rng.standard_normal((batch, 3, size, size)).astype(dtype)}
    return b.model("cnn", inputs, y, (batch, 10)), inputs


def transformer_block(dtype=np.float32, seed: int = 0, batch: int = 2, seq: int = 16, d_model: int = 32,
                      heads: int = 4, d_ff: int = 64, gelu: str = "op", final_norm: bool = False,
                      input_offset: float = 0.0):
    """A pre-norm transformer block: h = x + attention(layer_norm(x)), then h + mlp(layer_norm(h))
    with ONNX's Gelu (opset 20) in the MLP, or with gelu="erf_chain" the exact gelu spelled out
    as exporters write it at opset 17 (x/sqrt2, Erf, +1, times x, times 1/2: the chain ONNX
    Runtime fuses to Gelu, and to FastGelu under optimization.enable_gelu_approximation);
    attention as MatMul, Mul by 1/sqrt(d_head), Softmax and MatMul, the heads split and merged
    by Reshape and Transpose. final_norm: a last LayerNormalization `ln_f` on the residual stream
    (as GPT-2's ln_f), the output; input_offset: added to every input value, a residual stream
    carrying a large common offset, which the layer norms subtract again (a cancellation: in
    bfloat16 the stream's rounding is then of the offset's size)."""
    if gelu not in ("op", "erf_chain"):
        raise ValueError(f"gelu is 'op' or 'erf_chain', not {gelu!r}")
    b = _Builder(dtype, seed)
    d_head = d_model // heads
    ones, zeros = np.ones(d_model, dtype), np.zeros(d_model, dtype)
    for name, v in (("ln1_g", ones), ("ln1_b", zeros), ("ln2_g", ones), ("ln2_b", zeros)):
        b.initializers.append(numpy_helper.from_array(v, name))
    n1 = b.node("LayerNormalization", ["x", "ln1_g", "ln1_b"], "ln1", axis=-1, epsilon=1e-5)
    split_heads = b.ints("split_heads", [batch, seq, heads, d_head])
    merge_heads = b.ints("merge_heads", [batch, seq, d_model])

    def heads_of(name: str) -> str:
        p = b.node("MatMul", [n1, b.weight(f"w_{name}", (d_model, d_model))], f"proj_{name}")
        r = b.node("Reshape", [p, split_heads], f"split_{name}")
        return b.node("Transpose", [r], f"heads_{name}", perm=[0, 2, 1, 3])

    q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
    kt = b.node("Transpose", [k], "k_t", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, kt], "scores")
    scaled = b.node("Mul", [scores, b.scalar("scale", 1.0 / np.sqrt(d_head))], "scaled")
    probs = b.node("Softmax", [scaled], "attn_probs", axis=-1)
    ctx = b.node("MatMul", [probs, v], "context")
    merged = b.node("Reshape", [b.node("Transpose", [ctx], "context_t", perm=[0, 2, 1, 3]), merge_heads], "merge")
    attn = b.node("MatMul", [merged, b.weight("w_o", (d_model, d_model))], "proj_o")
    h = b.node("Add", ["x", attn], "residual1")
    n2 = b.node("LayerNormalization", [h, "ln2_g", "ln2_b"], "ln2", axis=-1, epsilon=1e-5)
    up = b.node("Add", [b.node("MatMul", [n2, b.weight("w_up", (d_model, d_ff))], "ff_up"), b.weight("b_up", (d_ff,), 0.1)],
                "ff_bias")
    if gelu == "op":
        act = b.node("Gelu", [up], "gelu")
    else:
        erf = b.node("Erf", [b.node("Div", [up, b.scalar("sqrt2", np.sqrt(2.0))], "gelu_div")], "gelu_erf")
        gate = b.node("Add", [erf, b.scalar("one", 1.0)], "gelu_add")
        act = b.node("Mul", [b.node("Mul", [up, gate], "gelu_mul"), b.scalar("half", 0.5)], "gelu")
    down = b.node("MatMul", [act, b.weight("w_down", (d_ff, d_model))], "ff_down")
    y = b.node("Add", [h, down], "residual2")
    if final_norm:
        y = b.node("LayerNormalization", [y, "ln2_g", "ln2_b"], "ln_f", axis=-1, epsilon=1e-5)
    inputs = {"x": (b.rng.standard_normal((batch, seq, d_model)) + input_offset).astype(dtype)}
    return b.model("transformer_block", inputs, y, (batch, seq, d_model), opset=OPSET if gelu == "op" else 17), inputs
