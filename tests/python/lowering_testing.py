"""What the tests of the framework stacks (test_graph_torch.py, test_graph_jax.py,
test_graph_tensorflow.py, test_graph_iree.py) check alike: a lowered model's values against
ONNX Runtime with its optimizations off, on the held models; the nodes a judgement blames."""
import sys
from pathlib import Path

import numpy as np

from opval.graph_stacks import ort_run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
from models import cnn, mlp, transformer_block  # noqa: E402

#: The models every lowering is checked on, and their test ids.
MODELS = [mlp, cnn, transformer_block, lambda dtype: transformer_block(dtype, gelu="erf_chain")]
IDS = ["mlp", "cnn", "transformer_block", "transformer_erf_chain"]


def blamed(judgements) -> list[tuple[str, str]]:
    """(node, reason) of each node judged alone that fails."""
    return [(j["node"], j["local"].reason) for j in judgements if j["local"] is not None and j["local"].failed]


def expect_every_value_equals_onnx_runtime(values: dict, model, inputs) -> None:
    """`values` (a lowering's run, by value name) hold every node output of `model` and equal
    ONNX Runtime's unoptimized run on `inputs` within float32 rounding."""
    expected = ort_run(model, inputs, level="disable_all").captured
    shared = [n for n in values if n in expected]
    assert len(shared) == len([o for n in model.graph.node for o in n.output])
    for name in shared:
        np.testing.assert_allclose(values[name], expected[name], rtol=2e-5, atol=2e-6, err_msg=name)
