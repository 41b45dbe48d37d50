"""IREE as an op backend: single-op ONNX models compiled for the CPU. f64 stays f64 (IREE's
default demotion is off), what IREE cannot compile is SKIPPED naming the op and types it has
no lowering for, compiled modules are reused from the disk cache, the subnormal flushing is
measured, and the ops its importer cannot take run as their decompositions."""
import io
import os

import numpy as np
import pytest

pytest.importorskip("iree.compiler")

import opval  # noqa: E402
from opval import iree_compiler  # noqa: E402
from opval.adapters.iree_cpu import IreeAdapter  # noqa: E402
from opval.adapters.onnxruntime.graph import Graph  # noqa: E402


@pytest.fixture(scope="module")
def adapter():
    return IreeAdapter()


def run(problems):
    return opval.run(["iree"], problems=problems, isolation="none", out=io.StringIO()).results


def test_f64_is_computed_in_f64_not_demoted():
    """A float64 matmul with a reduction of 4096 passes at float64's bound: a float32
    computation (IREE's default demotion) would be ~1e9 times beyond it."""
    (result,) = run(["matmul m=3 n=5 k=4096 dt=f64"])
    assert result.state == "PASSED", result.reason
    assert "float64 compute" in result.implementation


def test_what_iree_cannot_compile_is_skipped_naming_the_missing_lowering(adapter):
    why = adapter.supports(opval.Problem("erf shape=257 dt=f64"))
    assert "IREE cannot compile Erf in float64" in why and "no lowering for math.erf" in why and "f64" in why
    why = adapter.supports(opval.Problem("cast shape=257 dt=f32:f32:f8_e4m3"))
    assert "no lowering for onnx.Cast (f32[257]) -> f8E4M3FN[257]" in why


def test_attention_runs_as_its_decomposition():
    """IREE's importer has no Attention (opset 23): the model is MatMul, Softmax, Where... with
    GQA, masks and key lengths, and a row with no visible key is 0."""
    (result,) = run(["attention b=2 h=4 hkv=2 lq=9 lk=13 d=16 causal=bottom_right key_lengths=1 dt=f32"])
    assert result.state == "PASSED", result.reason
    assert "MatMul" in result.implementation and "Softmax" in result.implementation
    assert "Attention" not in result.implementation


def test_subnormal_flushing_is_measured_and_ftz_contracts_run(adapter):
    assert adapter.flushes_subnormals
    ftz, ieee = run(["relu shape=257 dt=f32 fill=special denorm=ftz", "relu shape=257 dt=f32 fill=special"])
    assert ftz.state == "PASSED", ftz.reason
    assert ieee.state == "FAILED" and "got 0" in ieee.reason


def test_compiled_modules_are_cached_on_disk_by_flags(tmp_path, monkeypatch):
    monkeypatch.setenv("OPVAL_IREE_CACHE", str(tmp_path))
    g = Graph("twice")
    g.output(g.op("Add", g.input("x", np.ones(3, np.float32)), g.const([1.0], np.float32)), (3,))
    mlir = iree_compiler.import_onnx(g.model())
    first = iree_compiler.compile_mlir(mlir)
    cached = [f for _, _, files in os.walk(tmp_path) for f in files]
    assert len(cached) == 1 and iree_compiler.compile_mlir(mlir) == first
    iree_compiler.compile_mlir(mlir, ["--iree-opt-level=O0"])
    assert len([f for _, _, files in os.walk(tmp_path) for f in files]) == 2
    np.testing.assert_array_equal(iree_compiler.load(first).run([np.ones(3, np.float32)])[0], [2, 2, 2])


def test_a_model_iree_rejects_is_one_error_line():
    g = Graph("bad")
    g.output(g.op("NoSuchOp", g.input("x", np.ones(3, np.float32))), (3,))
    with pytest.raises(iree_compiler.IreeCompileError, match="^(IREE's ONNX importer|iree-compile): "):
        iree_compiler.compile_onnx(g.model())
