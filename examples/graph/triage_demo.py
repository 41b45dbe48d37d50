"""Graph triage demonstrated (docs/GRAPH.md, "Triage"): on the MLP, the CNN and the transformer
block, a fault planted at each level — compiler, runtime dispatch, kernel — triaged to its node
and stage, with a minimal reproducer checked to fail the same way; ONNX Runtime's own gelu
approximation on the erf-chain block; and the correct stacks, in float32 and float16, blaming
nothing.

    .venv/bin/python examples/graph/triage_demo.py [--out results/triage_demo]

Prints one row per triage and exits 1 when any row is not what it should be.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults import DispatchingStack, RewritingOrt, gelu_to_tanh, gemm_scale_misfolded  # noqa: E402
from models import cnn, mlp, transformer_block  # noqa: E402

from opval import reproducer, triage  # noqa: E402
from opval.graph_stacks import BackendStack, OrtStack  # noqa: E402

# Per model: the node a compiler pass rewrites (and the pass), the matmul a wrong kernel runs.
PLANTED = {
    "mlp": (mlp, "head", RewritingOrt("GemmScaleFolding", gemm_scale_misfolded("head")), "fc1", (8, 64, 64)),
    "cnn": (cnn, "fc", RewritingOrt("GemmScaleFolding", gemm_scale_misfolded("fc")), "fc", (2, 10, 16)),
    "transformer_block": (transformer_block, "gelu", RewritingOrt("GeluTanhApproximation", gelu_to_tanh), "ff_down",
                          (16, 32, 64)),
}


def cases():
    """(model name, dtype, build, fault, stack, expected node, expected blame)."""
    for name, (build, rewritten, compiler, matmul, shape) in PLANTED.items():
        yield name, np.float32, build, "compiler", compiler, rewritten, "compiler"
        yield name, np.float32, build, "runtime", DispatchingStack(shape), matmul, "runtime"
        yield name, np.float32, build, "kernel", DispatchingStack(shape, always=True), matmul, "kernel"
    erf_block = lambda dtype: transformer_block(dtype, gelu="erf_chain")  # noqa: E731
    gelu_approximation = OrtStack(session_config={"optimization.enable_gelu_approximation": "1"})
    yield "transformer_block (erf gelu)", np.float32, erf_block, "ORT gelu approximation", gelu_approximation, "gelu", \
        "compiler"
    for name, (build, *_rest) in PLANTED.items():
        for dtype in (np.float32, np.float16):
            yield name, dtype, build, "none", OrtStack(), None, None
            yield name, dtype, build, "none", BackendStack("sim"), None, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write each reproducer bundle under this folder")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="opval_triage_demo_"))
    print(f"{'model':<29} {'type':<8} {'fault':<23} {'stack':<28} {'first node':<11} {'blame':<9} {'culprit':<56} "
          f"{'runs':>4} {'s':>5}  reproducer")
    wrong = 0
    for i, (name, dtype, build, fault, stack, node, blame) in enumerate(cases()):
        model, inputs = build(dtype)
        start = time.perf_counter()
        report = triage.triage(model, inputs, stack)
        seconds = time.perf_counter() - start
        first = report.first["node"] if report.first else "-"
        repro = "-"
        if report.first:
            r = reproducer.reproduce(model, inputs, stack, report, out / f"{i:02d}_{name.split()[0]}_{fault.split()[0]}")
            repro = f"{len(r.nodes)} node{'s' if len(r.nodes) != 1 else ''}, " + \
                ("fails the same way" if r.reproduced else "does NOT fail the same way")
        ok = first == (node or "-") and report.blame == blame
        wrong += not ok
        print(f"{name:<29} {np.dtype(dtype).name:<8} {fault:<23} {report.stack:<28} {first:<11} {report.blame or '-':<9} "
              f"{report.culprit or '-':<56.56} {report.runs:>4} {seconds:>5.2f}  {repro}{'' if ok else '  <- WRONG'}")
    print(f"\n{'all as planted' if not wrong else f'{wrong} rows not as planted'}; bundles under {out}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
