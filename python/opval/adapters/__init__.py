"""Frameworks as opval backends and references: PyTorch eager and torch.compile (pytorch/),
ONNX Runtime, JAX, TensorFlow eager, as tf.function and under XLA (tensorflow_cpu/), and
IREE (iree_cpu/: ONNX models of one op compiled by an MLIR compiler). Each maps an op's problem to the framework's own operators; what it
cannot express (a contract, an attribute) is SKIPPED with the reason (docs/PYTHON.md,
"Framework adapters")."""
from .base import FrameworkOp

__all__ = ["FrameworkOp", "backend", "covered_ops", "reference", "NAMES", "REFERENCE_NAMES"]

NAMES = ("torch", "torch_compile", "onnxruntime", "jax", "tensorflow", "tensorflow_function", "tensorflow_xla", "iree")
# The frameworks offered as float64 references: torch.compile is torch's own ops compiled, so
# the eager float64 run is the same reference, without the compilation (and so for TensorFlow's
# tf.function and XLA).
REFERENCE_NAMES = ("torch", "onnxruntime", "jax", "tensorflow")


def backend(name: str, float64: bool = False):
    """The adapter backend `name` (NAMES): torch, torch_compile, onnxruntime, jax, tensorflow,
    tensorflow_function, tensorflow_xla, iree. With
    float64, the framework's mapping of each op computed in float64 and not rounded to the
    output type: what reference() returns."""
    if name == "torch":
        from .pytorch import torch_backend

        return torch_backend(float64=float64)
    if name == "torch_compile" and not float64:
        from .pytorch import torch_backend

        return torch_backend(compile=True)
    if name == "onnxruntime":
        from .onnxruntime import onnxruntime_backend

        return onnxruntime_backend(float64)
    if name == "jax":
        from .jax_xla import jax_backend

        return jax_backend(float64)
    if name == "tensorflow" or (name in ("tensorflow_function", "tensorflow_xla") and not float64):
        from .tensorflow_cpu import tensorflow_backend

        return tensorflow_backend(name, float64)
    if name == "iree" and not float64:
        from .iree_cpu import iree_backend

        return iree_backend()
    known = REFERENCE_NAMES if float64 else NAMES
    raise ValueError(f"unknown framework {'reference' if float64 else 'backend'} '{name}' (known: {', '.join(known)})")


def covered_ops(name: str) -> frozenset[str]:
    """The ops the adapter `name` (NAMES) maps, as its own table declares them; every other op
    is UNIMPLEMENTED on it, so an op added to opval needs no adapter edit. Importing the table
    imports the framework."""
    if name in ("torch", "torch_compile"):
        from .pytorch import OPS
    elif name == "onnxruntime":
        from .onnxruntime import OPS
    elif name == "jax":
        from .jax_xla import OPS
    elif name in ("tensorflow", "tensorflow_function", "tensorflow_xla"):
        from .tensorflow_cpu import OPS
    elif name == "iree":
        from .iree_cpu import OPS
    else:
        raise ValueError(f"unknown framework backend '{name}' (known: {', '.join(NAMES)})")
    return frozenset(OPS)


def reference(name: str):
    """The framework `name` (REFERENCE_NAMES) as a float64 reference: its own operators, on the
    case's inputs converted exactly to float64, computing in float64 whatever the kernel's
    contract; an op or attribute it does not map is refused, and the case SKIPPED naming it."""
    return backend(name, float64=True)
