"""The framework adapters as backends under test: every op's regression suite runs on PyTorch
eager, ONNX Runtime, JAX and TensorFlow (eager and tf.function), torch.compile, TensorFlow under
XLA and IREE run over the smoke suites, and every disagreement is a documented known failure
(tests/known_failures.txt, docs/REFERENCES.md) that still fails."""
import io
from pathlib import Path

import pytest

import opval
from opval import adapters

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "tests" / "known_failures.txt"
ALL_OPS = sorted(op.name for op in opval.ops())


def listed(backend: str) -> set[str]:
    """The descriptors tests/known_failures.txt lists for `backend` (canonical form)."""
    return set(opval.KnownFailures.load(str(KNOWN)).of_backend(backend))


def run_and_judge(backend_name: str, tag: str):
    # By name, so that the cases run in the Python worker process: a framework crash (there is
    # one in Inductor, docs/REFERENCES.md) is a CRASH verdict, not the end of pytest.
    outcome = opval.run([backend_name], tag=tag, known_failures=str(KNOWN), out=io.StringIO())
    unknown = [f"{r.descriptor}: {r.reason}" for r in outcome.results if r.failed and r.known_failure is None]
    assert not unknown, f"{len(unknown)} {backend_name} failures not in tests/known_failures.txt:\n" + "\n".join(unknown[:20])
    unexplained = [f"{r.descriptor}" for r in outcome.results if r.state in ("SKIPPED", "UNIMPLEMENTED") and not r.reason]
    assert not unexplained, f"skipped without a reason: {unexplained[:5]}"
    # Every op the adapter declares passes somewhere; every other op is refused by name.
    covered = adapters.covered_ops(backend_name)
    assert covered <= set(ALL_OPS), f"{backend_name} declares ops opval does not have: {covered - set(ALL_OPS)}"
    passed_ops = {r.op for r in outcome.results if r.state == "PASSED"}
    assert passed_ops == covered, f"ops with no passing case on {backend_name}: {covered - passed_ops}"
    uncovered = [r for r in outcome.results if r.op not in covered]
    assert all(r.state == "UNIMPLEMENTED" and "has no mapping for" in r.reason for r in uncovered), uncovered[:3]
    return outcome


# A heavy CI stage, time-budgeted (docs/PERFORMANCE.md, "This project's CI").
@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", ["torch", "onnxruntime", "jax", "tensorflow", "tensorflow_function"])
def test_framework_runs_every_ops_regression_suite(backend):
    outcome = run_and_judge(backend, "regression")
    failed = {r.descriptor for r in outcome.results if r.failed}
    ran = {r.descriptor for r in outcome.results}
    still_listed = {d for d in listed(backend) if d in ran}
    assert still_listed and still_listed <= failed, f"listed for {backend} but passing now: {sorted(still_listed - failed)[:10]}"


# The torch.compile smoke: a heavy CI stage, time-budgeted (docs/PERFORMANCE.md, "This project's CI").
@pytest.mark.timeout(600)  # 302 s in the clean-clone CI of 2026-12-06 (Inductor's caches cold)
def test_torch_compile_runs_the_smoke_suites_compiled():
    outcome = run_and_judge("torch_compile", "smoke")
    # Every case that produced a result (a CRASH has none) ran a compiled graph.
    ran = [r for r in outcome.results if r.state in ("PASSED", "FAILED", "MISTRUSTED")]
    assert ran and all("compile (inductor)" in r.implementation for r in ran)


# tensorflow_xla: XLA compiles each shape (the regression suite takes 97 s; its run is recorded in
# docs/REFERENCES.md), so CI runs the smoke suites (20 s).
@pytest.mark.timeout(300)
def test_tensorflow_xla_runs_the_smoke_suites_compiled():
    outcome = run_and_judge("tensorflow_xla", "smoke")
    ran = [r for r in outcome.results if r.state in ("PASSED", "FAILED", "MISTRUSTED")]
    assert ran and all("jit_compile=True), XLA" in r.implementation for r in ran)


# The IREE smoke: compile-heavy (a compile per distinct model, ~260 of them, about 2 minutes
# with a cold cache), time-budgeted; the regression suite's run is recorded in docs/REFERENCES.md.
@pytest.mark.timeout(600)
def test_iree_runs_the_smoke_suites_compiled():
    outcome = run_and_judge("iree", "smoke")
    ran = [r for r in outcome.results if r.state in ("PASSED", "FAILED", "MISTRUSTED")]
    assert ran and all(r.implementation.startswith("iree llvm-cpu") for r in ran)
    assert {d for d in listed("iree") if d in {r.descriptor for r in ran}} <= {r.descriptor for r in ran if r.failed}


def test_torch_compile_falling_back_to_eager_is_skipped_with_the_reason(monkeypatch):
    """A case Dynamo does not capture (here: an op body Dynamo is told to leave alone) is
    SKIPPED, never counted as a compiled pass."""
    import torch

    from opval.adapters import pytorch

    @torch._dynamo.disable
    def eager_only(p, x, compute):
        return [torch.relu(x["x"])]

    monkeypatch.setitem(pytorch.OPS, "relu", adapters.FrameworkOp(eager_only))
    outcome = opval.run([adapters.backend("torch_compile")], problems=["relu shape=64 dt=f32"], out=io.StringIO())
    (result,) = outcome.results
    assert result.state == "SKIPPED" and "Dynamo captured no graph" in result.reason


def test_refused_contracts_name_the_reason():
    backend = adapters.backend("torch")
    support = backend.supports(opval.Problem("matmul m=4 n=4 k=4 dt=tf32"))
    assert not support and "tf32" in support.reason and "torch" in support.reason


def test_check_hands_torch_tensors_on_request():
    import torch

    def torch_softmax(x, *, axis):
        assert isinstance(x, torch.Tensor)
        return torch.softmax(x.float(), dim=axis).to(x.dtype)

    result = opval.check("softmax", torch_softmax, contracts=["f32", "bf16:f32:bf16"], arrays="torch",
                         problems=["softmax shape=4x33 dt=f32", "softmax shape=8x64 dt=bf16"])
    assert result.assert_ok().summary.passed == 2
