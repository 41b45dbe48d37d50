"""ONNX models compiled by IREE for the CPU and run by its runtime (docs/GRAPH.md, "IREE"): the
one path both the `iree` op backend and the IREE graph stack take.

    module = compile_onnx(model, flags=())        # IREE's ONNX importer, then iree-compile
    outputs = module.run([array, ...])            # the local-task driver (a thread pool)

The importer (iree.compiler.extras.onnx_importer, the code behind `iree-import-onnx`) turns
the model into MLIR in the torch-mlir ONNX dialect, in process; iree-compile (the compiler's
Python API) compiles it for `llvm-cpu` on the host CPU with BASE_FLAGS and the caller's flags.
Compiled modules are cached on disk, keyed by the MLIR, the flags and IREE's version
(OPVAL_IREE_CACHE, default $XDG_CACHE_HOME/opval/iree or ~/.cache/opval/iree), and the last few
loaded are kept in memory.

IREE demotes f64 to f32 by default (--iree-input-demote-f64-to-f32): BASE_FLAGS turn that off,
so that a float64 model computes in float64; the graph stack offers the demotion as one of the
flags that change numerics.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

#: The flags every compile gets: the CPU target, and no silent f64 -> f32 demotion.
BASE_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
              "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false")
#: The name the model's graph is given before import: the function to call in the module.
ENTRY = "opval_main"


class IreeCompileError(RuntimeError):
    """iree-compile (or the ONNX importer) rejected the model; the message is its first error."""


def version() -> str:
    from iree.compiler import version as compiler_version

    return getattr(compiler_version, "VERSION", "unknown")


def _cache_dir() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("OPVAL_IREE_CACHE") or os.path.join(cache, "opval", "iree")


def import_onnx(model) -> str:
    """The model as MLIR (torch-mlir's ONNX dialect), its graph named ENTRY."""
    import onnx
    from iree.compiler import ir
    from iree.compiler.extras import onnx_importer

    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.name = ENTRY
    m = onnx.shape_inference.infer_shapes(m)
    try:
        info = onnx_importer.ModelInfo(m)
        module = info.create_module(context=ir.Context()).operation
        onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
        module.verify()
    except Exception as e:  # the importer's own errors: an op or type it has no import for
        raise IreeCompileError(f"IREE's ONNX importer: {first_error(str(e)) or type(e).__name__}") from None
    return module.get_asm(assume_verified=True)


def first_error(diagnostics: str) -> str:
    """The first `error:` line of the compiler's diagnostics, without its source location; an
    op without a lowering as "no lowering for onnx.Cast (f32[257]) -> f8E4M3FN[257]". Else the
    first non-empty line."""
    for line in diagnostics.splitlines():
        if "error:" not in line:
            continue
        illegal = re.search(r"failed to legalize operation '([\w.]+)'", line)
        if illegal:
            named = re.search(r'name = "([\w.]+)"', line)
            types = re.search(r": (\(.*?\) -> \S+?)(?: loc\(|$)", line)
            op = named.group(1) if illegal.group(1) == "torch.operator" and named else illegal.group(1)
            shown = re.sub(r"!torch\.vtensor<\[([^\]]*)\],(\w+)>", r"\2[\1]", types.group(1)) if types else ""
            return f"no lowering for {op} {shown}".strip()
        return re.sub(r"^.*?error:\s*", "", line).strip()[:300]
    lines = [l.strip() for l in diagnostics.splitlines() if l.strip()]
    return lines[0][:300] if lines else ""


def compile_mlir(mlir: str, flags: Sequence[str] = ()) -> bytes:
    """The VM flatbuffer (.vmfb) for `mlir` under BASE_FLAGS + flags, from the disk cache when
    it has one."""
    from iree.compiler import compile_str

    args = [*BASE_FLAGS, *flags]
    key = hashlib.sha256("\n".join([version(), *args, mlir]).encode()).hexdigest()
    path = os.path.join(_cache_dir(), key[:2], key + ".vmfb")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read()
    try:
        vmfb = compile_str(mlir, extra_args=args)
    except Exception as e:  # iree.compiler.CompilerToolError: the diagnostics are in its text
        raise IreeCompileError(f"iree-compile: {first_error(str(e)) or type(e).__name__}") from None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(vmfb)
    os.replace(tmp, path)  # atomic: concurrent workers may write the same module
    return vmfb


@dataclass
class CompiledModule:
    """A compiled model loaded in the runtime: run(inputs) -> outputs as NumPy arrays."""
    context: Any
    function: Any
    vmfb: bytes

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        # C order without np.ascontiguousarray, which makes a 0-d array 1-d.
        results = self.function(*[a if a.flags.c_contiguous else a.copy(order="C") for a in map(np.asarray, inputs)])
        results = results if isinstance(results, (list, tuple)) else [results]
        return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in results]


_CONFIGS: dict[str, Any] = {}
_LOADED: OrderedDict[tuple[str, str], CompiledModule] = OrderedDict()  # by the module's bytes
_COMPILED: OrderedDict[tuple[str, tuple[str, ...], str], CompiledModule] = OrderedDict()  # by the model's
_MAX_KEPT = 8


def _recent(cache: OrderedDict, key, make: Callable[[], CompiledModule]) -> CompiledModule:
    """cache[key], made when missing; the last _MAX_KEPT kept."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    cache[key] = make()
    if len(cache) > _MAX_KEPT:
        cache.popitem(last=False)
    return cache[key]


def load(vmfb: bytes, driver: str = "local-task") -> CompiledModule:
    """The module in a runtime context of its own, on `driver` (local-task: a thread pool over
    the cores; local-sync: inline, one thread); the last few kept."""
    import iree.runtime as rt

    def make() -> CompiledModule:
        if driver not in _CONFIGS:
            _CONFIGS[driver] = rt.Config(driver)
        context = rt.SystemContext(config=_CONFIGS[driver])
        context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
        return CompiledModule(context, context.modules.module[ENTRY], vmfb)

    return _recent(_LOADED, (hashlib.sha256(vmfb).hexdigest(), driver), make)


def compile_onnx(model, flags: Sequence[str] = (), driver: str = "local-task") -> CompiledModule:
    """An ONNX model imported, compiled under BASE_FLAGS + flags and loaded on `driver`. A model
    met again (a case's supports() and each of its runs) is neither imported nor read from the
    disk cache again."""
    key = (hashlib.sha256(model.SerializeToString()).hexdigest(), tuple(flags), driver)
    return _recent(_COMPILED, key, lambda: load(compile_mlir(import_onnx(model), flags), driver))
