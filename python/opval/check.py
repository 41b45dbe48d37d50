"""opval.check: validates a Python callable as a kernel under test.

The callable runs through the same runner as a C++ kernel: the same suites and seeded inputs,
the contract's error bound, poisoned outputs run twice, hashed inputs, the perturbation check.
Problems outside what the kernel declares it supports are SKIPPED with the reason, as they
are for a plugin. See docs/PYTHON.md.
"""
from __future__ import annotations

import inspect
import io
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _opval
from .arguments import checked
from .arrays import as_array, from_any
from .backends import resolve_reference
from .selectors import Selector, attr_text, selector

__all__ = ["check", "kernel_backend", "CheckResult", "CheckFailure", "KernelSpec"]


class CheckFailure(AssertionError):
    """Raised by CheckResult.assert_ok (and check(..., raise_on_failure=True)): the message
    explains every case that did not pass, with its worst elements and its repro call."""


def _contract_text(c: _opval.Contract) -> str:
    """'bf16:f32:bf16 mid=bf16': the types and the options off their defaults, canonical, so
    that two contracts are equal exactly when their texts are."""
    return c.types_string() + c.options_string()


def _canonical_contracts(contracts: list[str] | None) -> list[str] | None:
    return None if contracts is None else [_contract_text(_opval.Contract(c)) for c in contracts]


@dataclass
class KernelSpec:
    """What a Python kernel promises and supports. Problems outside it are SKIPPED.

    contracts: the contracts it implements, types then options ('f32', 'bf16:f32:bf16',
               'bf16:f32:bf16 mid=bf16', 'f32 denorm=ftz', 'f32 ulp=opencl'); None = any. A
               problem runs only on a contract equal to one of them, options included, each
               option compared where the problem's op reads it (Problem.implemented_by): 'f32'
               means f32 with the default options, so not dt=f32 denorm=ftz nor dt=f32
               acc_round=rz; 'f32 ulp=opencl' runs softmax dt=f32 ulp=opencl (exp and div its
               only functions) and relu dt=f32 (none), not softmax dt=f32.
    attrs:     per attribute, the values it supports: a value, a list of values,
               opval.between(lo, hi), opval.where(predicate, text) or opval.rank(n).
    layouts:   "any" (strided and padded views welcome) or "contiguous" (dense row-major
               arrays only).
    supports:  a callable(problem) -> None | True | reason (str), for anything else.
    """

    contracts: list[str] | None = None
    attrs: Mapping[str, Any] = field(default_factory=dict)
    layouts: str = "any"
    supports: Callable[[_opval.Problem], Any] | None = None

    def __post_init__(self) -> None:
        a = checked("opval.KernelSpec", dict(contracts=self.contracts, attrs=self.attrs, layouts=self.layouts,
                                             supports=self.supports))
        self.contracts, self.attrs = _canonical_contracts(a.contracts), a.attrs or {}
        self._declared = None if a.contracts is None else [_opval.Contract(c) for c in a.contracts]
        self._selectors: dict[str, Selector] = {}

    def bind(self, op: _opval.Op) -> None:
        """Reads `attrs` against op's schema: an unknown attribute is an error."""
        kinds = {a.name: a.kind for a in op.attrs}
        for name, allowed in self.attrs.items():
            if name not in kinds:
                raise ValueError(f"op {op.name} has no attribute '{name}' (attributes: {', '.join(sorted(kinds))})")
            self._selectors[name] = selector(allowed, kinds[name])

    def why_not(self, p: _opval.Problem) -> str | None:
        """None when the kernel supports p, else the reason it does not."""
        if self._declared is not None and not any(p.implemented_by(c) for c in self._declared):
            declared = ", ".join(_contract_text(p.contract_as_read(c)) for c in self._declared)
            return f"contract {_contract_text(p.contract)} is not one the kernel implements ({declared})"
        for name, sel in self._selectors.items():
            value = p.get(name)
            if not sel.allows(value):
                return f"{name}={attr_text(value)} is outside what the kernel supports ({sel.describe()})"
        if self.layouts == "contiguous":
            for o in p.inputs() + p.outputs():
                if not o.contiguous:
                    return f"operand {o.name} is a strided or offset view and the kernel takes contiguous arrays only"
        if self.supports is not None:
            verdict = self.supports(p)
            if verdict is False:
                return "declined by the kernel's supports()"
            if isinstance(verdict, str):
                return verdict
        return None


class _Signature:
    """How to call the kernel: inputs positionally, then by keyword the attributes it names
    (all of them if it takes **kwargs), `out` (the output array, or a tuple of them) and
    `problem` (the Problem) when it names them. Other parameters keep their defaults."""

    def __init__(self, impl: Callable, op: _opval.Op):
        try:
            params = inspect.signature(impl).parameters.values()
        except (TypeError, ValueError):  # builtins without a signature: inputs only
            params = []
        self.takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        names = {p.name for p in params if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}
        attr_names = {a.name for a in op.attrs}
        self.attrs = attr_names if self.takes_all else names & attr_names
        self.out = "out" in names
        self.problem = "problem" in names
        # A keyword-only parameter with a default is the kernel's own (a tile size); one without
        # a default that opval does not pass would make every call fail: name it now.
        required = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty}
        unknown = required - attr_names - {"out", "problem"}
        if unknown:
            raise TypeError(
                f"keyword parameter{'s' if len(unknown) > 1 else ''} {', '.join(sorted(unknown))} of "
                f"{getattr(impl, '__name__', 'the kernel')} {'are' if len(unknown) > 1 else 'is'} not "
                f"{'attributes' if len(unknown) > 1 else 'an attribute'} of {op.name} "
                f"(attributes: {', '.join(sorted(attr_names))}; also 'out' and 'problem')")

    def keywords(self, p: _opval.Problem, outputs: list) -> dict[str, Any]:
        values = p.attrs
        kw = {name: values[name] for name in self.attrs}
        if self.out:
            kw["out"] = outputs[0] if len(outputs) == 1 else tuple(outputs)
        if self.problem:
            kw["problem"] = p
        return kw


def _returned_outputs(value: Any, names: list[str]) -> list[Any]:
    """The arrays a kernel returned, in the op's output order."""
    if isinstance(value, Mapping):
        missing = [n for n in names if n not in value]
        if missing:
            raise ValueError(f"the kernel returned no output named {', '.join(missing)}")
        return [value[n] for n in names]
    if len(names) == 1 and not isinstance(value, (tuple, list)):
        return [value]
    if isinstance(value, (tuple, list)) and len(value) == len(names):
        return list(value)
    raise ValueError(f"the kernel returned {type(value).__name__}; expected {len(names)} output(s): {', '.join(names)}")


def _store(value: Any, target: np.ndarray, name: str, want: str) -> None:
    """Copies a returned array into the output tensor's memory. Type and shape must be the
    contract's: a kernel returning f64 for an f32 output has not done its job."""
    array = from_any(value)
    if array.shape != target.shape:
        raise ValueError(f"output {name}: returned shape {array.shape}, expected {target.shape}")
    if array.dtype != target.dtype:
        raise TypeError(f"output {name}: returned {array.dtype}, the contract's output type is {want} "
                        f"({target.dtype}): rounding to the output type is part of the kernel")
    np.copyto(target, array, casting="no")  # a kernel that returns `out` itself copies onto itself


class _PythonKernel:
    """The supports() and execute() of a callable_backend for one Python kernel."""

    def __init__(self, impl: Callable, op: _opval.Op, spec: KernelSpec, arrays: str):
        self.impl, self.op, self.spec, self.arrays = impl, op, spec, arrays
        self.signature = _Signature(impl, op)
        self.tracebacks: dict[str, str] = {}

    def supports(self, p: _opval.Problem) -> Any:
        if p.op != self.op.name:
            return f"the kernel implements {self.op.name}, not {p.op}"
        return self.spec.why_not(p)

    def execute(self, p: _opval.Problem, inputs: list, outputs: list) -> None:
        try:
            in_arrays = [as_array(t, self.arrays) for t in inputs]
            out_arrays = [as_array(t, self.arrays) for t in outputs]
            value = self.impl(*in_arrays, **self.signature.keywords(p, out_arrays))
            if value is None:
                if not self.signature.out:
                    raise ValueError("the kernel returned None and takes no `out` parameter to write")
                return None
            operands = p.outputs()
            targets = [as_array(t, "numpy") for t in outputs]
            for v, target, o in zip(_returned_outputs(value, [o.name for o in operands]), targets, operands):
                _store(v, target, o.name, _opval.dtype_name(o.dtype))
            return None
        except _opval.Unsupported:
            raise  # a decline, not a failure: the case is SKIPPED with its reason
        except Exception:
            self.tracebacks[str(p)] = traceback.format_exc()
            raise


def _kernel_name(impl: Callable) -> str:
    return getattr(impl, "__name__", None) or type(impl).__name__


def select(tag: str, ops: Sequence[str] = (), contracts: Sequence[str] = (), problems: Sequence[str] | None = None,
           source: str = "<opval.run>") -> list:
    """The library's selection, as `opval run` makes it (descriptors, batch files, shape sets, a
    suite), for opval.run and opval.check alike: an unknown tag or op, or filters that match
    nothing, are a ValueError naming them. `source` names where inline descriptors came from."""
    return _opval.select_problems(tag, list(ops), list(contracts), [str(p) for p in problems or []], source)


def generated(backends: Sequence[_opval.Backend], ops: Sequence[str] = (), contracts: Sequence[str] = (), seed: int = 1,
              suite_budget: int = 200, worker: _opval.Worker | None = None) -> tuple[list, list]:
    """The generated suites (docs/COVERAGE.md) of `ops` (every op's when empty) for `backends`,
    made from their supports() answers (asked in `worker` for a backend made there):
    (problems with their sources, one opval.Coverage per op and backend)."""
    return _opval.generate_suite(list(ops), list(contracts), list(backends), worker, seed, suite_budget)


def _problems(op: str, tag: str, problems: Sequence[str | _opval.Problem] | str | None):
    """The library's selection, as `opval run --op OP` makes it: the suite `tag` of `op`, or the
    problems of `op` among `problems` (descriptors, batch files, shape sets); when none of those
    is of `op`, an error naming the first."""
    if isinstance(problems, (str, _opval.Problem)):
        problems = [problems]
    if not problems:
        return select(tag, [op])
    selected = select(tag, problems=problems, source="<opval.check>")
    mine = [(p, s) for p, s in selected if p.op == op]
    if not mine:
        raise ValueError(f"problem '{selected[0][0]}' is a {selected[0][0].op} problem; this check is of {op}")
    return mine


def make_options(reference: str | _opval.Backend | None = None, **keywords: Any) -> _opval.RunOptions:
    """RunOptions from the per-case keywords check() and run() take (policy, seed, worst and the
    checks: the CLI's options, set through the same fields; `_opval.session_options()` lists
    them); `reference` as opval.backends.resolve_reference takes it. An unknown keyword is a
    ValueError naming it."""
    o = _opval.run_options(keywords)
    if reference is not None:
        o.set_reference(*resolve_reference(reference))
    return o


@dataclass
class CheckResult:
    """The results of opval.check: one CaseResult per problem, the totals, and the report."""

    op: str
    kernel: str
    results: list[_opval.CaseResult]
    summary: _opval.RunSummary
    report: str
    tracebacks: dict[str, str]
    coverage: list = field(default_factory=list)  #: opval.Coverage of a generated suite (tag="generated")

    @property
    def failures(self) -> list[_opval.CaseResult]:
        return [r for r in self.results if r.failed]

    @property
    def ran(self) -> int:
        return self.summary.total - self.summary.skipped - self.summary.unimplemented

    @property
    def passed(self) -> bool:
        """True when no case failed and at least one ran (all skipped is not a pass)."""
        return not self.failures and self.ran > 0

    def __bool__(self) -> bool:
        return self.passed

    def explain(self) -> str:
        """Every case that did not pass, explained as the CLI explains it, with the kernel's
        traceback where it raised."""
        if self.ran == 0:
            return f"{self.kernel}: no case ran: all {self.summary.total} were skipped or unimplemented\n"
        console = _opval.Reporter.console()
        text = ""
        for r in self.failures:
            text += console.result(r)
            if r.descriptor in self.tracebacks:
                text += "    the kernel raised:\n" + "".join("      " + line + "\n" for line in self.tracebacks[r.descriptor].splitlines())
        return text

    def assert_ok(self) -> "CheckResult":
        """Raises CheckFailure explaining every failure (for use inside tests)."""
        if not self.passed:
            s = self.summary
            raise CheckFailure(f"opval.check of {self.kernel} ({self.op}): {s.failures} failed, {s.passed} passed, "
                               f"{s.skipped + s.unimplemented} skipped\n{self.explain()}")
        return self

    def __str__(self) -> str:
        s = self.summary
        return (f"{self.kernel} ({self.op}): {s.passed} passed, {s.failures} failed, "
                f"{s.skipped + s.unimplemented} skipped")


def kernel_backend(op: str | _opval.Op, impl: Callable, *, contracts: Iterable[str] | str | None = None,
                   attrs: Mapping[str, Any] | None = None, layouts: str = "any", supports: Callable | None = None,
                   arrays: str = "numpy", name: str | None = None) -> _opval.Backend:
    """The Python kernel `impl` of op `op` as a Backend named python:<name>, for opval.run
    beside other backends (check() calls it too). The arguments are check()'s. The backend's
    `tracebacks` maps each descriptor whose call raised to the traceback. A bad argument is a
    TypeError or ValueError naming it (opval.arguments)."""
    a = checked("opval.kernel_backend", locals())
    spec_op = _opval.find_op(a.op)
    kernel = KernelSpec(contracts=a.contracts, attrs=a.attrs, layouts=a.layouts, supports=a.supports)
    kernel.bind(spec_op)
    python_kernel = _PythonKernel(a.impl, spec_op, kernel, a.arrays)
    backend = _opval.callable_backend(f"python:{a.name or _kernel_name(a.impl)}", f"Python kernel ({a.arrays} arrays)",
                                      python_kernel.supports, python_kernel.execute)
    _TRACEBACKS[backend.name] = python_kernel.tracebacks
    return backend


# Tracebacks of the Python kernels' failed calls, per backend name (latest kernel of a name).
_TRACEBACKS: dict[str, dict[str, str]] = {}


def check(op: str | _opval.Op, impl: Callable, *, contracts: Iterable[str] | str | None = None, attrs: Mapping[str, Any] | None = None,
          layouts: str = "any", supports: Callable | None = None, tag: str = "smoke",
          problems: Sequence[str | _opval.Problem] | str | None = None, arrays: str = "numpy", name: str | None = None,
          policy: str = "bound", seed: int = 1, guard: bool = True, guard_before: bool = False, guard_tight: bool = False,
          poison: bool = True, input_check: bool = True, perturb: bool = True, worst: int = 5, threads: Sequence[int] = (),
          leak_check: int = 0, max_memory: float = 0.0, verify: str = "auto", reference: str | _opval.Backend | None = None, raise_on_failure: bool = False,
          verbose: bool = False, suite_budget: int = 200) -> CheckResult:
    """Validates the Python kernel `impl` of op `op` on the suite `tag` (or on `problems`).

    The kernel is called as impl(*inputs, **keywords): the op's inputs (p.inputs() order) as
    NumPy arrays (arrays="torch": torch tensors; arrays="jax": JAX arrays, through DLPack) over
    opval's own memory, and by keyword the attributes it names, `out` and `problem`. It returns
    its output(s), or writes `out` (not with JAX, whose arrays are immutable). A kernel that
    finds, when called, that it cannot run the problem raises opval.Unsupported(reason): the
    case is SKIPPED with that reason, not FAILED.
    contracts / attrs / layouts / supports declare what it supports (see KernelSpec).
    reference: judge against a framework ('torch', 'onnxruntime', 'jax': in float64) or any
    backend at the kernel's contract ('onednn', 'torch@contract', ...) instead of opval's fp64
    reference; it runs in this process.
    tag="generated": the op's suite made inside what the kernel declares it supports, every
    feature value alone and pairs within suite_budget cases per contract; the CheckResult's
    `coverage` and report say what it covered (docs/COVERAGE.md).
    Returns a CheckResult; raise_on_failure=True raises CheckFailure when it did not pass.
    A bad argument is a TypeError or ValueError naming it, before anything runs (opval.arguments).
    """
    a = checked("opval.check", locals())
    backend = kernel_backend(a.op, a.impl, contracts=a.contracts, attrs=a.attrs, layouts=a.layouts, supports=a.supports,
                             arrays=a.arrays, name=a.name)
    kernel_name = backend.name.removeprefix("python:")
    options = make_options(a.reference, policy=a.policy, seed=a.seed, guard=a.guard, guard_before=a.guard_before,
                           guard_tight=a.guard_tight, poison=a.poison, input_check=a.input_check, perturb=a.perturb,
                           worst=a.worst, threads=a.threads, leak_check=a.leak_check, max_memory=a.max_memory,
                           verify=a.verify)
    options.backend = backend.name
    repro = (None, "python_check", kernel_name, _reference_name(a.reference),
             f"arrays={a.arrays!r}" if a.arrays != "numpy" else "")
    coverage = []
    if a.tag == _opval.GENERATED_TAG and not a.problems:
        selected, coverage = generated([backend], [a.op], seed=a.seed, suite_budget=a.suite_budget)
    else:
        selected = _problems(a.op, a.tag, a.problems)
    table = io.StringIO()
    # The library's session, in this process: the report, the summary.
    _, summary, results = _opval.run_session(selected, options, [backend], [repro], None,
                                             out=table, warn=lambda line: None, verbose=a.verbose, coverage=coverage)
    report = table.getvalue()
    if a.verbose:
        print(report, end="")
    result = CheckResult(a.op, kernel_name, results, summary, report, _TRACEBACKS[backend.name], coverage)
    if a.raise_on_failure:
        result.assert_ok()
    return result


def _reference_name(reference: str | _opval.Backend | None) -> str:
    if reference is None:
        return ""
    return reference if isinstance(reference, str) else reference.name
