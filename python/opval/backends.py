"""Backends and references by name, as opval.run, opval.check and `python -m opval run` take
them: registered C++ backends, kernel plugins, framework adapters, 'module:function'
factories, and the alternative references built from any of these (docs/PYTHON.md,
"Frameworks as references")."""
from __future__ import annotations

import importlib
import os

from . import _opval

__all__ = ["resolve_backend", "resolve_reference", "runs_in_python_worker", "CONTRACT_SUFFIX"]

# Appended to a framework's name, asks for it at the kernel's contract instead of in float64.
CONTRACT_SUFFIX = "@contract"


def resolve_backend(spec: str | _opval.Backend) -> _opval.Backend:
    """A Backend from a registered name ('onednn'), a framework adapter's name ('torch',
    'torch_compile'), a plugin path (a file ending in .so), 'module:function' (a function
    returning a Backend, e.g. one made by opval.kernel_backend), or the Backend itself."""
    from . import adapters

    if isinstance(spec, _opval.Backend):
        return spec
    if spec.endswith(".so") or os.sep in spec:
        return _opval.load_plugin(spec)
    if spec in adapters.NAMES:
        return adapters.backend(spec)
    if ":" in spec:
        module, function = spec.split(":", 1)
        try:
            factory = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"backend '{spec}': cannot import {function} from {module}: {e}") from e
        return factory()
    return _opval.Backend(spec)


def runs_in_python_worker(spec) -> bool:
    """Backends the Python worker process can make again from their name: framework adapters
    and 'module:function' factories."""
    from . import adapters

    return isinstance(spec, str) and (spec in adapters.NAMES or (":" in spec and not spec.endswith(".so")))


# References made once per process: a framework's set-up (JAX's x64 check, ORT's sessions) is
# paid once, not per case, when the Python worker makes its options for every case.
_REFERENCES: dict[str, tuple[_opval.Backend, bool]] = {}


def resolve_reference(spec: str | _opval.Backend) -> tuple[_opval.Backend, bool]:
    """(backend, float64) for an alternative reference:
    - a framework's name ('torch', 'onnxruntime', 'jax'): its operators in float64;
    - that name + '@contract' ('torch@contract'), or any other backend spec resolve_backend
      takes (a registered name, a plugin path, 'module:function', a Backend): run at the
      kernel's contract, which doubles the bound."""
    from . import adapters

    if isinstance(spec, _opval.Backend):
        return spec, False
    if spec not in _REFERENCES:
        name = spec.removesuffix(CONTRACT_SUFFIX)
        if name == spec and name in adapters.REFERENCE_NAMES:
            _REFERENCES[spec] = (adapters.reference(name), True)
        else:
            _REFERENCES[spec] = (resolve_backend(name), False)
    return _REFERENCES[spec]
