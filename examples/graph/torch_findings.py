"""The two disagreements opval's graph triage found in PyTorch on the CPU (docs/GRAPH.md,
"PyTorch"), each reproduced without opval: the error of a float32 result against math.erf in
float64, in ULPs of float32 at the exact value and as an absolute error.

1. Inductor lowers aten.erf to its own vectorized erf, whose error is absolute (about 1e-7)
   rather than relative: for small arguments it is thousands of ULPs off — erf(1e-7) is 0,
   erf(1e-5) 1.7% low — where eager torch.erf is within one ULP.
2. Eager F.gelu (the exact, erf form) computes erf the same way: a few ULPs of the output off
   where the decomposed x/2 (1 + torch.erf(x/sqrt2)) stays within the rounding of its steps.

    .venv/bin/python examples/graph/torch_findings.py
"""
from __future__ import annotations

import math

import numpy as np
import torch


def errors(got: torch.Tensor, exact: np.ndarray) -> tuple[float, float]:
    """The largest error of `got` against `exact`, in float32 ULPs at the exact value, and absolute."""
    diff = np.abs(got.double().numpy() - exact)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return float(np.max(diff / ulp)), float(np.max(diff))


def main() -> None:
    x = torch.linspace(-1e-2, 1e-2, 200_001, dtype=torch.float32)
    exact_erf = np.vectorize(math.erf)(x.double().numpy())
    with torch.no_grad():
        compiled_erf = torch.compile(torch.erf, backend="inductor")(x)
    for name, got in (("eager torch.erf", torch.erf(x)), ("inductor torch.erf", compiled_erf)):
        ulps, absolute = errors(got, exact_erf)
        print(f"{name:<30} |x| <= 1e-2: max {ulps:10.1f} ULP, {absolute:.2e} absolute")

    x = torch.linspace(0, 3, 300_001, dtype=torch.float32)  # no cancellation in 1 + erf: ULPs mean something
    xd = x.double().numpy()
    exact_gelu = xd * 0.5 * (1 + np.vectorize(math.erf)(xd / math.sqrt(2)))
    decomposed = x * 0.5 * (1 + torch.erf(x * 0.7071067811865476))
    for name, got in (("eager F.gelu", torch.nn.functional.gelu(x)), ("x/2 (1 + torch.erf(x/sqrt2))", decomposed)):
        ulps, absolute = errors(got, exact_gelu)
        print(f"{name:<30} 0 <= x <= 3: max {ulps:10.1f} ULP, {absolute:.2e} absolute")


if __name__ == "__main__":
    main()
