"""The pytest plugin: --opval-tier, suite parametrization with descriptors as ids, failure
messages with the repro call, JUnit XML through pytest's --junitxml."""
import xml.etree.ElementTree as ET

import opval

KERNELS = '''
import numpy as np
import pytest
import opval

def softmax(x, *, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)

def softmax_no_max(x, *, axis):
    with np.errstate(all="ignore"):
        e = np.exp(x)
        return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)

@pytest.mark.opval("softmax", contracts=["f32:f32:f32"])
def test_softmax(opval_problem, opval_seed):
    opval.check("softmax", softmax, problems=[opval_problem], seed=opval_seed).assert_ok()

@pytest.mark.opval("softmax", contracts="f32")
def test_softmax_no_max(opval_problem):
    opval.check("softmax", softmax_no_max, problems=[opval_problem]).assert_ok()
'''


def f32_softmax(tag):
    return [str(p) for p, _ in opval.suite_problems(tag, ["softmax"]) if p.contract.types_string() == "f32:f32:f32"]


def test_smoke_tier_parametrizes_with_descriptors_as_ids(pytester):
    pytester.makepyfile(test_kernels=KERNELS)
    result = pytester.runpytest("--opval-tier", "smoke", "-v", "-k", "test_softmax and not no_max")
    smoke = f32_softmax("smoke")
    assert smoke
    for descriptor in smoke:
        result.stdout.fnmatch_lines([f"*test_softmax[[]{descriptor}[]] PASSED*"])
    result.assert_outcomes(passed=len(smoke))
    result.stdout.fnmatch_lines(["opval 0.1.0: tier smoke"])


def test_regression_tier_fails_with_explanation_and_repro(pytester):
    pytester.makepyfile(test_kernels=KERNELS)
    result = pytester.runpytest("--opval-tier", "regression", "-q")
    regression = f32_softmax("regression")
    failing = [d for d in regression if "fill=large" in d or "fill=special" in d]
    assert failing, "the regression suite has softmax problems with large inputs"
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= len(regression) and outcomes.get("failed", 0) >= 1
    result.stdout.fnmatch_lines(["*CheckFailure: opval.check of softmax_no_max (softmax)*",
                                 "*opval.check('softmax', softmax_no_max, problems=[[]'softmax *"])


def test_nightly_tier_adds_seeds(pytester):
    pytester.makepyfile(test_kernels=KERNELS)
    result = pytester.runpytest("--opval-tier", "nightly", "-q", "-k", "test_softmax and not no_max")
    assert result.parseoutcomes()["passed"] == 3 * len(f32_softmax("regression"))


def test_junit_xml_names_cases_by_descriptor(pytester):
    pytester.makepyfile(test_kernels=KERNELS)
    xml = pytester.path / "junit.xml"
    pytester.runpytest("--opval-tier", "smoke", f"--junitxml={xml}", "-k", "test_softmax and not no_max")
    names = {case.get("name") for case in ET.parse(xml).getroot().iter("testcase")}
    assert names == {f"test_softmax[{d}]" for d in f32_softmax("smoke")}


def test_unknown_tier_is_refused(pytester):
    pytester.makepyfile(test_kernels=KERNELS)
    bad = pytester.runpytest("--opval-tier", "weekly")
    assert bad.ret != 0
    bad.stderr.fnmatch_lines(["*--opval-tier*invalid choice*weekly*"])
