"""opval.judge: verdicts on arrays the caller has, from NumPy, torch, JAX, any DLPack producer
and files (.npy, .npz, .pt). A correctly rounded cast and a correct matmul pass; a truncating
cast fails on the bias test and one ULP on one element of a bf16 matmul fails with the
element named; a mismatch with the problem's operands is a ValueError naming the operand."""
import json
import subprocess

import ml_dtypes
import numpy as np
import pytest

import opval

CAST = "cast shape=4099 dt=f32:f32:bf16"
MATMUL = "matmul m=24 n=40 k=33 dt=bf16:f32:bf16"


def cast_input(seed=1):
    return np.random.default_rng(seed).standard_normal(4099).astype(np.float32)


def truncated_to_bf16(x):
    """Each f32's top 16 bits: rounding toward zero where round-to-nearest is promised."""
    return (x.view(np.uint32) >> 16).astype(np.uint16).view(ml_dtypes.bfloat16)


def matmul_case(seed=2):
    """bf16 inputs and a correct bf16 output: fp64 products and sums, rounded once."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((24, 33)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((33, 40)).astype(ml_dtypes.bfloat16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return a, b, exact, exact.astype(np.float32).astype(ml_dtypes.bfloat16)


def test_a_correctly_rounded_cast_passes_and_a_truncating_one_fails_on_bias():
    x = cast_input()
    ok = opval.judge(CAST, inputs=x, outputs=x.astype(ml_dtypes.bfloat16))
    assert ok.state == "PASSED", ok.reason
    assert ok.backend == "judge" and "rerun the kernel" in ok.not_applicable
    bad = opval.judge(CAST, inputs={"x": x}, outputs={"y": truncated_to_bf16(x)})
    assert bad.state == "FAILED"
    bias = bad.record()["outputs"][0]["metrics"]["bias"]
    assert bias["biased"] and bias["sign_relative_mean"] < -0.3, bias["note"]


def test_one_ulp_on_one_element_of_a_bf16_matmul_fails_naming_it():
    a, b, exact, c = matmul_case()
    assert opval.judge(MATMUL, inputs=[a, b], outputs=c).state == "PASSED"
    bits = c.view(np.uint16).copy()
    # One ULP away from the exact value: a step of the bits' magnitude, up when c already lies
    # beyond the exact value in magnitude, down otherwise.
    outward = abs(float(c[5, 17])) >= abs(exact[5, 17])
    bits[5, 17] = int(bits[5, 17]) + (1 if outward else -1)
    r = opval.judge(MATMUL, inputs={"A": a, "B": b}, outputs={"dst": bits.view(ml_dtypes.bfloat16)})
    assert r.state == "FAILED", r.reason
    assert "worst at [5,17]" in r.reason
    assert r.record()["outputs"][0]["metrics"]["beyond_bound"] == 1


def test_torch_and_jax_arrays_bf16_and_fp8_included():
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    x = cast_input(3)
    assert opval.judge(CAST, inputs=torch.from_numpy(x), outputs=torch.from_numpy(x).to(torch.bfloat16)).state == "PASSED"
    assert opval.judge(CAST, inputs=jnp.asarray(x), outputs=jnp.asarray(x).astype(jnp.bfloat16)).state == "PASSED"
    fp8 = "cast shape=4099 dt=f32:f32:f8_e4m3"
    small = (x / 8).astype(np.float32)
    assert opval.judge(fp8, inputs=small, outputs=torch.from_numpy(small).to(torch.float8_e4m3fn)).state == "PASSED"
    assert opval.judge(fp8, inputs=small, outputs=small.astype(ml_dtypes.float8_e4m3fn)).state == "PASSED"


def test_ml_dtypes_types_opval_lacks_are_refused_and_e5m2_files_read(tmp_path):
    x = cast_input(7) / 8
    with pytest.raises(ValueError, match="float8_e4m3b11fnuz, a type opval has no operand of"):
        opval.judge("cast shape=4099 dt=f32:f32:f8_e4m3", inputs=x, outputs=x.astype(ml_dtypes.float8_e4m3b11fnuz))
    np.save(tmp_path / "y.npy", x.astype(ml_dtypes.float8_e5m2))  # NumPy writes '<f1'
    np.save(tmp_path / "x.npy", x)
    r = opval.judge("cast shape=4099 dt=f32:f32:f8_e5m2", inputs=tmp_path / "x.npy", outputs=tmp_path / "y.npy")
    assert r.state == "PASSED", r.reason


def test_an_array_given_twice_is_an_error(tmp_path):
    a, b, _, c = matmul_case()
    np.savez(tmp_path / "one.npz", A=a, B=b)
    np.savez(tmp_path / "two.npz", A=a)
    with pytest.raises(ValueError, match="array 'A' is given twice"):
        opval.judge(MATMUL, inputs=[tmp_path / "one.npz", tmp_path / "two.npz"], outputs=c)


def test_any_dlpack_producer():
    torch = pytest.importorskip("torch")

    class OnlyDlpack:  # neither an ndarray nor array-like: DLPack alone
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    x = cast_input(4)
    r = opval.judge("cast shape=4099 dt=f32:f32:f32", inputs=OnlyDlpack(torch.from_numpy(x)),
                    outputs=OnlyDlpack(torch.from_numpy(x.copy())))
    assert r.state == "PASSED", r.reason


def test_files_npy_npz_pb_and_pt(tmp_path):
    torch = pytest.importorskip("torch")
    a, b, _, c = matmul_case(5)
    np.savez(tmp_path / "in.npz", A=a, B=b)  # NumPy stores bf16 as raw 'V2' records
    np.save(tmp_path / "dst.npy", c)
    assert opval.judge(MATMUL, inputs=tmp_path / "in.npz", outputs=tmp_path / "dst.npy").state == "PASSED"
    torch.save({"A": torch.from_numpy(a.view(np.uint16).astype(np.int32)).to(torch.int16).view(torch.bfloat16),
                "B": torch.from_numpy(b.view(np.uint16).astype(np.int32)).to(torch.int16).view(torch.bfloat16)},
               tmp_path / "in.pt")
    assert opval.judge(MATMUL, inputs=str(tmp_path / "in.pt"), outputs=tmp_path / "dst.npy").state == "PASSED"
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    for name, value in (("A", a), ("B", b), ("dst", c)):  # bf16 as ONNX stores it
        (tmp_path / f"{name}.pb").write_bytes(numpy_helper.from_array(value, name=name).SerializeToString())
    r = opval.judge(MATMUL, inputs=[tmp_path / "A.pb", tmp_path / "B.pb"], outputs=tmp_path / "dst.pb")
    assert r.state == "PASSED", r.reason
    (tmp_path / "in.csv").write_text("1,2\n")
    with pytest.raises(ValueError, match=r"reads arrays from \.npy, \.npz and ONNX TensorProto \.pb files"):
        opval.judge(MATMUL, inputs=tmp_path / "in.csv", outputs=c)


def test_the_cli_and_python_agree_on_the_same_files(tmp_path):
    x = cast_input(6)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", truncated_to_bf16(x))
    cli = subprocess.run([opval.worker_executable(), "judge", CAST, "--inputs", "x.npy", "--outputs", "y.npy",
                          "--jsonl", "r.jsonl"], cwd=tmp_path, capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    from_cli = json.loads((tmp_path / "r.jsonl").read_text())
    from_python = opval.judge(CAST, inputs=tmp_path / "x.npy", outputs=tmp_path / "y.npy").record()
    for key in ("state", "reason", "policy", "outputs"):
        assert from_cli[key] == from_python[key], key


@pytest.mark.parametrize("inputs, outputs, message", [
    ({"A": "bf16 24x33"}, None, r"no array for input 'B' \(the problem's inputs: A, B\)"),
    ({"A": "bf16 24x33", "B": "bf16 33x40", "C": "bf16 24x40"}, None, r"array 'C' names no input"),
    ({"A": "f32 24x33", "B": "bf16 33x40"}, None, r"input 'A': the array is stored as '<f4', the contract's type "
                                                  r"for it is bf16"),
    ({"A": "bf16 33x24", "B": "bf16 33x40"}, None, r"input 'A': the array's shape is \[33,24\], the problem's is "
                                                   r"\[24,33\]"),
    (None, {"dst": "f16 24x40"}, r"output 'dst': the array is stored as '<f2', the contract's type for it is bf16"),
])
def test_a_mismatch_with_the_operands_names_it(inputs, outputs, message):
    def arrays(spec):
        types = {"bf16": ml_dtypes.bfloat16, "f32": np.float32, "f16": np.float16}
        return {name: np.zeros([int(d) for d in text.split()[1].split("x")], types[text.split()[0]])
                for name, text in spec.items()}
    a, b, _, c = matmul_case()
    with pytest.raises(ValueError, match=message):
        opval.judge(MATMUL, inputs=arrays(inputs) if inputs else [a, b], outputs=arrays(outputs) if outputs else c)
