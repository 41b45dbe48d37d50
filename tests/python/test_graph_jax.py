"""JAX as a graph stack (docs/GRAPH.md, "JAX"): the lowering of opval's graph IR to jax.numpy /
jax.lax against ONNX Runtime on every value, jit and op by op judged without false alarms, XLA's
passes read from its dumps and turned off by name, and triage through the JAX stack."""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from faults import RewritingJax, gemm_scale_misfolded  # noqa: E402
from lowering_testing import IDS, MODELS, blamed, expect_every_value_equals_onnx_runtime  # noqa: E402
from models import mlp, transformer_block  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from opval import graph, graph_stacks, jax_lowering, triage  # noqa: E402
from opval.jax_stack import JaxStack  # noqa: E402


@pytest.mark.parametrize("build", MODELS, ids=IDS)
def test_lowered_model_op_by_op_equals_onnx_runtime_unoptimized_on_every_value(build):
    model, inputs = build(np.float32)
    expect_every_value_equals_onnx_runtime(jax_lowering.lower(model).run(inputs), model, inputs)


@pytest.mark.parametrize("level", graph_stacks.stack_from_spec("jax").levels)
@pytest.mark.parametrize("build", [mlp, transformer_block], ids=["mlp", "transformer_block"])
def test_correct_jax_blames_nothing_at_either_level(build, level):
    model, inputs = build(np.float32)
    stack = JaxStack()
    run = stack.run(model, inputs, stack.config.but(level=level))
    assert run.stack == f"jax:{level}" and not run.notes, run.notes
    assert set(run.captured) >= {o for n in model.graph.node for o in n.output}
    assert blamed(graph.judge(model, inputs, run.captured)) == []


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"], ids=["f16", "bf16"])
@pytest.mark.parametrize("build", MODELS[:3], ids=IDS[:3])
def test_correct_jax_in_half_precision_blames_nothing(build, dtype):
    """Half-precision nodes compute in float32 and round once (the contract of an ONNX node of
    that type), under jit as op by op."""
    import ml_dtypes

    model, inputs = build(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    for level in ("disable_jit", "jit"):
        run = JaxStack().run(model, inputs, graph_stacks.StackConfig(level=level))
        assert blamed(graph.judge(model, inputs, run.captured)) == [], level


def test_half_precision_nodes_compute_in_float32_and_round_once():
    """jax.nn.softmax of bfloat16 rounds its exponentials, their sum and the quotient; the
    lowering's Softmax of bfloat16 is the float32 softmax rounded once."""
    import jax
    import ml_dtypes

    x = np.random.default_rng(0).standard_normal((4, 16)).astype(ml_dtypes.bfloat16)
    node = helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)
    g = helper.make_graph([node], "s", [helper.make_tensor_value_info("x", 16, [4, 16])],
                          [helper.make_tensor_value_info("y", 16, [4, 16])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    lowered = jax_lowering.lower(model).run({"x": x})["y"]
    once = np.asarray(jax.nn.softmax(x.astype(np.float32), axis=-1)).astype(ml_dtypes.bfloat16)
    assert lowered.dtype == ml_dtypes.bfloat16 and np.array_equal(lowered.view(np.uint16), once.view(np.uint16))
    stepwise = np.asarray(jax.nn.softmax(x, axis=-1))
    assert not np.array_equal(stepwise.view(np.uint16), once.view(np.uint16))  # what jax.nn would have given


def test_xla_passes_come_from_its_dumps_and_turning_one_off_changes_what_is_compiled():
    model, inputs = mlp(np.float32)
    stack = JaxStack()
    with pytest.raises(ValueError, match="needs a run"):
        stack.fired_passes(model, "jit")
    at = stack.run(model, inputs, stack.config)
    fired = stack.fired_passes(model, "jit")
    assert "fusion" in fired and "pipeline-start" not in fired and stack.fired_passes(model, "disable_jit") == []
    without = stack.run(model, inputs, stack.config.but(disabled=("fusion",)))
    assert without.graph_digest != at.graph_digest
    # XLA ignores a pass name it does not know: the digest shows nothing changed.
    unknown = stack.run(model, inputs, stack.config.but(disabled=("no-such-pass",)))
    assert unknown.graph_digest == at.graph_digest
    for name, value in at.outputs.items():
        np.testing.assert_allclose(without.outputs[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_triage_through_jax_blames_the_pass_that_rewrote_a_node():
    """A compiler fault planted in front of XLA (a wrong Gemm scale folding from jit up): found at
    jit, not op by op, and bisected among XLA's own passes to the planted one."""
    model, inputs = mlp(np.float32)
    report = triage.triage(model, inputs, RewritingJax("GemmScaleFolding", gemm_scale_misfolded("head")))
    assert report.first["node"] == "head", report.markdown()
    assert report.blame == "compiler" and report.culprit == "pass GemmScaleFolding at level jit", report.markdown()
    runtime = next(e for e in report.evidence if e.hypothesis == "runtime")
    assert "one dispatch" in runtime.outcome


def test_jax_specs_and_bad_input():
    assert graph_stacks.stack_from_spec("jax").config.level == "jit"
    assert graph_stacks.stack_from_spec("jax:disable_jit").config.level == "disable_jit"
    assert graph_stacks.stack_from_spec("jax_jit").config.level == "jit"
    with pytest.raises(ValueError, match="unknown option 'threads=2' .levels: disable_jit, jit.$"):
        graph_stacks.stack_from_spec("jax:threads=2")
    x = np.ones((2, 3), np.float32)
    node = helper.make_node("Einsum", ["x"], ["y"], name="n", equation="ij->ji")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                          [helper.make_tensor_value_info("y", 1, None)], [numpy_helper.from_array(x, "unused")])
    with pytest.raises(ValueError, match=r"node 'n' \(Einsum\) has no JAX lowering"):
        jax_lowering.lower(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
