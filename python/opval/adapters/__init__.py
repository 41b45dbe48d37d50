"""Frameworks as opval backends and references: PyTorch eager and torch.compile (pytorch/),
ONNX Runtime and JAX. Each maps an op's problem to the framework's own operators; what it
cannot express (a contract, an attribute) is SKIPPED with the reason (docs/PYTHON.md,
"Framework adapters")."""
from .base import FrameworkOp

__all__ = ["FrameworkOp", "backend", "NAMES"]

NAMES = ("torch", "torch_compile", "onnxruntime", "jax")


def backend(name: str):
    """The adapter backend `name` (NAMES): torch, torch_compile, onnxruntime, jax."""
    if name == "torch":
        from .pytorch import torch_backend

        return torch_backend()
    if name == "torch_compile":
        from .pytorch import torch_backend

        return torch_backend(compile=True)
    if name == "onnxruntime":
        from .onnxruntime import onnxruntime_backend

        return onnxruntime_backend()
    if name == "jax":
        from .jax_xla import jax_backend

        return jax_backend()
    raise ValueError(f"unknown framework backend '{name}' (known: {', '.join(NAMES)})")
