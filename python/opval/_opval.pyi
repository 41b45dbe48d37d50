"""
opval's C++ core: ops, problems, contracts, backends, the runner and its results
"""

from collections.abc import Mapping, Sequence
import enum


def git_sha() -> str:
    """the git commit opval was built from"""

class dtype(enum.Enum):
    """
    Element types; the names are opval's spellings (f32, bf16, f8_e4m3, ...)
    """

    f64 = 0

    f32 = 1

    tf32 = 2

    f16 = 3

    bf16 = 4

    f8_e4m3 = 5

    f8_e5m2 = 6

    i8 = 7

    u8 = 8

    i32 = 9

    i64 = 10

    bool = 11

    f8_e4m3fnuz = 12

    f8_e5m2fnuz = 13

    f8_e8m0 = 14

    f4_e2m1 = 15

    f6_e2m3 = 16

    f6_e3m2 = 17

    i4 = 18

    u4 = 19

def parse_dtype(name: str) -> dtype:
    """The dtype a spelling names (aliases such as 'fp16', 's8' too)"""

def dtype_name(t: dtype) -> str: ...

class DtypeInfo:
    """The constants of one dtype"""

    @property
    def size_bytes(self) -> int: ...

    @property
    def bits(self) -> int:
        """bits of a storage pattern (4 for f4_e2m1, stored one per byte)"""

    @property
    def is_float(self) -> bool: ...

    @property
    def is_signed(self) -> bool: ...

    @property
    def precision(self) -> int:
        """significand bits including the implicit bit (0: integer)"""

    @property
    def unit_roundoff(self) -> float: ...

    @property
    def epsilon(self) -> float: ...

    @property
    def min_normal(self) -> float: ...

    @property
    def max(self) -> float: ...

    @property
    def lowest(self) -> float: ...

    @property
    def name(self) -> str: ...

def dtype_info(t: dtype) -> DtypeInfo: ...

class rounding(enum.Enum):
    rne = 0

    rz = 1

def round_to(t: dtype, x: float, r: rounding = rounding.rne) -> float:
    """x rounded to a value of t (returned as a float)"""

def ulp(t: dtype, x: float) -> float:
    """the spacing of t's values around x"""

def ulp_distance(t: dtype, a: float, b: float) -> float:
    """how many values of t lie between a and b"""

class Contract:
    """A numeric contract: input, math, accumulation and output types"""

    def __init__(self, text: str) -> None:
        """
        Parses a contract: its types ('bf16', 'f32@tf32:f32:f32', 'u8xi8:i32:f32'), then options ('bf16:f32:bf16 mid=bf16', 'f32 denorm=ftz acc_round=rz'); str() of a Contract reads back
        """

    @property
    def src(self) -> dtype: ...

    @src.setter
    def src(self, arg: dtype, /) -> None: ...

    @property
    def wei(self) -> dtype: ...

    @wei.setter
    def wei(self, arg: dtype, /) -> None: ...

    @property
    def math(self) -> dtype: ...

    @math.setter
    def math(self, arg: dtype, /) -> None: ...

    @property
    def acc(self) -> dtype: ...

    @acc.setter
    def acc(self, arg: dtype, /) -> None: ...

    @property
    def mid(self) -> dtype: ...

    @mid.setter
    def mid(self, arg: dtype, /) -> None: ...

    @property
    def dst(self) -> dtype: ...

    @dst.setter
    def dst(self, arg: dtype, /) -> None: ...

    @property
    def deterministic(self) -> bool: ...

    @deterministic.setter
    def deterministic(self, arg: bool, /) -> None: ...

    @property
    def in_round(self) -> rounding: ...

    @in_round.setter
    def in_round(self, arg: rounding, /) -> None: ...

    @property
    def acc_round(self) -> rounding: ...

    @acc_round.setter
    def acc_round(self, arg: rounding, /) -> None: ...

    @property
    def dst_round(self) -> rounding: ...

    @dst_round.setter
    def dst_round(self, arg: rounding, /) -> None: ...

    @property
    def ftz(self) -> bool:
        """subnormals flushed to zero"""

    def rounds_inputs(self) -> bool:
        """the kernel rounds its inputs to `math` itself (tf32, f32@bf16)"""

    def types_string(self) -> str:
        """src[xwei][@math]:acc:dst"""

    def options_string(self) -> str:
        """
        ' key=value' for each option not at its default ('' when none): ' mid=bf16 denorm=ftz'
        """

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

    def __eq__(self, arg: Contract, /) -> bool: ...

class policy_kind(enum.Enum):
    bound = 0

    relative_to_sim = 1

    exact = 2

    fixed = 3

class Policy:
    """How a result is judged (docs/NUMERICS.md)"""

    def __init__(self, text: str = 'bound') -> None:
        """
        bound[:false_alarm=P][,random_data=0], relative-to-sim[:m=M], exact or fixed:rtol=R,atol=A
        """

    @property
    def kind(self) -> policy_kind: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class Operand:
    """One input or output of a problem: name, type, logical shape and layout"""

    @property
    def name(self) -> str: ...

    @property
    def dtype(self) -> dtype: ...

    @property
    def shape(self) -> list[int]: ...

    @property
    def strides(self) -> list[int]:
        """in elements"""

    @property
    def offset(self) -> int:
        """in elements, from the allocation's start"""

    @property
    def contiguous(self) -> bool:
        """row-major, dense, at the start of its allocation"""

    def __repr__(self) -> str: ...

class Problem:
    """One test problem: op, attributes, contract and fill; one line of text"""

    def __init__(self, descriptor: str) -> None:
        """Parses a descriptor such as 'matmul m=64 n=48 k=33 dt=bf16'"""

    @property
    def op(self) -> str: ...

    @property
    def contract(self) -> Contract: ...

    @contract.setter
    def contract(self, arg: Contract, /) -> None: ...

    @property
    def fill(self) -> str: ...

    @fill.setter
    def fill(self, arg: str, /) -> None: ...

    @property
    def attrs(self) -> dict:
        """every attribute of the op with its value here (defaults included)"""

    def get(self, name: str) -> int | float | bool | str | list[int]:
        """the attribute's value (its default when unset)"""

    def has(self, name: str) -> bool:
        """True when the descriptor sets the attribute explicitly"""

    def implemented_by(self, declared: Contract) -> bool:
        """
        whether a kernel declaring `declared` implements this problem's contract: the types and each option the op reads equal (ulp= for the functions it reads, so a preset matches its expansion)
        """

    def contract_as_read(self, contract: Contract) -> Contract:
        """
        `contract` as a problem of this op carries it: each option the op does not read at its default
        """

    def inputs(self) -> list[Operand]:
        """the operands the kernel reads, in order"""

    def outputs(self) -> list[Operand]:
        """the operands the kernel writes, in order"""

    def counts(self) -> tuple[float, float]:
        """(flops, bytes) of one run"""

    def make_inputs(self, seed: int = 1) -> list[Tensor]:
        """
        the inputs every backend gets for this seed (the op's fill, its layouts)
        """

    def reference(self, inputs: Sequence[Tensor]) -> list[Tensor]:
        """
        the op's fp64 reference on `inputs`: contiguous f64 tensors, one per output
        """

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

    def __hash__(self) -> int: ...

    def __eq__(self, arg: Problem, /) -> bool: ...

class AttrDef:
    """One attribute of an op's schema"""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def default(self) -> int | float | bool | str | list[int]: ...

    @property
    def doc(self) -> str: ...

    @property
    def choices(self) -> list[str]: ...

    @property
    def min(self) -> float: ...

    @property
    def max(self) -> float: ...

class Op:
    """A registered operator"""

    @property
    def name(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def contracts(self) -> list[str]: ...

    @property
    def fills(self) -> list[str]: ...

    @property
    def attrs(self) -> list[AttrDef]: ...

    def suite(self, tag: str) -> list[str]:
        """the descriptor lines of the suite `tag` (smoke, regression)"""

    def __repr__(self) -> str: ...

def ops() -> list[Op]:
    """every registered op"""

def find_op(name: str) -> Op: ...

def suite_problems(tag: str, ops: Sequence[str] = []) -> list[tuple[Problem, str]]:
    """(problem, source) of the suite `tag` of every op, or of `ops`"""

def read_problem_file(path: str) -> list[tuple[Problem, str]]:
    """(problem, 'file:line') of a batch file"""

def select_problems(tag: str = 'smoke', ops: Sequence[str] = [], contracts: Sequence[str] = [], problems: Sequence[str] = [], inline_source: str = '<command line>') -> list[tuple[Problem, str]]:
    """
    (problem, source) of the session's selection, as `opval run` selects: `problems` (descriptors, batch files, shape sets) or the suite `tag`, filtered by `ops` and `contracts`
    """

class Tensor:
    """A typed, strided view of storage; numpy() shares it without copying"""

    @property
    def dtype(self) -> dtype: ...

    @property
    def shape(self) -> list[int]: ...

    @property
    def strides(self) -> list[int]:
        """in elements"""

    @property
    def numel(self) -> int: ...

    def numpy(self) -> object:
        """
        the elements as a NumPy array over the same memory (bf16 and fp8 as uint16 / uint8 bit patterns)
        """

    def to_list(self) -> list[float]:
        """every element, exactly, as floats in row-major order"""

    def __dlpack__(self, **kwargs) -> object:
        """DLPack export (no copy; bf16 and fp8 in their own DLPack types)"""

    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU, 0): host memory"""

    def __repr__(self) -> str: ...

class Support:
    """Whether a backend runs a problem, and if not, why"""

    @property
    def ok(self) -> bool: ...

    @property
    def state(self) -> str: ...

    @property
    def reason(self) -> str: ...

    def __bool__(self) -> bool: ...

class Unsupported(Exception):
    """
    Raised by a kernel (opval.check, opval.kernel_backend) that declines a problem it meets at run time: the case is SKIPPED with str() of it as the reason, not FAILED.
    """

class Backend:
    """Something that executes problems"""

    def __init__(self, name: str) -> None:
        """A registered backend (see backend_names())"""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def isolatable(self) -> bool:
        """
        can run in a worker process (registered backends and plugins; not Python callables)
        """

    def supports(self, problem: Problem) -> Support: ...

    def __repr__(self) -> str: ...

def backend_names() -> list[str]:
    """the registered backends"""

def load_plugin(path: str) -> Backend:
    """a kernel plugin (docs/PLUGINS.md) as a backend"""

def callable_backend(name: str, version: str, supports: object, execute: object) -> Backend:
    """
    a backend whose supports(problem) and execute(problem, inputs, outputs) are Python callables
    """

class KnownFailures:
    """Cases known to fail on a backend (tests/known_failures.txt's format)"""

    @staticmethod
    def load(path: str) -> KnownFailures: ...

    def cause(self, backend: str, descriptor: str) -> str | None:
        """the recorded cause, or None when the case is not listed"""

    def of_backend(self, backend: str) -> dict[str, str]:
        """descriptor -> cause, for one backend"""

    def __len__(self) -> int: ...

class guard_side(enum.Enum):
    after = 0

    before = 1

class RunOptions:
    """How cases run: policy, seed and the memory checks (docs/SAFETY.md)"""

    def __init__(self) -> None: ...

    @property
    def backend(self) -> str:
        """the backends' names, for report headers"""

    @backend.setter
    def backend(self, arg: str, /) -> None: ...

    @property
    def policy(self) -> Policy: ...

    @policy.setter
    def policy(self, arg: Policy, /) -> None: ...

    @property
    def seed(self) -> int: ...

    @seed.setter
    def seed(self, arg: int, /) -> None: ...

    @property
    def worst_k(self) -> int: ...

    @worst_k.setter
    def worst_k(self, arg: int, /) -> None: ...

    @property
    def perturb_check(self) -> bool: ...

    @perturb_check.setter
    def perturb_check(self, arg: bool, /) -> None: ...

    @property
    def guard(self) -> bool: ...

    @guard.setter
    def guard(self, arg: bool, /) -> None: ...

    @property
    def guard_at(self) -> guard_side: ...

    @guard_at.setter
    def guard_at(self, arg: guard_side, /) -> None: ...

    @property
    def poison_check(self) -> bool: ...

    @poison_check.setter
    def poison_check(self, arg: bool, /) -> None: ...

    @property
    def input_check(self) -> bool: ...

    @input_check.setter
    def input_check(self, arg: bool, /) -> None: ...

    @property
    def threads(self) -> list[int]: ...

    @threads.setter
    def threads(self, arg: Sequence[int], /) -> None: ...

    @property
    def leak_check(self) -> int: ...

    @leak_check.setter
    def leak_check(self, arg: int, /) -> None: ...

    def set_reference(self, backend: Backend, float64: bool = False) -> None:
        """
        judge against `backend` instead of opval's fp64 reference: with float64, it computes in float64 and is handed f64 outputs; else it runs each problem at its contract, and the bound doubles (docs/REFERENCES.md, 'Alternative references')
        """

    def clear_reference(self) -> None:
        """judge against opval's fp64 reference"""

    @property
    def reference(self) -> str | None:
        """
        the alternative reference's name, or None for opval's own fp64 reference
        """

class OutputCheck:
    """
    A posterior test of one output (softmax's row shape: each row divided by its own sum)
    """

    @property
    def name(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def bound(self) -> str:
        """the formula or tolerance that applied"""

    @property
    def max_ulps(self) -> float: ...

    @property
    def max_abs_error(self) -> float: ...

    @property
    def max_error_over_bound(self) -> float: ...

class OutputVerdict:
    """The judgement of one output"""

    @property
    def name(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def bound(self) -> str:
        """the formula or tolerance that applied"""

    @property
    def max_ulps(self) -> float: ...

    @property
    def max_abs_error(self) -> float: ...

    @property
    def max_error_over_bound(self) -> float: ...

    @property
    def checks(self) -> list[OutputCheck]:
        """
        the posterior tests (OutputCheck), where the op has any; state is the worst of all
        """

class CaseResult:
    """Everything recorded about one case (record() has every field)"""

    @property
    def descriptor(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def contract(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def backend(self) -> str: ...

    @property
    def backend_version(self) -> str: ...

    @property
    def implementation(self) -> str: ...

    @property
    def state(self) -> str:
        """PASSED, FAILED, MISTRUSTED, SKIPPED, UNIMPLEMENTED, CRASH or TIMEOUT"""

    @property
    def reason(self) -> str: ...

    @property
    def policy(self) -> str:
        """the policy as given"""

    @property
    def policy_note(self) -> str:
        """
        where the policy could not apply as given, what was used instead ('' when it applied)
        """

    @property
    def outputs(self) -> list[OutputVerdict]: ...

    @property
    def failed(self) -> bool:
        """FAILED, MISTRUSTED, CRASH or TIMEOUT"""

    @property
    def reference(self) -> str:
        """
        the alternative reference the case was judged against ('' for opval's own fp64 reference)
        """

    @property
    def reference_note(self) -> str:
        """
        how far the alternative reference lies from opval's fp64 reference, per output
        """

    @property
    def timings(self) -> dict:
        """seconds per stage"""

    @property
    def known_failure(self) -> str | None: ...

    @known_failure.setter
    def known_failure(self, arg: str | None, /) -> None: ...

    @property
    def choice(self) -> object:
        """
        in a run with a time budget: (rank, why) — its place in the chosen order and why it was chosen; else None
        """

    @property
    def verification(self) -> dict:
        """
        how the outputs were verified: method ('full' or 'sampled'), sample, checksums, why (docs/NUMERICS.md)
        """

    @property
    def repro(self) -> str:
        """the command (or Python call) that reproduces the case"""

    @repro.setter
    def repro(self, arg: str, /) -> None: ...

    @property
    def source(self) -> str: ...

    @source.setter
    def source(self, arg: str, /) -> None: ...

    @property
    def not_applicable(self) -> str:
        """
        the checks that did not apply, and why (opval.judge: those that rerun the kernel)
        """

    def to_json(self) -> str:
        """the JSON Lines record the CLI writes (docs/CLI.md)"""

    def record(self) -> object:
        """
        the JSON record as a dict: every field, metrics and worst elements included
        """

    @staticmethod
    def from_json(line: str) -> CaseResult: ...

    def __repr__(self) -> str: ...

class RunSummary:
    """Totals of a run"""

    def __init__(self) -> None: ...

    def add(self, result: CaseResult) -> None: ...

    @property
    def passed(self) -> int: ...

    @property
    def failed(self) -> int: ...

    @property
    def mistrusted(self) -> int: ...

    @property
    def skipped(self) -> int: ...

    @property
    def unimplemented(self) -> int: ...

    @property
    def crashed(self) -> int: ...

    @property
    def timed_out(self) -> int: ...

    @property
    def known_failed(self) -> int: ...

    @property
    def seconds(self) -> float: ...

    @seconds.setter
    def seconds(self, arg: float, /) -> None: ...

    @property
    def total(self) -> int: ...

    @property
    def failures(self) -> int:
        """FAILED + MISTRUSTED + CRASH + TIMEOUT"""

class Reporter:
    """The CLI's reporters; each call returns the text written"""

    @staticmethod
    def console(verbose: bool = False, show_backend: bool = False, quiet: bool = False, width: int = 120) -> Reporter: ...

    @staticmethod
    def side_by_side() -> Reporter: ...

    @staticmethod
    def tightness() -> Reporter: ...

    @staticmethod
    def jsonl() -> Reporter: ...

    def start(self, options: RunOptions) -> str: ...

    def result(self, result: CaseResult) -> str: ...

    def finish(self, summary: RunSummary) -> str: ...

def run_case(problem: Problem, backend: Backend, options: RunOptions, source: str = '') -> CaseResult:
    """
    runs one case in this process; an exception is a FAILED case carrying its message
    """

def judge_arrays(problem: Problem, inputs: Sequence[tuple[str, str, Sequence[int], bytes]], outputs: Sequence[tuple[str, str, Sequence[int], bytes]], options: RunOptions, source: str = '') -> CaseResult:
    """
    the verdict on arrays the caller has (opval/judge.hpp); a mismatch with the problem's operands raises
    """

def read_array_file(path: str) -> list[tuple[str, str, list[int], bytes]]:
    """
    the arrays of an .npy, .npz or ONNX TensorProto .pb file as (name, type, shape, bytes)
    """

def unfinished_case(problem: Problem, source: str, backend: Backend, options: RunOptions, state: str, reason: str) -> CaseResult:
    """
    the record of a case that produced no result of its own (CRASH, TIMEOUT), with its repro
    """

def render_repro(result: CaseResult, style: str = 'cli', backend: str = '', reference: str = '', keywords: str = '', options: RunOptions | None = None) -> str:
    """
    the repro of a case from its identity: `opval repro ...` (cli), `python -m opval run ...` (python_run) or `opval.check(...)` (python_check), naming the backend, the reference and more keywords as given
    """

class Worker:
    """Runs cases in a worker process: a crash or hang is a verdict"""

    def __init__(self, executable: str, timeout: float = 60.0) -> None: ...

    def run(self, problem: Problem, backend: Backend, options: RunOptions, source: str = '') -> CaseResult: ...

    def make(self, name: str = '', plugin: str = '') -> Backend:
        """
        the backend `name` or the plugin at `plugin`, made in the worker (its code never runs in this process): a Backend that runs there only; a crash, exit or hang while making it raises ValueError
        """

    @property
    def pid(self) -> int: ...

def set_log_sink(sink: object | None, threshold: int = 10) -> None:
    """
    sink(level: int, message: str) receives the library's diagnostics at or above threshold (logging's levels); None restores the default (stderr, warnings only)
    """

def log(level: int, message: str) -> None:
    """sends a message through the library's sink (for tests)"""

GENERATED_TAG: str = 'generated'

class Coverage:
    """
    what a generated suite covers of one op on one backend (docs/COVERAGE.md)
    """

    @property
    def op(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def values_covered(self) -> int:
        """values that ran alone at some contract"""

    @property
    def values(self) -> int:
        """values in the op's feature table"""

    def json(self) -> str:
        """the JSON Lines record {"coverage": ...}, one line"""

    def text(self, verbose: bool = False, width: int = 100) -> str:
        """the report as the console prints it"""

def generate_suite(ops: Sequence[str], contracts: Sequence[str], backends: Sequence[Backend], worker: Worker | None, seed: int = 1, budget: int = 200) -> tuple:
    """
    the generated suites of `ops` (every op's when empty) for `backends`, asking supports() in opval's `worker` for a backend made there; returns (problems with their sources, list of Coverage) (docs/COVERAGE.md)
    """

def session_options() -> list:
    """
    every option of a session, as the CLI and the Python layer take it: flag, keyword, value_name, help, stage, commands, python (the functions taking the keyword), default, kind (its value's type), negated, choices, delimiter
    """

def run_options(keywords: dict) -> RunOptions:
    """
    RunOptions from the per-case keywords (policy, seed, worst, perturb, guard, guard_before, poison, input_check, threads, leak_check), set as the CLI sets its options
    """

def run_session(problems: Sequence[tuple[Problem, str]], options: RunOptions, backends: Sequence[Backend], routes: Sequence[tuple[object, str, str, str, str]], worker: Worker | None, out: object, warn: object, jsonl: str = '', known_failures: str = '', verbose: bool = False, resume: str = '', command: str = '', coverage: Sequence[Coverage] = [], shard: str = '', history: str = '', commit: str = '', tier: str = '', label: str = '', budget: str = '', changes: str = '', seeds: int = 1) -> tuple:
    """
    the library's session (opval/session.hpp) over `backends`: the reporters on `out`, the journal, known failures, the summary; `routes` says per backend (run, repro style, backend name, reference name, keywords): a callable run(problem, source) for a backend of the Python worker, else opval's `worker` (None: this process), and the repro in Python's words. Returns (exit code, summary, results); the session's notes go to warn(line). `resume` finishes a journal; `command` is what an interrupted run says to resume with (exit code 128 + the signal); `coverage`, a generated suite's, is reported before the closing line and journaled first; `shard` ('I/N' or 'auto') runs one shard of the cases; `history` records the run (with `commit`, `tier`, `label`) and gives `budget` (a duration: choose the cases that fit, most important first; `changes` a git revision or file of paths) its recorded costs and verdicts; `seeds` runs each case at that many seeds
    """

def apply_tier(tier: str, tag: str, seeds: int, budget: str) -> tuple:
    """
    (tag, seeds, budget) of a run: those given ('', 0, '' when not), else the tier's (smoke, regression, nightly), else smoke, 1 and no budget (core/tiers.hpp)
    """

def parse_budget(text: str) -> float:
    """a duration ('10m', '1h30m', '90s', '600') in seconds"""

def history_answer(database: str, what: str, op: str = '', backend: str = '', text: str = '', limit: int = 20, metric: str = 'latency', all: bool = False, recent: int = 5) -> str:
    """
    `opval history WHAT --json` on the history `database` (history/history_report.hpp): one JSON array
    """

def record_history(database: str, files: Sequence[str], commit: str = '', tier: str = '', label: str = '') -> list[int]:
    """
    `opval history record`: each journal or bench file recorded as one run; returns the runs' ids
    """

def estimated_case_cost(problem: Problem) -> float:
    """
    what a case of `problem` is expected to cost, in the units `--shard` balances (core/shards.hpp)
    """

def assign_shards(costs: Sequence[float], count: int) -> list[int]:
    """
    the shard of each case as `--shard` assigns them: the most costly first, each to the least loaded shard
    """

def write_html_report(journals: Sequence[str], bench: Sequence[str], output: str, title: str = 'opval report', trends: Sequence[tuple[str, str, Sequence[tuple[str, float]]]] = [], history: str = '') -> str:
    """
    the HTML report (report/html_report.hpp) of run journals and bench records, written to `output`; trends: (case, unit, [(run label, value)]) per case, and those of the run history `history`; returns what it holds, in words
    """

def merge_session(journals: Sequence[str], out: object, warn: object, jsonl: str = '', verbose: bool = False, history: str = '', commit: str = '', tier: str = '', label: str = '') -> tuple:
    """
    the library's merge (opval/session.hpp) of a sharded run's journals: the reporters on `out`, the merged journal `jsonl`; returns (exit code, summary, results in the whole run's order); notes go to warn(line)
    """

class GraphUnsupported(ValueError):
    pass

class GraphModel:
    """An ONNX model read into opval's graph IR (opval/graph.hpp)"""

    @property
    def source(self) -> str: ...

    @property
    def producer(self) -> str: ...

    @property
    def opset(self) -> int: ...

    @property
    def contracts(self) -> dict[str, str]: ...

    @property
    def input_names(self) -> list[str]:
        """the graph inputs that are not initializers"""

    @property
    def output_names(self) -> list[str]: ...

    @property
    def nodes(self) -> list:
        """
        each node in execution order: name, op_type, domain, inputs, outputs, role, op, reason
        """

def graph_op_types() -> tuple[dict[str, str], list[str]]:
    """
    the ONNX op types opval maps: {op type: opval op} and the structural ones (exact references)
    """

def read_onnx(path: str) -> GraphModel:
    """reads an ONNX model file; a bad model raises ValueError"""

def parse_onnx(data: bytes, source: str = '<bytes>') -> GraphModel:
    """reads a serialized ONNX model"""

def graph_with_contracts(model: GraphModel, contracts: Mapping[str, str]) -> GraphModel:
    """
    the model judged under contract overrides {node name or op type: contract}; a key naming nothing raises
    """

def run_graph_reference(model: GraphModel, inputs: Sequence[tuple[str, str, Sequence[int], bytes]], given: Sequence[tuple[str, str, Sequence[int], bytes]]) -> tuple[list[tuple[str, str, list[int], bytes]], list]:
    """
    the fp64 graph reference: every value as (name, type, shape, bytes) and each node's record
    """

def run_graph_on_backend(model: GraphModel, inputs: Sequence[tuple[str, str, Sequence[int], bytes]], backend: Backend) -> tuple[list[tuple[str, str, list[int], bytes]], dict[str, str], dict[str, str]]:
    """
    the graph on an opval backend (ops it lacks: contract emulation): every value, which backend ran each op node and which of its kernels, where it says
    """

def graph_node_case(model: GraphModel, node: str, values: Sequence[tuple[str, str, Sequence[int], bytes]]) -> tuple:
    """
    a node as its op-level case: (descriptor, inputs, outputs), each operand (name, opval type, shape, f64 bytes)
    """

def bind_graph_inputs(model: GraphModel, arrays: Sequence[tuple[str, str, Sequence[int], bytes]]) -> list:
    """
    the graph inputs bound from arrays as the model declares them (checked: names, types, shapes), each (name, opval type, shape, f64 bytes)
    """

def judge_graph_nodes(model: GraphModel, inputs: Sequence[tuple[str, str, Sequence[int], bytes]], captured: Sequence[tuple[str, str, Sequence[int], bytes]], options: RunOptions) -> list:
    """
    each node judged from a stack's captured values: accumulated error and local verdict (a CaseResult)
    """
