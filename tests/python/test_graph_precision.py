"""Precision bisection (docs/GRAPH.md, "Precision"): which nodes must run in float32 for a model's
outputs to meet a target when the rest runs in bfloat16 or float16. Well-conditioned models need
nothing raised; a residual stream carrying a large offset, which the layer norms subtract again,
needs the stream and the norms kept high on a stack that stores them rounded; a cancellation
needs its products and the difference; a kernel beyond its own bound stops the search as a
defect; an unreachable target says so."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import opval
from opval import graph, precision
from opval.graph_stacks import BackendStack, OrtStack, _value_types

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from models import cnn, mlp, transformer_block  # noqa: E402

BF16, F16, F32 = onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT


def _offset_block():
    """The transformer block with a final layer norm, its residual stream offset by 64."""
    return transformer_block(np.float32, final_norm=True, input_offset=64.0)


def _outputs_ratio(original, mixed, inputs, stack, low_type: int) -> float:
    """The outputs of `mixed` on `stack`, in units of the default target, against the fp64
    reference of `original`: computed here, apart from the search."""
    exact = graph.reference(original, inputs).values
    run = stack.run(mixed, inputs, stack.config)
    tol = precision.Tolerance()
    return max(tol.ratio(run.outputs[n], exact[n], low_type) for n in graph.load(original).output_names)


def test_mixed_precision_types_each_node_as_chosen_and_casts_where_values_cross():
    model, inputs = transformer_block(np.float32)
    mixed = precision.mixed_precision(model, "bfloat16", {"ln1", "scores"})
    types = _value_types(mixed)
    assert types["ln1"] == F32 and types["scores"] == F32
    assert types["proj_q"] == BF16 and types["residual2"] == BF16
    assert types["split_q"] == BF16 and types["heads_q"] == BF16  # a reshape moves values in their type
    assert types["x"] == F32  # graph inputs keep their type: the same inputs run it
    casts = {n.name: n for n in mixed.graph.node if n.op_type == "Cast"}
    assert "x__bfloat16_cast" in casts  # x feeds low nodes (residual1) through one Cast
    assert "heads_q__float32_cast" in casts  # scores, kept high, reads a low value
    assert "w_q__bfloat16" in {t.name for t in mixed.graph.initializer}  # weights converted offline
    converted = {t.name: t for t in mixed.graph.initializer}["w_q__bfloat16"]
    w_q = numpy_helper.to_array({t.name: t for t in model.graph.initializer}["w_q"])
    assert np.array_equal(numpy_helper.to_array(converted).astype(np.float32),
                          w_q.astype(ml_dtypes.bfloat16).astype(np.float32))
    values, _ = graph.run_on_backend(mixed, inputs, "sim")  # opval reads and runs it
    assert values["residual2"].shape == (2, 16, 32)
    with pytest.raises(ValueError, match="no node 'reshape_me' whose precision can be chosen"):
        precision.mixed_precision(model, "bfloat16", {"reshape_me"})
    with pytest.raises(ValueError, match="unknown floating-point type 'bf17'"):
        precision.mixed_precision(model, "bf17")


def _one_path(nodes, inputs, outputs, initializers=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_unnamed_and_repeated_names_are_named_as_opval_names_them():
    """An exporter may leave nodes unnamed: they are candidates all the same, by the name
    opval's reader gives them, so the search cannot find nothing to lower and call it done."""
    x = helper.make_tensor_value_info("x", F32, [4, 8])
    model = _one_path([helper.make_node("MatMul", ["x", "w"], ["a"]), helper.make_node("Relu", ["a"], ["b"], name="r"),
                       helper.make_node("Tanh", ["b"], ["y"], name="r")], [x], [helper.make_tensor_value_info("y", F32, [4, 8])],
                      [numpy_helper.from_array(np.eye(8, dtype=np.float32), "w")])
    assert precision.candidates(model) == ["MatMul#0", "r", "r#2"]
    assert [n["name"] for n in graph.info(precision.named_nodes(model))] == ["MatMul#0", "r", "r#2"]
    types = _value_types(precision.mixed_precision(model, "bfloat16", {"r#2"}))
    assert types["a"] == BF16 and types["b"] == BF16 and types["y"] == F32


def test_explicit_casts_and_mixed_inputs_keep_their_meaning():
    """CastLike casts to its second input's type as the model has it, even when that value now
    runs low; a node that moves values of two types (Concat) works in the wider one, so a value
    kept high is not rounded on its way to a high consumer."""
    x = helper.make_tensor_value_info("x", F32, [2, 4])
    nodes = [helper.make_node("Relu", ["x"], ["low"], name="low"), helper.make_node("Tanh", ["x"], ["high"], name="high"),
             helper.make_node("Concat", ["low", "high"], ["both"], name="both", axis=0),
             helper.make_node("CastLike", ["both", "high"], ["like"], name="like"),
             helper.make_node("Add", ["like", "like"], ["y"], name="y")]
    model = _one_path(nodes, [x], [helper.make_tensor_value_info("y", F32, [4, 4])])
    mixed = precision.mixed_precision(model, "bfloat16", {"high", "y"})
    types = _value_types(mixed)
    assert types["low"] == BF16 and types["high"] == F32 and types["both"] == F32 and types["like"] == F32
    like = next(n for n in mixed.graph.node if n.op_type == "CastLike")
    assert like.input[1] == "high"  # the high value itself: no Cast needed, the target still float32
    mixed_low = precision.mixed_precision(model, "bfloat16", {"y"})
    like_low = next(n for n in mixed_low.graph.node if n.op_type == "CastLike")
    assert like_low.input[1] == "high__float32" and _value_types(mixed_low)["like"] == F32
    graph.run_on_backend(mixed_low, {"x": np.ones((2, 4), np.float32)}, "sim")  # it reads and runs


def test_a_node_reading_one_value_twice_is_rounded_around_once():
    x = helper.make_tensor_value_info("x", F32, [4])
    model = _one_path([helper.make_node("Mul", ["x", "x"], ["y"], name="square")], [x],
                      [helper.make_tensor_value_info("y", F32, [4])])
    inputs = {"x": np.array([1.0, 1 + 2 ** -10, 3.3, -7.1], np.float32)}
    rounded = graph.reference(precision.rounded_around(model, "square", "bfloat16"), inputs).values["y"]
    low = inputs["x"].astype(ml_dtypes.bfloat16).astype(np.float64)
    assert np.array_equal(rounded, (low * low).astype(ml_dtypes.bfloat16).astype(np.float64))


def test_rounding_one_node_alone_is_exactly_its_operands_stored_low():
    """The contribution of a node is the fp64 reference with only that node's operands rounded:
    for the final node, its output rounded to bfloat16, nothing else."""
    model, inputs = mlp(np.float32)
    rounded = graph.reference(precision.rounded_around(model, "probs", "bfloat16"), inputs).values
    exact = graph.reference(model, inputs).values
    logits = exact["head"].astype(ml_dtypes.bfloat16).astype(np.float64)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    expected = (e / e.sum(axis=-1, keepdims=True)).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(rounded["probs"], expected)
    c = precision.contributions(model, inputs, "bfloat16")
    assert set(c) == set(precision.candidates(model)) and all(0 < v < 1 for v in c.values()), c


@pytest.mark.parametrize("low", ["float16", "bfloat16"])
@pytest.mark.parametrize("build", [mlp, cnn, transformer_block], ids=lambda f: f.__name__)
def test_well_conditioned_models_need_nothing_kept_high(build, low):
    model, inputs = build(np.float32)
    report = precision.bisect(model, inputs, BackendStack("sim"), low=low)
    assert report.found and report.keep_high == [] and report.runs == 1, report.markdown()
    assert 0 < report.all_low_ratio < 1
    assert "every node can run in" in report.summary()


def test_a_residual_stream_with_a_large_offset_keeps_the_stream_and_the_norms_high(tmp_path):
    """sim stores every value in its node's type: the residual adds round the offset stream to
    bfloat16 (values near 64 are 0.5 apart there: roundings up to a quarter of their spread)
    and each layer norm rounds its input, so these five must stay in float32 — and each of them
    must: tried back in bfloat16 alone, the outputs miss the target. The rest, attention and
    the MLP, run in bfloat16."""
    model, inputs = _offset_block()
    stack = BackendStack("sim")
    report = precision.bisect(model, inputs, stack, low="bfloat16")
    kept = {k["node"] for k in report.keep_high}
    assert report.found and kept == {"residual1", "residual2", "ln1", "ln2", "ln_f"}, report.markdown()
    assert report.all_low_ratio > 1 and report.final_ratio <= 1
    assert report.runs <= 2 + 5 + len(kept), report.runs  # two frames, halving 17 candidates, the pruning
    # Checked apart from the search: the model it found meets the target, and none of its kept
    # nodes can go back to bfloat16 alone.
    assert _outputs_ratio(model, report.model, inputs, stack, BF16) <= 1
    for node in kept:
        back = precision.mixed_precision(model, "bfloat16", kept - {node})
        assert _outputs_ratio(model, back, inputs, stack, BF16) > 1, node
    path = tmp_path / "mixed.onnx"
    report.save_model(str(path))
    saved = onnx.load(path)
    assert _value_types(saved)["ln_f"] == F32 and _value_types(saved)["ff_up"] == BF16
    records = report.records()
    assert records[-1]["record"] == "precision" and set(records[-1]["keep_high"]) == kept
    assert {r["node"] for r in records if r["record"] == "precision_node" and r["keep_high"]} == kept


def test_onnx_runtime_in_float16_keeps_only_the_norms_high():
    """ONNX Runtime at `all` fuses each residual Add into the layer norm that reads it
    (SkipLayerNormalization), which never stores the sum rounded: on its float16 kernels only
    the layer norms, which round their input to float16, must stay in float32."""
    model, inputs = _offset_block()
    report = precision.bisect(model, inputs, OrtStack(), low="float16")
    assert report.found and {k["node"] for k in report.keep_high} == {"ln1", "ln2", "ln_f"}, report.markdown()


def _cancellation():
    """y = x·W1 − x·W2 with W2 within 1e-3 of W1 (test_graph_triage's ill-conditioned model)."""
    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((64, 16)).astype(np.float32)
    w2 = (w1 * (1 + 1e-3 * rng.standard_normal(w1.shape))).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"], name="a"), helper.make_node("MatMul", ["x", "w2"], ["b"], name="b"),
             helper.make_node("Sub", ["a", "b"], ["y"], name="difference")]
    g = helper.make_graph(nodes, "cancel", [helper.make_tensor_value_info("x", F32, [8, 64])],
                          [helper.make_tensor_value_info("y", F32, [8, 16])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    return (helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]),
            {"x": rng.standard_normal((8, 64)).astype(np.float32)})


def test_a_cancellation_needs_its_products_and_the_difference_high():
    model, inputs = _cancellation()
    report = precision.bisect(model, inputs, BackendStack("sim"), low="bfloat16")
    assert report.found and {k["node"] for k in report.keep_high} == {"a", "b", "difference"}, report.markdown()
    assert report.all_low_ratio > 10


def test_an_unreachable_target_says_so():
    model, inputs = _offset_block()
    report = precision.bisect(model, inputs, BackendStack("sim"), low="bfloat16", tolerance="ulps=0.0001")
    assert not report.found and report.keep_high == [] and report.model is None
    assert "even with every node in float32" in report.summary()
    with pytest.raises(ValueError, match="nothing to save"):
        report.save_model("unused.onnx")


def _bf16_accumulating_matmul(a, b):
    """A bfloat16 matmul kernel that keeps its running sums in bfloat16 (a planted bug: the
    contract promises float32 accumulation)."""
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], ml_dtypes.bfloat16)
    for k in range(a.shape[-1]):
        acc = (acc.astype(np.float32) + a[..., :, k:k + 1].astype(np.float32) * b[..., k:k + 1, :].astype(np.float32)
               ).astype(ml_dtypes.bfloat16)
    return acc


def test_a_kernel_beyond_its_own_bound_is_a_defect_not_a_precision_need():
    model, inputs = _offset_block()
    bad = opval.kernel_backend("matmul", _bf16_accumulating_matmul, contracts="bf16:f32:bf16",
                               supports=lambda p: True if (p.get("n"), p.get("k")) == (32, 64) else "another shape",
                               name="bf16_accumulating")
    report = precision.bisect(model, inputs, BackendStack(bad), low="bfloat16")
    assert not report.found and report.defects == ["ff_down"], report.markdown()
    assert "a defect, not a precision need" in report.summary()


@pytest.mark.parametrize("text,parsed", [("", precision.Tolerance()), ("ulps=4", precision.Tolerance(ulps=4.0)),
                                         ("rtol=1e-2,atol=1e-3", precision.Tolerance(rtol=1e-2, atol=1e-3)),
                                         ("atol=0.5", precision.Tolerance(rtol=0.0, atol=0.5))])
def test_tolerances_parse(text, parsed):
    assert precision.Tolerance.parse(text) == parsed


@pytest.mark.parametrize("text,message", [("ulp=4", "give ulps=K"), ("ulps=x", "'x' is not a number"),
                                          ("ulps=4,rtol=1", "give one of them"), ("rtol=-1", "non-negative")])
def test_bad_tolerances_are_one_error(text, message):
    with pytest.raises(ValueError, match=message):
        precision.Tolerance.parse(text)


def test_an_elementwise_tolerance_is_relative_to_each_element():
    tol = precision.Tolerance.parse("rtol=0.01,atol=0.001")
    ref = np.array([1.0, 100.0, 0.0])
    assert tol.ratio(np.array([1.01, 101.0, 0.001]), ref, BF16) == pytest.approx(1.0, rel=1e-9)
    assert tol.ratio(np.array([1.0, 100.0, 0.002]), ref, BF16) == pytest.approx(2.0)
    assert tol.ratio(np.array([1.0, np.nan, 0.0]), ref, BF16) == float("inf")


@pytest.mark.parametrize("tol", [precision.Tolerance(), precision.Tolerance(rtol=0.01)], ids=["ulps", "rtol"])
def test_nan_and_infinity_are_compared_by_place_and_sign(tol):
    ref = np.array([np.nan, 1.0, np.inf, -np.inf])
    assert tol.ratio(ref.copy(), ref, BF16) == 0.0  # the same NaN places, the same infinities
    assert tol.ratio(np.array([1.0, np.nan, np.inf, -np.inf]), ref, BF16) == float("inf")  # NaNs elsewhere
    assert tol.ratio(np.array([np.nan, 1.0, -np.inf, -np.inf]), ref, BF16) == float("inf")  # a sign flipped
    assert tol.ratio(np.array([np.nan, np.inf, np.inf, -np.inf]), ref, BF16) == float("inf")  # inf for a finite
    assert tol.ratio(np.zeros(0), np.zeros(0), BF16) == 0.0
    assert tol.worst({"y": ref}, {"y": ref, "z": ref}, ["y", "z"], BF16) == float("inf")  # an output missing


def test_a_tolerance_is_ulps_or_rtol_and_atol():
    assert precision.Tolerance().ulps == precision.DEFAULT_ULPS
    assert precision.Tolerance(rtol=0.01) == precision.Tolerance(ulps=None, rtol=0.01, atol=0.0)
    with pytest.raises(ValueError, match="give one of them"):
        precision.Tolerance(ulps=4, rtol=0.01)


def _opval_cli(*args):
    cli = Path(__file__).resolve().parents[2] / "build" / "opval"
    return subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=600)


def test_graph_precision_from_the_command_line(tmp_path):
    model, inputs = _offset_block()
    onnx.save(model, tmp_path / "block.onnx")
    np.savez(tmp_path / "inputs.npz", **inputs)
    done = _opval_cli("graph", "precision", str(tmp_path / "block.onnx"), "--inputs", str(tmp_path / "inputs.npz"),
                      "--stack", "sim", "--type", "bf16", "--save", str(tmp_path / "mixed.onnx"), "--jsonl",
                      str(tmp_path / "p.jsonl"), "--markdown", str(tmp_path / "p.md"))
    assert done.returncode == 0, done.stderr
    assert "5 of 17 nodes must run in float32" in done.stdout and "| ln_f | LayerNormalization |" in done.stdout
    assert "opval graph precision: run 1:" in done.stderr  # progress
    assert (tmp_path / "mixed.onnx").exists() and (tmp_path / "p.md").read_text() in done.stdout
    assert '"record": "precision"' in (tmp_path / "p.jsonl").read_text()
    unreachable = _opval_cli("graph", "precision", str(tmp_path / "block.onnx"), "--inputs", str(tmp_path / "inputs.npz"),
                             "--stack", "sim", "--tolerance", "ulps=0.0001", "--quiet")
    assert unreachable.returncode == 1 and unreachable.stderr == ""


@pytest.mark.parametrize("args,message", [
    (["--type", "bf17"], "unknown floating-point type 'bf17'"),
    (["--type", "f32"], "nothing to choose"),
    (["--tolerance", "ulps"], "give ulps=K"),
    (["--stack", "sim,ort"], "graph precision takes one --stack"),
])
def test_graph_precision_refuses_bad_input_in_one_line(tmp_path, args, message):
    onnx.save(mlp(np.float32)[0], tmp_path / "mlp.onnx")
    done = _opval_cli("graph", "precision", str(tmp_path / "mlp.onnx"), "--stack", "sim", *args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
