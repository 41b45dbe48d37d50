"""TensorFlow as a graph stack (docs/GRAPH.md, "TensorFlow"): the lowering of opval's graph IR
to TensorFlow operations against ONNX Runtime on every value, eager and tf.function judged
without false alarms, Grappler's optimizers read from its own output and turned off by name,
and a planted option (oneDNN bf16 auto mixed precision) found by triage."""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("opval.adapters.tensorflow_cpu")  # TensorFlow through opval: its start-up notices left out
pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from lowering_testing import IDS, MODELS, blamed, expect_every_value_equals_onnx_runtime  # noqa: E402
from models import mlp, transformer_block  # noqa: E402
from onnx import helper  # noqa: E402

from opval import graph, graph_stacks, tf_lowering, triage  # noqa: E402
from opval.graph_stacks import StackConfig  # noqa: E402
from opval.tf_stack import GRAPPLER_DEFAULT_ON, TfStack  # noqa: E402


@pytest.mark.parametrize("build", MODELS, ids=IDS)
def test_lowered_model_eagerly_equals_onnx_runtime_unoptimized_on_every_value(build):
    model, inputs = build(np.float32)
    expect_every_value_equals_onnx_runtime(tf_lowering.lower(model).run(inputs), model, inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("build", MODELS[:3], ids=IDS[:3])
def test_correct_tensorflow_blames_nothing_at_either_level(build, dtype):
    model, inputs = build(dtype)
    stack = TfStack()
    for level in stack.levels:
        run = stack.run(model, inputs, stack.config.but(level=level))
        assert run.stack == f"tensorflow:{level}"
        assert set(run.captured) >= {o for n in model.graph.node for o in n.output}
        assert blamed(graph.judge(model, inputs, run.captured)) == [], level


def test_grappler_optimizers_come_from_its_output_and_turning_one_off_changes_the_graph():
    model, inputs = transformer_block(np.float32)
    stack = TfStack()
    with pytest.raises(ValueError, match="needs a run"):
        stack.fired_passes(model, "function")
    at = stack.run(model, inputs, stack.config)
    fired = stack.fired_passes(model, "function")
    assert fired and set(fired) <= set(GRAPPLER_DEFAULT_ON) and stack.fired_passes(model, "eager") == []
    without = stack.run(model, inputs, stack.config.but(disabled=(fired[0],)))
    assert without.graph_digest != at.graph_digest
    for name, value in at.outputs.items():
        np.testing.assert_allclose(without.outputs[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    # The process-wide settings are back as they were.
    from opval.adapters.tensorflow_cpu import tf
    assert tf.config.optimizer.get_jit() == "" and tf.config.optimizer.get_experimental_options().get(fired[0], True)


def test_xla_options_compile_with_xla_and_change_the_values():
    model, inputs = transformer_block(np.float32)
    plain = TfStack().run(model, inputs, StackConfig(level="function"))
    for option in ("xla_jit_compile", "xla_auto_clustering"):
        stack = TfStack(options=(option,))
        run = stack.run(model, inputs, stack.config)
        assert run.graph_digest.endswith("+jit_compile" if option == "xla_jit_compile" else "+autoclustering")
        assert any(not np.array_equal(run.captured[n], plain.captured[n]) for n in plain.captured), option
        assert blamed(graph.judge(model, inputs, run.captured)) == [], option


def test_triage_through_tensorflow_blames_onednn_bf16_mixed_precision():
    """The planted fault: Grappler's oneDNN bf16 auto mixed precision, which a CPU deployment
    turns on for speed. Clean eagerly, found at function among Grappler's optimizers, confirmed
    alone."""
    model, inputs = mlp(np.float32)
    report = triage.triage(model, inputs, TfStack(options=("auto_mixed_precision_onednn_bfloat16",)))
    assert report.first["node"] == "fc0", report.markdown()
    assert report.blame == "compiler", report.markdown()
    assert report.culprit == "pass auto_mixed_precision_onednn_bfloat16 at level function", report.markdown()


def test_tensorflow_specs_and_bad_input():
    stack = graph_stacks.stack_from_spec("tensorflow")
    assert stack.config.level == "function" and stack.options == ()
    stack = graph_stacks.stack_from_spec("tensorflow:eager:+xla_jit_compile")
    assert stack.config.level == "eager" and stack.options == ("xla_jit_compile",)
    assert stack.command_line(stack.config) == ["--stack", "tensorflow:eager:+xla_jit_compile"]
    with pytest.raises(ValueError, match="unknown TensorFlow option 'amp' .known: auto_mixed_precision_onednn_bfloat16"):
        graph_stacks.stack_from_spec("tensorflow:+amp")
    with pytest.raises(ValueError, match="unknown option 'threads=2'"):
        graph_stacks.stack_from_spec("tensorflow:threads=2")
    model, inputs = mlp(np.float32)
    with pytest.raises(ValueError, match="'fusion' is neither one of Grappler's default optimizers"):
        TfStack().run(model, inputs, StackConfig(level="function", disabled=("fusion",)))
    node = helper.make_node("Einsum", ["x"], ["y"], name="n", equation="ij->ji")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                          [helper.make_tensor_value_info("y", 1, None)])
    with pytest.raises(ValueError, match=r"node 'n' \(Einsum\) has no TensorFlow lowering"):
        tf_lowering.lower(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))


def _saved_mlp(folder):
    """A SavedModel: x @ w + b -> relu -> @ w2 -> softmax, as a TensorFlow user writes it."""
    from opval.adapters.tensorflow_cpu import tf

    rng = np.random.default_rng(0)
    m = tf.Module()
    m.w = tf.Variable(rng.standard_normal((16, 32)).astype(np.float32) / 4)
    m.b = tf.Variable(rng.standard_normal(32).astype(np.float32) / 10)
    m.w2 = tf.Variable(rng.standard_normal((32, 10)).astype(np.float32) / 6)
    m.f = tf.function(lambda x: tf.nn.softmax(tf.linalg.matmul(tf.nn.relu(tf.nn.bias_add(tf.linalg.matmul(x, m.w), m.b)),
                                                                m.w2)),
                      input_signature=[tf.TensorSpec([8, 16], tf.float32, name="x")])
    tf.saved_model.save(m, str(folder), signatures={"serving_default": m.f})
    return {"x:0": rng.standard_normal((8, 16)).astype(np.float32)}


def test_a_saved_model_comes_in_through_tf2onnx_with_tensorflows_names(tmp_path):
    pytest.importorskip("tf2onnx")
    from opval.tf_import import onnx_from_tensorflow

    inputs = _saved_mlp(tmp_path / "mlp")
    model = onnx_from_tensorflow(tmp_path / "mlp")
    names = [o for n in model.graph.node for o in n.output]
    assert any(n.startswith("StatefulPartitionedCall/") and n.endswith("Relu:0") for n in names), names
    run = TfStack().run(model, inputs, StackConfig(level="function"))
    assert blamed(graph.judge(model, inputs, run.captured)) == []
    report = triage.triage(model, inputs, TfStack(options=("auto_mixed_precision_onednn_bfloat16",)))
    assert report.blame == "compiler" and report.culprit.startswith("pass auto_mixed_precision_onednn_bfloat16")
    with pytest.raises(ValueError, match="is not a SavedModel folder"):
        onnx_from_tensorflow(tmp_path / "missing")
