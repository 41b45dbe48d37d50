"""TensorFlow's three backends (eager, tf.function, XLA) and its float64 reference: each runs
what its name says, compiled functions are shared across cases of one key, the process-wide
settings that change numerics are made and checked, and what TensorFlow gets wrong is reported
as a failure with its reason, never computed around."""
import io

import pytest

pytest.importorskip("opval.adapters.tensorflow_cpu")  # TensorFlow through opval: its start-up notices left out

import opval  # noqa: E402
from opval import _opval  # noqa: E402
from opval.adapters.tensorflow_cpu import MODES, TfAdapter, tf  # noqa: E402

MATMUL = "matmul m=17 n=9 k=33 bias=1 act=relu dt=f32"


def run(adapter: TfAdapter, problems: list[str]):
    backend = _opval.callable_backend(adapter.name, adapter.version, adapter.supports, adapter.execute)
    return opval.run([backend], problems=problems, out=io.StringIO()).results


@pytest.mark.parametrize("name, says", [("tensorflow", "tensorflow eager"),
                                        ("tensorflow_function", "tf.function, Grappler"),
                                        ("tensorflow_xla", "jit_compile=True), XLA")])
def test_each_backend_runs_its_mode(name, says):
    adapter = TfAdapter(name)
    (result,) = run(adapter, [MATMUL])
    assert result.state == "PASSED", result.reason
    assert says in result.implementation and "float32 compute" in result.implementation
    assert adapter.compile_stats["traces"] == (0 if name == "tensorflow" else 1)


def test_cases_differing_in_fill_or_storage_type_share_one_trace():
    """The function is keyed by op, attributes, host choices and compute type: f32 and
    bf16:f32:bf16 cases of one shape arrive as the same float32 operands."""
    adapter = TfAdapter("tensorflow_function")
    results = run(adapter, [MATMUL, MATMUL + " fill=uniform", MATMUL.replace("dt=f32", "dt=bf16:f32:bf16")])
    assert [r.state for r in results] == ["PASSED"] * 3
    assert adapter.compile_stats == {"functions": 1, "traces": 1}


def test_numerics_settings_are_made_and_checked():
    """TF32 is turned off (TensorFlow enables it by default), and the flushing of subnormals
    is measured: denorm=ftz contracts pass, denorm=ieee ones that meet a subnormal fail."""
    adapter = TfAdapter("tensorflow")
    assert not tf.config.experimental.tensor_float_32_execution_enabled()
    assert adapter.flushes_subnormals
    ftz, ieee = run(adapter, ["relu shape=257 dt=f32 fill=special denorm=ftz", "relu shape=257 dt=f32 fill=special"])
    assert ftz.state == "PASSED", ftz.reason
    assert ieee.state == "FAILED" and "expected 7.3" in ieee.reason and "got 0" in ieee.reason


def test_contracts_tensorflow_cannot_honour_are_refused_with_the_reason():
    support = TfAdapter("tensorflow").supports(opval.Problem("matmul m=4 n=4 k=4 dt=f32@tf32:f32:f32"))
    assert "tf32" in support and "TensorFlow" in support
    assert TfAdapter("tensorflow").supports(opval.Problem("group_norm dt=f32"))[0] == "unimplemented"


def test_a_wrong_output_shape_from_tensorflow_fails_naming_it():
    """Conv2D on an empty batch returns the input's shape (a TensorFlow bug, tests/known_failures.txt)."""
    (result,) = run(TfAdapter("tensorflow"), ["conv2d mb=0 ic=3 oc=4 ih=5 iw=6 kh=3 kw=3 dt=f32"])
    assert result.state == "FAILED" and "of shape [0, 3, 5, 6], not [0, 4, 3, 4]" in result.reason


def test_unknown_mode_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown TensorFlow backend 'tensorflow_lite'.*tensorflow_xla"):
        TfAdapter("tensorflow_lite")
    assert set(MODES) == {"tensorflow", "tensorflow_function", "tensorflow_xla"}


def test_the_float64_reference_catches_a_planted_bug():
    import numpy_kernels as K

    support = {"bias": False, "beta": 0, "residual": False, "act": "none", "batch_a": [], "batch_b": []}
    problems = ["matmul m=7 n=5 k=9 dt=f32", "matmul m=33 n=17 k=65 ta=1 dt=f32 fill=uniform"]
    good = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=support, problems=problems, reference="tensorflow")
    assert good.passed, good.explain()
    assert all(r.reference == "tensorflow (float64)" for r in good.results)
    bad = opval.check("matmul", K.matmul_dropped_k, contracts="f32", attrs=support, problems=problems,
                      reference="tensorflow")
    assert len(bad.failures) == 2


def test_torch_compile_and_tensorflow_share_a_process():
    """Triton (torch.compile's) aborts the process when loaded after TensorFlow (LLVM's options
    registered twice); opval loads it first. A fresh process: TensorFlow through opval, then
    torch.compile, then TensorFlow again."""
    import subprocess
    import sys

    code = ("import io, opval\n"
            "o = opval.run(['tensorflow_xla', 'torch_compile', 'tensorflow'], problems=['relu shape=64 dt=f32'],"
            " isolation='none', out=io.StringIO())\n"
            "print([r.state for r in o.results])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("['PASSED', 'PASSED', 'PASSED']"), done.stdout
