"""IREE as a graph stack (docs/GRAPH.md, "IREE"): ONNX models compiled by IREE for the CPU,
judged node by node without false alarms at every level, intermediates taken by cutting the
graph (in halves where IREE cannot compile every cut at once), the numerics options as the
candidates triage bisects, and a planted option found by name."""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("iree.compiler")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from lowering_testing import blamed  # noqa: E402
from models import cnn, mlp, transformer_block  # noqa: E402

from opval import graph, graph_stacks, triage  # noqa: E402
from opval.graph_stacks import StackConfig  # noqa: E402
from opval.iree_stack import IREE_OPTIONS, IreeStack  # noqa: E402


@pytest.mark.parametrize("level", ["O0", "O3"])
@pytest.mark.parametrize("build", [mlp, cnn, transformer_block], ids=["mlp", "cnn", "transformer_block"])
def test_correct_iree_blames_nothing(build, level):
    model, inputs = build(np.float32)
    stack = IreeStack(StackConfig(level=level))
    run = stack.run(model, inputs, stack.config)
    assert run.stack == f"iree:{level}" and run.graph_digest
    values = {o for n in model.graph.node for o in n.output}
    assert set(run.captured) | set(run.not_observable) == values
    assert blamed(graph.judge(model, inputs, run.captured)) == []


def test_intermediates_iree_cannot_compile_at_once_are_taken_from_smaller_cuts():
    """IREE 3.13 fails at O2 and O3 to compile the MLP with its Gemm's output returned beside
    the Softmax of it (an internal error of its vector codegen): the other values come from
    cuts compiled in halves, the Gemm's is not observable, and the run says so."""
    model, inputs = mlp(np.float32)
    run = IreeStack().run(model, inputs, StackConfig(level="O3"))
    assert run.not_observable == ["head"]
    assert any("could not compile the model with every intermediate" in n and "vector.store" in n for n in run.notes)
    assert {"fc0", "relu1", "probs"} <= set(run.captured)


def test_options_fire_only_where_they_change_what_is_compiled():
    model, inputs = transformer_block(np.float32)
    stack = IreeStack(options=("demote-contractions-to-bf16", "fast-min-max", "data-tiling"))
    assert stack.fired_passes(model, "O0") == []  # the baseline compiles without them
    # fast-min-max changes nothing here: the block has no min or max.
    assert stack.fired_passes(model, "O1") == ["demote-contractions-to-bf16", "data-tiling"]
    # At O2 and up IREE's pipeline takes no demotion of contraction inputs: alone, the option does nothing there.
    assert IreeStack(options=("demote-contractions-to-bf16",)).fired_passes(model, "O3") == []
    plain = stack.run(model, inputs, StackConfig(level="O1", disabled=tuple(stack.options)))
    demoted = stack.run(model, inputs, StackConfig(level="O1", disabled=("fast-min-max", "data-tiling")))
    assert plain.graph_digest != demoted.graph_digest


def test_triage_through_iree_blames_the_option_that_demoted_a_matmul():
    """The planted fault: a compile with contraction inputs demoted to bf16 (an IREE option a
    deployment may set for speed). Clean at O0, found at O1 among the stack's options, and
    confirmed alone."""
    model, inputs = mlp(np.float32)
    stack = IreeStack(StackConfig(level="O1"), options=("reassociate-fp-reductions", "demote-contractions-to-bf16"))
    report = triage.triage(model, inputs, stack)
    assert report.first["node"] == "fc0", report.markdown()
    assert report.blame == "compiler" and report.culprit == "pass demote-contractions-to-bf16 at level O1", report.markdown()


def test_iree_specs_and_bad_input():
    stack = graph_stacks.stack_from_spec("iree")
    assert stack.config.level == "O3" and stack.options == ()
    stack = graph_stacks.stack_from_spec("iree:O1:+data-tiling:driver=local-sync")
    assert stack.config.level == "O1" and stack.options == ("data-tiling",)
    assert stack.config.option("driver", stack.runtime_options) == "local-sync"
    assert stack.command_line(stack.config) == ["--stack", "iree:O1:+data-tiling:driver=local-sync"]
    with pytest.raises(ValueError, match="unknown IREE option 'fastmath' .known: reassociate-fp-reductions"):
        graph_stacks.stack_from_spec("iree:+fastmath")
    with pytest.raises(ValueError, match="unknown option 'O4'"):
        graph_stacks.stack_from_spec("iree:O4")
    with pytest.raises(ValueError, match="unknown option 'threads=2'"):
        graph_stacks.stack_from_spec("iree:threads=2")
    with pytest.raises(ValueError, match="'data-tiling' is not one of this stack's options"):
        IreeStack().flags(StackConfig(level="O3", disabled=("data-tiling",)))
    assert set(IREE_OPTIONS) >= {"demote-contractions-to-bf16", "demote-f64-to-f32", "fast-min-max"}
    model, _ = mlp(np.float32)
    with pytest.raises(ValueError, match="no value for graph input x"):
        IreeStack().run(model, {}, StackConfig(level="O0"))
