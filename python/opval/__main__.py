"""python -m opval run ...: opval.run from the command line, for CI jobs (docs/PYTHON.md); python -m opval plot ...:
plots of opval bench results (docs/BENCHMARKING.md)."""
from __future__ import annotations

import argparse
import logging
import sys

from .runner import run


def _list(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["__worker"]:  # the child process of opval.runner.PythonWorker
        from .runner import worker_main

        return worker_main()
    parser = argparse.ArgumentParser(prog="python -m opval", description="Runs opval suites across backends from Python: "
                                     "C++ backends, plugins and the framework adapters (torch, torch.compile, onnxruntime, jax)")
    commands = parser.add_subparsers(dest="command", required=True)
    r = commands.add_parser("run", help="run suites or problems on backends; exit 0 when all that ran passed")
    r.add_argument("--backend", type=_list, default=["sim"], help="comma-separated backends: registered ones (opval list backends), framework adapters (torch, torch_compile) or plugin paths (default sim)")
    r.add_argument("--tag", default="smoke", choices=["smoke", "regression"], help="the suite (default smoke)")
    r.add_argument("--op", action="append", default=[], help="only this op (repeatable)")
    r.add_argument("--contract", action="append", default=[], help="only this dt contract (repeatable)")
    r.add_argument("--problems", action="append", help="a descriptor, a batch file or a shape set such as resnet50_conv (repeatable)")
    r.add_argument("--reference", help="judge against this instead of opval's fp64 reference: a framework in float64 "
                   "(torch, onnxruntime, jax), or any backend at the contract (onednn, torch@contract, a plugin path)")
    r.add_argument("--policy", default="bound")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--jsonl", help="write one JSON record per case (the CLI's schema) to FILE")
    r.add_argument("--known-failures", help="cases known to fail (tests/known_failures.txt's format)")
    r.add_argument("--isolation", choices=["process", "none"], default="process")
    r.add_argument("--timeout", type=float, default=60.0, help="per-case limit in a worker process, seconds")
    r.add_argument("--log-level", default="WARNING", help="the 'opval' logger's level (DEBUG shows every case)")
    r.add_argument("--log-file", help="also write the logs to FILE")
    r.add_argument("-v", "--verbose", action="store_true", help="explain every case")
    p = commands.add_parser("plot", help="plot opval bench --jsonl results: throughput against size, speed-up "
                            "against threads, the roofline")
    p.add_argument("results", nargs="+", help="opval bench --jsonl files")
    p.add_argument("--out", default=".", help="the folder to write the plots to (default .)")
    p.add_argument("--format", default="png", choices=["png", "svg"])
    p.add_argument("--machine-file", help="the peaks of opval bench --machine (default: where it saves them)")
    args = parser.parse_args(argv)
    if args.command == "plot":
        return _plot(args)

    from . import set_log_level

    level = logging.getLevelName(args.log_level.upper())
    if not isinstance(level, int):
        parser.error(f"unknown log level '{args.log_level}'")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    logging.basicConfig(format="%(name)s: %(levelname)s: %(message)s", handlers=handlers)
    set_log_level(level)
    try:
        outcome = run(args.backend, tag=args.tag, ops=args.op, contracts=args.contract, problems=args.problems,
                      policy=args.policy, seed=args.seed, jsonl=args.jsonl, known_failures=args.known_failures,
                      isolation=args.isolation, timeout=args.timeout, verbose=args.verbose, reference=args.reference)
    except (ValueError, OSError, TypeError) as e:
        print(f"opval: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    return 0 if outcome.passed else 1


def _plot(args: argparse.Namespace) -> int:
    from .plot import plot

    try:
        written, notes = plot(args.results, args.out, args.format, args.machine_file)
    except (ValueError, OSError) as e:
        print(f"opval: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"opval plot: {note}")
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
