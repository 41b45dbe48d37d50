"""The session's option table is the one description of every option: opval.run, opval.check
and opval.judge take its keywords with its defaults, `python -m opval run` takes its flags, and
RunOptions made from keywords set the fields the CLI's options set."""
import contextlib
import inspect
import io

import pytest

import opval
from opval import _opval
from opval.__main__ import main
from opval.check import make_options

OPTIONS = _opval.session_options()
FUNCTIONS = {"run": opval.run, "check": opval.check, "judge": opval.judge}


def _same_default(table_default, python_default) -> bool:
    """Python says "none" as None or an empty tuple where the table has '' or []."""
    empty = (None, "", [], ())
    if table_default in empty and python_default in empty:
        return True
    if isinstance(python_default, tuple):
        python_default = list(python_default)
    return table_default == python_default


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_each_keyword_of_the_table_is_taken_with_its_default(function):
    parameters = inspect.signature(FUNCTIONS[function]).parameters
    expected = [o for o in OPTIONS if function in o["python"]]
    assert expected, f"the table gives opval.{function} no keyword"
    for o in expected:
        assert o["keyword"] in parameters, f"opval.{function} lacks {o['keyword']} ({o['flag']})"
        if o["stage"] in ("per_case", "session") and function != "judge":
            default = parameters[o["keyword"]].default
            # timeout=None is "not given", as a CLI flag left out: the CLI's default, and no
            # limit with isolation='none' (where an explicit one is refused).
            if o["keyword"] == "timeout" and default is None:
                continue
            assert _same_default(o["default"], default), f"opval.{function}({o['keyword']}={default!r}): the CLI's {o['flag']} defaults to {o['default']!r}"


def test_python_m_opval_run_takes_every_flag_of_opval_run_it_has_a_keyword_for():
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["run", "--help"])
    for o in OPTIONS:
        if "run" in o["python"]:
            assert o["flag"].split(",")[-1] in help_text.getvalue(), o["flag"]


def test_run_options_from_keywords_set_what_the_cli_options_set():
    o = make_options(policy="exact", seed=9, worst=3, perturb=False, guard=False, guard_before=True, poison=False,
                     input_check=False, threads=[2, 1], leak_check=2)
    assert str(o.policy) == "exact"
    assert (o.seed, o.worst_k, o.leak_check, list(o.threads)) == (9, 3, 2, [2, 1])
    assert not (o.perturb_check or o.guard or o.poison_check or o.input_check)
    assert o.guard_at == _opval.guard_side.before
    defaults = make_options()
    assert (defaults.seed, defaults.worst_k, defaults.perturb_check, defaults.guard_at) == (1, 5, True, _opval.guard_side.after)


def test_an_unknown_or_mistyped_keyword_is_named():
    with pytest.raises(ValueError, match="unknown case option 'perturbs'"):
        make_options(perturbs=False)
    with pytest.raises(ValueError, match="seed"):
        make_options(seed="one")
    with pytest.raises(ValueError, match="no_such_policy"):
        make_options(policy="no_such_policy")


def test_a_repro_names_every_option_the_case_ran_with():
    import numpy as np

    def ones(x):
        return np.ones_like(x)

    result = opval.check("relu", ones, problems=["relu shape=8 dt=f32"], perturb=False, worst=2, seed=4)
    (failure,) = result.failures
    assert failure.repro == ("opval.check('relu', ones, problems=['relu shape=8 dt=f32:f32:f32'], seed=4, worst=2, "
                             "perturb=False, verbose=True)")


def test_check_verbose_explains_passing_cases_too(capsys):
    import numpy as np

    def relu(x):
        return np.maximum(x, x.dtype.type(0))

    result = opval.check("relu", relu, problems=["relu shape=8 dt=f32"], verbose=True)
    assert result.passed
    # The passing case explained: its row with the whole problem, then every metric.
    assert "  relu shape=8 dt=f32:f32:f32\n" in result.report or " relu shape=8 dt=f32:f32:f32\n" in result.report
    assert "    ulp histogram: " in result.report
    assert "    ulp histogram: " in capsys.readouterr().out


def test_a_failing_output_stream_stops_the_run_with_its_error():
    out = io.StringIO()
    out.close()
    with pytest.raises(ValueError, match="closed file"):
        opval.run(["sim"], problems=["relu shape=8"], out=out)
