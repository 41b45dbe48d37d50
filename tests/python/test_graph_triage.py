"""Graph triage's first steps (docs/GRAPH.md): each node of a stack's run judged locally, on the
inputs the stack gave it, against its own bound. Correct stacks — opval's sim backend running
every op node, ONNX Runtime at each optimization level — blame no node on the project's three
models; a kernel that accumulates in float16 where float32 was promised, dropped into one node,
is blamed alone, while the nodes after it, which only inherit its error, pass locally."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import opval
from opval import graph, graph_stacks

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from models import cnn, mlp, transformer_block  # noqa: E402

MODELS = [mlp, cnn, transformer_block]


def _blamed(judgements: list[dict]) -> list[str]:
    return [j["node"] for j in judgements if j["local"] is not None and j["local"].failed]


def _judged(judgements: list[dict]) -> int:
    return sum(j["local"] is not None for j in judgements)


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_sim_running_every_op_node_blames_nothing(build):
    model, inputs = build(np.float32)
    values, ran_on = graph.run_on_backend(model, inputs, "sim")
    assert set(ran_on.values()) == {"sim"}
    judgements = graph.judge(model, inputs, values)
    assert _blamed(judgements) == [], [(j["node"], j["local"].reason) for j in judgements if j["local"] and j["local"].failed]
    assert _judged(judgements) == len(judgements)  # every node's values were there
    final = judgements[-1]  # the node giving the graph's output
    assert 0 < final["accumulated_max_rel"] < 1e-3  # float32 error, accumulated, and explained


@pytest.mark.parametrize("level", graph_stacks.ORT_LEVELS)
@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_onnx_runtime_at_each_level_blames_nothing(build, level):
    model, inputs = build(np.float32)
    run = graph_stacks.ort_run(model, inputs, level=level)
    judgements = graph.judge(model, inputs, run.captured)
    assert _blamed(judgements) == [], [(j["node"], j["local"].reason) for j in judgements if j["local"] and j["local"].failed]
    # What a fused node hides is said, not judged: the rest is.
    assert _judged(judgements) + len([j for j in judgements if "fused" in j["note"]]) == len(judgements)
    assert _judged(judgements) >= 2


def _f16_accumulating_matmul(a, b):
    """A matmul kernel that keeps its running sums in float16 (a planted bug: the contract
    promises float32 accumulation)."""
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], np.float16)
    for k in range(a.shape[-1]):
        acc = (acc + (a[..., :, k:k + 1] * b[..., k:k + 1, :]).astype(np.float16)).astype(np.float16)
    return acc.astype(np.float32)


@pytest.mark.parametrize("build,node,shape", [(mlp, "fc1", (8, 64, 64)), (transformer_block, "ff_down", (16, 32, 64))],
                         ids=["mlp", "transformer_block"])
def test_a_kernel_accumulating_in_float16_is_blamed_alone(build, node, shape):
    model, inputs = build(np.float32)
    m, n, k = shape
    kernel = opval.kernel_backend(
        "matmul", _f16_accumulating_matmul, contracts="f32",
        supports=lambda p: True if (p.get("m"), p.get("n"), p.get("k")) == (m, n, k) else "another node's shape",
        name="f16_accumulating")
    values, ran_on = graph.run_on_backend(model, inputs, kernel)
    assert ran_on[node] == "python:f16_accumulating"
    judgements = graph.judge(model, inputs, values)
    assert _blamed(judgements) == [node]
    first = graph.first_divergent(judgements)
    assert first["node"] == node and "bound" in first["local"].reason
    # Downstream nodes inherit the error (their accumulated error grows) and pass locally.
    after = judgements[[j["node"] for j in judgements].index(node) + 1:]
    assert after and all(not j["local"].failed for j in after if j["local"] is not None)
    assert max(j["accumulated_max_rel"] for j in after) > 1e-4


def test_onnx_runtime_passes_named_by_its_log_can_be_disabled_and_observing_changes_nothing():
    """The fused MatMul + Add of the MLP hides `fc0`; ONNX Runtime's log names the pass, and
    disabling it by that name brings `fc0` back (disabled_optimizers ignores a wrong name)."""
    model, inputs = mlp(np.float32)
    assert "MatMulAddFusion" in graph_stacks.ort_fired_passes(model, level="all")
    fused = graph_stacks.ort_run(model, inputs, level="all")
    assert "fc0" in fused.not_observable
    unfused = graph_stacks.ort_run(model, inputs, level="all", disabled_optimizers=["MatMulAddFusion"])
    assert "fc0" in unfused.captured
    ignored = graph_stacks.ort_run(model, inputs, level="all", disabled_optimizers=["NoSuchFusion"])
    assert "fc0" in ignored.not_observable
    for run in (fused, unfused, ignored):
        assert not any("changed the result" in note for note in run.notes), run.notes
