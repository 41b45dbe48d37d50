"""What the tests of the framework lowerings (test_graph_torch.py, test_graph_jax.py) check
alike: a lowered model's values against ONNX Runtime with its optimizations off."""
import numpy as np

from opval.graph_stacks import ort_run


def expect_every_value_equals_onnx_runtime(values: dict, model, inputs) -> None:
    """`values` (a lowering's run, by value name) hold every node output of `model` and equal
    ONNX Runtime's unoptimized run on `inputs` within float32 rounding."""
    expected = ort_run(model, inputs, level="disable_all").captured
    shared = [n for n in values if n in expected]
    assert len(shared) == len([o for n in model.graph.node for o in n.output])
    for name in shared:
        np.testing.assert_allclose(values[name], expected[name], rtol=2e-5, atol=2e-6, err_msg=name)
