"""Writes the example models (models.py) as ONNX files with their inputs, for the CLI:

    .venv/bin/python examples/graph/save_models.py results/models [--dtype float32|float16|float64]

gives results/models/{mlp,cnn,transformer_block,transformer_block_erf_gelu,offset_block}.onnx and
<name>_inputs.npz beside each (transformer_block_erf_gelu: the block with its gelu spelled out
as an Erf chain, opset 17; offset_block: the block with a final layer norm, its residual stream
offset by 64, for precision bisection).
"""
from __future__ import annotations

import argparse
import functools
from pathlib import Path

import numpy as np

from models import cnn, mlp, transformer_block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "float64"])
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    models = {"mlp": mlp, "cnn": cnn, "transformer_block": transformer_block,
              "transformer_block_erf_gelu": functools.partial(transformer_block, gelu="erf_chain"),
              "offset_block": functools.partial(transformer_block, final_norm=True, input_offset=64.0)}
    for name, build in models.items():
        model, inputs = build(getattr(np, args.dtype))
        (args.folder / f"{name}.onnx").write_bytes(model.SerializeToString())
        np.savez(args.folder / f"{name}_inputs.npz", **inputs)
        print(f"{args.folder / name}.onnx: {len(model.graph.node)} nodes, inputs "
              f"{', '.join(f'{k} {v.dtype} {list(v.shape)}' for k, v in inputs.items())}")


if __name__ == "__main__":
    main()
