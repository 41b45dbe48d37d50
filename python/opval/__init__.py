"""opval: validates neural-network operator implementations against an fp64 reference, with
tolerances derived from error analysis. The Python layer over the C++ core (docs/PYTHON.md).

    import opval
    result = opval.check("softmax", my_softmax, contracts="f32")
    result.assert_ok()
"""
from __future__ import annotations

import logging
import os

from . import _opval
from ._opval import (AttrDef, Backend, CaseResult, Contract, KnownFailures, Op, Operand, OutputVerdict, Policy, Problem, Reporter,
                     RunOptions, RunSummary, Support, Tensor, Unsupported, Worker, backend_names, dtype, dtype_info, find_op,
                     load_plugin, ops, parse_dtype, read_problem_file, round_to, select_problems, suite_problems, ulp,
                     ulp_distance)
from .arrays import from_any, numpy_dtype, to_jax, to_numpy, to_torch
from .check import CheckFailure, CheckResult, KernelSpec, check, kernel_backend
from . import graph
from . import history
from .judge import judge
from .report import report
from .runner import RunResult, coverage, merge, run
from .selectors import between, one_of, rank, where

__version__ = _opval.__version__

logger = logging.getLogger("opval")


def worker_executable() -> str:
    """The opval executable installed beside the module: the worker of process isolation."""
    return os.path.join(os.path.dirname(_opval.__file__), "bin", "opval")


def _route_logs_to_logging(threshold: int) -> None:
    """The core's diagnostics (workers started and lost; each case, at debug level) go to the
    'opval' logger. The core does not even format messages below `threshold`."""
    _opval.set_log_sink(lambda level, message: logger.log(level, message), threshold)


def set_log_level(level: int) -> None:
    """Sets the 'opval' logger's level, and the core's threshold with it."""
    logger.setLevel(level)
    _route_logs_to_logging(level)


_route_logs_to_logging(logger.getEffectiveLevel())

__all__ = [
    "AttrDef", "Backend", "CaseResult", "CheckFailure", "CheckResult", "Contract", "KernelSpec", "KnownFailures", "Op", "Operand",
    "OutputVerdict", "Policy", "Problem", "Reporter", "RunOptions", "RunSummary", "Support", "Tensor", "Unsupported", "Worker",
    "RunResult", "backend_names", "between", "check", "coverage", "graph", "history", "judge", "kernel_backend", "merge", "report", "run", "dtype", "dtype_info", "find_op", "from_any", "load_plugin", "logger",
    "numpy_dtype", "one_of", "ops", "parse_dtype", "rank", "read_problem_file", "round_to", "select_problems", "set_log_level",
    "suite_problems", "to_jax", "to_numpy", "to_torch", "ulp", "ulp_distance", "where", "worker_executable",
]
