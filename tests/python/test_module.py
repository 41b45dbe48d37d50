"""The module itself: names, errors, zero-copy arrays, logging, and the checked-in stubs."""
import logging
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import opval

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_resolves():
    for name in opval.__all__:
        assert getattr(opval, name) is not None, name


def test_problems_parse_print_and_describe_their_operands():
    p = opval.Problem("matmul m=3 n=4 k=5 ta=1 bias=1 dt=bf16")
    assert str(p) == "matmul m=3 n=4 k=5 ta=1 bias=1 dt=bf16:f32:bf16"
    assert p == opval.Problem(str(p)) and hash(p) == hash(opval.Problem(str(p)))
    assert p.attrs["m"] == 3 and p.attrs["ta"] is True and p.get("alpha") == 1.0
    a, b, bias = p.inputs()
    assert (a.name, a.dtype, a.shape, a.strides, a.contiguous) == ("A", opval.dtype.bf16, [3, 5], [1, 3], False)
    assert bias.shape == [4] and p.outputs()[0].dtype == opval.dtype.bf16
    assert p.counts()[0] > 0


@pytest.mark.parametrize("bad, words", [("matmull m=1", "matmull"), ("matmul m=x", "m"), ("matmul m=1 dt=f33", "f33")])
def test_bad_descriptors_are_value_errors_naming_the_problem(bad, words):
    with pytest.raises(ValueError, match=words):
        opval.Problem(bad)


def test_contracts_parse_their_options_and_read_back():
    c = opval.Contract("bf16:f32:bf16 mid=bf16")
    assert (c.types_string(), c.options_string(), c.mid) == ("bf16:f32:bf16", " mid=bf16", opval.dtype.bf16)
    assert str(c) == "dt=bf16:f32:bf16 mid=bf16" and opval.Contract(str(c)) == c
    assert repr(c) == "Contract('dt=bf16:f32:bf16 mid=bf16')"
    ftz = opval.Contract("f32  denorm=ftz\tacc_round=rz")
    assert ftz.ftz and ftz.acc_round == opval._opval.rounding.rz and str(ftz) == "dt=f32:f32:f32 acc_round=rz denorm=ftz"
    assert opval.Contract("f32") != ftz and opval.Contract("f32 mid=f32") == opval.Contract("f32:f32:f32")
    assert opval.Contract("bf16") != c


@pytest.mark.parametrize("bad, words", [("f32 mid", "expected key=value after the types, got 'mid'"),
                                        ("f32 fill=normal", "unknown contract option 'fill'"),
                                        ("f32 denorm=ftz denorm=ieee", "option 'denorm' is given twice"),
                                        ("f32 denorm=daz", "expects ieee or ftz"), ("", "empty contract"),
                                        ("f33 mid=bf16", "f33")])
def test_bad_contracts_are_value_errors_naming_the_part(bad, words):
    with pytest.raises(ValueError, match=words):
        opval.Contract(bad)


def test_unknown_backend_and_plugin_are_value_errors():
    with pytest.raises(ValueError, match="nosuch"):
        opval.Backend("nosuch")
    with pytest.raises(ValueError, match="/no/such.so"):
        opval.load_plugin("/no/such.so")


def test_ops_suites_and_contracts_are_listed():
    names = {op.name for op in opval.ops()}
    assert {"matmul", "softmax", "attention", "layer_norm", "rms_norm", "conv2d"} <= names
    softmax = opval.find_op("softmax")
    assert softmax.suite("smoke") and "f32:f32:f32" in softmax.contracts
    assert {a.name for a in softmax.attrs} == {"shape", "axis"}
    assert len(opval.suite_problems("smoke", ["softmax"])) == len(softmax.suite("smoke"))


def test_tensors_are_numpy_views_over_opvals_memory():
    """A kernel's write through the array lands in opval's tensor (checked through to_list)."""
    seen = {}

    def execute(problem, inputs, outputs):
        arrays = [opval.to_numpy(t) for t in outputs]
        arrays[0][...] = ml_dtypes.bfloat16(0.5)
        seen["after"] = outputs[0].to_list()
        seen["dtype"] = arrays[0].dtype

    backend = opval._opval.callable_backend("python:probe", "test", lambda p: None, execute)
    opval._opval.run_case(opval.Problem("relu shape=4x3 dt=bf16"), backend, opval.RunOptions())
    assert seen["after"] == [0.5] * 12
    assert seen["dtype"] == np.dtype(ml_dtypes.bfloat16)


def test_narrow_formats_are_ml_dtypes_views_one_element_per_byte():
    """opval's narrow formats read as ml_dtypes' types, which also keep one element per byte."""
    seen = {}

    def execute(problem, inputs, outputs):
        seen["in"] = opval.to_numpy(inputs[0]).astype(np.float64)
        seen["expected"] = np.array(inputs[0].to_list())
        seen["dtype"] = opval.to_numpy(inputs[0]).dtype
        opval.to_numpy(outputs[0])[...] = seen["in"].astype(np.float32)

    backend = opval._opval.callable_backend("python:probe", "test", lambda p: None, execute)
    for name, numpy_type in [("f4_e2m1", ml_dtypes.float4_e2m1fn), ("f6_e3m2", ml_dtypes.float6_e3m2fn),
                             ("f8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz), ("i4", ml_dtypes.int4)]:
        opval._opval.run_case(opval.Problem(f"cast shape=64 dt={name}:f32:f32"), backend, opval.RunOptions())
        assert seen["dtype"] == np.dtype(numpy_type) and seen["dtype"].itemsize == 1
        np.testing.assert_array_equal(seen["in"], seen["expected"])


@pytest.mark.parametrize("contract", ["f32", "bf16:f32:bf16", "f16", "f8_e4m3:f32:f32", "f8_e5m2:f32:f32", "i8:i32:i8", "f64"])
def test_tensors_export_through_dlpack_in_their_own_types_without_copying(contract):
    """torch.from_dlpack and jax.dlpack.from_dlpack take opval's tensors (a transposed view
    included) in their own element types, bf16 and fp8 too; torch shares the memory."""
    import jax
    import torch

    jax.config.update("jax_enable_x64", True)
    a = opval.Problem(f"matmul m=3 n=4 k=5 ta=1 dt={contract}").make_inputs(1)[0]
    view = opval.to_numpy(a)
    assert a.__dlpack_device__() == (1, 0)
    t = torch.from_dlpack(a)
    names = {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
    assert str(t.dtype).removeprefix("torch.") == names.get(view.dtype.name, view.dtype.name)
    assert t.data_ptr() == view.ctypes.data and tuple(t.stride()) == tuple(a.strides)
    assert np.array_equal(t.float().numpy(), view.astype(np.float32))
    j = jax.dlpack.from_dlpack(a)
    assert j.dtype == view.dtype and np.array_equal(np.asarray(j).astype(np.float32), view.astype(np.float32))
    t[0, 0] = 0  # a write through torch lands in opval's tensor
    assert a.to_list()[0] == 0


def test_dlpack_refuses_what_it_cannot_give():
    a = opval.Problem("relu shape=4 dt=f32").make_inputs(1)[0]
    with pytest.raises(BufferError, match="without copying"):
        a.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="host memory"):
        a.__dlpack__(dl_device=(2, 0))
    assert np.from_dlpack(a).ctypes.data == opval.to_numpy(a).ctypes.data
    b = opval.Problem("relu shape=4 dt=f64").make_inputs(1)[0]
    import jax

    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(TypeError, match="jax_enable_x64"):
            opval.to_jax(b)
    finally:
        jax.config.update("jax_enable_x64", True)


def test_arrays_outlive_the_case_safely():
    kept = []

    def execute(problem, inputs, outputs):
        kept.append(opval.to_numpy(inputs[0]))
        opval.to_numpy(outputs[0])[...] = np.maximum(kept[-1], 0)

    backend = opval._opval.callable_backend("python:keep", "test", lambda p: None, execute)
    r = opval._opval.run_case(opval.Problem("relu shape=64 dt=f32"), backend, opval.RunOptions())
    assert r.state == "PASSED", r.reason
    assert kept[0].shape == (64,) and np.isfinite(kept[0]).all()  # still readable after the case


def test_core_diagnostics_reach_pythons_logging(caplog):
    opval.set_log_level(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="opval"):
            opval.check("relu", lambda x: np.maximum(x, np.float32(0)), contracts="f32", problems=["relu shape=8 dt=f32"])
        assert any("relu shape=8" in r.message and "PASSED" in r.message for r in caplog.records)
    finally:
        opval.set_log_level(logging.WARNING)


def test_checked_in_stubs_match_the_module(tmp_path):
    """python/opval/_opval.pyi is what nanobind's stubgen writes for the built module:
    regenerate it (see docs/PYTHON.md) after changing the bindings."""
    out = tmp_path / "_opval.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "opval._opval", "-o", str(out)], check=True)
    assert out.read_text() == (ROOT / "python/opval/_opval.pyi").read_text()
