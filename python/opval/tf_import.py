"""TensorFlow models into opval's graph IR (docs/GRAPH.md, "TensorFlow"), through tf2onnx:

    model = onnx_from_tensorflow("saved_model_dir")           # its serving_default signature
    model = onnx_from_tensorflow(fn, [tf.TensorSpec([4, 16], tf.float32, name="x")])
    report = opval.triage.triage(model, {"x:0": x}, TfStack())

Why tf2onnx: opval's graph IR, its fp64 reference and the node-by-node judging read ONNX;
tf2onnx is the maintained TensorFlow-to-ONNX converter (it runs on TensorFlow 2.21), and it keeps
TensorFlow's tensor names as the ONNX value names (`StatefulPartitionedCall/Relu:0`; the graph
inputs are the signature's tensors, `x:0`), so a node opval blames is found in the TensorFlow
graph by name. Its own rewrites can merge TensorFlow ops into one ONNX node (MatMul and an add
of constants into Gemm); the merged node is then what is judged.
"""
from __future__ import annotations

import os
from typing import Any, Sequence


def onnx_from_tensorflow(model: Any, input_signature: Sequence[Any] | None = None, opset: int = 18):
    """`model` — a SavedModel folder (its `serving_default` signature) or a tf.function
    (`input_signature`: its tf.TensorSpec list, unless the function declares one) — as an
    onnx.ModelProto; ValueError naming what could not be read or converted."""
    from .adapters import tensorflow_cpu  # noqa: F401 (TensorFlow through opval: Triton first, notices left out)

    try:
        import tf2onnx
        from tf2onnx import tf_loader
    except ImportError as e:
        raise ValueError(f"reading a TensorFlow model needs tf2onnx (pip install tf2onnx): {e}") from None
    try:
        if isinstance(model, (str, os.PathLike)):
            if not os.path.isdir(model):
                raise ValueError(f"'{os.fspath(model)}' is not a SavedModel folder")
            graph_def, inputs, outputs = tf_loader.from_saved_model(os.fspath(model), None, None)[:3]
            converted, _ = tf2onnx.convert.from_graph_def(graph_def, input_names=inputs, output_names=outputs,
                                                          opset=opset)
        else:
            signature = input_signature or getattr(model, "input_signature", None)
            if not signature:
                raise ValueError("a tf.function needs an input_signature (a list of tf.TensorSpec)")
            converted, _ = tf2onnx.convert.from_function(model, input_signature=list(signature), opset=opset)
    except ValueError:
        raise
    except Exception as e:  # tf2onnx's and TensorFlow's own errors: one line naming the model
        raise ValueError(f"tf2onnx could not convert the TensorFlow model: {type(e).__name__}: "
                         f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}") from None
    return converted
