"""opval.judge: a verdict on arrays the caller already has (docs/JUDGE.md): outputs captured
from a failing model, or saved by another tool, for their inputs. The same fp64 reference,
bound, metrics, bias test and explanation as a kernel run; the C++ core binds the arrays to
the problem's operands (opval/judge.hpp), so the CLI's files and Python's arrays follow one
rule.
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import ml_dtypes
import numpy as np

from . import _opval
from .arrays import from_any, numpy_dtype
from .check import make_options

# The element types NumPy lacks, by the name opval gives them: the ml_dtypes types that
# arrays.numpy_dtype stands for them with.
_OPVAL_NAMES = {numpy_dtype(t): _opval.dtype_name(t) for t in _opval.dtype.__members__.values()
                if t != _opval.dtype.tf32 and numpy_dtype(t).type.__module__.startswith("ml_dtypes")}


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _as_numpy(value: Any) -> np.ndarray:
    """Any array as NumPy: NumPy, torch (bf16 and fp8 included), JAX, anything with
    __array__, or else a DLPack producer."""
    array = from_any(value)
    if array.dtype == object and hasattr(value, "__dlpack__"):
        array = np.from_dlpack(value)
    return array


def _stored_type(array: np.ndarray, name: str) -> str:
    """The element type the core checks against the contract: opval's name for the ml_dtypes
    types opval has, NumPy's type string for NumPy's own and for plain raw records. Another
    ml_dtypes type (float8_e4m3fnuz, int4) or a structured record would pass as raw bytes of
    the right size and be misread: an error."""
    if array.dtype in _OPVAL_NAMES:
        return _OPVAL_NAMES[array.dtype]
    if array.dtype.names is not None or (array.dtype.type.__module__.startswith("ml_dtypes")
                                         and array.dtype != np.dtype(ml_dtypes.float8_e5m2)):
        raise ValueError(f"array '{name}' holds {array.dtype}, a type opval has no operand of")
    return array.dtype.str


def _array_tuple(name: str, value: Any) -> tuple[str, str, list[int], bytes]:
    """(name, stored type, shape, bytes): what the core binds to an operand."""
    array = _as_numpy(value)
    return str(name), _stored_type(array, str(name)), list(array.shape), array.tobytes(order="C")


def _from_file(path: str | os.PathLike) -> list[tuple[str, str, list[int], bytes]]:
    """A file's arrays: .npy, .npz and ONNX TensorProto .pb read by the core, as the CLI reads
    them; .pt / .pth (a tensor, named by the file's stem, or a dict of tensors) loaded with
    weights_only=True, which runs no pickled code."""
    path = os.fspath(path)
    stem, ext = os.path.splitext(os.path.basename(path))
    if ext not in (".pt", ".pth"):
        return _opval.read_array_file(path)
    import torch

    loaded = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(loaded, torch.Tensor):
        loaded = {stem: loaded}
    if not isinstance(loaded, Mapping):
        raise ValueError(f"'{path}' holds a {type(loaded).__name__}, not a tensor or a dict of tensors")
    return [_array_tuple(k, v) for k, v in loaded.items()]


def _named(arrays: Any, operands: Sequence[_opval.Operand], role: str) -> list[tuple[str, str, list[int], bytes]]:
    """The arrays as the core binds them: from a path or a list of paths (their files' arrays,
    as the CLI's repeated --inputs), a mapping by name, a sequence in the operand order, or one
    array for a problem with one operand."""
    if _is_path(arrays):
        return _from_file(arrays)
    if isinstance(arrays, Sequence) and arrays and all(_is_path(a) for a in arrays):
        return [t for path in arrays for t in _from_file(path)]
    if isinstance(arrays, Mapping):
        return [_array_tuple(k, v) for k, v in arrays.items()]
    if isinstance(arrays, (list, tuple)):
        if len(arrays) != len(operands):
            raise ValueError(f"{len(arrays)} {role}s given, the problem has {len(operands)} "
                             f"({', '.join(o.name for o in operands)})")
        return [_array_tuple(o.name, a) for o, a in zip(operands, arrays)]
    return [_array_tuple(operands[0].name if len(operands) == 1 else "", arrays)]


def judge(problem: str | _opval.Problem, *, inputs: Any, outputs: Any, policy: str = "bound", worst: int = 5,
          reference: str | _opval.Backend | None = None, source: str = "<opval.judge>") -> _opval.CaseResult:
    """The verdict on `outputs` as results of `problem` on `inputs`.

    inputs, outputs: a mapping from operand name to array (NumPy, torch, JAX or any DLPack
    array; bf16 and fp8 as their own types or as raw records of their size), a sequence in the
    op's operand order, one array for a problem with one operand, or a path (.npy, .npz, ONNX
    TensorProto .pb, .pt).
    Element types are the contract's (the descriptor's dt=); a mismatch in name, shape or type
    raises ValueError. policy, worst and reference as in opval.check.
    """
    p = problem if isinstance(problem, _opval.Problem) else _opval.Problem(str(problem))
    options = make_options(policy=policy, worst=worst, reference=reference)
    return _opval.judge_arrays(p, _named(inputs, p.inputs(), "input"), _named(outputs, p.outputs(), "output"),
                               options, source)
