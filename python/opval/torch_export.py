"""PyTorch models in (docs/GRAPH.md, "PyTorch models"): a torch.nn.Module with example inputs,
a torch.export ExportedProgram, or one saved with torch.export.save (.pt2), as the ONNX model
opval's graph IR reads.

    model, inputs = opval.torch_export.to_onnx(module, (x,))
    report = opval.triage.triage(model, inputs, TorchCompileStack())

The conversion is PyTorch's own: torch.export captures the module as an ATen graph, and
torch.onnx's exporter (dynamo=True, which needs the onnxscript package) lowers that graph to
ONNX. opval keeps one graph IR, read in C++ from ONNX, rather than a second reader for FX
graphs; the exporter names each ONNX value after the FX node that computes it (`linear`,
`layer_norm_1`, `gelu`), so a node opval blames is found in the module's code by that name.
"""
from __future__ import annotations

import contextlib
import logging
import os
from typing import Any, Sequence

import numpy as np


@contextlib.contextmanager
def _quiet(*loggers: str):
    """PyTorch's loggers held to errors: torch.export logs a traceback before it raises, and
    torch.onnx warns of every optional package it lacks; opval reports the failure once."""
    saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


def exported_program(model: Any, args: Sequence[Any] | None = None):
    """`model` as a torch.export ExportedProgram: one already, a .pt2 file (torch.export.save),
    or a torch.nn.Module exported on the example inputs `args` (in eval mode)."""
    import torch

    if isinstance(model, torch.export.ExportedProgram):
        return model
    if isinstance(model, (str, os.PathLike)):
        try:
            with _quiet("torch.export"):
                return torch.export.load(os.fspath(model))
        except Exception as e:  # a corrupt or foreign file: one line, not torch's traceback
            raise ValueError(f"{os.fspath(model)}: not a torch.export program ({type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else 'unreadable'})") from None
    if isinstance(model, torch.nn.Module):
        if args is None:
            raise ValueError("a torch.nn.Module needs example inputs to be exported (args)")
        try:
            return torch.export.export(model.eval(), tuple(args))
        except Exception as e:
            raise ValueError(f"torch.export could not export {type(model).__name__}: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}") from None
    raise TypeError(f"opval.torch_export takes a torch.nn.Module, an ExportedProgram or a .pt2 path, "
                    f"not {type(model).__name__}")


def to_onnx(model: Any, args: Sequence[Any] | None = None) -> tuple[Any, dict[str, np.ndarray]]:
    """The ONNX model (onnx.ModelProto) of `model` (see exported_program) and its example
    inputs by graph input name, as NumPy arrays (the program's own example inputs when `args`
    is not given)."""
    import torch

    from .arrays import from_any

    program = exported_program(model, args)
    try:
        with _quiet("torch.onnx", "torch.export"):
            onnx_program = torch.onnx.export(program, dynamo=True, verbose=False)
    except ImportError as e:
        raise ValueError(f"exporting a PyTorch program to ONNX needs the onnxscript package ({e})") from None
    except Exception as e:
        raise ValueError(f"torch.onnx could not export the program: {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}") from None
    proto = onnx_program.model_proto
    examples = args if args is not None else (program.example_inputs[0] if program.example_inputs else ())
    initializers = {t.name for t in proto.graph.initializer}
    names = [vi.name for vi in proto.graph.input if vi.name not in initializers]
    tensors = [a for a in examples if isinstance(a, torch.Tensor)]
    inputs = {n: from_any(t) for n, t in zip(names, tensors)} if len(tensors) == len(names) else {}
    return proto, inputs
