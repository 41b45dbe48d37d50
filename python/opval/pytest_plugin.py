"""opval's pytest plugin (loaded through the pytest11 entry point once opval is installed).

    pytest --opval-tier smoke|regression|nightly

A test that takes `opval_problem` and carries @pytest.mark.opval("softmax") runs once per
problem of that op's suite for the tier, with the problem's descriptor as its test id:

    @pytest.mark.opval("softmax", contracts=["f32"])
    def test_my_softmax(opval_problem, opval_seed):
        opval.check("softmax", my_softmax, problems=[opval_problem], seed=opval_seed).assert_ok()

Tiers: smoke and regression are the ops' suites of those names; nightly is the regression
suite under three seeds (1, 2, 3: other inputs), for tests that take `opval_seed`.
A failing check's message explains the failure and carries the call that reproduces it;
JUnit XML comes from pytest's own --junitxml, with the descriptors as test names.
"""
from __future__ import annotations

import pytest

TIERS = ("smoke", "regression", "nightly")
_SUITE_OF_TIER = {"smoke": "smoke", "regression": "regression", "nightly": "regression"}
_SEEDS_OF_TIER = {"smoke": [1], "regression": [1], "nightly": [1, 2, 3]}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("opval", "opval operator validation")
    group.addoption("--opval-tier", choices=TIERS, default="smoke",
                    help="the suites @pytest.mark.opval tests run: smoke (default), regression, or nightly "
                         "(regression under seeds 1, 2, 3)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "opval(op, contracts=None): run the test once per problem of op's suite for "
                                       "--opval-tier, as its `opval_problem` argument")


def pytest_report_header(config: pytest.Config) -> str:
    import opval

    return f"opval {opval.__version__}: tier {config.getoption('opval_tier')}"


def tier_problems(op: str, tier: str, contracts=None) -> list:
    """The problems of op's suite for `tier`, those of `contracts` only when given."""
    import opval

    if tier not in TIERS:
        raise ValueError(f"unknown opval tier '{tier}' (known: {', '.join(TIERS)})")
    # Whole contracts, options included: "f32" is f32 at the default options (opval.check's rule).
    wanted = None if contracts is None else [opval.Contract(c) for c in ([contracts] if isinstance(contracts, str) else contracts)]
    problems = [p for p, _ in opval.suite_problems(_SUITE_OF_TIER[tier], [op])]
    return [p for p in problems if wanted is None or p.contract in wanted]


def parametrize(op: str, tier: str = "smoke", contracts=None):
    """A pytest.mark.parametrize over op's problems of a fixed tier, ids = descriptors, for
    tests that do not follow --opval-tier."""
    problems = tier_problems(op, tier, contracts)
    return pytest.mark.parametrize("opval_problem", problems, ids=[str(p) for p in problems])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("opval")
    if "opval_problem" not in metafunc.fixturenames or marker is None:
        return
    op = marker.kwargs.get("op", marker.args[0] if marker.args else None)
    if op is None:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.opval needs the op, e.g. @pytest.mark.opval('softmax')")
    tier = metafunc.config.getoption("opval_tier")
    problems = tier_problems(op, tier, marker.kwargs.get("contracts"))
    metafunc.parametrize("opval_problem", problems, ids=[str(p) for p in problems])
    seeds = _SEEDS_OF_TIER[tier]
    if "opval_seed" in metafunc.fixturenames and seeds != [1]:
        metafunc.parametrize("opval_seed", seeds, ids=[f"seed={s}" for s in seeds], indirect=True)


@pytest.fixture
def opval_seed(request: pytest.FixtureRequest) -> int:
    """The fill seed of the case: 1, or each of the nightly tier's seeds."""
    return getattr(request, "param", 1)


@pytest.fixture
def opval_tier(request: pytest.FixtureRequest) -> str:
    """The --opval-tier of this run."""
    return request.config.getoption("opval_tier")
