"""Small ONNX graphs for one opval case, and the ONNX Runtime sessions that run them.

An op file describes its case as a `Graph`: inputs (the case's operands, as NumPy arrays),
constants, nodes and outputs. `Graph.model()` is the ONNX model (opset 23, checked by
onnx.checker); `Graph.session()` is an InferenceSession on the CPUExecutionProvider, cached
per serialized model, i.e. per (structure, attributes, constants, shapes, dtypes): opval runs a
kernel two or three times per case, and supports() already builds the session once.
`Graph.run()` feeds the inputs and writes the outputs into NumPy buffers through an IOBinding,
so outputs in types NumPy lacks (bfloat16, float8) come back as ml_dtypes arrays.
"""
from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 23
IR_VERSION = 10

ONNX_TYPES: dict[np.dtype, int] = {
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
    np.dtype(ml_dtypes.float8_e4m3fn): TensorProto.FLOAT8E4M3FN,
    np.dtype(ml_dtypes.float8_e5m2): TensorProto.FLOAT8E5M2,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}
NUMPY_TYPES: dict[int, np.dtype] = {v: k for k, v in ONNX_TYPES.items()}


def onnx_type(dtype) -> int:
    return ONNX_TYPES[np.dtype(dtype)]


def type_name(t: int) -> str:
    return TensorProto.DataType.Name(t).lower()


class Graph:
    """One case's ONNX graph under construction. Values are named strings; every node's
    output type is tracked (the first typed input's, or out_type), for the kernel check."""

    def __init__(self, name: str):
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self.initializers: list[onnx.TensorProto] = []
        self.outputs: list[tuple[str, int, tuple[int, ...]]] = []
        self.types: dict[str, int] = {}
        self.domains: dict[str, int] = {}
        self._count = 0

    def _fresh(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def input(self, name: str, array: np.ndarray) -> str:
        """A graph input fed with `array` (its dtype and shape are the input's)."""
        t = onnx_type(array.dtype)
        self.inputs.append(helper.make_tensor_value_info(name, t, list(array.shape)))
        self.feeds[name] = array
        self.types[name] = t
        return name

    def const(self, value, dtype) -> str:
        """A constant (initializer) holding `value` converted to `dtype` (one rounding)."""
        name = self._fresh("c")
        array = np.asarray(value, dtype=dtype)
        self.initializers.append(numpy_helper.from_array(array, name))
        self.types[name] = onnx_type(array.dtype)
        return name

    def op(self, op_type: str, *inputs: str, domain: str = "", out_type: int | None = None, **attrs) -> str:
        """Adds one node with one output; returns the output's name."""
        return self.op_outputs(op_type, *inputs, domain=domain, out_types=(out_type,), **attrs)[0]

    def op_outputs(self, op_type: str, *inputs: str, domain: str = "", out_types=(None,), **attrs) -> list[str]:
        """Adds one node with an output per entry of out_types (None: the first input's type);
        returns the outputs' names."""
        outs = [self._fresh(op_type.lower()) for _ in out_types]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, domain=domain, **attrs))
        if domain:
            self.domains.setdefault(domain, 1)
        for out, t in zip(outs, out_types):
            self.types[out] = t if t is not None else next(self.types[i] for i in inputs if i)
        return outs

    def output(self, value: str, shape) -> None:
        """Declares `value` a graph output of the given shape (its type is tracked)."""
        if value in self.feeds or any(value == i.name for i in self.initializers):
            value = self.op("Identity", value)
        self.outputs.append((value, self.types[value], tuple(int(n) for n in shape)))

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name, self.inputs,
            [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in self.outputs],
            initializer=self.initializers)
        opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, v) for d, v in self.domains.items()]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="opval")
        model.ir_version = IR_VERSION
        return model

    def op_types(self) -> str:
        """The graph's operators in order, e.g. 'MatMul+Mul+Add' (what the case ran)."""
        names = [(f"{n.domain}." if n.domain else "") + n.op_type for n in self.nodes if n.op_type != "Identity"]
        return "+".join(dict.fromkeys(names)) or "Identity"

    def missing_float16_kernel(self) -> str | None:
        """The first node on float16 data that the CPU provider has no float16 kernel for:
        ORT would silently insert Casts and run it in float32, which is not an f16 kernel."""
        for node in self.nodes:
            if node.op_type in ("Cast", "Identity"):
                continue
            typed = [self.types[i] for i in node.input if i]
            if TensorProto.FLOAT16 in typed and not has_cpu_kernel(node.op_type, node.domain, "tensor(float16)"):
                return node.op_type
        return None

    def session(self) -> ort.InferenceSession:
        return _session(self.model().SerializeToString())

    def run(self) -> list[np.ndarray]:
        """Runs the graph on its feeds; the outputs as NumPy arrays of the declared shapes."""
        sess = self.session()
        binding = sess.io_binding()
        for name, array in self.feeds.items():
            binding.bind_cpu_input(name, array)
        results = []
        for name, t, shape in self.outputs:
            buffer = np.empty(shape, dtype=NUMPY_TYPES[t])
            binding.bind_output(name, "cpu", 0, t, list(shape), buffer.ctypes.data)
            results.append(buffer)
        sess.run_with_iobinding(binding)
        return results


# Sessions, per serialized model. A session holds its own intra-op thread pool (ORT's default
# size, the physical cores): keep only the recent ones (a case's supports() and repeated runs
# come one after the other), and let idle pool threads sleep instead of spinning, so that the
# cached sessions' pools do not compete with the one running.
_SESSIONS: OrderedDict[bytes, ort.InferenceSession] = OrderedDict()
_MAX_SESSIONS = 4


def _session(blob: bytes) -> ort.InferenceSession:
    sess = _SESSIONS.get(blob)
    if sess is not None:
        _SESSIONS.move_to_end(blob)
        return sess
    onnx.checker.check_model(onnx.load_from_string(blob))
    options = ort.SessionOptions()
    options.log_severity_level = 4  # an unsupported model is reported by supports(), not logged
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
    _SESSIONS[blob] = sess
    if len(_SESSIONS) > _MAX_SESSIONS:
        _SESSIONS.popitem(last=False)
    return sess


@lru_cache(maxsize=None)
def _cpu_kernels() -> dict[tuple[str, str], list[tuple[int, int, frozenset[str]]]]:
    table: dict[tuple[str, str], list] = {}
    try:  # ORT's kernel registry (a private module; without it no float16 kernel is assumed)
        from onnxruntime.capi import _pybind_state as C

        defs = C.get_all_opkernel_def()
    except (ImportError, AttributeError):
        return table
    for d in defs:
        if d.provider == "CPUExecutionProvider":
            types = frozenset(t for ts in d.type_constraints.values() for t in ts)
            table.setdefault((d.op_name, d.domain or ""), []).append((*d.version_range, types))
    return table


def has_cpu_kernel(op_type: str, domain: str, tensor_type: str, opset: int = OPSET) -> bool:
    """Whether the CPU provider registers a kernel of op_type for tensor_type at `opset`
    (the domain's own version for contrib domains)."""
    version = opset if domain in ("", "ai.onnx") else 1
    return any(lo <= version <= hi and tensor_type in types for lo, hi, types in _cpu_kernels().get((op_type, domain), []))
