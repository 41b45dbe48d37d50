"""Writes the example models (models.py) as ONNX files with their inputs, for the CLI:

    .venv/bin/python examples/graph/save_models.py results/models [--dtype float32|float16|float64]

gives results/models/{mlp,cnn,transformer_block}.onnx and <name>_inputs.npz beside each.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from models import cnn, mlp, transformer_block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "float64"])
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    for build in (mlp, cnn, transformer_block):
        model, inputs = build(getattr(np, args.dtype))
        (args.folder / f"{build.__name__}.onnx").write_bytes(model.SerializeToString())
        np.savez(args.folder / f"{build.__name__}_inputs.npz", **inputs)
        print(f"{args.folder / build.__name__}.onnx: {len(model.graph.node)} nodes, inputs "
              f"{', '.join(f'{k} {v.dtype} {list(v.shape)}' for k, v in inputs.items())}")


if __name__ == "__main__":
    main()
