"""opval.reproducer: a triage's first divergent node cut out of the model into a minimal
reproducer, checked to fail the same way, and the hand-off bundle (docs/GRAPH.md, "Reducer and
hand-off").

    report = opval.triage.triage(model, inputs, stack)
    repro = opval.reproducer.reproduce(model, inputs, stack, report, "results/repro")
    print(repro.summary)          # results/repro.tar.gz holds the folder

The cut is the node, or the fused region it was judged with (the nodes whose values the stack
hid), with the values the stack gave it as the cut's graph inputs: the smallest graph whose
failure has the same signature. It is run again on the same stack in the same configuration
and judged; only a cut that fails with the same signature — the same node failing locally, as
the same kind of verdict (alone, or as a region) — is the reproducer, so a reduction cannot
drift to another failure. A single op node is also saved as an op-level case that `opval
judge` replays.
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from . import graph
from .graph_stacks import Stack, _as_model, _value_types
from .triage import Triage, short_reason


@dataclass
class Reproducer:
    """What reproduce() wrote and whether the cut fails as the whole model did.

    nodes: the cut's nodes; reproduced: it fails with the same signature (one more run of the
    stack); signature: what was compared; commands: how to replay it; archive: the bundle
    (folder.tar.gz)."""
    folder: Path
    nodes: list[str]
    reproduced: bool
    signature: str
    commands: list[str] = field(default_factory=list)
    archive: Path | None = None
    summary: str = ""


def cut(model: Any, nodes: list[str], values: Mapping[str, np.ndarray]):
    """The subgraph of `nodes` (kept in the model's order), its graph inputs the values it
    reads that no node of it computes and no initializer holds, taken from `values` in their
    declared types; its outputs the last node's. Returns (ModelProto, inputs)."""
    import onnx
    from onnx import helper

    m = _as_model(model)
    wanted = set(nodes)
    chosen = [n for n in m.graph.node if n.name in wanted]
    if len(chosen) != len(wanted):
        raise ValueError(f"the model has no node {sorted(wanted - {n.name for n in chosen})[0]!r}")
    produced = {o for n in chosen for o in n.output if o}
    initializers = {t.name: t for t in m.graph.initializer}
    reads = list(dict.fromkeys(i for n in chosen for i in n.input if i and i not in produced))
    types = _value_types(m)
    inputs = {}
    for name in reads:
        if name in initializers:
            continue
        if name not in values:
            raise ValueError(f"no value for '{name}', which the cut reads")
        inputs[name] = np.asarray(values[name]).astype(helper.tensor_dtype_to_np_dtype(types[name]))
    outputs = [o for o in chosen[-1].output if o]
    if any(o not in values for o in outputs):
        raise ValueError(f"no value for the outputs of '{chosen[-1].name}'")
    g = helper.make_graph(
        chosen, f"{m.graph.name or 'model'}_cut",
        [helper.make_tensor_value_info(k, types[k], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, types[o], list(np.shape(values[o]))) for o in outputs],
        [initializers[r] for r in reads if r in initializers])
    cut_model = helper.make_model(g, opset_imports=list(m.opset_import), ir_version=m.ir_version,
                                  producer_name="opval.reproducer")
    onnx.checker.check_model(cut_model)
    return cut_model, inputs


def _signature(j: dict | None) -> str:
    if j is None or j["local"] is None:
        return "not judged" if j is not None else "absent"
    kind = f"as the fused region {', '.join(j['region'])}" if j["region"] else "alone"
    return f"'{j['node']}' {'fails' if j['local'].failed else 'passes'} locally, judged {kind}"


def _environment() -> dict[str, str]:
    from importlib import metadata

    env = {"python": sys.version.split()[0], "platform": platform.platform(), "machine": platform.machine(),
           "cpus": str(os.cpu_count())}
    for package in ("opval", "numpy", "onnx", "onnxruntime", "torch", "jax", "tensorflow-cpu", "iree-base-compiler",
                    "iree-base-runtime"):
        try:
            env[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return env


def _contracts_in(contracts: Mapping[str, str], model) -> dict[str, str]:
    """The contract overrides that name a node or an op type of `model` (a cut keeps some)."""
    names = {n.name for n in model.graph.node} | {n.op_type for n in model.graph.node}
    return {k: v for k, v in contracts.items() if k in names}


def _save_op_case(model, node: str, values: Mapping[str, np.ndarray], folder: Path,
                  contracts: Mapping[str, str]) -> list[str]:
    """The node as the op-level case `opval judge` replays (its descriptor carries the node's
    contract); [] (and nothing written) when it is no op node."""
    try:
        descriptor, ins, outs = graph.node_case(model, node, values, contracts)
    except ValueError:
        return []
    np.savez(folder / "case_inputs.npz", **ins)
    np.savez(folder / "case_outputs.npz", **outs)
    (folder / "case.txt").write_text(descriptor + "\n")
    return [f"opval judge {shlex.quote(descriptor)} --inputs case_inputs.npz --outputs case_outputs.npz"]


def reproduce(model: Any, inputs: Mapping[str, Any], stack: Stack, report: Triage, folder: str | os.PathLike,
              *, archive: bool = True) -> Reproducer:
    """Cuts the report's first divergent node (with its fused region) out of `model`, runs the
    cut on `stack` in the triaged configuration, and writes the bundle to `folder`: repro.onnx
    and inputs.npz (the cut and the values the stack gave it), expected.npz (the fp64 graph
    reference's outputs of the cut), actual.npz (the stack's), for a single op node case.txt
    with case_inputs.npz and case_outputs.npz, triage.md, evidence.jsonl, environment.json and
    README.md (the summary and the commands), then folder.tar.gz."""
    import onnx

    if report.first is None or report.run is None:
        raise ValueError("the triage blamed no node: there is nothing to reproduce")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    node = report.first["node"]
    nodes = report.first["region"] or [node]
    reference = graph.reference(model, inputs, given=report.run.captured)
    values = {**reference.values, **inputs, **report.run.captured}
    cut_model, cut_inputs = cut(model, nodes, values)
    run = stack.run(cut_model, cut_inputs, report.configured)
    contracts = _contracts_in(report.contracts, cut_model)
    judged = graph.judge(cut_model, cut_inputs, run.captured, contracts=contracts)
    mine = next((j for j in judged if j["node"] == node), None)
    theirs = next(j for j in report.judgements if j["node"] == node)
    reproduced = _signature(mine) == _signature(theirs)
    signature = _signature(theirs) + f" at {report.config}"
    onnx.save(cut_model, out / "repro.onnx")
    np.savez(out / "inputs.npz", **cut_inputs)
    ideal = graph.reference(cut_model, cut_inputs)
    outputs = [o.name for o in cut_model.graph.output]
    np.savez(out / "expected.npz", **{o: ideal.values[o] for o in outputs})
    np.savez(out / "actual.npz", **{o: np.asarray(run.captured[o]) for o in outputs if o in run.captured})
    commands = []
    options = stack.command_line(report.configured)
    if options is not None:
        options += [f"--contract={k}={v}" for k, v in contracts.items()]
        commands.append("opval graph triage repro.onnx --inputs inputs.npz " + " ".join(shlex.quote(a) for a in options))
    else:
        commands.append("python: opval.triage.triage(onnx.load('repro.onnx'), dict(np.load('inputs.npz')), STACK) "
                        f"with the stack triaged ({report.stack}, {report.config})")
    if len(nodes) == 1:
        commands += _save_op_case(model, node, values, out, report.contracts)
    (out / "triage.md").write_text(report.markdown())
    (out / "evidence.jsonl").write_text(report.jsonl())
    (out / "environment.json").write_text(json.dumps(_environment(), indent=2) + "\n")
    outcome = ("fails the same way" if reproduced else
               f"does not fail the same way ({_signature(mine)}): the whole model is the reproducer")
    summary = (f"# Reproducer: '{node}' on {report.stack}\n\n{report.summary()}.\n\n"
               f"- cut: {len(nodes)} of {len(report.judgements)} nodes ({', '.join(nodes)}); run again on {report.stack} "
               f"at {report.config}, it {outcome}\n- signature: {signature}\n"
               f"- reason: {short_reason(report.first['reason'])}\n"
               f"- runs of the stack: {report.runs} to triage, 1 for the cut\n\n## Replay\n\n"
               + "".join(f"    {c}\n" for c in commands)
               + "\nFiles: repro.onnx and inputs.npz (the cut and the values the stack gave it), expected.npz (opval's "
               "fp64 reference of the cut), actual.npz (the stack's), "
               + ("case.txt, case_inputs.npz, case_outputs.npz (the op-level case), " if len(nodes) == 1 and
                  (out / "case.txt").exists() else "")
               + "triage.md (the chain of evidence), evidence.jsonl, environment.json.\n")
    (out / "README.md").write_text(summary)
    repro = Reproducer(folder=out, nodes=list(nodes), reproduced=reproduced, signature=signature,
                       commands=commands, summary=summary)
    if archive:
        repro.archive = Path(shutil.make_archive(str(out), "gztar", root_dir=out.parent, base_dir=out.name))
    return repro
