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
from opval.graph_stacks import StackConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from models import cnn, mlp, transformer_block  # noqa: E402
from faults import (DispatchingStack, RewritingOrt, bias_misfolded, f16_accumulating_matmul,  # noqa: E402
                    gelu_to_tanh, gemm_scale_misfolded)

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


def test_a_backend_stack_records_which_kernel_ran_each_node():
    """oneDNN says which implementation ran (its impl_info_str): the stack's run records it per
    node, as ONNX Runtime's profile is recorded, for the records and the evidence."""
    model, inputs = mlp(np.float32)
    run = graph_stacks.BackendStack("onednn").run(model, inputs, StackConfig())
    assert run.kernels["fc0"].startswith("onednn: oneDNN ") and "fpmath" in run.kernels["fc0"], run.kernels
    assert _blamed(graph.judge(model, inputs, run.captured)) == []


@pytest.mark.parametrize("level", graph_stacks.ORT_LEVELS)
@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_onnx_runtime_at_each_level_blames_nothing(build, level):
    model, inputs = build(np.float32)
    run = graph_stacks.ort_run(model, inputs, level=level)
    judgements = graph.judge(model, inputs, run.captured)
    assert _blamed(judgements) == [], [(j["node"], j["local"].reason) for j in judgements if j["local"] and j["local"].failed]
    # A node whose inputs a fused node hides is judged with the nodes it hides (a region), or
    # says why not; a value only inside a fused node is said, not judged: the rest is.
    hidden = [j for j in judgements if j["local"] is None]
    assert all("fused" in j["note"] for j in hidden), [(j["node"], j["note"]) for j in hidden]
    regions = [j for j in judgements if j["local"] is not None and "region" in j["note"]]
    assert all(not j["captured"] for j in regions)
    # Every node whose value the stack gave is judged; how many that is depends on the fusions
    # this CPU's kernels get (NCHWc blocks differ between AVX2 and AVX-512), the graph's output not.
    assert all(j["local"] is not None for j in judgements if j["captured"])
    assert judgements[-1]["local"] is not None


@pytest.mark.parametrize("build,node,shape", [(mlp, "fc1", (8, 64, 64)), (transformer_block, "ff_down", (16, 32, 64))],
                         ids=["mlp", "transformer_block"])
def test_a_kernel_accumulating_in_float16_is_blamed_alone(build, node, shape):
    model, inputs = build(np.float32)
    m, n, k = shape
    kernel = opval.kernel_backend(
        "matmul", f16_accumulating_matmul, contracts="f32",
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


def _tf32(x: np.ndarray) -> np.ndarray:
    """float32 rounded to tf32's 10-bit mantissa (to nearest even)."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    bits = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def _tf32_matmul(a, b, *bias):
    """A matmul with tf32 math: the inputs rounded to tf32, products summed in float64 and
    rounded to float32 (legitimate where the stack documents tf32, not under float32's contract)."""
    out = (_tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)).astype(np.float32)
    return out + (bias[0].astype(np.float32) if bias else np.float32(0))


def test_a_contract_override_judges_a_node_under_the_precision_the_stack_documents():
    model, inputs = mlp(np.float32)
    kernel = opval.kernel_backend("matmul", _tf32_matmul, contracts="f32", name="tf32_math")
    values, ran_on = graph.run_on_backend(model, inputs, kernel)
    assert ran_on["fc1"] == "python:tf32_math"
    assert "fc1" in _blamed(graph.judge(model, inputs, values))  # tf32 math breaks float32's contract
    op_type = next(n["op_type"] for n in graph.info(model) if n["name"] == "fc1")
    for contracts in ({"fc1": "f32@tf32:f32:f32"}, {op_type: "f32@tf32:f32:f32"}):
        judged = graph.judge(model, inputs, values, contracts=contracts)
        fc1 = next(j for j in judged if j["node"] == "fc1")
        assert not fc1["local"].failed and "tf32" in fc1["local"].descriptor, contracts
    # a node's name wins over its op type
    judged = graph.judge(model, inputs, values, contracts={op_type: "f32@tf32:f32:f32", "fc1": "f32"})
    assert "fc1" in _blamed(judged)
    descriptor, _, _ = graph.node_case(model, "fc1", values, contracts={"fc1": "f32@tf32:f32:f32"})
    assert "tf32" in descriptor


@pytest.mark.parametrize("contracts,message", [
    ({"no_such_node": "f32@tf32:f32:f32"}, "no node of the model is named 'no_such_node'"),
    ({"fc1": "f16:f32:f16"}, "an override may change only the math and accumulation"),
    ({"fc1": "f32:f32:nonsense"}, "contract override 'f32:f32:nonsense'"),
], ids=["unknown key", "storage changed", "malformed"])
def test_a_bad_contract_override_is_one_error_naming_it(contracts, message):
    model, inputs = mlp(np.float32)
    with pytest.raises(ValueError, match=message):
        graph.judge(model, inputs, graph.reference(model, inputs).values, contracts=contracts)


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


# -- triage: blame the compiler, the runtime or the kernel ------------------------------------
# The faults are planted through test-only stacks (examples/graph/faults.py) that triage sees
# only through the Stack interface (run, fired_passes, levels, thread_choices), never inside.

from opval import triage  # noqa: E402
from opval.graph_stacks import OrtStack  # noqa: E402


def test_a_fault_inside_a_fusion_is_blamed_on_the_region_and_bisected_to_its_pass():
    """At extended and above ONNX Runtime fuses fc0, bias0 and relu0 into one node, hiding fc0
    and bias0: relu0 is judged with them, recomputed from the fused node's inputs, against their
    bounds carried to its output; a wrongly folded bias inside is found there."""
    model, inputs = mlp(np.float32)
    report = triage.triage(model, inputs, RewritingOrt("BiasFolding", bias_misfolded("b0")))
    assert report.first["node"] == "relu0", report.markdown()
    assert "fused region" in report.first["reason"]
    assert report.blame == "compiler" and report.culprit == "pass BiasFolding at level extended", report.markdown()
    # Correct, the same region passes: its bound is the nodes' own, carried along.
    run = graph_stacks.ort_run(model, inputs, level="all")
    relu0 = next(j for j in graph.judge(model, inputs, run.captured) if j["node"] == "relu0")
    assert not relu0["captured"] and relu0["local"].state == "PASSED" and "fc0, bias0, relu0" in relu0["note"]


def test_onnx_runtime_approximating_an_erf_gelu_is_blamed_on_its_pass():
    """A real compiler fault: ONNX Runtime's optimization.enable_gelu_approximation turns the
    exact gelu chain (Div, Erf, Add, Mul, Mul at opset 17), which GeluFusionL2 fuses to Gelu,
    into FastGelu (tanh form). The fused region is blamed, and of the passes that fired the
    approximation — not the fusion it builds on — is named."""
    model, inputs = transformer_block(np.float32, gelu="erf_chain")
    stack = OrtStack(session_config={"optimization.enable_gelu_approximation": "1"})
    assert "GeluApproximation" in stack.fired_passes(model, "all")
    report = triage.triage(model, inputs, stack)
    assert report.first["node"] == "gelu" and report.first["region"] == ["gelu_div", "gelu_erf", "gelu_add", "gelu_mul", "gelu"]
    assert report.blame == "compiler" and report.culprit == "pass GeluApproximation at level extended", report.markdown()
    # the levels and the halving of the passes (8 at most), then 5 dispatches and the kernel's run
    assert report.runs <= 14


@pytest.mark.parametrize("level", graph_stacks.ORT_LEVELS)
def test_onnx_runtime_fusing_an_erf_gelu_exactly_blames_nothing(level):
    model, inputs = transformer_block(np.float32, gelu="erf_chain")
    run = graph_stacks.ort_run(model, inputs, level=level)
    judgements = graph.judge(model, inputs, run.captured)
    assert _blamed(judgements) == []
    gelu = next(j for j in judgements if j["node"] == "gelu")
    assert gelu["local"] is not None and (gelu["captured"] or "region" in gelu["note"])


# The node of each model that each fault is planted in, and the matmul's (m, n, k).
_FAULTY_MATMUL = {"mlp": ("fc1", (8, 64, 64)), "cnn": ("fc", (2, 10, 16)), "transformer_block": ("ff_down", (16, 32, 64))}
_REWRITES = {"mlp": ("head", "GemmScaleFolding", gemm_scale_misfolded("head")),
             "cnn": ("fc", "GemmScaleFolding", gemm_scale_misfolded("fc")),
             "transformer_block": ("gelu", "GeluTanhApproximation", gelu_to_tanh)}


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_triage_blames_the_compiler_pass_that_rewrote_a_node(build):
    model, inputs = build(np.float32)
    node, pass_name, rewrite = _REWRITES[build.__name__]
    report = triage.triage(model, inputs, RewritingOrt(pass_name, rewrite))
    assert report.first["node"] == node, report.markdown()
    assert report.blame == "compiler" and report.culprit == f"pass {pass_name} at level extended", report.markdown()
    hypotheses = [e.hypothesis for e in report.evidence]
    assert hypotheses[0] == "where" and {"compiler", "runtime", "kernel"} <= set(hypotheses)
    kernel = next(e for e in report.evidence if e.hypothesis == "kernel")
    assert kernel.conclusion == "cleared"  # with optimizations off the node passes alone
    assert 4 <= report.runs <= 15  # levels, then passes, halved (not one run per pass); 5 dispatches, the kernel


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_triage_blames_the_runtime_when_one_thread_count_dispatches_a_wrong_kernel(build):
    model, inputs = build(np.float32)
    node, shape = _FAULTY_MATMUL[build.__name__]
    report = triage.triage(model, inputs, DispatchingStack(shape))
    assert report.first["node"] == node, report.markdown()
    assert report.blame == "runtime" and "passes at 1" in report.culprit, report.markdown()


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_triage_blames_the_runtime_when_one_layout_dispatches_a_wrong_kernel(build):
    """A runtime option of the stack (the weights' layout) is a dispatch knob like the thread
    count: the node fails at column_major at either thread count and passes at row_major."""
    model, inputs = build(np.float32)
    node, shape = _FAULTY_MATMUL[build.__name__]
    report = triage.triage(model, inputs, DispatchingStack(shape, fault="layout"))
    assert report.first["node"] == node and report.blame == "runtime", report.markdown()
    assert report.culprit == f"'{node}' fails at layout=column_major and passes at layout=row_major", report.markdown()
    runtime = {e.experiment: e.conclusion for e in report.evidence if e.hypothesis == "runtime"}
    assert runtime == {"rerun at default level, 1 thread, layout=column_major": "same failure",
                       "rerun at default level, 2 threads, layout=column_major": "same failure",
                       "rerun at default level, default threads": "implicated"}, runtime


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_onnx_runtime_runtime_options_blame_nothing_and_are_named_on_the_command_line(build):
    """ONNX Runtime's dispatch options — prepacked weights off (another MLAS kernel path), the
    memory arena and pattern planning off, parallel execution — run each model correctly, and
    a stack's name sets them."""
    model, inputs = build(np.float32)
    for option, value in (("prepacking", "off"), ("arena", "off"), ("execution", "parallel")):
        stack = graph_stacks.stack_from_spec(f"ort:all:{option}={value}")
        assert stack.config.runtime == ((option, value),) and stack.command_line(stack.config)[1] == \
            f"ort:all:{option}={value}"
        run = stack.run(model, inputs, stack.config)
        assert run.stack == f"ort:all:{option}={value}"
        assert _blamed(graph.judge(model, inputs, run.captured)) == [], option
    # what each option sets on ONNX Runtime's session
    import onnxruntime as ort

    session = graph_stacks._session(model.SerializeToString(), "all", None, (), None, None,
                                    runtime={"prepacking": "off", "arena": "off", "execution": "parallel"})
    options = session.get_session_options()
    assert options.get_session_config_entry("session.disable_prepacking") == "1"
    assert not options.enable_cpu_mem_arena and not options.enable_mem_pattern
    assert options.execution_mode == ort.ExecutionMode.ORT_PARALLEL


def test_a_runtime_option_is_checked_by_name_and_value():
    with pytest.raises(ValueError, match="prepacking= takes on, off, not 'maybe'"):
        graph_stacks.stack_from_spec("ort:prepacking=maybe")
    with pytest.raises(ValueError, match=r"unknown option 'arenas=off' \(levels: .*; prepacking=on\|off; arena=on\|off"):
        graph_stacks.stack_from_spec("ort:arenas=off")
    default = graph_stacks.stack_from_spec("ort:prepacking=on")  # a default value is no option at all
    assert default.config == StackConfig(level="all")


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_triage_blames_the_kernel_that_fails_in_every_configuration(build):
    model, inputs = build(np.float32)
    node, shape = _FAULTY_MATMUL[build.__name__]
    report = triage.triage(model, inputs, DispatchingStack(shape, fault="always"))
    assert report.first["node"] == node and report.blame == "kernel", report.markdown()
    assert "bound" in report.first["reason"] and "m=" in report.first["descriptor"]
    runtime = [e for e in report.evidence if e.hypothesis == "runtime"]
    assert runtime and all(e.conclusion == "same failure" for e in runtime)


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_triage_of_correct_stacks_blames_nothing_and_says_why(build):
    model, inputs = build(np.float32)
    for stack in (OrtStack(), graph_stacks.BackendStack("sim")):
        report = triage.triage(model, inputs, stack)
        assert report.first is None and report.blame is None, report.markdown()
        assert report.runs == 1 and "within their bounds" in report.evidence[0].outcome


def test_triage_records_are_json_lines_per_node_then_the_verdict():
    import json

    model, inputs = mlp(np.float32)
    report = triage.triage(model, inputs, DispatchingStack(_FAULTY_MATMUL["mlp"][1], fault="always"))
    records = [json.loads(line) for line in report.jsonl().splitlines()]
    assert [r["record"] for r in records] == ["node"] * len(report.judgements) + ["triage"]
    assert records[-1]["blame"] == "kernel" and records[-1]["first"]["node"] == "fc1"
    failed = [r["node"] for r in records[:-1] if r["local"] and r["local"]["state"] == "FAILED"]
    assert failed == ["fc1"]
    assert "| kernel |" in report.markdown()


def _opval_cli(*args):
    import subprocess

    return subprocess.run([sys.executable, "-m", "opval", *args], capture_output=True, text=True, check=False)


def test_graph_run_and_triage_from_the_command_line(tmp_path):
    import json

    import onnx

    model, inputs = transformer_block(np.float32)
    path = tmp_path / "block.onnx"
    onnx.save(model, path)
    np.savez(tmp_path / "inputs.npz", **inputs)
    done = _opval_cli("graph", "run", str(path), "--stack", "ort:all,ort:disable_all:threads=1,sim",
                      "--inputs", str(tmp_path / "inputs.npz"), "--jsonl", str(tmp_path / "run.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("no node blamed") == 3 and "ort:disable_all:threads=1:" in done.stdout
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert {r["stack"] for r in records} == {"ort:all", "ort:disable_all:threads=1", "sim"}
    done = _opval_cli("graph", "triage", str(path), "--stack", "ort:extended", "--markdown", str(tmp_path / "t.md"))
    assert done.returncode == 0, done.stderr
    assert "no node is blamed" in done.stdout and "run 1: ort at extended" in done.stderr
    assert (tmp_path / "t.md").read_text() == done.stdout
    model, inputs = transformer_block(np.float32, gelu="erf_chain")
    onnx.save(model, tmp_path / "erf_gelu.onnx")
    done = _opval_cli("graph", "triage", str(tmp_path / "erf_gelu.onnx"), "--ort-config",
                      "optimization.enable_gelu_approximation=1", "--quiet", "--jsonl", str(tmp_path / "t.jsonl"))
    assert done.returncode == 1 and done.stderr == "", done.stderr
    assert "blame: compiler (pass GeluApproximation at level extended)" in done.stdout
    verdict = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[-1])
    assert verdict["blame"] == "compiler" and verdict["first"]["node"] == "gelu"


@pytest.mark.parametrize("args,message", [
    (["graph", "triage", "{bad}"], "opval: error: "),
    (["graph", "run", "{good}", "--stack", "ort:fastest"], "unknown option 'fastest'"),
    (["graph", "run", "{good}", "--stack", "no_such_backend"], "no_such_backend"),
    (["graph", "triage", "{good}", "--stack", "ort:all,sim"], "one --stack"),
    (["graph", "run", "{good}", "--inputs", "{bad}"], "opval reads arrays from .npy, .npz and ONNX TensorProto .pb"),
    (["graph", "run", "{good}", "--inputs", "{corrupt_npz}"], "corrupt.npz': it is no readable .npz archive"),
    (["graph", "precision", "{good}", "--inputs", "{f64_npz}"], "graph input 'x': the array is stored as '<f8'"),
    (["graph", "run", "{good}", "--ort-config", "no_equals_sign"], "KEY=VALUE"),
    (["graph", "precision", "{good}", "--reproducer", "x"], "unrecognized arguments: --reproducer x"),
    (["graph", "run"], "graph run: the following arguments are required: model"),
    (["graph", "run", "{good}", "--stack", "sim", "--ort-config", "a=1"], "takes no options"),
    (["graph", "run", "{good}", "--contract", "no_such_node=f32"], "no node of the model is named 'no_such_node'"),
    (["graph", "triage", "{good}", "--contract", "fc1=f16:f32:f16"], "may change only the math"),
])
def test_graph_commands_refuse_bad_input_in_one_line(tmp_path, args, message):
    import onnx

    good, bad = tmp_path / "mlp.onnx", tmp_path / "corrupt.onnx"
    onnx.save(mlp(np.float32)[0], good)
    bad.write_bytes(b"\x08\x07not a model at all\xff")
    (tmp_path / "corrupt.npz").write_bytes(b"PK\x03\x04 not a zip archive after all")
    np.savez(tmp_path / "f64.npz", x=np.ones((8, 32)))
    done = _opval_cli(*[a.format(good=good, bad=bad, corrupt_npz=tmp_path / "corrupt.npz", f64_npz=tmp_path / "f64.npz")
                        for a in args])
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert message in done.stderr and done.stderr.startswith("opval: error: ")


# -- the reproducer and the hand-off bundle ----------------------------------------------------

from opval import reproducer  # noqa: E402


def test_the_reproducer_of_a_fused_region_is_its_nodes_alone_and_fails_the_same_way(tmp_path):
    import onnx
    import tarfile

    model, inputs = transformer_block(np.float32, gelu="erf_chain")
    stack = OrtStack(session_config={"optimization.enable_gelu_approximation": "1"})
    report = triage.triage(model, inputs, stack)
    repro = reproducer.reproduce(model, inputs, stack, report, tmp_path / "repro")
    assert repro.reproduced and repro.nodes == ["gelu_div", "gelu_erf", "gelu_add", "gelu_mul", "gelu"]
    cut = onnx.load(tmp_path / "repro" / "repro.onnx")
    assert [n.name for n in cut.graph.node] == repro.nodes and [i.name for i in cut.graph.input] == ["ff_bias"]
    # The cut alone is triaged to the same pass: a regression test for the compiler team.
    again = triage.triage(cut, dict(np.load(tmp_path / "repro" / "inputs.npz")), stack)
    assert again.first["node"] == "gelu" and again.culprit == report.culprit
    assert "--ort-config optimization.enable_gelu_approximation=1" in repro.commands[0]
    with tarfile.open(repro.archive) as bundle:
        names = {Path(n).name for n in bundle.getnames()}
    assert {"repro.onnx", "inputs.npz", "expected.npz", "actual.npz", "triage.md", "evidence.jsonl",
            "environment.json", "README.md"} <= names
    assert "fails the same way" in (tmp_path / "repro" / "README.md").read_text()


def test_the_reproducer_of_a_kernel_fault_is_an_op_level_case_opval_judge_replays(tmp_path):
    model, inputs = mlp(np.float32)
    stack = DispatchingStack(_FAULTY_MATMUL["mlp"][1], fault="always")
    report = triage.triage(model, inputs, stack)
    repro = reproducer.reproduce(model, inputs, stack, report, tmp_path / "repro", archive=False)
    assert repro.reproduced and repro.nodes == ["fc1"] and repro.archive is None
    folder = tmp_path / "repro"
    descriptor = (folder / "case.txt").read_text().strip()
    assert descriptor == "matmul m=8 n=64 k=64 dt=f32:f32:f32"
    replay = opval.judge(descriptor, inputs=folder / "case_inputs.npz", outputs=folder / "case_outputs.npz")
    assert replay.failed and "beyond the bound" in replay.reason
    assert any(c.startswith("opval judge ") for c in repro.commands)


def test_a_cut_that_does_not_fail_alone_says_so():
    """A stack whose fault shows on the whole model only (its wrong kernel is dispatched only
    in a graph of more than one node): the cut passes, and the reproducer says it is not one."""
    model, inputs = mlp(np.float32)

    class _WholeModelOnly(DispatchingStack):
        def run(self, model, inputs, config):  # wrong only when run on the full model
            return super().run(model, inputs, config) if len(model.graph.node) > 1 else \
                DispatchingStack.run(self._correct, model, inputs, config)

    stack = _WholeModelOnly(_FAULTY_MATMUL["mlp"][1], fault="always")
    stack._correct = DispatchingStack((0, 0, 0))
    report = triage.triage(model, inputs, stack)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        repro = reproducer.reproduce(model, inputs, stack, report, Path(tmp) / "r", archive=False)
        assert not repro.reproduced
        assert "does not fail the same way" in (Path(tmp) / "r" / "README.md").read_text()


def test_graph_triage_writes_the_reproducer_from_the_command_line(tmp_path):
    import onnx

    model, _ = transformer_block(np.float32, gelu="erf_chain")
    onnx.save(model, tmp_path / "block.onnx")
    done = _opval_cli("graph", "triage", str(tmp_path / "block.onnx"), "--quiet", "--ort-config",
                      "optimization.enable_gelu_approximation=1", "--reproducer", str(tmp_path / "repro"))
    assert done.returncode == 1, done.stderr
    assert "reproducer: " in done.stdout and "fails the same way" in done.stdout
    assert (tmp_path / "repro.tar.gz").exists() and (tmp_path / "repro" / "repro.onnx").exists()


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"], ids=["f16", "bf16"])
@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__)
def test_correct_stacks_in_half_precision_blame_nothing(build, dtype):
    """f16 and bf16 models: each node's contract is its tensors' type (f16:f32:f16, ...), so
    half-precision rounding is explained, not blamed; ONNX Runtime's CPU provider runs the f16
    models (it has no bf16 kernels for these ops: it is not asked to)."""
    import ml_dtypes

    model, inputs = build(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    stacks = [graph_stacks.BackendStack("sim")] + ([OrtStack(), OrtStack(StackConfig(level="disable_all"))]
                                                   if dtype is np.float16 else [])
    for stack in stacks:
        report = triage.triage(model, inputs, stack)
        assert report.first is None, report.markdown()
        worst = max(j["accumulated_max_rel"] for j in report.judgements)
        assert worst > 1e-4  # half precision's error, accumulated and explained


def test_a_stack_refusing_the_model_is_one_error_line(tmp_path):
    import ml_dtypes
    import onnx

    onnx.save(mlp(ml_dtypes.bfloat16)[0], tmp_path / "mlp_bf16.onnx")
    done = _opval_cli("graph", "run", str(tmp_path / "mlp_bf16.onnx"), "--stack", "ort:all")
    assert done.returncode == 2 and done.stderr.startswith("opval: error: the stack failed: ")
    assert len(done.stderr.strip().splitlines()) == 1 and "bfloat16" not in done.stdout


def test_the_demonstration_runs_every_fault_as_planted(tmp_path):
    import subprocess

    demo = Path(__file__).resolve().parents[2] / "examples" / "graph" / "triage_demo.py"
    done = subprocess.run([sys.executable, str(demo), "--out", str(tmp_path), "--ci"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all as planted" in done.stdout and "WRONG" not in done.stdout
    # every blamed row's reproducer: 13 planted on ONNX Runtime and sim (per model a compiler
    # pass, a thread count, a layout and a kernel; the gelu approximation), one Inductor pass
    # (the CI subset), torch.compile's two real findings, IREE's bf16 demotion on each model and
    # its three real float16 findings, TensorFlow's bf16 mixed precision on each model
    assert done.stdout.count("fails the same way") == 25
    assert "pass erf (lowerings application" in done.stdout
    assert done.stdout.count("pass demote-contractions-to-bf16 at level O1") == 3
    assert done.stdout.count("pass auto_mixed_precision_onednn_bfloat16 at level function") == 3


def test_the_error_growth_view_shows_inherited_error_growing_and_the_blamed_node_above_its_bound(tmp_path):
    from opval import error_growth

    model, inputs = mlp(np.float32)
    values, _ = graph.run_on_backend(model, inputs, DispatchingStack(_FAULTY_MATMUL["mlp"][1], fault="always").bad)
    rows = {r["node"]: r for r in error_growth.rows(graph.judge(model, inputs, values))}
    assert rows["fc1"]["local_over_bound"] > 1 and rows["fc1"]["verdict"] == "FAILED"
    assert rows["head"]["local_over_bound"] <= 1 < rows["head"]["accumulated_over_bound"]  # inherited, not its own
    assert rows["fc0"]["accumulated_over_bound"] <= 1
    text = error_growth.table(graph.judge(model, inputs, values))
    assert "acc./bound" in text and "FAILED" in text
    path = error_growth.plot(graph.judge(model, inputs, values), tmp_path / "growth.png")
    assert path.stat().st_size > 10_000


def test_graph_run_prints_the_error_growth_table_and_plots_it(tmp_path):
    import onnx

    onnx.save(transformer_block(np.float32)[0], tmp_path / "block.onnx")
    done = _opval_cli("graph", "run", str(tmp_path / "block.onnx"), "--stack", "sim", "--plot", str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    assert "acc./bound" in done.stdout and (tmp_path / "plots" / "sim_error_growth.png").exists()


def test_a_cancellation_is_called_ill_conditioned_not_defective():
    """y = x·W1 − x·W2 with W2 within 1e-4 of W1: the two products' rounding errors, legitimate,
    are amplified about 1e4-fold by the subtraction. Nothing is blamed; the Sub is named
    ill-conditioned (its inputs' error grows through it while it is within its own bound), the
    products are not, and the no-blame outcome says where the error grows."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((64, 16)).astype(np.float32)
    w2 = (w1 * (1 + 1e-4 * rng.standard_normal(w1.shape))).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"], name="a"), helper.make_node("MatMul", ["x", "w2"], ["b"], name="b"),
             helper.make_node("Sub", ["a", "b"], ["y"], name="difference")]
    g = helper.make_graph(nodes, "cancel", [helper.make_tensor_value_info("x", 1, [8, 64])],
                          [helper.make_tensor_value_info("y", 1, [8, 16])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    inputs = {"x": rng.standard_normal((8, 64)).astype(np.float32)}
    run = graph_stacks.ort_run(model, inputs, level="all")
    judgements = {j["node"]: j for j in graph.judge(model, inputs, run.captured)}
    assert _blamed(list(judgements.values())) == []
    assert "ill-conditioned here, not defective" in judgements["difference"]["conditioning"]
    assert judgements["a"]["conditioning"] == "" and judgements["b"]["conditioning"] == ""
    report = triage.triage(model, inputs, OrtStack())
    assert report.blame is None and "ill-conditioned (difference" in report.markdown(), report.markdown()
