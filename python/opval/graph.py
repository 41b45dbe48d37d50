"""opval.graph: models as graphs of opval ops (docs/GRAPH.md). An ONNX model (a path, its
bytes or an onnx.ModelProto) is read by the C++ core into opval's graph IR; `info` says what
each node becomes (an opval op, a structural op with an exact reference, or unsupported), and
`reference` runs the fp64 graph reference, node by node on opval's fp64 references, keeping
every intermediate.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from . import _opval
from .judge import _array_tuple, _from_file, _is_path

#: What opval does not map yet (an op type, a form of an op, a graph input that is no tensor):
#: a ValueError naming the node and what it lacks.
Unsupported = _opval.GraphUnsupported

_VALUE_TYPES = {"<f8": np.float64, "<i8": np.int64, "|b1": np.bool_}


def load(model: Any, contracts: Mapping[str, str] | None = None) -> _opval.GraphModel:
    """The graph of an ONNX model: a path, the serialized bytes, or an onnx.ModelProto (anything
    with SerializeToString). A bad model raises ValueError naming the part.

    contracts: the contract the stack documents for some nodes, by node name or ONNX op type (a
    node's name wins), overriding the one their tensor types imply — {"MatMul":
    "f32@tf32:f32:f32"} for a stack that runs float32 matmuls with tf32 math. Only the math
    and accumulation may differ from the natural contract (the values are the model's); a key
    naming nothing, or a contract the node's op does not support, raises ValueError."""
    if isinstance(model, _opval.GraphModel):
        graph = model
    elif _is_path(model):
        graph = _opval.read_onnx(os.fspath(model))
    elif isinstance(model, (bytes, bytearray, memoryview)):
        graph = _opval.parse_onnx(bytes(model), "<bytes>")
    elif hasattr(model, "SerializeToString"):
        graph = _opval.parse_onnx(model.SerializeToString(), f"<{type(model).__name__}>")
    else:
        raise TypeError(f"opval.graph takes an ONNX model as a path, bytes or onnx.ModelProto, not {type(model).__name__}")
    return _opval.graph_with_contracts(graph, dict(contracts)) if contracts else graph


def info(model: Any) -> list[dict]:
    """Each node in execution order: name, op_type, domain, inputs, outputs, role ('op',
    'structural', 'unsupported'), op (the opval op or structural op) and reason (unsupported)."""
    return load(model).nodes


@dataclass
class Reference:
    """The fp64 graph reference's run: every value by name (floating-point values as float64,
    exactly as computed; integers as int64; booleans) and each node's record (node, op_type,
    role, descriptor: the opval problem an op node was, given: its outputs were supplied)."""
    values: dict[str, np.ndarray] = field(default_factory=dict)
    nodes: list[dict] = field(default_factory=list)


def _tuples(arrays: Any) -> list[tuple[str, str, list[int], bytes]]:
    """Arrays by name: a mapping, a path or paths (.npy, .npz, TensorProto .pb, .pt)."""
    if arrays is None:
        return []
    if _is_path(arrays):
        return _from_file(arrays)
    if isinstance(arrays, Mapping):
        return [_array_tuple(k, v) for k, v in arrays.items()]
    if isinstance(arrays, Sequence) and all(_is_path(a) for a in arrays):
        return [t for path in arrays for t in _from_file(path)]
    raise TypeError("arrays are given as a mapping from name to array, or as file paths")


def reference(model: Any, inputs: Any, given: Mapping[str, Any] | None = None) -> Reference:
    """Runs the fp64 graph reference of `model` on `inputs` (a mapping from graph input name to
    array, or files). A node opval cannot run takes its outputs from `given` (values captured
    from a stack, by name); without them it raises Unsupported. Bad input raises ValueError."""
    graph = load(model)
    values, nodes = _opval.run_graph_reference(graph, _tuples(inputs), _tuples(given))
    out = Reference(nodes=list(nodes))
    for name, type_, shape, data in values:
        out.values[name] = np.frombuffer(data, dtype=_VALUE_TYPES[type_]).reshape(shape).copy()
    return out


@dataclass
class BackendRun:
    """The model run on one of opval's backends (backend_run): every value by name (as float64
    / int64 / bool arrays), which backend ran each op node, and which of its kernels where the
    backend says (oneDNN's implementation string)."""
    values: dict[str, np.ndarray]
    ran_on: dict[str, str]
    implementations: dict[str, str]


def backend_run(model: Any, inputs: Any, backend: Any = "sim") -> BackendRun:
    """The model run on one of opval's backends (a name, a plugin path, or an opval.Backend such
    as opval.kernel_backend(...)): each op node's problem executed by it on the values the
    previous nodes gave, the ops it does not implement by opval's contract-exact emulation —
    a user's kernel dropped into a real model, to judge with opval.graph.judge."""
    from .backends import resolve_backend

    values, ran_on, implementations = _opval.run_graph_on_backend(load(model), _tuples(inputs), resolve_backend(backend))
    return BackendRun({name: np.frombuffer(data, dtype=_VALUE_TYPES[t]).reshape(shape).copy()
                       for name, t, shape, data in values}, dict(ran_on), dict(implementations))


def run_on_backend(model: Any, inputs: Any, backend: Any = "sim") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """backend_run's values and which backend ran each op node."""
    run = backend_run(model, inputs, backend)
    return run.values, run.ran_on


def judge(model: Any, inputs: Any, captured: Mapping[str, Any], *, policy: str = "bound", worst: int = 5,
          contracts: Mapping[str, str] | None = None) -> list[dict]:
    """Each node of a stack's run judged against the fp64 graph reference (docs/GRAPH.md).

    captured: the stack's values by name (its outputs of nodes; graph inputs default to
    `inputs`). Per node, in execution order: node, op_type, role, captured (all its values
    were), accumulated_max_abs / accumulated_max_rel (its outputs against the fp64 graph
    reference's), local (a CaseResult: the node alone, on the inputs the stack gave it, against
    the stack's outputs; None when not judged), note (why not, or what it was judged with) and
    region (the nodes it was judged with, itself last, when a fused node of the stack hid its
    inputs; [] otherwise). Nodes opval cannot run take the stack's outputs (opaque nodes).

    A node that fails alone on the values the stack stored for its inputs is judged again with
    the nodes that computed them, as a fused region: a compiler that fuses a producer into its
    consumer may keep the intermediate unrounded inside the kernel (Inductor does, unless
    emulate_precision_casts) while storing a rounded copy for the observer, so the node did not
    read what was stored. Passing as a region, it is not blamed, and its note says so; failing
    there too, or with no region to form, it keeps its own failure. contracts: per-node
    contract overrides, as load's."""
    from .check import make_options

    graph_model = load(model, contracts)
    options = make_options(policy=policy, worst=worst)
    judgements = _opval.judge_graph_nodes(graph_model, _tuples(inputs), _tuples(captured), options)
    return _with_conditioning(graph_model, _judged_with_producers(graph_model, inputs, captured, options, judgements))


#: How many times a node must multiply its inputs' relative error, while within its own bound,
#: for its note to say it is ill-conditioned there: far beyond the growth of a sum of rounded
#: terms, which a node's own rounding adds to rather than multiplies.
ILL_CONDITIONED_GROWTH = 100.0


def _with_conditioning(graph_model, judgements: list[dict]) -> list[dict]:
    """Each judgement with `conditioning`: for a node that passes on the inputs the stack gave it
    while its accumulated relative error is ILL_CONDITIONED_GROWTH times its inputs' or more, why
    that is legitimate (a cancellation amplifies the error it inherits: ill-conditioned, not
    defective); "" otherwise."""
    nodes = {n["name"]: n for n in graph_model.nodes}
    error_of = {o: j["accumulated_max_rel"] for j in judgements for o in nodes[j["node"]]["outputs"]}
    out = []
    for j in judgements:
        inherited = max((error_of.get(i, 0.0) for i in nodes[j["node"]]["inputs"]), default=0.0)
        grows = j["accumulated_max_rel"] / inherited if inherited > 0 else 0.0
        passes = j["local"] is not None and not j["local"].failed
        note = ""
        if passes and np.isfinite(grows) and grows >= ILL_CONDITIONED_GROWTH:
            note = (f"ill-conditioned here, not defective: the relative error of its inputs (at most {inherited:.2g}) "
                    f"grows {grows:.3g}-fold through it, as a cancellation amplifies it, while on the inputs the stack "
                    "gave it the node is within its own bound")
        out.append({**j, "conditioning": note})
    return out


def _judged_with_producers(graph_model, inputs: Any, captured: Mapping[str, Any], options,
                           judgements: list[dict]) -> list[dict]:
    """`judgements` with each failing node that passes judged as a region with the nodes that
    computed its inputs taking that verdict (see judge): the graph judged again with those
    inputs left out of `captured`, which makes the core judge each such node as a region."""
    failing = {j["node"]: j for j in judgements if j["local"] is not None and j["local"].failed}
    if not failing or not isinstance(captured, Mapping):
        return judgements
    nodes = {n["name"]: n for n in graph_model.nodes}
    hidden = {name: _fused_producers_outputs(nodes, name, failing) for name in failing}
    regional = {}
    for batch in _compatible_batches([n for n in failing if hidden[n]], hidden, nodes):
        dropped = set().union(*(hidden[n] for n in batch))
        kept = {k: v for k, v in captured.items() if k not in dropped}
        again = {j["node"]: j for j in _opval.judge_graph_nodes(graph_model, _tuples(inputs), _tuples(kept), options)}
        regional.update({n: again[n] for n in batch})
    out = []
    for j in judgements:
        r = regional.get(j["node"])
        if r is None or r["local"] is None or r["local"].failed or not r["region"]:
            out.append(j)
            continue
        stored = [i for i in nodes[j["node"]]["inputs"] if i in hidden[j["node"]]]
        out.append({**j, "local": r["local"], "region": r["region"],
                    "note": f"fails alone on the stored {', '.join(stored)} but passes judged with the nodes that "
                            f"computed {'it' if len(stored) == 1 else 'them'} ({', '.join(r['region'][:-1])}): the "
                            "stack computed it from values it kept unrounded inside a fused kernel"})
    return out


def _fused_producers_outputs(nodes: Mapping[str, dict], name: str, failing: Mapping[str, dict]) -> set[str]:
    """The values node `name` may have read unrounded: its inputs computed by nodes, and, through
    each producer that itself failed alone (a chain fused into one kernel), that producer's."""
    producer = {o: n for n in nodes.values() for o in n["outputs"]}
    out, pending = set(), list(nodes[name]["inputs"])
    while pending:
        value = pending.pop()
        if value in out or value not in producer:
            continue
        out.add(value)
        if producer[value]["name"] in failing:
            pending.extend(producer[value]["inputs"])
    return out


def _compatible_batches(names: list[str], hidden: Mapping[str, set[str]], nodes: Mapping[str, dict]) -> list[list[str]]:
    """`names` in batches judged together: no node in a batch has its own outputs left out by
    another's (it would not be judged on them), so a chain of fused nodes takes a batch each."""
    batches, pending = [], list(names)
    while pending:
        batch, dropped, outputs = [], set(), set()
        for n in pending:
            own = set(nodes[n]["outputs"])
            if own & dropped or hidden[n] & outputs:
                continue
            batch.append(n)
            dropped |= hidden[n]
            outputs |= own
        batches.append(batch)
        pending = [n for n in pending if n not in batch]
    return batches


def first_divergent(judgements: list[dict]) -> dict | None:
    """The first node, in execution order, whose local verdict failed: the first whose error its
    own inputs do not explain. None when every judged node passed."""
    return next((j for j in judgements if j["local"] is not None and j["local"].failed), None)


def _typed(type_name: str, shape, data: bytes) -> np.ndarray:
    """An operand's float64 elements as an array of its opval type (arrays.numpy_dtype's)."""
    from .arrays import numpy_dtype

    return np.frombuffer(data, dtype=np.float64).reshape(shape).astype(numpy_dtype(_opval.parse_dtype(type_name)))


def read_inputs(model: Any, path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The graph inputs of `model` in the file `path` (.npz keyed by input name, .npy named after
    one, ONNX TensorProto .pb), read by the core's array reader and bound as the model declares
    them: an array naming no input, of another type or of a shape the declaration does not allow,
    a missing input, or a file that does not read, is one ValueError naming it. Each array comes
    back in its declared type (a bfloat16 array that NumPy saved as raw 2-byte records included)."""
    return {name: _typed(t, shape, data) for name, t, shape, data in _opval.bind_graph_inputs(load(model), _from_file(path))}


def node_case(model: Any, node: str, values: Mapping[str, Any], contracts: Mapping[str, str] | None = None
              ) -> tuple[str, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Node `node` as the op-level case it is on `values` (what it read and, for the outputs,
    what it wrote, by value name): its opval descriptor, and its problem's inputs and outputs
    by operand name in the contract's types — np.savez them and `opval judge DESCRIPTOR
    --inputs in.npz --outputs out.npz` replays the node as a regression test. ValueError for
    a node that is no op node on these values (contracts: overrides, as load's)."""
    descriptor, ins, outs = _opval.graph_node_case(load(model, contracts), node, _tuples(values))
    return (descriptor, {name: _typed(t, shape, data) for name, t, shape, data in ins},
            {name: _typed(t, shape, data) for name, t, shape, data in outs})
