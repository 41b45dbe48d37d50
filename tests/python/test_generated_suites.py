"""Generated suites from Python (docs/COVERAGE.md): opval.check(tag="generated") makes the op's
suite inside what the Python kernel declares, opval.run(tag="generated") for the backends given,
and opval.coverage reports what a suite covers without running a kernel."""
import json

import numpy as np

import opval


def test_check_generates_inside_the_declared_contract_and_reports_the_rest():
    result = opval.check("add", lambda a, b: np.add(a, b), contracts="f32", tag="generated", suite_budget=40)
    assert result.passed, result.explain()
    assert result.ran > 20
    (coverage,) = result.coverage
    assert coverage.op == "add" and coverage.backend.startswith("python:")
    text = coverage.text(verbose=True)
    assert "add on python:" in text
    # Declared f32 means f32 at the default options: denorm=ftz and acc_round=rz are refused, alone.
    record = json.loads(coverage.json())["coverage"]
    options = {v["value"]: v for v in record["values"] if v["feature"] == "contract option"}
    assert options["denorm=ftz"]["alone"] == [] and "f32" in options["denorm=ftz"]["refused"]
    assert all(c["refused"] for c in record["contracts"] if c["contract"] != "f32")
    assert "Coverage of the generated suite" in result.report


def test_run_generated_on_sim_and_coverage_without_running():
    result = opval.run(["sim"], tag="generated", ops=["relu"], contracts=["f32"], suite_budget=25,
                       out=open("/dev/null", "w"))
    assert result.passed
    (coverage,) = result.coverage
    assert coverage.values_covered == coverage.values
    alone = opval.coverage(["sim"], ops=["relu"], contracts=["f32"], suite_budget=25)
    assert [json.loads(c.json()) for c in alone] == [json.loads(coverage.json())]
    assert opval.coverage(["sim"], ops=["relu"], seed=2)[0].values == coverage.values
