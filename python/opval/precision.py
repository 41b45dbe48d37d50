"""opval.precision: which nodes of a model must run at a higher precision for its outputs to
meet a target when the rest runs in a low type (docs/GRAPH.md, "Precision"), as Polygraphy's
`debug precision` asks, but with bounds:

    report = opval.precision.bisect(model, inputs, TorchCompileStack(), low="bfloat16")
    print(report.markdown())       # report.keep_high: the nodes to keep in float32
    report.save_model("mixed.onnx")

The model is rewritten to mixed precision (mixed_precision: every compute node in the low type
except those kept high, Casts where a value crosses from one to the other) and run on the stack
as any model; its outputs are compared with the fp64 graph reference of the model as given.

Bounds enter three times. The candidates are ranked by what storing each node's operands in the
low type alone does to the outputs, computed exactly by opval's fp64 graph reference (the error
any correct low-precision kernel of that node brings, before its own arithmetic). Every run is
judged node by node: a node beyond its own bound at its precision is a defect to triage, not a
precision need, and stops the search. And the default target is stated in the low type's own
unit: the outputs within a few of its roundings of their magnitude.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import ml_dtypes
import numpy as np

from . import graph
from .graph_stacks import Stack, StackConfig, StackRun, _as_model, _value_types
from .triage import Evidence, _cell

#: The floating-point types a model can be moved between, by the names the options take.
_TYPES = {"float32": 1, "f32": 1, "float16": 10, "f16": 10, "bfloat16": 16, "bf16": 16, "float64": 11, "f64": 11}
_TYPE_NAMES = {1: "float32", 10: "float16", 16: "bfloat16", 11: "float64"}
_NUMPY = {1: np.dtype(np.float32), 10: np.dtype(np.float16), 16: np.dtype(ml_dtypes.bfloat16), 11: np.dtype(np.float64)}
#: Unit roundoff of each type (half its machine epsilon).
_UNIT_ROUNDOFF = {1: 2.0 ** -24, 10: 2.0 ** -11, 16: 2.0 ** -8, 11: 2.0 ** -53}
_FLOAT_TYPES = {1, 10, 16, 11}
#: Nodes that state their own output types: left as the model has them, never candidates.
_EXPLICIT = {"Cast", "CastLike"}
#: Nodes whose outputs after the first (a layer norm's Mean and InvStdDev) keep their stash type
#: (float32 by default), whatever the type of the node's data.
_STASHED = {"LayerNormalization"}
#: The default target: each output within this many roundings to the low type of its largest
#: magnitude (the error of a handful of correctly rounded low-precision steps, not of one).
DEFAULT_ULPS = 8.0


def onnx_type(name: str) -> int:
    """The ONNX element type of a type name (float32/f32, float16/f16, bfloat16/bf16,
    float64/f64); ValueError for another."""
    if name not in _TYPES:
        raise ValueError(f"unknown floating-point type '{name}' (known: float32, float16, bfloat16, float64, "
                         "or f32, f16, bf16, f64)")
    return _TYPES[name]


@dataclass(frozen=True)
class Tolerance:
    """What the outputs must meet against the fp64 reference: `ulps` roundings of the low type
    at each output's largest magnitude (max |y - ref| <= ulps * u * max |ref|), or, given rtol
    or atol instead, element by element as numpy.isclose and torch's assert_close do (|y - ref|
    <= atol + rtol * |ref|). Neither given: DEFAULT_ULPS roundings."""
    ulps: float | None = None
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self):
        elementwise = self.rtol is not None or self.atol is not None
        if self.ulps is not None and elementwise:
            raise ValueError("a tolerance is ulps=K, or rtol=R and/or atol=A: give one of them")
        if self.ulps is None and not elementwise:
            object.__setattr__(self, "ulps", DEFAULT_ULPS)
        elif elementwise:
            object.__setattr__(self, "rtol", self.rtol or 0.0)
            object.__setattr__(self, "atol", self.atol or 0.0)

    @staticmethod
    def parse(text: str | None) -> "Tolerance":
        """`ulps=K` or `rtol=R[,atol=A]` (either alone); None or "" is the default."""
        fields: dict[str, float] = {}
        for part in text.split(",") if text else ():
            key, equals, value = part.partition("=")
            if key not in ("ulps", "rtol", "atol") or not equals:
                raise ValueError(f"tolerance '{text}': give ulps=K, or rtol=R and/or atol=A")
            try:
                fields[key] = float(value)
            except ValueError:
                raise ValueError(f"tolerance '{text}': '{value}' is not a number") from None
            if not np.isfinite(fields[key]) or fields[key] < 0:
                raise ValueError(f"tolerance '{text}': {key} must be a finite non-negative number")
        try:
            return Tolerance(**fields)
        except ValueError as e:
            raise ValueError(f"tolerance '{text}': {e}") from None

    def describe(self, low: int) -> str:
        if self.ulps is not None:
            return f"max |y - ref| <= {self.ulps:g} x {_TYPE_NAMES[low]}'s unit roundoff x max |ref| per output"
        return f"|y - ref| <= {self.atol:g} + {self.rtol:g} |ref| element by element"

    def ratio(self, actual: np.ndarray, expected: np.ndarray, low: int) -> float:
        """The output's error in units of what the target allows (<= 1 meets it); inf for a
        shape the reference does not have, a NaN where the reference has none or none where it
        has one, an infinity of the wrong sign or where the reference is finite."""
        y, ref = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
        if y.shape != ref.shape or not np.array_equal(np.isnan(y), np.isnan(ref)):
            return float("inf")
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are no error, others are
            diff = np.where((y == ref) | np.isnan(ref), 0.0, np.abs(y - ref))
        if diff.size == 0:
            return 0.0
        magnitude = np.abs(np.where(np.isfinite(ref), ref, 0.0))
        if self.ulps is not None:
            allowed = self.ulps * _UNIT_ROUNDOFF[low] * float(np.max(magnitude))
            worst = float(np.max(diff))
            return worst / allowed if allowed > 0 else (0.0 if worst == 0 else float("inf"))
        allowed = self.atol + self.rtol * magnitude
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(diff == 0, 0.0, diff / allowed)
        return float(np.max(ratios))

    def worst(self, outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], names: list[str],
              low: int) -> float:
        """The worst of `names`' ratios (an output the run lacks: inf)."""
        return max((self.ratio(outputs[n], expected[n], low) if n in outputs else float("inf") for n in names),
                   default=0.0)


# -- the rewrites ----------------------------------------------------------------------------


def named_nodes(model: Any):
    """A copy of `model` whose every node has a name of its own: an unnamed node gets the name
    opval's reader gives it (`MatMul#3`, its op type and index), a name taken before gets its
    index too — the names the search reports and keeps high."""
    import onnx

    m = onnx.ModelProto.FromString(_as_model(model).SerializeToString())
    seen: set[str] = set()
    for i, n in enumerate(m.graph.node):
        if not n.name:
            n.name = f"{n.op_type}#{i}"
        elif n.name in seen:
            n.name = f"{n.name}#{i}"
        seen.add(n.name)
    return m


def candidates(model: Any) -> list[str]:
    """The nodes whose precision can be chosen: opval op nodes (not Cast) computing a
    floating-point value, in execution order (named as named_nodes names them)."""
    m = named_nodes(model)
    return _candidates(m, _value_types(m))


def _candidates(named, types: Mapping[str, int]) -> list[str]:
    """candidates() of a model already named_nodes'd, its values' types given."""
    roles = {n["name"]: n["role"] for n in graph.info(named)}
    return [n.name for n in named.graph.node
            if roles.get(n.name) == "op" and n.op_type not in _EXPLICIT
            and any(types.get(o) in _FLOAT_TYPES for o in n.output if o)]


def mixed_precision(model: Any, low: str, keep_high: set[str] | frozenset[str] = frozenset(), high: str = "float32"):
    """`model` with every candidate node (candidates) computing in type `low` except those in
    `keep_high`, which compute in `high`; the other nodes (reshapes, transposes, ...) in the
    type of the value they move. A value crossing to a node of another type goes through a
    Cast (one per value and type); a floating-point initializer is converted offline. Graph
    inputs keep their types, graph outputs take their producer's. Returns an onnx.ModelProto."""
    import onnx
    from onnx import helper, numpy_helper

    m = named_nodes(model)
    low_t, high_t = onnx_type(low), onnx_type(high)
    original = _value_types(m)
    chosen = set(_candidates(m, original))
    unknown = set(keep_high) - chosen
    if unknown:
        raise ValueError(f"no node '{sorted(unknown)[0]}' whose precision can be chosen (candidates: "
                         f"{', '.join(sorted(chosen)) or 'none'})")
    types = dict(original)  # each value's type in the rewritten model
    initializers = {t.name: t for t in m.graph.initializer}
    converted: dict[tuple[str, int], str] = {}
    nodes = []

    def as_type(value: str, t: int) -> str:
        if (value, t) in converted:
            return converted[(value, t)]
        name = f"{value}__{_TYPE_NAMES[t]}"
        if value in initializers:
            data = numpy_helper.to_array(initializers[value]).astype(_NUMPY[t])
            m.graph.initializer.append(numpy_helper.from_array(data, name))
        else:
            nodes.append(helper.make_node("Cast", [value], [name], name=f"{name}_cast", to=t))
        types[name] = t
        converted[(value, t)] = name
        return name

    for node in list(m.graph.node):
        floats = [i for i in node.input if i and types.get(i) in _FLOAT_TYPES]
        if node.op_type == "CastLike" and len(node.input) > 1 and types.get(node.input[1]) != original.get(node.input[1]):
            node.input[1] = as_type(node.input[1], original[node.input[1]])  # its target stays the model's
        if node.name in chosen:
            t = high_t if node.name in keep_high else low_t
        elif node.op_type in _EXPLICIT or not floats:
            t = None
        else:
            t = _widest(types[i] for i in floats)  # a node that moves values works in their type
        if t is not None:
            for k, name in enumerate(node.input):
                if name in floats and types[name] != t:
                    node.input[k] = as_type(name, t)
            for k, name in enumerate(node.output):
                if original.get(name) in _FLOAT_TYPES and not (k > 0 and node.op_type in _STASHED):
                    types[name] = t
        nodes.append(node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.value_info[:]  # the intermediates' types changed: ONNX infers them again
    for output in m.graph.output:
        if output.name in types and output.type.tensor_type.elem_type in _FLOAT_TYPES:
            output.type.tensor_type.elem_type = types[output.name]
    # Not ONNX's type inference: an opset may not list the low type for an op (Conv has no
    # bfloat16 before opset 22) that a stack computes in it all the same; a stack that cannot
    # says so when it runs the model.
    onnx.checker.check_model(m)
    return m


def _widest(types) -> int:
    """The floating-point type that holds every one of `types` exactly (float16 and bfloat16
    together: float32)."""
    kinds = set(types)
    if kinds <= {10} or kinds <= {16}:
        return next(iter(kinds))
    return 11 if 11 in kinds else 1


def rounded_around(model: Any, node: str, low: str):
    """`model` with node `node`'s floating-point inputs read, and its outputs stored, in type
    `low` (a Cast to it before the node; after it a Cast to it and one back to the value's own
    type), nothing else changed — as mixed_precision types a low node, a layer norm's statistics
    left in theirs. Run by the fp64 graph reference, whose Casts are its only roundings, it shows
    exactly what storing that node's operands in the low type does to the outputs."""
    from onnx import helper

    m = named_nodes(model)
    low_t, types = onnx_type(low), _value_types(m)
    nodes = []
    for n in m.graph.node:
        if n.name != node:
            nodes.append(n)
            continue
        for name in dict.fromkeys(i for i in n.input if i and types.get(i) in _FLOAT_TYPES):  # x*x: one Cast
            nodes.append(helper.make_node("Cast", [name], [f"{name}__in_{node}"], name=f"{name}__in_{node}", to=low_t))
        n.input[:] = [f"{i}__in_{node}" if i and types.get(i) in _FLOAT_TYPES else i for i in n.input]
        after = []
        for k, name in enumerate(n.output):
            if name and types.get(name) in _FLOAT_TYPES and not (k > 0 and n.op_type in _STASHED):
                n.output[k] = f"{name}__exact"
                after += [helper.make_node("Cast", [f"{name}__exact"], [f"{name}__low"], name=f"{name}__low", to=low_t),
                          helper.make_node("Cast", [f"{name}__low"], [name], name=f"{name}__stored", to=types[name])]
        nodes += [n] + after
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.value_info[:]
    return m


def contributions(model: Any, inputs: Mapping[str, Any], low: str, nodes: list[str] | None = None,
                  tolerance: Tolerance | None = None) -> dict[str, float]:
    """Per candidate node, what storing its operands in type `low` alone does to the outputs, in
    units of `tolerance` (the worst output): rounded_around run by the fp64 graph reference
    against the model's own. A node of an ill-conditioned spot (a cancellation after it, a
    residual stream of large values) scores high; a node whose roundings the graph damps, low."""
    named = named_nodes(model)
    return _contributions(named, inputs, low, nodes if nodes is not None else candidates(named),
                          tolerance or Tolerance(), graph.reference(named, inputs).values)


def _contributions(named, inputs: Mapping[str, Any], low: str, nodes: list[str], tolerance: Tolerance,
                   exact: Mapping[str, np.ndarray]) -> dict[str, float]:
    """contributions() of a model already named_nodes'd, its fp64 reference values `exact`."""
    names, low_t = graph.load(named).output_names, onnx_type(low)
    return {node: tolerance.worst(graph.reference(rounded_around(named, node, low), inputs).values, exact, names, low_t)
            for node in nodes}


# -- the search ------------------------------------------------------------------------------


@dataclass
class Trial:
    """One run of the model at one mixed precision: the nodes kept high, the outputs' error in
    units of the target (worst output), and the nodes beyond their own bound."""
    keep_high: frozenset[str]
    ratio: float
    defects: list[str]

    @property
    def meets(self) -> bool:
        return self.ratio <= 1.0  # a trial with defects stops the search (_Defect) before it is asked


@dataclass
class PrecisionReport:
    """The outcome of opval.precision.bisect.

    keep_high: the nodes that must run in `high` for the outputs to meet the target, each with
    its op type and contribution (what rounding its operands to `low` alone does to the
    outputs, in units of the target); none needed when the model meets it all in `low`.
    found: whether a mixed precision meeting the target was found; defects: nodes beyond their
    own bound in some run (then found is False: triage them first). evidence: the chain of
    experiments; runs: runs of the stack."""
    stack: str
    low: str
    high: str
    tolerance: str
    candidates: list[str]
    contributions: dict[str, float]
    keep_high: list[dict] = field(default_factory=list)
    found: bool = False
    defects: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    runs: int = 0
    all_low_ratio: float = float("nan")
    final_ratio: float = float("nan")
    #: The model at the precision found (an onnx.ModelProto); None when none was.
    model: Any = field(default=None, repr=False)

    def summary(self) -> str:
        if self.defects:
            return (f"{self.stack}: {', '.join(self.defects)} fails its own bound at mixed precision: a defect, not a "
                    "precision need; triage it (opval graph triage) before choosing precisions")
        if not self.found:
            return f"{self.stack}: the outputs do not meet the target even with every node in {self.high}"
        if not self.keep_high:
            return (f"{self.stack}: every node can run in {self.low}: the outputs meet the target "
                    f"({self.all_low_ratio:.3g} of it)")
        names = ", ".join(k["node"] for k in self.keep_high)
        return (f"{self.stack}: {len(self.keep_high)} of {len(self.candidates)} nodes must run in {self.high} "
                f"({names}); the rest in {self.low} meet the target ({self.final_ratio:.3g} of it, "
                f"{self.all_low_ratio:.3g} with every node in {self.low})")

    def markdown(self) -> str:
        lines = [f"# Precision: {self.stack}, {self.low} with nodes kept in {self.high}", "", self.summary() + ".", "",
                 f"Target: {self.tolerance}.", ""]
        if self.keep_high:
            lines += ["| node | op | rounding its operands to " + self.low + " alone (x target) |", "|---|---|---|"]
            lines += [f"| {k['node']} | {k['op_type']} | {k['contribution']:.3g} |" for k in self.keep_high]
            lines.append("")
        lines += ["| # | experiment | outcome | conclusion |", "|---|---|---|---|"]
        lines += [f"| {i} | " + " | ".join(_cell(c) for c in (e.experiment, e.outcome, e.conclusion)) + " |"
                  for i, e in enumerate(self.evidence, 1)]
        lines += ["", f"{self.runs} run{'s' if self.runs != 1 else ''} of the stack."]
        return "\n".join(lines) + "\n"

    def records(self) -> list[dict]:
        """JSON-ready records: one per candidate node (its contribution, kept high or not),
        then the search's."""
        kept = {k["node"] for k in self.keep_high}
        out = [{"record": "precision_node", "node": n, "contribution": _finite(self.contributions.get(n, float("nan"))),
                "keep_high": n in kept} for n in self.candidates]
        out.append({"record": "precision", "stack": self.stack, "low": self.low, "high": self.high,
                    "tolerance": self.tolerance, "found": self.found, "keep_high": [k["node"] for k in self.keep_high],
                    "defects": self.defects, "all_low_ratio": _finite(self.all_low_ratio),
                    "final_ratio": _finite(self.final_ratio), "runs": self.runs,
                    "evidence": [vars(e) for e in self.evidence]})
        return out

    def jsonl(self) -> str:
        return "".join(json.dumps(r) + "\n" for r in self.records())

    def save_model(self, path: str) -> None:
        """Writes the model at the precision found (ValueError when none was)."""
        if self.model is None:
            raise ValueError("no mixed precision meeting the target was found: nothing to save")
        with open(path, "wb") as f:
            f.write(self.model.SerializeToString())


def _finite(x: float) -> float | str:
    return x if np.isfinite(x) else str(x)


class _Defect(Exception):
    """A run in which nodes fail their own bounds: the search stops."""

    def __init__(self, trial: "Trial"):
        super().__init__(", ".join(trial.defects))
        self.trial = trial


class _Search:
    """The runs of one search, each judged node by node and remembered by the set kept high; a
    run with a defect raises _Defect."""

    def __init__(self, model, inputs, stack: Stack, config: StackConfig, low: str, high: str, tolerance: Tolerance,
                 policy: str, progress: Callable[[str], None]):
        self.model, self.inputs, self.stack, self.config = model, inputs, stack, config
        self.low, self.high, self.tolerance, self.policy, self.progress = low, high, tolerance, policy, progress
        self.low_t = onnx_type(low)
        self.names = graph.load(model).output_names
        self.exact = graph.reference(model, inputs).values
        self.trials: dict[frozenset[str], Trial] = {}
        self.models: dict[frozenset[str], Any] = {}

    def trial(self, keep_high: frozenset[str]) -> "Trial":
        if keep_high not in self.trials:
            self.progress(f"run {len(self.trials) + 1}: {self.stack} with {len(keep_high)} node"
                          f"{'s' if len(keep_high) != 1 else ''} in {self.high}")
            mixed = mixed_precision(self.model, self.low, keep_high, self.high)
            run: StackRun = self.stack.run(mixed, self.inputs, self.config)
            judged = graph.judge(mixed, self.inputs, run.captured, policy=self.policy)
            self.trials[keep_high] = Trial(keep_high, self.tolerance.worst(run.outputs, self.exact, self.names, self.low_t),
                                           [j["node"] for j in judged if j["local"] is not None and j["local"].failed])
            self.models[keep_high] = mixed
        if self.trials[keep_high].defects:
            raise _Defect(self.trials[keep_high])
        return self.trials[keep_high]



def bisect(model: Any, inputs: Mapping[str, Any], stack: Stack, *, low: str = "bfloat16", high: str = "float32",
           tolerance: Tolerance | str | None = None, config: StackConfig | None = None, policy: str = "bound",
           progress: Callable[[str], None] | None = None) -> PrecisionReport:
    """Which nodes of `model` must run in `high` for its outputs, on `stack`, to meet
    `tolerance` (a Tolerance or its text, default DEFAULT_ULPS roundings of `low`) against the
    fp64 graph reference, when every other node runs in `low`.

    The candidates are ranked by their contributions; the run with every node in `low`, then
    the one with every node in `high`, frame the search; the fewest of the ranked nodes kept
    high that meets the target is found by halving; then each of them is tried back in `low`,
    the least contributing first, and left there when the target is still met. Each run is
    judged node by node; a node beyond its own bound stops the search (a defect to triage, not
    a precision need). Nodes are named as named_nodes names them."""
    tol = tolerance if isinstance(tolerance, Tolerance) else Tolerance.parse(tolerance)
    low, high = _TYPE_NAMES[onnx_type(low)], _TYPE_NAMES[onnx_type(high)]  # a bad name: an error before any run
    if low == high:
        raise ValueError(f"the low type and the high one are both {low}: nothing to choose")
    named = named_nodes(model)
    s = _Search(named, inputs, stack, config or stack.config, low, high, tol, policy, progress or (lambda _m: None))
    in_order = candidates(named)
    contrib = _contributions(named, inputs, low, in_order, tol, s.exact)
    report = PrecisionReport(stack=str(stack), low=low, high=high, tolerance=tol.describe(onnx_type(low)),
                             candidates=in_order, contributions=contrib)
    try:
        keep = _search(s, sorted(in_order, key=lambda n: -contrib[n]), contrib, report)
    except _Defect as stop:
        report.defects = stop.trial.defects
        report.evidence.append(Evidence("precision", f"{len(stop.trial.keep_high)} nodes in {high}",
                                        f"{stop} beyond its own bound", "a defect: the search stops"))
        keep = None
    report.runs = len(s.trials)
    if keep is not None:
        op_types = {n.name: n.op_type for n in named.graph.node}
        report.found, report.final_ratio, report.model = True, s.trials[keep].ratio, s.models[keep]
        report.keep_high = [{"node": n, "op_type": op_types[n], "contribution": contrib[n]} for n in in_order if n in keep]
        report.keep_high.sort(key=lambda k: -k["contribution"])
    return report


def _search(s: _Search, ranked: list[str], contrib: Mapping[str, float], report: PrecisionReport) -> frozenset[str] | None:
    """bisect's experiments on the candidates `ranked` (most contributing first): the set to keep
    high, or None when even every node high misses the target; each noted in `report`."""
    def note(experiment: str, trial: Trial, conclusion: str) -> None:
        report.evidence.append(Evidence("precision", experiment, f"the outputs at {trial.ratio:.3g} of the target",
                                        conclusion))

    top = ", ".join(f"{n} {contrib[n]:.3g}" for n in ranked[:5])
    report.evidence.append(Evidence("precision", f"each node's operands rounded to {s.low} alone, through the fp64 "
                                    "graph reference", f"{len(ranked)} candidates; the most: {top or 'none'}",
                                    "the order to keep nodes high in"))
    all_low = s.trial(frozenset())
    report.all_low_ratio = all_low.ratio
    note(f"every node in {s.low}", all_low,
         "it meets the target: nothing needs more precision" if all_low.meets else "it does not meet the target")
    if all_low.meets:
        return frozenset()
    all_high = s.trial(frozenset(ranked))
    note(f"every node in {s.high}", all_high,
         "the target is within reach" if all_high.meets else "not even this meets it: the target is out of reach")
    if not all_high.meets:
        report.final_ratio = all_high.ratio
        return None
    lo, hi = 0, len(ranked)  # the first lo ranked nodes kept high do not meet it; the first hi do
    while hi - lo > 1:
        mid = (lo + hi) // 2
        tried = s.trial(frozenset(ranked[:mid]))
        note(f"the {mid} most contributing in {s.high}", tried, "meets it" if tried.meets else "does not meet it")
        lo, hi = (lo, mid) if tried.meets else (mid, hi)
    keep = frozenset(ranked[:hi])
    for node in reversed(ranked[:hi]):  # the least contributing first
        tried = s.trial(keep - {node})
        note(f"{node} back in {s.low}", tried,
             f"{node} can run in {s.low}" if tried.meets else f"{node} must stay in {s.high}")
        if tried.meets:
            keep = keep - {node}
    return keep
