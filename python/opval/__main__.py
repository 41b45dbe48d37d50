"""python -m opval run ...: opval.run from the command line, for CI jobs (docs/PYTHON.md); python -m opval plot ...:
plots of opval bench results (docs/BENCHMARKING.md)."""
from __future__ import annotations

import argparse
import logging
import shlex
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


def _path(text: str) -> str:
    """A file or folder option's value: an empty one is a mistake (an unset variable), as in
    `opval run`."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file name")
    return text


def _names_a_path(option: dict) -> bool:
    return any(word in option["value_name"] for word in ("FILE", "PATH", "DIR", "JOURNAL"))


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
            parser.add_argument(*flags, action="append", default=[], metavar=o["value_name"],
                                type=_path if _names_a_path(o) else str, **common)
        else:
            choices = o["choices"].split() or None
            parser.add_argument(*flags, type=_path if _names_a_path(o) else _SCALARS[kind],
                                default=default if default != "" else None, choices=choices,
                                metavar=None if choices else o["value_name"], **common)


class _Parser(argparse.ArgumentParser):
    """argparse with opval's bad-input rule: one `opval: error:` line naming the problem, exit
    code 2 (argparse's own prints its usage first)."""

    def error(self, message: str):
        command = self.prog.replace("python -m opval", "").strip()
        print(f"opval: error: {command + ': ' if command else ''}{message}", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C ends it with one line and exit code 130 (128 + SIGINT), as a
    shell reports an interrupted command, never a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv)
    except KeyboardInterrupt as e:
        # A terminal's Ctrl-C reaches the whole process group: a Python worker child ends
        # silently, its parent says it (opval.run's message: how many ran, how to resume).
        if argv[:1] != ["__worker"]:
            print(f"opval: {e}" if str(e) else "opval: interrupted", file=sys.stderr)
        return 143 if "by SIGTERM" in str(e) else 130


def _main(argv: list[str]) -> int:
    if argv[:1] == ["__worker"]:  # the child process of opval.runner.PythonWorker
        from .runner import worker_main

        return worker_main()
    parser = _Parser(prog="python -m opval", description="Runs opval suites across backends from Python: "
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
    _add_graph_commands(commands)
    args = parser.parse_args(argv)
    if args.command == "plot":
        return _plot(args)
    if args.command == "graph":
        return _graph(args)

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
        if not any(a == "--timeout" or a.startswith("--timeout=") for a in argv):
            keywords["timeout"] = None  # not given: the default, and none with --isolation none
        # What an interrupted run says to resume with: this very command.
        command = shlex.join([sys.executable, "-m", "opval", *argv])
        outcome = run(args.backends, command=command, **keywords)
    except (ValueError, OSError, TypeError) as e:
        print(f"opval: error: {_error_line(e)}", file=sys.stderr)
        return 2
    return 0 if outcome.passed else 1


def _error_line(e: Exception) -> str:
    """An error of opval.run as one line; an argument it refused (opval.arguments) is named by
    the flag that set it."""
    flags = {o["keyword"]: o["flag"].split(",")[-1] for o in _run_options()}
    if getattr(e, "parameter", None) in flags:
        return f"{flags[e.parameter]} {e.wording}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


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


def _add_graph_commands(commands) -> None:
    """`python -m opval graph run|triage|precision MODEL`: docs/GRAPH.md."""
    from .precision import DEFAULT_ULPS
    g = commands.add_parser("graph", help="run an ONNX model on stacks, judging every node; triage the first "
                            "divergent node; find the nodes that must stay in float32")
    sub = g.add_subparsers(dest="graph_command", required=True)
    stacks = "ort[:LEVEL][:threads=N][:OPTION=VALUE...] (LEVEL: disable_all, basic, extended, layout, all; " \
             "OPTION: prepacking=on|off, arena=on|off, execution=sequential|parallel, provider=P where ONNX Runtime " \
             "has another), torch_compile[:LEVEL][:threads=N][:OPTION=VALUE...] (LEVEL: eager, aot_eager, " \
             "aot_eager_decomp_partition, inductor; OPTION: mkldnn=on|off, layout=contiguous|channels_last), " \
             "jax[:LEVEL] (LEVEL: disable_jit, jit; jax_jit is jax:jit) or an opval backend (sim, onednn, a plugin path)"
    for name, text in (("run", "run MODEL on each stack and judge each node alone on the inputs the stack gave it; "
                        "exit 1 when a node is blamed"),
                       ("triage", "find the first node that goes wrong beyond what its inputs explain and whether the "
                        "compiler, the runtime or a kernel is to blame; exit 1 when a node is blamed"),
                       ("precision", "find which nodes must run in a higher precision (--high) for the outputs to meet "
                        "a target when the rest runs in --type; exit 1 when no mixed precision meets it or a node "
                        "fails its own bound")):
        c = sub.add_parser(name, help=text, description=text)
        c.add_argument("model", help="an ONNX model file, or a torch.export program saved with torch.export.save (.pt2)")
        c.add_argument("--stack", default="ort:all", help=f"{'comma-separated stacks' if name == 'run' else 'the stack'}: "
                       f"{stacks} (default ort:all)")
        c.add_argument("--inputs", help="the graph inputs: an .npz of arrays by input name, an .npy named after the "
                       "input, a TensorProto .pb (default: seeded random values of the inputs' types and shapes)")
        c.add_argument("--seed", type=int, default=0, help="the seed of the random inputs (default 0)")
        c.add_argument("--policy", default="bound", help="the verdict policy, as opval run's (default bound)")
        c.add_argument("--ort-config", action="append", default=[], metavar="KEY=VALUE",
                       help="an ONNX Runtime session config entry for the ort stacks, e.g. "
                       "optimization.enable_gelu_approximation=1 (repeatable)")
        c.add_argument("--jsonl", help="write one JSON record per node (and the triage's or the search's) to FILE")
        if name == "precision":
            c.add_argument("--type", dest="low", default="bfloat16", help="the low type the nodes run in unless kept "
                           "high: bfloat16 (bf16), float16 (f16), float32 (f32) (default bfloat16)")
            c.add_argument("--high", default="float32", help="the type of the nodes kept high: float32 (f32), float64 "
                           "(f64), or a half type (default float32)")
            c.add_argument("--tolerance", default="", help=f"the target for the outputs against the fp64 reference: "
                           f"ulps=K (max |y - ref| <= K roundings of the low type at the output's largest magnitude; "
                           f"default ulps={DEFAULT_ULPS:g}) or rtol=R,atol=A (element by element)")
            c.add_argument("--save", metavar="FILE.onnx", help="write the model at the precision found")
        else:
            c.add_argument("--contract", action="append", default=[], metavar="NODE=CONTRACT",
                           help="the contract the stack documents for a node, by node name or ONNX op type, "
                           "overriding the one its tensor types imply, e.g. MatMul=f32@tf32:f32:f32 (repeatable)")
            c.add_argument("--plot", metavar="DIR", help="write the error-growth plot of each stack's run (of the "
                           "configured run for triage) to DIR/<stack>_error_growth.png")
        if name != "run":
            c.add_argument("--markdown", help="also write the report, the chain of evidence, to FILE")
        c.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
        if name == "triage":
            c.add_argument("--reproducer", metavar="DIR", help="when a node is blamed, cut it (with its fused region) "
                           "out into DIR, check that it fails the same way, and bundle it with the evidence "
                           "(DIR.tar.gz)")


def _graph_inputs(args: argparse.Namespace) -> dict:
    from .graph import read_inputs
    from .triage import random_inputs

    return read_inputs(args.model, args.inputs) if args.inputs else random_inputs(args.model, args.seed)


def _key_values(entries: list[str], option: str) -> dict[str, str] | None:
    """A repeatable KEY=VALUE option's entries (the first '=' splits them)."""
    config = {}
    for entry in entries:
        key, equals, value = entry.partition("=")
        if not key or not equals:
            raise ValueError(f"{option} takes KEY=VALUE, not '{entry}'")
        config[key] = value
    return config or None


def _graph(args: argparse.Namespace) -> int:
    from . import graph, graph_stacks, triage

    try:
        examples = {}
        if str(args.model).endswith(".pt2"):  # a torch.export program: its ONNX model and example inputs
            from .torch_export import to_onnx

            args.model, examples = to_onnx(args.model)
        contracts = _key_values(getattr(args, "contract", []), "--contract")
        graph.load(args.model, contracts)  # a bad model or override: one clear line before any stack runs
        inputs = examples if examples and not args.inputs else _graph_inputs(args)
        if contracts:
            _check_contracts(args.model, inputs, contracts)
        stacks = [graph_stacks.stack_from_spec(s, _key_values(args.ort_config, "--ort-config")) for s in _list(args.stack)]
        if args.graph_command != "run" and len(stacks) != 1:
            raise ValueError(f"graph {args.graph_command} takes one --stack")
        # graph run's stacks are few and mostly quick: its progress is for a person at a terminal.
        shown = not args.quiet and (args.graph_command != "run" or sys.stderr.isatty())
        progress = (lambda message: print(f"opval graph {args.graph_command}: {message}", file=sys.stderr)) \
            if shown else None
        if args.graph_command == "precision":
            return _graph_precision(args, inputs, stacks[0], progress)
        if args.graph_command == "triage":
            report = triage.triage(args.model, inputs, stacks[0], policy=args.policy, contracts=contracts,
                                   progress=progress)
            _print_report(report.markdown(), args.markdown)
            records = report.records()
            blamed = report.first is not None
            if args.plot:
                _plot_growth(report.judgements, report.stack, args.plot)
            if blamed and args.reproducer:
                from .reproducer import reproduce

                repro = reproduce(args.model, inputs, stacks[0], report, args.reproducer)
                print(f"\nreproducer: {repro.folder} ({len(repro.nodes)} node{'s' if len(repro.nodes) != 1 else ''}; "
                      f"{'fails the same way' if repro.reproduced else 'does NOT fail the same way alone'}), "
                      f"bundled as {repro.archive}")
        else:
            records, blamed = [], False
            for i, stack in enumerate(stacks, 1):
                if progress:
                    progress(f"stack {i} of {len(stacks)}: {stack} at {stack.config}")
                stack_records, stack_blamed = _graph_run_one(args.model, inputs, stack, args.policy, contracts,
                                                              args.plot)
                records += stack_records
                blamed |= stack_blamed
        _write_records(records, args.jsonl)
    except (ValueError, OSError, TypeError, RuntimeError) as e:
        return _graph_error(e)
    except Exception as e:  # a stack's own failure (ONNX Runtime refusing a type it has no kernel for)
        return _graph_error(e, stack_failed=True)
    return 1 if blamed else 0


def _graph_error(e: Exception, stack_failed: bool = False) -> int:
    """One error line for a graph command, exit code 2."""
    text = str(e).splitlines()[0] if str(e) else ""
    if stack_failed:
        print(f"opval: error: the stack failed: {type(e).__name__}: {text}", file=sys.stderr)
    else:
        print(f"opval: error: {text or type(e).__name__}", file=sys.stderr)
    return 2


def _print_report(text: str, path: str | None) -> None:
    """A report on stdout, and in `path` when given."""
    print(text, end="")
    if path:
        with open(path, "w") as f:
            f.write(text)


def _write_records(records: list[dict], path: str | None) -> None:
    if path:
        import json

        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)


def _graph_precision(args: argparse.Namespace, inputs: dict, stack, progress) -> int:
    """`graph precision`: the search, its report and records, the model at the precision found;
    exit 0 when one meets the target, 1 when none does or a node fails its own bound."""
    from . import precision

    report = precision.bisect(args.model, inputs, stack, low=args.low, high=args.high, tolerance=args.tolerance,
                              policy=args.policy, progress=progress)
    _print_report(report.markdown(), args.markdown)
    _write_records(report.records(), args.jsonl)
    if args.save and report.found:
        report.save_model(args.save)
        print(f"wrote {args.save}")
    return 0 if report.found else 1


def _check_contracts(model, inputs, contracts: dict[str, str]) -> None:
    """Each override checked against its node before any stack runs (one error line, no
    progress before it): the fp64 reference maps every node under its contract."""
    from . import graph

    try:
        graph.reference(graph.load(model, contracts), inputs)
    except graph.Unsupported:
        pass  # a node opval cannot run without a stack's outputs: the nodes after it are checked when judged


def _plot_growth(judgements: list[dict], stack: str, folder: str) -> None:
    from pathlib import Path

    from .error_growth import plot

    Path(folder).mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in stack)
    print(f"wrote {plot(judgements, Path(folder) / f'{name}_error_growth.png', f'{stack}: error growth')}")


def _graph_run_one(model, inputs, stack, policy: str, contracts: dict[str, str] | None,
                   plot_dir: str | None) -> tuple[list[dict], bool]:
    """One stack's run of `model`, judged and printed node by node (the error-growth table, then
    each blamed or unjudged node's reason); its JSON records."""
    from . import graph
    from .error_growth import table
    from .triage import node_record, short_reason

    run = stack.run(model, inputs, stack.config)
    judgements = graph.judge(model, inputs, run.captured, policy=policy, contracts=contracts)
    print(f"{run.stack}:")
    print(table(judgements))
    for j in judgements:
        if j["local"] is not None and j["local"].failed:
            print(f"  {j['node']}: FAILED: {short_reason(j['local'].reason)}")
        elif j["local"] is None:
            print(f"  {j['node']}: not judged: {j['note']}")
        elif j.get("conditioning"):
            print(f"  {j['node']}: {j['conditioning']}")
    if plot_dir:
        _plot_growth(judgements, run.stack, plot_dir)
    for note in run.notes:
        print(f"  note: {note}")
    first = graph.first_divergent(judgements)
    judged = sum(j["local"] is not None for j in judgements)
    print(f"  {judged} of {len(judgements)} nodes judged alone; "
          + (f"first divergent node: {first['node']} ({first['op_type']})" if first else "no node blamed"))
    records = [{"stack": run.stack, **node_record(j, run.kernels.get(j["node"], ""))} for j in judgements]
    return records, first is not None


if __name__ == "__main__":
    sys.exit(main())
