"""opval.check on NumPy kernels: planted bugs fail with an explanation, legitimate variants
(other summation orders, split-K, online softmax, Welford) pass, and what a kernel does not
support is SKIPPED with the reason."""
import inspect
import io

import numpy as np
import pytest

import numpy_kernels as K
from argument_testing import assert_names
import opval

MATMUL_F32 = ["matmul m=7 n=5 k=9 dt=f32", "matmul m=4 n=17 k=13 alpha=0.5 dt=f32",
              "matmul m=33 n=17 k=65 ta=1 dt=f32 fill=uniform", "matmul m=16 n=16 k=300 dt=f32"]
MATMUL_SUPPORT = {"bias": False, "beta": 0, "residual": False, "act": "none", "batch_a": [], "batch_b": []}
SOFTMAX_F32 = ["softmax shape=4x33 dt=f32 fill=normal", "softmax shape=3x5x7 axis=1 dt=f32 fill=large",
               "softmax shape=2x3x31 axis=-2 dt=f32 fill=normal", "softmax shape=6x100 dt=f32 fill=large"]
LAYER_NORM_F32 = ["layer_norm shape=5x17 dt=f32", "layer_norm shape=6x33 eps=0.1 dt=f32 fill=constant_rows",
                  "layer_norm shape=3x768 eps=1e-3 dt=f32 fill=uniform"]
ATTENTION_F32 = ["attention b=1 h=2 lq=5 lk=7 d=8 dt=f32 fill=normal",
                 "attention b=1 h=2 lq=7 lk=19 d=32 causal=top_left dt=f32 fill=uniform",
                 "attention b=2 h=1 lq=9 lk=12 d=16 causal=bottom_right dt=f32 fill=normal"]
ATTENTION_SUPPORT = {"mask": "none", "key_lengths": False, "hkv": [0]}


def matmul_check(kernel, problems=MATMUL_F32, **kw):
    return opval.check("matmul", kernel, contracts="f32", attrs=MATMUL_SUPPORT, problems=problems, **kw)


# ----------------------------------------------------------------------------- legitimate variants pass

@pytest.mark.parametrize("kernel", [K.matmul_f32, K.matmul_k_reversed, K.matmul_split_k, K.matmul_f64_accumulate])
def test_matmul_variants_pass(kernel):
    result = matmul_check(kernel).assert_ok()
    assert result.summary.passed == len(MATMUL_F32)


@pytest.mark.parametrize("kernel", [K.softmax, K.softmax_online])
def test_softmax_variants_pass(kernel):
    assert opval.check("softmax", kernel, contracts="f32", problems=SOFTMAX_F32).assert_ok().summary.passed == 4


@pytest.mark.parametrize("kernel", [K.layer_norm_two_pass, K.layer_norm_welford])
def test_layer_norm_variants_pass(kernel):
    result = opval.check("layer_norm", kernel, contracts="f32", attrs={"norm_axes": 1, "affine": True},
                         problems=LAYER_NORM_F32)
    assert result.assert_ok().summary.passed == 3


def test_attention_passes():
    result = opval.check("attention", K.attention, contracts="f32", attrs=ATTENTION_SUPPORT, problems=ATTENTION_F32)
    assert result.assert_ok().summary.passed == 3


def test_bf16_rounding_to_nearest_passes():
    result = opval.check("matmul", K.matmul_bf16_rne, contracts="bf16", attrs=MATMUL_SUPPORT,
                         problems=["matmul m=64 n=64 k=64 dt=bf16", "matmul m=7 n=5 k=9 dt=bf16"])
    assert result.assert_ok().summary.passed == 2


# ----------------------------------------------------------------------------- planted bugs fail, explained

def failing(result, count=None):
    """The check failed, every failure is explained and carries a repro call."""
    assert not result.passed
    assert result.failures and (count is None or len(result.failures) == count)
    text = result.explain()
    for r in result.failures:
        assert r.descriptor in text
        assert r.repro.startswith("opval.check(") and r.descriptor in r.repro
    return text


def test_dropped_k_term_fails():
    text = failing(matmul_check(K.matmul_dropped_k), count=len(MATMUL_F32))
    assert "FAILED" in text


def test_tile_edge_bug_fails_at_the_edge_columns():
    result = matmul_check(K.matmul_tile_edge_bug, problems=["matmul m=4 n=17 k=13 dt=f32", "matmul m=8 n=16 k=5 dt=f32"])
    failing(result, count=1)
    assert result.failures[0].descriptor.startswith("matmul m=4 n=17")
    metrics = result.failures[0].record()["outputs"][0]["metrics"]
    assert metrics["beyond_bound"] == 4  # the partial tile: column 16 of 4 rows
    assert all(w["index"][1] == 16 for w in metrics["worst"][:4])
    assert result.results[1].state == "PASSED"      # n=16 has no partial tile


def test_truncation_instead_of_rounding_fails_on_bias():
    result = opval.check("matmul", K.matmul_bf16_truncating, contracts="bf16", attrs=MATMUL_SUPPORT,
                         problems=["matmul m=64 n=64 k=64 dt=bf16"])
    text = failing(result, count=1)
    assert "bias" in text


def test_softmax_without_max_subtraction_fails_on_large_inputs():
    result = opval.check("softmax", K.softmax_no_max_subtraction, contracts="f32", problems=SOFTMAX_F32)
    failing(result)
    assert {r.descriptor for r in result.failures} >= {str(opval.Problem(SOFTMAX_F32[1])), str(opval.Problem(SOFTMAX_F32[3]))}


def test_wrong_eps_fails():
    result = opval.check("layer_norm", K.layer_norm_wrong_eps, contracts="f32", attrs={"norm_axes": 1, "affine": True},
                         problems=LAYER_NORM_F32)
    failing(result, count=2)  # eps=0.1 and eps=1e-3; the eps=1e-5 problem passes
    assert result.results[0].state == "PASSED"


def test_causal_mask_off_by_one_fails():
    result = opval.check("attention", K.attention_causal_off_by_one, contracts="f32", attrs=ATTENTION_SUPPORT,
                         problems=ATTENTION_F32)
    failing(result, count=2)  # both causal problems; the unmasked one passes
    assert result.results[0].state == "PASSED"


def test_kernel_writing_its_input_fails_naming_the_input():
    result = opval.check("softmax", K.softmax_writes_input, contracts="f32", problems=SOFTMAX_F32[:1])
    text = failing(result, count=1)
    assert "input" in text and "x" in result.failures[0].reason


# ----------------------------------------------------------------------------- what the kernel supports

def test_unsupported_problems_are_skipped_with_the_reason():
    result = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=MATMUL_SUPPORT, layouts="contiguous",
                         problems=["matmul m=7 n=5 k=9 dt=f32", "matmul m=7 n=5 k=9 dt=bf16",
                                   "matmul m=4 n=17 k=13 bias=1 dt=f32", "matmul m=4 n=5 k=6 ta=1 dt=f32",
                                   "matmul m=4 n=5 k=6 beta=0.5 dt=f32"])
    states = [(r.state, r.reason) for r in result.results]
    assert states[0] == ("PASSED", "")
    assert states[1][0] == "SKIPPED" and "contract bf16:f32:bf16" in states[1][1]
    assert states[2][0] == "SKIPPED" and "bias=1" in states[2][1] or "bias=True" in states[2][1]
    assert states[3][0] == "SKIPPED" and "operand A" in states[3][1] and "contiguous" in states[3][1]
    assert states[4][0] == "SKIPPED" and "beta=0.5" in states[4][1]
    assert result.passed


def test_selectors_between_rank_and_where():
    result = opval.check("softmax", K.softmax, contracts="f32",
                         attrs={"shape": opval.rank(2), "axis": opval.between(-1, -1)},
                         supports=lambda p: None if p.attrs["shape"][-1] < 50 else "rows longer than 49",
                         problems=["softmax shape=4x33 dt=f32", "softmax shape=3x5x7 dt=f32",
                                   "softmax shape=4x33 axis=0 dt=f32", "softmax shape=2x64 dt=f32"])
    reasons = [r.reason for r in result.results]
    assert result.results[0].state == "PASSED"
    assert "rank 2" in reasons[1] and "axis=0" in reasons[2] and "-1 to -1" in reasons[2]
    assert reasons[3] == "rows longer than 49"


def test_all_skipped_is_not_a_pass():
    result = opval.check("softmax", K.softmax, contracts="f16", problems=SOFTMAX_F32[:1])
    assert result.ran == 0 and not result.passed
    with pytest.raises(opval.CheckFailure, match="no case ran"):
        result.assert_ok()


# ----------------------------------------------------------------------------- declining at run time

def _softmax_of_short_rows(x, *, axis):
    """softmax for rows of at most 32 elements; longer ones are declined when met."""
    if x.shape[axis] > 32:
        raise opval.Unsupported(f"rows of {x.shape[axis]} are longer than the kernel's 32")
    return K.softmax(x, axis=axis)


def test_unsupported_raised_at_run_time_skips_the_case_with_its_reason():
    result = opval.check("softmax", _softmax_of_short_rows, contracts="f32", problems=SOFTMAX_F32)
    states = [(r.state, r.reason if r.state == "SKIPPED" else "") for r in result.results]
    assert states == [("SKIPPED", "rows of 33 are longer than the kernel's 32"), ("PASSED", ""), ("PASSED", ""),
                      ("SKIPPED", "rows of 100 are longer than the kernel's 32")]
    assert result.passed and result.tracebacks == {}  # a decline is not a failure: no traceback kept
    assert (result.summary.passed, result.summary.skipped, result.summary.failures) == (2, 2, 0)


def test_unsupported_without_a_reason_and_from_supports_are_skipped_too():
    def declines(x, *, axis):
        raise opval.Unsupported()

    def supports(p):
        raise opval.Unsupported("decided in supports")

    assert [r.reason for r in opval.check("softmax", declines, contracts="f32", problems=SOFTMAX_F32[:1]).results] == \
        ["the kernel raised opval.Unsupported without a reason"]
    skipped = opval.check("softmax", K.softmax, contracts="f32", supports=supports, problems=SOFTMAX_F32[:1]).results[0]
    assert (skipped.state, skipped.reason) == ("SKIPPED", "decided in supports")


def test_a_decline_on_the_poison_rerun_is_skipped_and_says_so():
    calls = []

    def first_call_only(x, *, axis):
        calls.append(1)
        if len(calls) > 1:
            raise opval.Unsupported("scratch gone")
        return K.softmax(x, axis=axis)

    r = opval.check("softmax", first_call_only, contracts="f32", problems=SOFTMAX_F32[:1]).results[0]
    assert (r.state, r.reason) == ("SKIPPED", "declined the problem on a rerun: scratch gone")
    calls.clear()  # without the poison rerun, only the perturbation rerun declines: the verdict stands
    assert opval.check("softmax", first_call_only, contracts="f32", problems=SOFTMAX_F32[:1],
                       poison=False).results[0].state == "PASSED"


def test_declined_after_writing_its_input_fails():
    def writes_then_declines(x, *, axis):
        x[0, 0] = 42
        raise opval.Unsupported("changed my mind")

    r = opval.check("softmax", writes_then_declines, contracts="f32", problems=SOFTMAX_F32[:1]).results[0]
    assert r.state == "FAILED"
    assert "kernel wrote input 'x'" in r.reason and r.reason.endswith("; the kernel then declined the problem: changed my mind")


# ----------------------------------------------------------------------------- contracts with options

RELU_F32 = ["relu shape=8 dt=f32", "relu shape=8 dt=f32 denorm=ftz"]
MATMUL_ROUNDINGS = ["matmul m=4 n=5 k=6 dt=f32", "matmul m=4 n=5 k=6 dt=f32 acc_round=rz"]


def _relu(x):
    return np.maximum(x, np.float32(0))


def test_a_kernel_declared_f32_is_not_run_on_contracts_with_options():
    result = opval.check("relu", _relu, contracts="f32", problems=RELU_F32)
    assert [r.state for r in result.results] == ["PASSED", "SKIPPED"]
    assert result.results[1].reason == "contract f32:f32:f32 denorm=ftz is not one the kernel implements (f32:f32:f32)"
    rz = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=MATMUL_SUPPORT, problems=MATMUL_ROUNDINGS)
    assert [r.state for r in rz.results] == ["PASSED", "SKIPPED"] and "acc_round=rz" in rz.results[1].reason


def test_contracts_declared_with_options_run_those_problems_only():
    result = opval.check("relu", _relu, contracts=["f32 denorm=ftz"], problems=RELU_F32)
    assert [r.state for r in result.results] == ["SKIPPED", "PASSED"]
    assert result.results[0].reason == "contract f32:f32:f32 is not one the kernel implements (f32:f32:f32 denorm=ftz)"
    both = opval.check("relu", _relu, contracts=["f32", "dt=f32:f32:f32 denorm=ftz"], problems=RELU_F32)
    assert [r.state for r in both.results] == ["PASSED", "PASSED"]


SOFTMAX_ULPS = ["softmax shape=4x33 dt=f32 ulp=opencl", "softmax shape=4x33 dt=f32 ulp=exp:3,div:2.5",
                "softmax shape=4x33 dt=f32"]


@pytest.mark.parametrize("declared", ["f32 ulp=opencl", "f32 ulp=exp:3,div:2.5"])
def test_ulp_presets_and_their_expansion_match_on_the_functions_the_op_reads(declared):
    result = opval.check("softmax", K.softmax, contracts=declared, problems=SOFTMAX_ULPS)
    assert [r.state for r in result.results] == ["PASSED", "PASSED", "SKIPPED"]
    assert result.results[2].reason == ("contract f32:f32:f32 is not one the kernel implements "
                                        "(f32:f32:f32 ulp=exp:3,div:2.5)")
    # relu reads no elementary function: any ulp= declaration implements its f32 problems.
    assert opval.check("relu", _relu, contracts=declared, problems=RELU_F32[:1]).results[0].state == "PASSED"


def test_problem_implemented_by_is_the_shared_matching():
    p = opval.Problem("softmax shape=4x33 dt=f32 ulp=opencl")
    assert p.implemented_by(opval.Contract("f32 ulp=opencl")) and p.implemented_by(opval.Contract("f32 ulp=exp:3,div:2.5"))
    assert not p.implemented_by(opval.Contract("f32")) and not p.implemented_by(opval.Contract("f32 ulp=exp:3"))
    assert str(p.contract_as_read(opval.Contract("f32 ulp=opencl"))) == "dt=f32:f32:f32 ulp=exp:3,div:2.5"


# ----------------------------------------------------------------------------- the calling convention

def test_wrong_output_type_fails_and_says_so():
    def returns_f64(x, *, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True, dtype=np.float64)

    result = opval.check("softmax", returns_f64, contracts="f32", problems=SOFTMAX_F32[:1])
    failing(result, count=1)
    assert "returned float64" in result.failures[0].reason and "f32" in result.failures[0].reason


def test_exception_fails_the_case_with_its_traceback():
    def raises(x):
        raise RuntimeError("kernel exploded")

    result = opval.check("softmax", raises, contracts="f32", problems=SOFTMAX_F32[:2])
    failing(result, count=2)
    assert "RuntimeError: kernel exploded" in result.failures[0].reason
    assert "Traceback" in result.explain() and "kernel exploded" in result.explain()


def test_unknown_keyword_parameter_is_an_error_up_front():
    def typo(x, *, axes):
        return x

    with pytest.raises(TypeError, match="axes .*not an attribute of softmax"):
        opval.check("softmax", typo)


def test_unknown_op_attr_or_contract_is_an_error():
    with pytest.raises(ValueError, match="unknown op|no op|known"):
        opval.check("softmaxx", K.softmax)
    with pytest.raises(ValueError, match="no attribute 'axes'"):
        opval.check("softmax", K.softmax, attrs={"axes": 1})
    with pytest.raises(ValueError):
        opval.check("softmax", K.softmax, contracts="f33")


# ----------------------------------------------------------------------------- arguments

# (parameter, bad value, the error): a wrong type is a TypeError, a value out of range a ValueError.
BAD_CHECK_ARGUMENTS = [
    ("op", 123, TypeError), ("op", None, TypeError), ("impl", None, TypeError), ("impl", "softmax", TypeError),
    ("contracts", 32, TypeError), ("contracts", ["f32", 16], TypeError), ("attrs", ["axis"], TypeError),
    ("layouts", 3, TypeError), ("layouts", "dense", ValueError), ("supports", "yes", TypeError),
    ("tag", 5, TypeError), ("tag", None, TypeError), ("problems", 3, TypeError), ("problems", [3], TypeError),
    ("arrays", 3, TypeError), ("arrays", "cupy", ValueError), ("name", 3, TypeError), ("policy", 3, TypeError),
    ("seed", -1, ValueError), ("seed", 2**64, ValueError), ("seed", "1", TypeError), ("seed", True, TypeError),
    ("seed", 1.5, TypeError), ("guard", "yes", TypeError), ("guard_before", 1, TypeError), ("poison", None, TypeError),
    ("input_check", "no", TypeError), ("perturb", 0, TypeError), ("worst", -1, ValueError), ("worst", 1001, ValueError),
    ("worst", "5", TypeError), ("threads", 4, TypeError), ("threads", [0], ValueError), ("threads", ["2"], TypeError),
    ("leak_check", -1, ValueError), ("reference", 3, TypeError), ("raise_on_failure", "yes", TypeError),
    ("verbose", "x", TypeError),
]


def counting_softmax():
    """A correct softmax kernel that counts its calls: a refused argument calls it never."""
    def kernel(x, *, axis):
        kernel.calls += 1
        return K.softmax(x, axis=axis)

    kernel.calls = 0
    return kernel


@pytest.mark.parametrize("parameter, value, error", BAD_CHECK_ARGUMENTS,
                         ids=[f"{p}={v!r}" for p, v, _ in BAD_CHECK_ARGUMENTS])
def test_a_bad_argument_is_one_error_naming_the_parameter(parameter, value, error):
    kernel = counting_softmax()
    arguments = {"op": "softmax", "impl": kernel, "contracts": "f32", "problems": SOFTMAX_F32[:1], parameter: value}
    with pytest.raises(error) as caught:
        opval.check(**arguments)
    assert_names(caught, "opval.check", parameter)
    assert kernel.calls == 0


@pytest.mark.parametrize("function", [opval.check, opval.kernel_backend], ids=lambda f: f.__name__)
def test_every_parameter_is_checked_before_anything_runs(function):
    """Every public parameter, an object of no type it takes: a TypeError naming it."""
    kernel = counting_softmax()
    for parameter in inspect.signature(function).parameters:
        arguments = {"op": "softmax", "impl": kernel, "contracts": "f32", parameter: object()}
        if function is opval.check:
            arguments.setdefault("problems", SOFTMAX_F32[:1])
        with pytest.raises(TypeError) as caught:
            function(**arguments)
        assert_names(caught, f"opval.{function.__name__}", parameter)
    assert kernel.calls == 0


def test_a_tag_that_does_not_exist_is_an_error_as_in_opval_run():
    """The selection that matches nothing is named, as opval.run names it: not a green, empty
    result."""
    kernel = counting_softmax()
    with pytest.raises(ValueError, match=r"unknown suite tag 'nonexistent' \(known: smoke regression generated\)") as caught:
        opval.check("softmax", kernel, tag="nonexistent")
    with pytest.raises(ValueError) as from_run:
        opval.run(["sim"], tag="nonexistent", out=io.StringIO())
    assert str(caught.value) == str(from_run.value)
    assert kernel.calls == 0


def test_the_op_may_be_an_op_object_and_one_string_is_one_problem():
    result = opval.check(opval.find_op("softmax"), K.softmax, contracts=("f32",), problems=SOFTMAX_F32[0])
    assert result.assert_ok().summary.passed == 1


def test_kernel_receives_out_and_problem_when_it_names_them():
    seen = []

    def writes_out(x, *, out, problem):
        seen.append(str(problem))
        out[...] = K.softmax(x, axis=problem.attrs["axis"])

    opval.check("softmax", writes_out, contracts="f32", problems=SOFTMAX_F32[:1]).assert_ok()
    assert seen and seen[0] == str(opval.Problem(SOFTMAX_F32[0]))


def test_unwritten_output_is_caught_by_poisoning():
    def writes_half(x, *, axis, out):
        y = K.softmax(x, axis=axis)
        out[: out.shape[0] // 2] = y[: out.shape[0] // 2]

    result = opval.check("softmax", writes_half, contracts="f32", problems=SOFTMAX_F32[:1])
    failing(result, count=1)
    assert "never written" in result.failures[0].reason


def test_assert_ok_raises_with_the_explanation_and_repro():
    with pytest.raises(opval.CheckFailure) as caught:
        matmul_check(K.matmul_dropped_k, problems=MATMUL_F32[:1], raise_on_failure=True)
    message = str(caught.value)
    assert "matmul_dropped_k" in message and "opval.check('matmul', matmul_dropped_k" in message


def test_torch_and_jax_kernels_get_their_own_arrays_through_dlpack():
    """arrays="torch" / "jax": the kernel computes with the framework on opval's inputs; a
    correct one passes in bf16, a dropped k term fails."""
    import jax
    import jax.numpy as jnp
    import torch

    jax.config.update("jax_enable_x64", True)
    bf16 = ["matmul m=7 n=5 k=9 dt=bf16:f32:bf16", "matmul m=33 n=17 k=65 ta=1 dt=bf16:f32:bf16"]

    def torch_matmul(A, B, *, alpha):
        assert isinstance(A, torch.Tensor) and A.dtype == torch.bfloat16
        return (alpha * (A.float() @ B.float())).to(torch.bfloat16)

    def jax_matmul(A, B, *, alpha):
        assert A.dtype == jnp.bfloat16
        return (alpha * jnp.matmul(A.astype(jnp.float32), B.astype(jnp.float32), precision="highest")).astype(jnp.bfloat16)

    def jax_dropped_k(A, B, *, alpha):
        return jax_matmul(A[:, :-1], B[:-1, :], alpha=alpha)

    for kernel, arrays in ((torch_matmul, "torch"), (jax_matmul, "jax")):
        result = opval.check("matmul", kernel, contracts="bf16", attrs=MATMUL_SUPPORT, problems=bf16, arrays=arrays)
        assert result.passed, result.explain()
    failing(opval.check("matmul", jax_dropped_k, contracts="bf16", attrs=MATMUL_SUPPORT, problems=bf16, arrays="jax"),
            count=len(bf16))
