"""opval.triage: on which node a model first goes wrong on a stack beyond what its own inputs
explain, and whether graph compilation, runtime dispatch or a kernel is to blame, as a chain of
evidence (docs/GRAPH.md, "Triage").

    from opval.graph_stacks import OrtStack
    report = opval.triage.triage(model, inputs, OrtStack())
    print(report.markdown())

Each experiment is a run of the same stack with one knob changed (the optimization level, a
pass turned off, the thread count, a runtime option), judged node by node with opval.graph.judge; a hypothesis
is kept or cleared by whether the first divergent node still fails *locally* there — its
error against its own bound on the inputs the stack gave it — so error a node merely inherits
never steers the bisection.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from . import graph
from .graph_stacks import Stack, StackConfig, StackRun, threads_text


@dataclass
class Evidence:
    """One link of the chain: the hypothesis tested, the experiment run, what it showed, and
    what follows."""
    hypothesis: str
    experiment: str
    outcome: str
    conclusion: str


@dataclass
class Observation:
    """One run of the stack in one configuration, judged node by node."""
    config: StackConfig
    run: StackRun
    judgements: list[dict]

    def judgement(self, node: str) -> dict | None:
        return next((j for j in self.judgements if j["node"] == node), None)

    def describe(self, node: str) -> str:
        """What this run says of `node`, and of the first blamed node if it is another."""
        j = self.judgement(node)
        first = graph.first_divergent(self.judgements)
        if j is None:
            return f"'{node}' is not in the model"
        if j["local"] is None:
            said = f"'{node}' is not judged alone ({j['note']})"
        elif j["local"].failed:
            said = f"'{node}' fails locally: {short_reason(j['local'].reason)}"
        else:
            said = f"'{node}' passes locally"
        if node in self.run.kernels:
            said += f" (ran as {self.run.kernels[node]})"
        if first is None:
            return said + "; no node is blamed"
        return said if first["node"] == node else f"{said}; '{first['node']}' fails first"


@dataclass
class Triage:
    """The outcome of opval.triage.triage.

    first: the first divergent node of the run as configured (node, op_type, reason,
    descriptor: its opval problem, region: the nodes it was judged with when a fused node hid
    its inputs, itself last, accumulated_max_rel), None when no node is blamed. blame: 'compiler',
    'runtime' or 'kernel', 'undetermined' when the experiments do not single one out, None
    when nothing is blamed. culprit: the pass, level, dispatch or node held responsible.
    evidence: the chain, in the order the experiments ran. runs: how many runs of the stack
    it took. judgements: the configured run's, per node."""
    stack: str
    config: str
    first: dict | None
    blame: str | None
    culprit: str
    evidence: list[Evidence]
    runs: int
    judgements: list[dict]
    notes: list[str] = field(default_factory=list)
    #: The contract overrides the nodes were judged under (opval.graph.load), by node or op type.
    contracts: dict[str, str] = field(default_factory=dict)
    #: The configuration and the run triaged (for opval.reproducer); not in the records.
    configured: StackConfig | None = field(default=None, repr=False)
    run: StackRun | None = field(default=None, repr=False)

    def summary(self) -> str:
        if self.first is None:
            return f"{self.stack} ({self.config}): no node is blamed"
        head = f"{self.stack} ({self.config}): '{self.first['node']}' ({self.first['op_type']}) is the first node " \
               "that goes wrong beyond what its inputs explain"
        if self.blame == "undetermined":
            return f"{head}; the experiments do not single out the compiler, the runtime or the kernel"
        return f"{head}; blame: {self.blame} ({self.culprit})"

    def markdown(self) -> str:
        lines = [f"# Triage: {self.stack}", "", self.summary() + ".", ""]
        if self.first is not None:
            lines += [f"- first divergent node: `{self.first['node']}` ({self.first['op_type']}): {self.first['reason']}",
                      f"- its problem: `{self.first['descriptor']}`" if self.first["descriptor"] else
                      f"- judged with the nodes a fused node of the stack hides: {', '.join(self.first['region'])}", ""]
        lines += ["| # | hypothesis | experiment | outcome | conclusion |", "|---|---|---|---|---|"]
        lines += [f"| {i} | " + " | ".join(_cell(c) for c in (e.hypothesis, e.experiment, e.outcome, e.conclusion)) + " |"
                  for i, e in enumerate(self.evidence, 1)]
        lines += ["", f"{self.runs} run{'s' if self.runs != 1 else ''} of the stack."]
        lines += [f"- note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def records(self) -> list[dict]:
        """JSON-ready records: one per node of the configured run, then the triage's."""
        kernels = self.run.kernels if self.run is not None else {}
        out = [node_record(j, kernels.get(j["node"], "")) for j in self.judgements]
        out.append({"record": "triage", "stack": self.stack, "config": self.config, "first": self.first,
                    "blame": self.blame, "culprit": self.culprit, "runs": self.runs, "notes": self.notes,
                    "contracts": self.contracts, "evidence": [vars(e) for e in self.evidence]})
        return out

    def jsonl(self) -> str:
        return "".join(json.dumps(r) + "\n" for r in self.records())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a reason's |err| would end the table's cell


def short_reason(reason: str) -> str:
    """A verdict's reason without the bound's formula (the first divergent node keeps it whole)."""
    return re.sub(r"(vs bound [^ ]+) \(.*$", r"\1", reason)


def node_record(j: dict, kernel: str = "") -> dict:
    """A node's judgement as a JSON-ready record; `kernel`: what the stack says ran it."""
    local = j["local"]
    return {"record": "node", "node": j["node"], "op_type": j["op_type"], "role": j["role"], "captured": j["captured"],
            "accumulated_max_abs": _finite(j["accumulated_max_abs"]), "accumulated_max_rel": _finite(j["accumulated_max_rel"]),
            "accumulated_over_bound": None if j.get("accumulated_over_bound") is None else _finite(j["accumulated_over_bound"]),
            "region": j.get("region", []),
            "local": None if local is None else {"state": local.state, "reason": local.reason, "descriptor": local.descriptor},
            "note": j["note"], "conditioning": j.get("conditioning", ""), "kernel": kernel}


def _finite(x: float) -> float | str:
    return x if np.isfinite(x) else str(x)  # JSON has no inf


class _Triager:
    """The experiments of one triage, each run counted and remembered by configuration."""

    def __init__(self, model: Any, inputs: Mapping[str, Any], stack: Stack, policy: str, contracts: Mapping[str, str],
                 progress: Callable[[str], None] | None):
        self.model, self.inputs, self.stack, self.policy, self.contracts = model, inputs, stack, policy, contracts
        self.progress = progress or (lambda _message: None)
        self.seen: dict[StackConfig, Observation] = {}
        self.evidence: list[Evidence] = []
        self.base_blamed: set[str] = set()
        self.bisector_runs = 0  # runs of a stack's own compiler bisector, which are not cached

    def observe(self, config: StackConfig) -> Observation:
        if config not in self.seen:
            self.progress(f"run {self.runs + 1}: {self.stack} at {config}")
            self.seen[config] = self.judged(config, self.stack.run(self.model, self.inputs, config))
        return self.seen[config]

    @property
    def runs(self) -> int:
        return len(self.seen) + self.bisector_runs

    def judged(self, config: StackConfig, run: StackRun) -> Observation:
        return Observation(config, run, graph.judge(self.model, self.inputs, run.captured, policy=self.policy,
                                                      contracts=self.contracts))

    def diverges(self, obs: Observation, node: str) -> bool:
        """Whether the divergence at `node` may still be there in `obs`: unless the node is
        judged there and passes, and no node the configured run did not blame fails (a fusion
        undone moves the failure to the nodes it had hidden; a node the configured run blamed
        too is another fault). A node hidden inside a fused node clears nothing."""
        j = obs.judgement(node)
        if j is None or j["local"] is None or j["local"].failed:
            return True
        return any(other["local"] is not None and other["local"].failed and other["node"] not in self.base_blamed
                   for other in obs.judgements)

    def note(self, hypothesis: str, experiment: str, outcome: str, conclusion: str) -> None:
        self.evidence.append(Evidence(hypothesis, experiment, outcome, conclusion))

    # -- compiler --------------------------------------------------------------------------

    def compiler(self, base: Observation, node: str) -> str | None:
        """The level, then the pass, that makes `node` fail; None when the compiler is cleared."""
        levels = self.stack.levels
        if not levels:
            self.note("compiler", "-", f"{self.stack} compiles nothing", "not a graph rewrite")
            return None
        current = levels.index(base.config.level) if base.config.level in levels else len(levels) - 1
        if current == 0:
            self.note("compiler", f"run at {base.config}", "optimizations are already off", "not a graph rewrite")
            return None
        off = self.observe(base.config.but(level=levels[0], disabled=()))
        if self.diverges(off, node):
            self.note("compiler", f"rerun at {off.config}", off.describe(node),
                      "cleared: the divergence needs no graph rewrite")
            return None
        self.note("compiler", f"rerun at {off.config}", off.describe(node),
                  "implicated: the divergence needs an optimization")
        lowest = next(i for i in range(1, current + 1)
                      if i == current or self.diverges(self.observe(base.config.but(level=levels[i], disabled=())), node))
        if current > 1:
            self.note("compiler", f"levels {', '.join(levels[1:lowest + 1])} in turn",
                      f"'{node}' first fails at level {levels[lowest]}", f"a pass of level {levels[lowest]}")
        config = base.config.but(level=levels[lowest])
        def clears(run: StackRun) -> tuple[bool, str]:
            obs = self.judged(config, run)
            return not self.diverges(obs, node), obs.describe(node)

        own = self.stack.compiler_bisect(self.model, self.inputs, config, clears, self.note)
        if own is None:
            return self.bisect_passes(config, levels, lowest, node)
        culprit, runs = own
        self.bisector_runs += runs
        return culprit or f"level {levels[lowest]}"

    def bisect_passes(self, config: StackConfig, levels: tuple[str, ...], lowest: int, node: str) -> str:
        """The pass of `config.level` to blame: of the passes that fired there (those new at
        this level first), in firing order, the last one whose removal — with every pass after
        it — clears `node`, found by halving; a pass before it is one it builds on (a fusion
        the faulty rewrite then approximates). Confirmed alone; the level when nothing is."""
        at = self.observe(config)
        fired = self.stack.fired_passes(self.model, config.level)
        earlier = set(self.stack.fired_passes(self.model, levels[lowest - 1])) if lowest > 1 else set()
        passes = [p for p in fired if p not in earlier] or fired
        if not passes:
            self.note("compiler", f"the passes that fired at {config.level}", "the stack names none",
                      f"blame the level {config.level}")
            return f"level {config.level}"
        self.note("compiler", f"the passes that fired at {config.level}, in order", ", ".join(passes), "the candidates")
        without = lambda names: self.observe(config.but(disabled=config.disabled + tuple(names)))  # noqa: E731
        everything = without(passes)
        if self.diverges(everything, node):
            self.note("compiler", "without all of them", everything.describe(node),
                      f"they do not explain it: blame the level {config.level}")
            return f"level {config.level}"
        lo, hi = 0, len(passes)  # clears without passes[lo:], does not without passes[hi:]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.diverges(without(passes[mid:]), node):
                hi = mid
            else:
                lo = mid
        culprit = passes[lo]
        self.note("compiler", "without the passes from one on, halving", f"clears without {', '.join(passes[lo:])}; "
                  f"not without {', '.join(passes[hi:]) or 'none'}", f"{culprit} is the last one needed")
        alone = without([culprit])
        if alone.run.graph_digest and alone.run.graph_digest == at.run.graph_digest:
            self.note("compiler", f"at {alone.config}", "the same graph was compiled: the name did not turn the pass off",
                      f"not confirmed: blame the level {config.level}")
            return f"level {config.level}"
        if self.diverges(alone, node):
            self.note("compiler", f"at {alone.config}", alone.describe(node),
                      f"not cleared by it alone (another pass repeats it): blame the level {config.level}")
            return f"level {config.level}"
        self.note("compiler", f"at {alone.config}", alone.describe(node) + "; the compiled graph differs",
                  f"the pass {culprit} is to blame")
        return f"pass {culprit} at level {config.level}"

    # -- runtime dispatch ------------------------------------------------------------------

    def runtime(self, base: Observation, node: str) -> str | None:
        """The dispatch under which `node` passes while it fails as configured — another thread
        count, or another value of one of the stack's runtime options (prepacked kernels, oneDNN
        kernels, a layout, an execution provider), one knob at a time; None when every dispatch
        the stack offers fails alike (or it offers one)."""
        tries = _dispatch_variations(self.stack, base.config)
        if not tries:
            self.note("runtime", "-", f"{self.stack} has one dispatch here", "not tested")
            return None
        passing: dict[str, list[str]] = {}  # by what the configured run has of the knob changed
        for configured, label, config in tries:
            tried = self.observe(config)
            cleared = not self.diverges(tried, node)
            self.note("runtime", f"rerun at {tried.config}", tried.describe(node), "implicated" if cleared else "same failure")
            if cleared:
                passing.setdefault(configured, []).append(label)
        if not passing:
            return None
        return f"'{node}' " + "; ".join(f"fails at {configured} and passes at {', '.join(labels)}"
                                        for configured, labels in passing.items())

    # -- kernel ----------------------------------------------------------------------------

    def kernel(self, base: Observation, node: str) -> bool:
        """Whether `node` still fails alone in the most conservative configuration: no
        optimization, the fewest threads, every runtime option at its default."""
        quiet = base.config.but(level=self.stack.levels[0] if self.stack.levels else base.config.level, disabled=(),
                                threads=min(self.stack.thread_choices) if self.stack.thread_choices else base.config.threads,
                                runtime=())
        tried = self.observe(quiet)
        fails = self.diverges(tried, node)
        self.note("kernel", f"'{node}' alone through opval's op-level judge on the inputs the stack gave it, at "
                  f"{tried.config}", tried.describe(node),
                  "implicated: its own output is beyond its bound" if fails else "cleared")
        return fails


def _dispatch_variations(stack: Stack, config: StackConfig) -> list[tuple[str, str, StackConfig]]:
    """The dispatches to try beside `config`'s, one knob changed each: the other thread counts,
    then each other value of each runtime option; each with what `config` has of that knob and
    what the try has, in words."""
    out = [(threads_text(config.threads, "the default threads"), threads_text(t), config.but(threads=t))
           for t in stack.thread_choices if t != config.threads]
    for name, values in stack.runtime_options.items():
        current = config.option(name, stack.runtime_options)
        out += [(f"{name}={current}", f"{name}={v}", config.with_option(name, v, stack.runtime_options))
                for v in values if v != current]
    return out


def triage(model: Any, inputs: Mapping[str, Any], stack: Stack, *, config: StackConfig | None = None,
           policy: str = "bound", contracts: Mapping[str, str] | None = None,
           progress: Callable[[str], None] | None = None) -> Triage:
    """Runs `model` on `stack` (in `config`, default the stack's own), finds the first node
    whose local verdict fails, and tests the hypotheses in turn: the compiler (rerun with
    optimizations off, bisect the levels, then the passes that fired), runtime dispatch (other
    thread counts, other values of the stack's runtime options), the kernel (the node alone, in the most conservative configuration). The
    blame goes to the first hypothesis an experiment keeps. contracts: the contracts the stack
    documents for some nodes, by node name or op type (opval.graph.load)."""
    t = _Triager(model, inputs, stack, policy, dict(contracts or {}), progress)
    base = t.observe(config or stack.config)
    first = graph.first_divergent(base.judgements)
    report = Triage(stack=str(stack), config=str(base.config), first=None, blame=None, culprit="", evidence=t.evidence,
                    runs=0, judgements=base.judgements, notes=list(base.run.notes), contracts=t.contracts,
                    configured=base.config, run=base.run)
    if first is None:
        t.note("where", f"run at {base.config}", _no_blame_outcome(base), "nothing to blame")
        report.runs = t.runs
        return report
    node = first["node"]
    t.base_blamed = {j["node"] for j in base.judgements if j["local"] is not None and j["local"].failed}
    report.first = {"node": node, "op_type": first["op_type"], "reason": first["local"].reason,
                    "descriptor": first["local"].descriptor, "region": list(first["region"]),
                    "accumulated_max_rel": _finite(first["accumulated_max_rel"])}
    t.note("where", f"run at {base.config}", base.describe(node), f"'{node}' is the node to explain")
    compiler = t.compiler(base, node)
    runtime = t.runtime(base, node)
    kernel = t.kernel(base, node)
    if compiler:
        report.blame, report.culprit = "compiler", compiler
    elif runtime:
        report.blame, report.culprit = "runtime", runtime
    elif kernel:
        report.blame, report.culprit = "kernel", f"the kernel of '{node}'"
    else:
        report.blame = "undetermined"
    report.runs = t.runs
    return report


def _no_blame_outcome(base: Observation) -> str:
    """Why the output's error is legitimate when no node is blamed, and what was not judged."""
    judged = [j for j in base.judgements if j["local"] is not None]
    hidden = [j["node"] for j in base.judgements if j["local"] is None]
    worst = max((j["accumulated_max_rel"] for j in base.judgements), default=0.0)
    said = (f"all {len(judged)} nodes judged alone are within their bounds on the inputs the stack gave them, so the "
            f"accumulated error (at most {worst:.3g} relative) is what each node's legitimate rounding builds up")
    ill = [j["node"] for j in base.judgements if j.get("conditioning")]
    if ill:
        said += f"; it grows most where the graph is ill-conditioned ({', '.join(ill[:5])}: a cancellation " \
                "amplifies inherited error, each node within its own bound)"
    if hidden:
        said += f"; {len(hidden)} not judged alone ({', '.join(hidden[:5])}{', ...' if len(hidden) > 5 else ''})"
    return said


def random_inputs(model: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for each of the model's graph inputs (standard normal floating point,
    small non-negative integers, random booleans); a symbolic dimension raises ValueError."""
    import onnx
    from onnx import helper

    from .graph_stacks import _as_model

    m = _as_model(model)
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in m.graph.initializer}
    out = {}
    for vi in m.graph.input:
        if vi.name in initializers:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if None in dims:
            raise ValueError(f"graph input '{vi.name}' has a symbolic dimension: give its values (--inputs)")
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        if dtype.kind == "f" or "float" in dtype.name:  # bfloat16 and the fp8 types are ml_dtypes' (kind V)
            out[vi.name] = rng.standard_normal(dims).astype(dtype)
        elif dtype.kind in "iu":
            out[vi.name] = rng.integers(0, 8, dims).astype(dtype)
        elif dtype.kind == "b":
            out[vi.name] = rng.random(dims) < 0.5
        else:
            raise ValueError(f"graph input '{vi.name}' is of type {onnx.TensorProto.DataType.Name(tt.elem_type)}: "
                             "give its values (--inputs)")
    return out
