"""Graph triage demonstrated (docs/GRAPH.md, "Triage"): on the MLP, the CNN and the transformer
block, a fault planted at each level — compiler, runtime dispatch, kernel — triaged to its node
and stage, with a minimal reproducer checked to fail the same way; ONNX Runtime's own gelu
approximation on the erf-chain block; an Inductor post-grad pass rewriting a pattern wrongly
under torch.compile, bisected by torch's compiler bisector; the correct stacks, in float32 and
float16 (and bfloat16 on torch.compile), blaming nothing; and the two real findings on the
unmodified torch.compile: Inductor's float32 erf, bisected to its erf lowering, and PyTorch's
float32 gelu kernel (docs/GRAPH.md, "PyTorch"). On IREE: a compile that demotes contraction
inputs to bf16, found among its numerics options; IREE blaming nothing in float32; and its
three real float16 findings (docs/GRAPH.md, "IREE"). On TensorFlow: Grappler's oneDNN bf16 auto
mixed precision, found among Grappler's optimizers, and TensorFlow blaming nothing in float32
and float16 (docs/GRAPH.md, "TensorFlow").

    .venv/bin/python examples/graph/triage_demo.py [--out results/triage_demo] [--ci]

Prints one row per triage and exits 1 when any row is not what it should be. --ci: the subset
CI runs (tests/python/test_graph_triage.py) — every ONNX Runtime and sim row (seconds in all),
and of torch.compile's, whose compiles take minutes, one Inductor pass, one correct compile per
type and the two real findings.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults import (DispatchingStack, RewritingOrt, addmm_bias_misscaled, gelu_to_tanh,  # noqa: E402
                    gemm_scale_misfolded, inductor_pass, variance_unbiased)
from models import cnn, mlp, transformer_block  # noqa: E402

from opval import reproducer, triage  # noqa: E402
from opval.graph_stacks import BackendStack, OrtStack, StackConfig  # noqa: E402
from opval.iree_stack import IreeStack  # noqa: E402
from opval.tf_stack import TfStack  # noqa: E402
from opval.torch_stack import TorchCompileStack  # noqa: E402

# Per model: the node a compiler pass rewrites (and the pass), the matmul a wrong kernel runs.
PLANTED = {
    "mlp": (mlp, "head", RewritingOrt("GemmScaleFolding", gemm_scale_misfolded("head")), "fc1", (8, 64, 64)),
    "cnn": (cnn, "fc", RewritingOrt("GemmScaleFolding", gemm_scale_misfolded("fc")), "fc", (2, 10, 16)),
    "transformer_block": (transformer_block, "gelu", RewritingOrt("GeluTanhApproximation", gelu_to_tanh), "ff_down",
                          (16, 32, 64)),
}


def cases(ci: bool = False):
    """(model name, dtype, build, fault, stack, expected node, expected blame); `ci`: the
    subset CI runs (see the module's text)."""
    for name, (build, rewritten, compiler, matmul, shape) in PLANTED.items():
        yield name, np.float32, build, "compiler", compiler, rewritten, "compiler"
        yield name, np.float32, build, "runtime", DispatchingStack(shape), matmul, "runtime"
        yield name, np.float32, build, "runtime (layout)", DispatchingStack(shape, fault="layout"), matmul, "runtime"
        yield name, np.float32, build, "kernel", DispatchingStack(shape, fault="always"), matmul, "kernel"
    erf_block = lambda dtype: transformer_block(dtype, gelu="erf_chain")  # noqa: E731
    gelu_approximation = OrtStack(session_config={"optimization.enable_gelu_approximation": "1"})
    yield "transformer_block (erf gelu)", np.float32, erf_block, "ORT gelu approximation", gelu_approximation, "gelu", \
        "compiler"
    for name, (build, *_rest) in PLANTED.items():
        for dtype in (np.float32, np.float16):
            yield name, dtype, build, "none", OrtStack(), None, None
            yield name, dtype, build, "none", BackendStack("sim"), None, None
    yield from iree_cases()
    yield from tensorflow_cases()
    yield from torch_cases(erf_block, ci)


def tensorflow_cases():
    """TensorFlow: Grappler's oneDNN bf16 auto mixed precision on each model, and the plain
    tf.function in float32 and float16."""
    mixed = TfStack(options=("auto_mixed_precision_onednn_bfloat16",))
    for name, build, node in (("mlp", mlp, "fc0"), ("cnn", cnn, "conv1"), ("transformer_block", transformer_block,
                                                                          "proj_q")):
        yield name, np.float32, build, "TF bf16 mixed precision", mixed, node, "compiler"
        for dtype in (np.float32, np.float16):
            yield name, dtype, build, "none", TfStack(), None, None


def iree_cases():
    """IREE: a compile with contraction inputs demoted to bf16 (with reductions reassociated
    beside it: two candidates to bisect) at O1, where IREE applies the demotion; the default
    compile (O3) in float32; and in float16 its three real findings, each a kernel IREE
    generates beyond the node's f16:f32:f16 contract at every level."""
    demoting = IreeStack(StackConfig(level="O1"), options=("reassociate-fp-reductions", "demote-contractions-to-bf16"))
    for name, build, node in (("mlp", mlp, "fc0"), ("cnn", cnn, "fc"), ("transformer_block", transformer_block, "proj_q")):
        yield name, np.float32, build, "IREE bf16 demotion", demoting, node, "compiler"
    for name, build in (("mlp", mlp), ("cnn", cnn), ("transformer_block", transformer_block)):
        yield name, np.float32, build, "none", IreeStack(), None, None
    yield "mlp", np.float16, mlp, "real: IREE's f16 Gemm", IreeStack(), "head", "kernel"
    yield "cnn", np.float16, cnn, "real: IREE's f16 pool", IreeStack(), "pool2", "kernel"
    yield "transformer_block", np.float16, transformer_block, "real: IREE's f16 Gelu", IreeStack(), "gelu", "kernel"


def torch_cases(erf_block, ci: bool = False):
    """torch.compile: a wrong Inductor post-grad pass on each model, the unmodified compiler in
    float32, float16 and bfloat16, and the two places where it is really off in float32: Inductor's
    erf (absolute error ~1e-7, so erf of small arguments loses all its digits) and PyTorch's gelu."""
    import ml_dtypes

    def rewriting(name, rewrite):
        return TorchCompileStack(inductor_config={"post_grad_custom_post_pass": inductor_pass(name, rewrite)})

    yield "mlp", np.float32, mlp, "Inductor pass", rewriting("addmm_bias_misscaled", addmm_bias_misscaled), "head", \
        "compiler"
    if not ci:
        yield "cnn", np.float32, cnn, "Inductor pass", rewriting("addmm_bias_misscaled", addmm_bias_misscaled), "fc", \
            "compiler"
        yield "transformer_block (erf gelu)", np.float32, erf_block, "Inductor pass", \
            rewriting("variance_unbiased", variance_unbiased), "ln1", "compiler"
    correct = (("mlp", mlp, np.float32), ("cnn", cnn, np.float16), ("transformer_block (erf gelu)", erf_block,
                                                                     ml_dtypes.bfloat16)) if ci else \
        [(name, build, dtype) for name, build in (("mlp", mlp), ("cnn", cnn), ("transformer_block (erf gelu)", erf_block))
         for dtype in (np.float32, np.float16, ml_dtypes.bfloat16)
         if not (build is erf_block and dtype is np.float32)]  # Inductor's own erf is really off there: below
    for name, build, dtype in correct:
        yield name, dtype, build, "none", TorchCompileStack(), None, None
    yield "transformer_block (erf gelu)", np.float32, erf_block, "real: Inductor's erf", TorchCompileStack(), \
        "gelu_erf", "compiler"
    yield "transformer_block", np.float32, transformer_block, "real: PyTorch's gelu", TorchCompileStack(), "gelu", \
        "kernel"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write each reproducer bundle under this folder")
    parser.add_argument("--ci", action="store_true", help="the subset CI runs: of torch.compile's rows, one Inductor "
                        "pass, one correct compile per type and the two real findings")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="opval_triage_demo_"))
    print(f"{'model':<29} {'type':<8} {'fault':<23} {'stack':<28} {'first node':<11} {'blame':<9} {'culprit':<84} "
          f"{'runs':>4} {'s':>5}  reproducer")
    wrong = 0
    for i, (name, dtype, build, fault, stack, node, blame) in enumerate(cases(args.ci)):
        model, inputs = build(dtype)
        start = time.perf_counter()
        report = triage.triage(model, inputs, stack)
        seconds = time.perf_counter() - start
        first = report.first["node"] if report.first else "-"
        repro = "-"
        if report.first:
            folder = out / f"{i:02d}_{name.split()[0]}_{fault.split()[0].rstrip(':')}"
            r = reproducer.reproduce(model, inputs, stack, report, folder)
            repro = f"{len(r.nodes)} node{'s' if len(r.nodes) != 1 else ''}, " + \
                ("fails the same way" if r.reproduced else "does NOT fail the same way")
        ok = first == (node or "-") and report.blame == blame
        wrong += not ok
        print(f"{name:<29} {np.dtype(dtype).name:<8} {fault:<23} {report.stack:<28} {first:<11} {report.blame or '-':<9} "
              f"{report.culprit or '-':<84.84} {report.runs:>4} {seconds:>5.2f}  {repro}{'' if ok else '  <- WRONG'}")
    print(f"\n{'all as planted' if not wrong else f'{wrong} rows not as planted'}; bundles under {out}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
