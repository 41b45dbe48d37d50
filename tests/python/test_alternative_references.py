"""Frameworks (and any backend) as alternative references: a correct kernel judged against
PyTorch, ONNX Runtime or JAX in float64 fails only where that framework itself differs from
opval's fp64 reference (and then the reason says so); planted bugs are still caught; a kernel
that follows a framework's semantics passes against it where it fails against opval's
reference; a reference at the contract doubles the bound; a problem the reference cannot
compute is SKIPPED naming it; and the automation entry point carries the reference into its
Python worker, its records and its repro commands."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest

import numpy_kernels as K
import opval
from opval import adapters

MATMUL_F32 = ["matmul m=7 n=5 k=9 dt=f32", "matmul m=33 n=17 k=65 ta=1 dt=f32 fill=uniform"]
MATMUL_SUPPORT = {"bias": False, "beta": 0, "residual": False, "act": "none", "batch_a": [], "batch_b": []}


@pytest.mark.parametrize("framework", adapters.REFERENCE_NAMES)
def test_a_correct_kernel_fails_only_where_the_framework_differs_from_opval(framework):
    """The sim emulates each contract exactly: against a framework in float64 on every op's
    smoke suite, each of its failures must name the reference as differing from opval's own."""
    outcome = opval.run(["sim"], tag="smoke", reference=framework, isolation="none", out=io.StringIO())
    judged = [r for r in outcome.results if r.state not in ("SKIPPED", "UNIMPLEMENTED")]
    assert len(judged) > 400, f"only {len(judged)} cases judged against {framework}"
    assert all(r.reference == f"{framework} (float64)" for r in outcome.results)
    unexplained = [f"{r.descriptor}: {r.reason}" for r in outcome.results
                   if r.failed and "itself differs from opval's fp64 reference" not in r.reason]
    assert not unexplained, "\n".join(unexplained[:10])
    skipped = [r for r in outcome.results if r.state == "SKIPPED"]
    assert all(r.reason.startswith(f"the reference {framework} (float64) cannot compute this problem: ") for r in skipped)
    # Where the framework agrees with opval, its note says how closely: float64 rounding only.
    agreeing = [r for r in judged if r.state == "PASSED"]
    assert agreeing and all("vs opval's fp64 reference: output '" in r.reference_note for r in agreeing)


def test_planted_bugs_are_caught_against_a_framework_reference():
    for reference in ("torch", "jax", "onnxruntime"):
        good = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=MATMUL_SUPPORT, problems=MATMUL_F32,
                           reference=reference)
        assert good.passed, good.explain()
        bad = opval.check("matmul", K.matmul_dropped_k, contracts="f32", attrs=MATMUL_SUPPORT, problems=MATMUL_F32,
                          reference=reference)
        assert len(bad.failures) == len(MATMUL_F32), bad
        assert all(f", reference='{reference}'" in r.repro for r in bad.failures)
    softmax = opval.check("softmax", K.softmax_no_max_subtraction, contracts="f32",
                          problems=["softmax shape=6x100 dt=f32 fill=large"], reference="torch")
    assert not softmax.passed


def gelu_like_torch(x):
    """gelu in float64 as torch computes it, -inf giving NaN (x * Phi(x) = -inf * 0), rounded
    to f32: what a kernel that follows torch's semantics does."""
    from math import erf, sqrt

    v = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        y = v * 0.5 * (1.0 + np.vectorize(lambda t: erf(t / sqrt(2.0)))(v))
    return y.astype(np.float32)


def test_a_kernel_with_a_frameworks_semantics_passes_against_it_only():
    """gelu(-inf): opval's reference is the limit, -0; torch gives NaN (docs/REFERENCES.md).
    A kernel doing what torch does fails against opval and passes against torch, and the
    record says that torch itself differs from opval there."""
    problem = ["gelu shape=257 dt=f32 fill=special"]
    own = opval.check("gelu", gelu_like_torch, problems=problem)
    assert not own.passed and "NaN mismatches" in own.failures[0].reason
    against_torch = opval.check("gelu", gelu_like_torch, problems=problem, reference="torch")
    assert against_torch.passed, against_torch.explain()
    note = against_torch.results[0].reference_note
    assert note.startswith("torch (float64) vs opval's fp64 reference: output 'y':") and "NaN mismatches" in note
    assert "the reference gives -nan, opval's -0" in note  # at an x = -inf, which the special fill always holds


def test_a_reference_at_the_contract_doubles_the_bound():
    result = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=MATMUL_SUPPORT, problems=MATMUL_F32,
                         reference="torch@contract")
    assert result.passed, result.explain()
    for r in result.results:
        assert r.reference == "torch (at the contract)"
        assert r.outputs[0].bound.startswith("2 x (") and "has the contract's rounding error too" in r.outputs[0].bound
    # A registered C++ backend is a reference at the contract too.
    sim = opval.check("matmul", K.matmul_f32, contracts="f32", attrs=MATMUL_SUPPORT, problems=MATMUL_F32, reference="sim")
    assert sim.passed and sim.results[0].reference == "sim (at the contract)"


def test_a_problem_the_reference_cannot_compute_is_skipped_naming_it():
    # ONNX Runtime's CPU provider has no float64 Conv.
    outcome = opval.run(["sim"], problems=["conv2d mb=1 ic=3 ih=9 iw=9 oc=4 kh=3 kw=3 dt=f32"], reference="onnxruntime",
                        isolation="none", out=io.StringIO())
    (r,) = outcome.results
    assert r.state == "SKIPPED"
    assert r.reason.startswith("the reference onnxruntime (float64) cannot compute this problem: onnxruntime cannot run Conv")


def test_run_carries_the_reference_into_the_python_worker_records_and_repro(tmp_path):
    """A framework reference is made by Python only: with process isolation, a C++ backend
    given by name runs in the Python worker, which makes the reference again from its name."""
    journal = tmp_path / "r.jsonl"
    out = io.StringIO()
    outcome = opval.run(["sim"], problems=["softmax shape=4x33 dt=f32 fill=normal", "gelu shape=257 dt=f32 fill=special"],
                        reference="jax", jsonl=str(journal), out=out)
    assert ", judged against the reference jax (float64)" in out.getvalue().splitlines()[0]
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [r["reference"] for r in records] == ["jax (float64)"] * 2
    assert records[0]["state"] == "PASSED" and "max |diff|" in records[0]["reference_note"]
    assert records[1]["state"] == "FAILED" and "itself differs from opval's fp64 reference" in records[1]["reason"]
    assert all(r["repro"].endswith(" --reference jax -v") and r["repro"].startswith("python -m opval run --backend sim")
               for r in records)
    assert outcome.summary.passed == 1 and outcome.summary.failed == 1


def test_bad_references_are_one_line_errors():
    with pytest.raises(ValueError, match="no_such_backend"):
        opval.run(["sim"], ops=["relu"], reference="no_such_backend", out=io.StringIO())
    cli = subprocess.run([sys.executable, "-m", "opval", "run", "--op", "relu", "--reference", "torch_compile@float"],
                         capture_output=True, text=True)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.count("\n") == 1 and "torch_compile@float" in cli.stderr, cli.stderr
