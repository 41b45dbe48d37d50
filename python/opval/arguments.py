"""The arguments of opval.check, opval.kernel_backend, opval.KernelSpec and opval.run, checked
at the start of the call, before a backend is made or a case runs. One rule per parameter name
serves every call: a wrong type is a TypeError, a value out of range a ValueError, each one line
naming the call, the parameter, what it takes and what it got:

    opval.check: seed must be a non-negative integer below 2**64, not -1

The error carries `parameter` and `wording` ("must be ..., not ..."), for `python -m opval run`
to name its flag instead.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any, Callable, NamedTuple

import numpy as np

from . import _opval
from .arrays import ARRAY_KINDS

__all__ = ["checked"]


class _Refused(Exception):
    """A value a rule does not take: `error` is TypeError or ValueError, `shown` how the
    message shows the value."""

    def __init__(self, error: type[Exception], shown: str):
        super().__init__(shown)
        self.error, self.shown = error, shown


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _wrong_type(value: Any) -> _Refused:
    return _Refused(TypeError, _type_name(value))


def _out_of_range(value: Any) -> _Refused:
    text = repr(value)
    return _Refused(ValueError, text if len(text) <= 60 else text[:57] + "...")


class _Rule(NamedTuple):
    accepts: str  # what the parameter takes, as the message says it
    convert: Callable[[Any], Any]  # the value as the call uses it; raises _Refused


def _integer(low: int, high: int) -> Callable[[Any], int]:
    def convert(value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise _wrong_type(value)
        if not low <= value <= high:
            raise _out_of_range(value)
        return int(value)
    return convert


def _seconds(minimum: float, inclusive: bool) -> Callable[[Any], float]:
    def convert(value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise _wrong_type(value)
        if not (value >= minimum if inclusive else value > minimum):  # NaN fails both
            raise _out_of_range(value)
        return float(value)
    return convert


def _flag(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _wrong_type(value)
    return bool(value)


def _instance(*types: type, convert: Callable[[Any], Any] = lambda v: v) -> Callable[[Any], Any]:
    def check(value):
        if not isinstance(value, types):
            raise _wrong_type(value)
        return convert(value)
    return check


def _one_of(choices: Iterable[str]) -> Callable[[Any], str]:
    choices = tuple(choices)

    def convert(value):
        if not isinstance(value, str):
            raise _wrong_type(value)
        if value not in choices:
            raise _out_of_range(value)
        return value
    return convert


def _optional(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _callable(value: Any) -> Callable:
    if not callable(value):
        raise _wrong_type(value)
    return value


def _items(item: Callable[[Any], Any], single: tuple[type, ...] = (), none: Any = None) -> Callable[[Any], Any]:
    """A list of `item`s from an iterable of them, or from one of the `single` types (one
    string is one name, not its letters); None is `none`."""
    def convert(value):
        if value is None:
            return none
        if single and isinstance(value, single):
            return [item(value)]
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise _wrong_type(value)
        values = list(value)
        out = []
        for v in values:
            try:
                out.append(item(v))
            except _Refused as e:
                shown = f"{_type_name(values)} holding {e.shown}" if e.error is TypeError else _out_of_range(values).shown
                raise _Refused(e.error, shown) from None
        return out
    return convert


def _op_name(value: Any) -> str:
    return value.name if isinstance(value, _opval.Op) else value


def _text_of(value: Any) -> str:
    """A descriptor or a file's name, as the selection reads it."""
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _stream(value: Any) -> Any:
    if not callable(getattr(value, "write", None)):
        raise _wrong_type(value)
    return value


def _backend(value: Any) -> str | _opval.Backend:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, (str, _opval.Backend)):
        raise _wrong_type(value)
    return value


def _backends(value: Any) -> list:
    if value is None:
        raise _wrong_type(value)
    backends = _items(_backend, single=(str, os.PathLike, _opval.Backend))(value)
    if not backends:
        raise _out_of_range(value)
    return backends


def _range(keyword: str) -> tuple[int, int]:
    """The option table's range (src/core/session_options.cpp), as `opval run` checks it."""
    option = next(o for o in _opval.session_options() if o["keyword"] == keyword)
    return int(option["min"]), int(option["max"])


_WORST, _LEAK_CHECK, _THREADS = _range("worst"), _range("leak_check"), _range("threads")
_SUITE_BUDGET = _range("suite_budget")

_ONE_OR_MORE = "or an iterable of them"
_FILE = _Rule("a file path (str or os.PathLike) or None", _optional(_instance(str, os.PathLike, convert=os.fspath)))
_TAGS = " or ".join(next(o for o in _opval.session_options() if o["keyword"] == "tag")["value_name"].split("|"))

_RULES: dict[str, _Rule] = {
    # what the kernel is and declares (check, kernel_backend, KernelSpec)
    "op": _Rule("an op name (str) or opval.Op", _instance(str, _opval.Op, convert=_op_name)),
    "impl": _Rule("a callable kernel, impl(*inputs, **attributes)", _callable),
    "contracts": _Rule(f"a contract string ('f32', 'bf16:f32:bf16') {_ONE_OR_MORE}", _items(_instance(str), single=(str,))),
    "attrs": _Rule("a mapping from attribute name to the values the kernel supports (or None)",
                   _optional(_instance(Mapping, convert=dict))),
    "layouts": _Rule("'any' or 'contiguous'", _one_of(("any", "contiguous"))),
    "supports": _Rule("a callable supports(problem) (or None)", _optional(_callable)),
    "arrays": _Rule(f"one of {', '.join(map(repr, ARRAY_KINDS))}", _one_of(ARRAY_KINDS)),
    "name": _Rule("a backend name (str, or None: the kernel's)", _optional(_instance(str))),
    # the selection
    "tag": _Rule(f"a suite tag ({_TAGS}) or None (smoke, or the tier's)", _optional(_instance(str))),
    "suite_budget": _Rule(f"an integer from {_SUITE_BUDGET[0]} to {_SUITE_BUDGET[1]} (cases per op and contract)",
                          _integer(*_SUITE_BUDGET)),
    "ops": _Rule(f"an op name (str) or opval.Op, {_ONE_OR_MORE}", _items(_instance(str, _opval.Op, convert=_op_name),
                                                                          single=(str, _opval.Op), none=[])),
    "problems": _Rule(f"a descriptor, a batch file or shape set name (str or os.PathLike) or an opval.Problem, "
                      f"{_ONE_OR_MORE}", _items(_instance(str, os.PathLike, _opval.Problem, convert=_text_of),
                                                single=(str, os.PathLike, _opval.Problem))),
    # how each case runs
    "policy": _Rule("a policy (str): bound, relative-to-sim[:m=M], exact, fixed:rtol=R,atol=A", _instance(str)),
    "seed": _Rule("a non-negative integer below 2**64", _integer(0, 2**64 - 1)),
    "worst": _Rule(f"an integer from {_WORST[0]} to {_WORST[1]}", _integer(*_WORST)),
    "leak_check": _Rule(f"an integer from {_LEAK_CHECK[0]} to {_LEAK_CHECK[1]} (0: off)", _integer(*_LEAK_CHECK)),
    "threads": _Rule(f"an iterable of OpenMP thread counts, integers from {_THREADS[0]} to {_THREADS[1]}",
                     _items(_integer(*_THREADS), none=[])),
    "reference": _Rule("a backend or framework name or a plugin path (str), an opval.Backend, or None",
                       _optional(_instance(str, _opval.Backend))),
    **{check: _Rule("True or False", _flag)
       for check in ("guard", "guard_before", "guard_tight", "poison", "input_check", "perturb")},
    "max_memory": _Rule("a number of gigabytes, 0 or more (0: half the memory available)", _seconds(0.0, inclusive=True)),
    "verify": _Rule("'auto', 'full' or 'sampled'", _one_of(("auto", "full", "sampled"))),
    # the session
    "backends": _Rule(f"a backend (a registered or framework name, a plugin path, an opval.Backend) {_ONE_OR_MORE}, "
                      "at least one", _backends),
    "jsonl": _FILE,
    "resume": _FILE,
    "shard": _Rule("a shard 'I/N' (from 0), 'auto', or None", _optional(_instance(str))),
    "command": _Rule("a command line (str) or None", _optional(_instance(str))),
    "history": _FILE,
    "commit": _Rule("a commit (str) or None (detected)", _optional(_instance(str))),
    "tier": _Rule("a tier name (str: smoke, regression, nightly, or your own) or None", _optional(_instance(str))),
    "label": _Rule("a label (str) or None", _optional(_instance(str))),
    "budget": _Rule("a duration ('10m', '1h30m', '90s') or a number of seconds, or None",
                    _optional(_instance(str, int, float, convert=str))),
    "changes": _Rule("a git revision or a file of changed paths (str or os.PathLike), or None",
                     _optional(_instance(str, os.PathLike, convert=os.fspath))),
    "seeds": _Rule("an integer from 0 to 1000 (0: 1, or the tier's)", _integer(0, 1000)),
    "known_failures": _FILE,
    "isolation": _Rule("'process' or 'none'", _one_of(("process", "none"))),
    "timeout": _Rule("a number of seconds above 0 (or None: 60, and no limit with isolation='none')",
                     _optional(_seconds(0.0, inclusive=False))),
    "worker_startup": _Rule("a number of seconds, 0 or more", _seconds(0.0, inclusive=True)),
    "out": _Rule("a text stream with write() (or None: standard output)", _optional(_stream)),
    "verbose": _Rule("True or False", _flag),
    "raise_on_failure": _Rule("True or False", _flag),
}

# Where a call takes less than the rule of its name says.
_RULES_OF_CALL: dict[str, dict[str, _Rule]] = {
    # a worker process makes opval.run's reference again: by name only
    "opval.run": {"reference": _Rule("a backend or framework name or a plugin path (str; a worker process makes it "
                                     "again, so not a Backend), or None", _optional(_instance(str)))},
    # opval.check takes no tier to choose its suite
    "opval.check": {"tag": _Rule(f"a suite tag ({_TAGS})", _instance(str))},
}


def _error(call: str, parameter: str, accepts: str, error: type[Exception], shown: str) -> Exception:
    """The one-line error for a refused argument, with `parameter` and `wording` set."""
    wording = f"must be {accepts}, not {shown}"
    e = error(f"{call}: {parameter} {wording}")
    e.parameter, e.wording = parameter, wording
    return e


def checked(call: str, arguments: Mapping[str, Any]) -> SimpleNamespace:
    """`arguments` (a call's parameters by name) checked by each name's rule, as the call uses
    them: one string where a list is taken is a list of it, an opval.Op its name, a path str.
    Raises TypeError or ValueError, one line naming `call` and the parameter."""
    rules = _RULES_OF_CALL.get(call, {})
    values = {}
    for name, value in arguments.items():
        rule = rules.get(name) or _RULES[name]
        try:
            values[name] = rule.convert(value)
        except _Refused as e:
            raise _error(call, name, rule.accepts, e.error, e.shown) from None
    return SimpleNamespace(**values)
