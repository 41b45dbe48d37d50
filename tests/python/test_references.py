"""opval's C++ fp64 references, cross-checked against PyTorch float64 on every op's smoke and
regression suites: the torch adapter's mapping of each op, run in float64 on the very inputs
opval fills, must agree with opval's reference to within float64 rounding."""
import numpy as np
import pytest
import torch

import opval
from opval.adapters.base import format_refusal
from opval.adapters.pytorch import OPS, to_compute
from opval.adapters.rounding import round_to_output

ALL_OPS = sorted(op.name for op in opval.ops())


def scale_of(arrays):
    """The largest finite magnitude among arrays: the scale of float64 rounding errors."""
    finite = [np.abs(a[np.isfinite(a)]).max() for a in arrays if a.size and np.isfinite(a).any()]
    return max([1.0] + finite)


def documented_torch_difference(p, inputs, got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Elements where torch is known to differ from opval by design, each checked to be
    exactly that difference (docs/REFERENCES.md):
    - gelu and silu at x = -inf: torch computes -inf * 0 = NaN; opval gives the limit, -0;
    - casts to f8_e4m3 without saturate=1: torch's float8_e4m3fn conversion saturates (Inf and
      values past 464 become +-448); opval's (OCP e4m3fn, IEEE-style overflow) gives NaN;
    - attention without a mask, with fewer keys than a vector (lk < 16 in f32, < 8 in f64): for
      a query row whose logits are all NaN, torch's CPU flash kernel outputs 0, where its math
      backend, and opval, give NaN;
    - a max over nothing with an integer output: opval's reference is the identity in the
      output type, its lowest value (docs/SAFETY.md); torch, in float64, gives -inf;
    - layer_norm's mean output (stats=1) of a row holding one infinity: torch's Welford update
      meets Inf - Inf and gives NaN; opval gives the mean's value, that infinity."""
    exempt = np.zeros(ref.shape, dtype=bool)
    if p.op in ("gelu", "silu"):
        x = opval.to_numpy(inputs[0]).astype(np.float64)
        exempt = np.isneginf(x)
        assert np.isnan(got[exempt]).all() and (ref[exempt] == 0).all()
    if p.op == "cast" and p.contract.dst == opval.dtype.f8_e4m3 and not p.get("saturate"):
        exempt = np.isnan(ref) & ~np.isnan(opval.to_numpy(inputs[0]).astype(np.float64))
        assert (np.abs(got[exempt]) == 448).all()
    if p.op == "reduce" and p.get("kind") == "max" and not opval.dtype_info(p.contract.dst).is_float:
        exempt = np.isneginf(got) & (ref == opval.dtype_info(p.contract.dst).lowest)
    if p.op == "attention" and p.get("mask") == "none" and not p.get("key_lengths") and p.get("lk") < 16:
        exempt = np.isnan(ref) & (got == 0)
    if p.op == "layer_norm" and p.get("stats"):
        exempt = exempt | (np.isinf(ref) & np.isnan(got))
    return exempt


def converted(p, result: torch.Tensor, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cast's reference is the converted value (saturation, NaN to 0, bools): compare the
    torch conversion of torch's result with opval's rounding of the reference to dst."""
    dst = p.contract.dst
    got = round_to_output(opval.from_any(result), dst).astype(np.float64)
    rounded = np.vectorize(lambda v: opval.round_to(dst, float(v)), otypes=[np.float64])(ref) if ref.size else ref
    return got, rounded


def disagreement(p, got: np.ndarray, ref: np.ndarray, inputs) -> str | None:
    """None when got matches ref: NaN where NaN, equal infinities, finite values within
    1e-9 of the scale of the case's values."""
    if got.shape != ref.shape:
        return f"shape {got.shape} vs {ref.shape}"
    keep = ~documented_torch_difference(p, inputs, got, ref)
    got, ref = np.where(keep, got, 0.0), np.where(keep, ref, 0.0)
    nan_got, nan_ref = np.isnan(got), np.isnan(ref)
    if (nan_got != nan_ref).any():
        i = np.argwhere(nan_got != nan_ref)[0]
        return f"NaN mismatch at {tuple(i)}: torch {got[tuple(i)]}, opval {ref[tuple(i)]}"
    inf = np.isinf(got) | np.isinf(ref)
    if (got[inf] != ref[inf]).any():
        i = np.argwhere(inf & (got != ref))[0]
        return f"infinity mismatch at {tuple(i)}: torch {got[tuple(i)]}, opval {ref[tuple(i)]}"
    finite = ~(nan_ref | inf)
    tol = 1e-9 * scale_of([ref] + [opval.to_numpy(t).astype(np.float64) for t in inputs])
    diff = np.abs(got[finite] - ref[finite])
    if diff.size and diff.max() > tol:
        i = np.argwhere(finite)[diff.argmax()]
        return f"at {tuple(i)}: torch {got[tuple(i)]!r}, opval {ref[tuple(i)]!r}, |diff| {diff.max():.3g} > {tol:.3g}"
    return None


@pytest.mark.parametrize("op", ALL_OPS)
def test_fp64_reference_agrees_with_torch_float64(op):
    # Adding an op needs no adapter edit (docs/ARCHITECTURE.md): an op the torch adapter does
    # not map is reported as skipped, by name, never as cross-checked.
    if op not in OPS:
        pytest.skip(f"the torch adapter does not map {op}: its reference is not cross-checked")
    impl = OPS[op]
    checked, refused, problems = 0, 0, []
    for tag in ("smoke", "regression"):
        for p, source in opval.suite_problems(tag, [op]):
            if (impl.supports and impl.supports(p)) or format_refusal(p, "torch"):
                refused += 1  # what the adapter refuses (its formats included) is not cross-checked
                continue
            inputs = p.make_inputs(1)
            operands = {o.name: to_compute(opval.to_torch(t), torch.float64) for o, t in zip(p.inputs(), inputs)}
            with torch.no_grad():
                results = impl.run(p, operands, torch.float64)
            for result, ref, operand in zip(results, p.reference(inputs), p.outputs()):
                got, expected = result.double().numpy(), opval.to_numpy(ref)
                if op == "cast":
                    got, expected = converted(p, result, expected)
                why = disagreement(p, got, expected, inputs)
                if why:
                    problems.append(f"{p} (output {operand.name}): {why}")
            checked += 1
    assert checked > 0, f"every {op} problem was refused by the torch mapping"
    assert refused <= checked, f"{op}: {refused} problems refused, only {checked} cross-checked"
    assert not problems, f"{len(problems)} of {checked} {op} problems disagree:\n" + "\n".join(problems[:20])
