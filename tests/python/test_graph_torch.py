"""PyTorch in graph validation (docs/GRAPH.md, "PyTorch"): ONNX lowered node for node to
torch (eager equals ONNX Runtime's unoptimized run, ONNX's semantics of the structural ops
kept), torch.compile as a triage stack (correct compiles blame nothing; an Inductor custom
post-grad pass that rewrites a pattern wrongly is found by torch's compiler bisector and
named), and torch.export programs as models."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper

from opval import graph, graph_stacks, triage
from opval.graph_stacks import StackConfig, ort_run

torch = pytest.importorskip("torch")

from opval import torch_export, torch_lowering  # noqa: E402
from opval.torch_stack import TorchCompileStack  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
import faults  # noqa: E402
import models  # noqa: E402
import torch_models  # noqa: E402
from lowering_testing import blamed, expect_every_value_equals_onnx_runtime  # noqa: E402


@pytest.mark.parametrize("build", [models.mlp, models.cnn, models.transformer_block,
                                   lambda dtype: models.transformer_block(dtype, gelu="erf_chain")],
                         ids=["mlp", "cnn", "transformer_block", "transformer_erf_chain"])
def test_lowered_model_in_eager_torch_equals_onnx_runtime_unoptimized(build):
    model, inputs = build(np.float32)
    expect_every_value_equals_onnx_runtime(torch_lowering.lower(model).run(inputs), model, inputs)


def _one_node(op: str, inputs: dict, initializers: dict, opset: int = 18, **attrs):
    """A one-node model: `inputs` as graph inputs, `initializers` as constants, output 'y'."""
    node = helper.make_node(op, list(inputs) + list(initializers), ["y"], name="n", **attrs)
    graph_proto = helper.make_graph(
        [node], op, [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                     for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(next(iter(inputs.values())).dtype), None)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", opset)])


X = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6) / 7
STRUCTURAL = [
    ("Slice", {"starts": np.array([4, -1]), "ends": np.array([0, -7]), "axes": np.array([1, 2]),
               "steps": np.array([-2, -2])}, {}),
    ("Slice", {"starts": np.array([1]), "ends": np.array([100]), "axes": np.array([-1])}, {}),
    ("Gather", {"indices": np.array([[-1, 0], [2, -3]])}, {"axis": 1}),
    ("Flatten", {}, {"axis": -1}),
    ("Transpose", {}, {}),
    ("Squeeze", {"axes": np.array([0])}, {}),
    ("Unsqueeze", {"axes": np.array([-1, 0])}, {}),
    ("Expand", {"shape": np.array([3, 1, 1, 6])}, {}),
    ("Reshape", {"shape": np.array([0, -1])}, {}),
    ("ReduceMean", {"axes": np.array([-1])}, {"keepdims": 0}),
    ("ReduceMax", {}, {}),
]


@pytest.mark.parametrize("op,operands,attrs", STRUCTURAL, ids=[f"{op}{i}" for i, (op, _, _) in enumerate(STRUCTURAL)])
def test_lowering_keeps_onnx_semantics(op, operands, attrs):
    x = X[:1] if op == "Squeeze" else X
    model = _one_node(op, {"x": x}, {k: v.astype(np.int64) for k, v in operands.items()}, **attrs)
    got = torch_lowering.lower(model).run({"x": x})["y"]
    want = ort_run(model, {"x": x}, level="disable_all").outputs["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_softmax_of_an_old_opset_is_over_the_flattened_trailing_axes():
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    model = _one_node("Softmax", {"x": x}, {}, opset=11, axis=1)
    np.testing.assert_allclose(torch_lowering.lower(model).run({"x": x})["y"],
                               ort_run(model, {"x": x}, level="disable_all").outputs["y"], rtol=1e-6)


def test_an_op_without_a_lowering_is_named():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match=r"node 'n' \(Einsum\) has no PyTorch lowering"):
        torch_lowering.lower(_one_node("Einsum", {"x": x}, {}, equation="ij->ji"))


def test_stack_specs_name_the_levels_and_threads():
    stack = graph_stacks.stack_from_spec("torch_compile:aot_eager:threads=1")
    assert isinstance(stack, TorchCompileStack) and stack.config == StackConfig(level="aot_eager", threads=1)
    assert stack.levels == ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
    assert stack.command_line(stack.config) == ["--stack", "torch_compile:aot_eager:threads=1"]
    with pytest.raises(ValueError, match="unknown option 'o3'"):
        graph_stacks.stack_from_spec("torch_compile:o3")


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_correct_compiles_blame_nothing(dtype):
    model, inputs = models.mlp(dtype)
    report = triage.triage(model, inputs, TorchCompileStack())
    assert report.first is None, report.markdown()
    assert "legitimate rounding" in report.evidence[0].outcome


def test_observing_every_value_compiles_every_level_and_keeps_the_plain_outputs():
    model, inputs = models.cnn(np.float32)
    stack = TorchCompileStack()
    for level in stack.levels[:-1]:
        run = stack.run(model, inputs, StackConfig(level=level))
        assert set(run.captured) >= {o for n in model.graph.node for o in n.output}
        assert blamed(graph.judge(model, inputs, run.captured)) == []
        np.testing.assert_array_equal(run.captured["fc"], run.outputs["fc"])


def test_an_inductor_pass_rewriting_a_pattern_wrongly_is_bisected_to_that_pass():
    model, inputs = models.mlp(np.float32)
    wrong = faults.inductor_pass("addmm_bias_misscaled", faults.addmm_bias_misscaled)
    report = triage.triage(model, inputs, TorchCompileStack(inductor_config={"post_grad_custom_post_pass": wrong}))
    assert report.first["node"] == "head" and report.blame == "compiler", report.markdown()
    assert "post_grad_custom_post_pass" in report.culprit and "post_grad_passes" in report.culprit
    experiments = [e.experiment for e in report.evidence]
    assert any("post_grad_passes turned off" in e for e in experiments)
    bisector_runs = sum(e.startswith("compiler bisector") for e in experiments)
    assert bisector_runs >= 8 and report.runs > bisector_runs  # every run of the bisector is counted
    # the same pass with the level below, where it does not run: eager passes
    assert any(e.experiment.startswith("rerun at eager") and "passes locally" in e.outcome for e in report.evidence)


def test_a_torch_export_program_becomes_the_graph_ir_with_the_fx_names():
    module, args = torch_models.transformer_block()
    model, inputs = torch_export.to_onnx(module, args)
    nodes = graph.info(model)
    assert [n["role"] for n in nodes if n["role"] == "unsupported"] == []
    outputs = {o for n in nodes for o in n["outputs"]}
    assert {"layer_norm", "layer_norm_1", "gelu", "softmax"} <= outputs
    run = ort_run(model, inputs, level="all")
    assert blamed(graph.judge(model, inputs, run.captured)) == []
    with torch.no_grad():
        np.testing.assert_allclose(run.outputs[model.graph.output[0].name], module(*args).numpy(), rtol=1e-4, atol=1e-5)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "opval", *args], capture_output=True, text=True, check=False)


def test_a_saved_program_runs_from_the_command_line(tmp_path):
    module, args = torch_models.cnn()
    path = tmp_path / "cnn.pt2"
    torch.export.save(torch.export.export(module, args), str(path))
    done = _cli("graph", "run", str(path), "--stack", "ort:all")
    assert done.returncode == 0, done.stderr
    assert "no node blamed" in done.stdout and "conv2d" in done.stdout
    (tmp_path / "bad.pt2").write_bytes(b"not a program")
    bad = _cli("graph", "run", str(tmp_path / "bad.pt2"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a torch.export program" in bad.stderr


def test_runtime_options_change_the_kernels_and_blame_nothing():
    """torch's dispatch options: ATen's oneDNN kernels off (its native convolution instead) and
    channels-last inputs (NHWC strides) each run the CNN correctly and change what runs; a
    stack's name sets them."""
    model, inputs = models.cnn(np.float32)
    stack = graph_stacks.stack_from_spec("torch_compile:aot_eager:mkldnn=off:layout=channels_last")
    assert stack.config.runtime == (("layout", "channels_last"), ("mkldnn", "off"))
    assert stack.command_line(stack.config) == ["--stack", "torch_compile:aot_eager:layout=channels_last:mkldnn=off"]
    runs = {}
    for option in ("", ":mkldnn=off", ":layout=channels_last"):
        config = graph_stacks.stack_from_spec(f"torch_compile:aot_eager{option}").config
        runs[option] = stack.run(model, inputs, config).captured
        assert blamed(graph.judge(model, inputs, runs[option])) == [], option
    # another kernel: ATen's native convolution rounds differently from oneDNN's
    assert not np.array_equal(runs[""]["conv1"], runs[":mkldnn=off"]["conv1"])
    import torch

    from opval.torch_stack import _laid_out

    feeds = [torch.ones(2, 3, 4, 5), torch.ones(2, 3)]
    laid_out = _laid_out(feeds, graph_stacks.stack_from_spec("torch_compile:layout=channels_last").config)
    assert laid_out[0].is_contiguous(memory_format=torch.channels_last) and not feeds[0].is_contiguous(
        memory_format=torch.channels_last) and laid_out[1] is feeds[1]
    assert torch._C._get_mkldnn_enabled()  # the switch is put back
    with pytest.raises(ValueError, match="layout= takes contiguous, channels_last, not 'nhwc'"):
        graph_stacks.stack_from_spec("torch_compile:layout=nhwc")
