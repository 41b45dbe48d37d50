"""The atheris fuzz target of opval's Python readers (docs/SAFETY.md, "Fuzzing"): what `opval graph
run|triage|precision` read besides the model, which the C++ targets fuzz.

- `--inputs` files (.npz, .npy, TensorProto .pb): opval.graph.read_inputs — the core's array
  reader, then the arrays bound to the model's declared inputs — and the fp64 graph reference of
  the project's MLP on what was read;
- torch.export programs (.pt2): opval.torch_export.exported_program.

Each input must be read, or refused with one ValueError or TypeError (the CLI's one error line);
any other exception, a crash or a hang is a finding. The first byte picks the reader, the rest is
the file.

    .venv/bin/python tests/fuzz/fuzz_python_readers.py -runs=2000 -max_len=65536 CORPUS_DIR

An empty CORPUS_DIR is seeded with one valid file per reader, made with the installed NumPy, onnx
and torch (no binary seeds are checked in: a .pt2 is tied to the torch that wrote it).
"""
from __future__ import annotations

import inspect
import io
import os
import sys
import tempfile
from pathlib import Path

import atheris

# Instrumented in main(): the editable install's loader hides opval from instrument_imports.
from opval import graph, torch_export  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "graph"))
import numpy as np  # noqa: E402
from models import mlp  # noqa: E402

READERS = (".npz", ".npy", ".pb", ".pt2")
MODEL, INPUTS = mlp(np.float32)
GRAPH = graph.load(MODEL)
#: How a reader may refuse a file: the exceptions the CLI turns into one error line.
REFUSALS = (ValueError, TypeError)


def read(suffix: str, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(suffix=suffix) as f:
        f.write(data)
        f.flush()
        if suffix == ".pt2":
            torch_export.exported_program(f.name)
            return
        graph.reference(GRAPH, graph.read_inputs(GRAPH, f.name))


def test_one_input(data: bytes) -> None:
    if not data:
        return
    try:
        read(READERS[data[0] % len(READERS)], data[1:])
    except REFUSALS:
        pass


def seeds() -> dict[str, bytes]:
    """One valid file per reader, its first byte choosing it."""
    import torch
    from onnx import numpy_helper

    npz, npy, pt2 = io.BytesIO(), io.BytesIO(), io.BytesIO()
    np.savez(npz, **INPUTS)
    np.save(npy, INPUTS["x"])
    program = torch.export.export(torch.nn.Linear(4, 2).eval(), (torch.ones(3, 4),))
    torch.export.save(program, pt2)
    pb = numpy_helper.from_array(INPUTS["x"], "x").SerializeToString()
    files = (npz.getvalue(), npy.getvalue(), pb, pt2.getvalue())
    return {f"seed{suffix}": bytes([i]) + data for i, (suffix, data) in enumerate(zip(READERS, files))}


def main() -> None:
    corpus = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    made = seeds()
    for seed in made.values():  # the seeds themselves must read
        read(READERS[seed[0]], seed[1:])
    if corpus and os.path.isdir(corpus) and not os.listdir(corpus):
        for name, blob in made.items():
            Path(corpus, name).write_bytes(blob)
    atheris.instrument_func(read)
    for module in (graph, torch_export):
        for function in vars(module).values():
            if inspect.isfunction(function) and function.__module__ == module.__name__:
                atheris.instrument_func(function)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
