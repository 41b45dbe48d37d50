"""python -m opval run ...: opval.run from the command line, for CI jobs (docs/PYTHON.md); python -m opval plot ...:
plots of opval bench results (docs/BENCHMARKING.md)."""
from __future__ import annotations

import argparse
import logging
import sys

from .runner import run


def _list(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


# How `python -m opval run` says some options differently from `opval run`: its backends
# include the framework adapters.
_PYTHON_HELP = {
    "backends": "comma-separated backends: registered ones (opval list backends), framework adapters (torch, "
                "torch_compile) or plugin paths (default sim)",
    "reference": "judge against this instead of opval's fp64 reference: a framework in float64 (torch, "
                 "onnxruntime, jax), or any backend at the contract (onednn, torch@contract, a plugin path)",
}


def _run_options():
    """The options opval.run takes, from the session's option table (as `opval run` has them)."""
    from . import _opval

    return [o for o in _opval.session_options() if "run" in o["python"]]


def _run_keywords() -> list[str]:
    return [o["keyword"] for o in _run_options()]


# The Python type of each kind of option value (opval._opval.session_options' "kind").
_SCALARS = {"int": int, "uint64": int, "float": float, "str": str, "policy": str}


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """`python -m opval run`'s options: each of opval.run's keywords under the flag `opval run`
    gives it, with its help, default and type from the session's option table."""
    for o in _run_options():
        flags = o["flag"].split(",")
        kind, default = o["kind"], o["default"]
        common = dict(dest=o["keyword"], help=_PYTHON_HELP.get(o["keyword"], o["help"]).replace("%", "%%"))
        if kind in ("bool", "guard_side"):
            parser.add_argument(*flags, action="store_false" if o["negated"] else "store_true", default=default, **common)
        elif kind.startswith("list") and o["delimiter"]:
            item = int if kind == "list[int]" else str
            parser.add_argument(*flags, type=lambda text, item=item: [item(v) for v in _list(text)],
                                default=["sim"] if o["keyword"] == "backends" else [], metavar=o["value_name"], **common)
        elif kind.startswith("list"):
            parser.add_argument(*flags, action="append", default=[], metavar=o["value_name"], **common)
        else:
            choices = o["choices"].split() or None
            parser.add_argument(*flags, type=_SCALARS[kind], default=default if default != "" else None, choices=choices,
                                metavar=None if choices else o["value_name"], **common)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["__worker"]:  # the child process of opval.runner.PythonWorker
        from .runner import worker_main

        return worker_main()
    parser = argparse.ArgumentParser(prog="python -m opval", description="Runs opval suites across backends from Python: "
                                     "C++ backends, plugins and the framework adapters (torch, torch.compile, onnxruntime, jax)")
    commands = parser.add_subparsers(dest="command", required=True)
    r = commands.add_parser("run", help="run suites or problems on backends; exit 0 when all that ran passed")
    _add_run_options(r)
    r.add_argument("--log-level", default="WARNING", help="the 'opval' logger's level (DEBUG shows every case)")
    r.add_argument("--log-file", help="also write the logs to FILE")
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
        keywords = {k: getattr(args, k) for k in _run_keywords() if k != "backends"}
        outcome = run(args.backends, **keywords)
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
