"""The run history and budgeted runs from Python (docs/FLEET.md): opval.run(history=...,
budget=..., changes=...), opval.merge(history=...), opval.history.ask and .record — thin
callers of the library that `opval history` and `opval run --budget` use."""
import json

import pytest

import opval

SELECTION = dict(tag="regression", ops=["relu", "softmax", "matmul"])


def test_a_planted_regression_is_found_since_its_commit(tmp_path):
    db = str(tmp_path / "h.db")
    first = opval.run(["sim"], **SELECTION, history=db, commit="c1", tier="regression", jsonl=str(tmp_path / "c1.jsonl"),
                      out=open(tmp_path / "out.txt", "w"))
    assert first.passed
    # The next commit's journal with one case turned into a failure, recorded as run 2.
    lines = (tmp_path / "c1.jsonl").read_text().splitlines()
    record = json.loads(lines[5])
    record["state"], record["reason"] = "FAILED", "planted regression"
    lines[5] = json.dumps(record)
    (tmp_path / "c2.jsonl").write_text("\n".join(lines) + "\n")
    assert opval.history.record(db, [tmp_path / "c2.jsonl"], commit="c2", tier="regression") == [2]
    failing = opval.history.ask(db, "failing")
    assert len(failing) == 1
    assert failing[0]["case"]["descriptor"] == record["descriptor"]
    assert (failing[0]["since"]["commit"], failing[0]["last_pass"]["commit"]) == ("c2", "c1")
    tiers = opval.history.ask(db, "tiers")
    assert [t["tier"] for t in tiers] == ["regression"] and len(tiers[0]["runs"]) == 2
    assert opval.history.ask(db, "runs", limit=1)[0]["at"]["commit"] == "c2"

    # A budgeted run puts the failed case first, then the changed op's cases.
    changes = tmp_path / "changes.txt"
    changes.write_text("src/ops/softmax/softmax_kernel.cpp\n")
    total = sum(r.timings["total"] for r in first.results)
    budgeted = opval.run(["sim"], **SELECTION, history=db, commit="c3", budget=total / 3, changes=str(changes),
                         out=open(tmp_path / "out3.txt", "w"))
    assert 0 < len(budgeted.results) < len(first.results)
    assert budgeted.results[0].descriptor == record["descriptor"]
    assert budgeted.results[0].choice == (0, "failed at its latest run (commit c2)")
    assert budgeted.results[1].op == "softmax"
    assert budgeted.results[1].choice[1] == "the change touches op softmax"
    assert [r.choice[0] for r in budgeted.results] == list(range(len(budgeted.results)))


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="not a duration"):
        opval.run(["sim"], ops=["relu"], budget="ten minutes")
    with pytest.raises(ValueError, match="changes orders the cases a budget chooses"):
        opval.run(["sim"], ops=["relu"], changes="HEAD")
    with pytest.raises(ValueError, match="no history database"):
        opval.history.ask(tmp_path / "missing.db")
    with pytest.raises(ValueError, match="unknown question"):
        opval.history.ask(tmp_path / "missing.db", "fialing")
    with pytest.raises(TypeError):
        opval.history.record(tmp_path / "h.db", "one.jsonl")


def test_a_tier_chooses_the_suite_and_merge_records(tmp_path):
    db = str(tmp_path / "h.db")
    for i in range(2):
        opval.run(["sim"], ops=["relu"], tier="regression", shard=f"{i}/2", history=db, jsonl=str(tmp_path / f"s{i}.jsonl"),
                  out=open(tmp_path / "out.txt", "w"))
    assert opval.history.ask(db, "runs") == []  # shards record nothing
    merged = opval.merge([str(tmp_path / f"s{i}.jsonl") for i in range(2)], history=db, commit="m", tier="regression",
                         out=open(tmp_path / "out.txt", "w"))
    regression = opval.run(["sim"], ops=["relu"], tag="regression", out=open(tmp_path / "out.txt", "w"))
    assert len(merged.results) == len(regression.results)  # the regression suite, not smoke
    assert all(r.choice is not None for r in merged.results)  # the tier's 10-minute budget chose them
    runs = opval.history.ask(db, "runs")
    assert len(runs) == 1 and runs[0]["at"]["tier"] == "regression" and runs[0]["cases"] == len(regression.results)


def test_the_report_charts_the_historys_trends(tmp_path):
    db = str(tmp_path / "h.db")
    for commit in ("c1", "c2"):
        opval.run(["sim"], ops=["relu"], history=db, commit=commit, jsonl=str(tmp_path / f"{commit}.jsonl"),
                  out=open(tmp_path / "out.txt", "w"))
    page = tmp_path / "report.html"
    opval.report([tmp_path / "c2.jsonl"], output=page, history=db)
    html = page.read_text()
    trends = html.index('<section id="trends">')
    assert "No run history was given" not in html
    assert "relu" in html[trends:] and "chart line-chart" in html[trends:]
    with pytest.raises(ValueError, match="not an opval history database"):
        opval.report([tmp_path / "c2.jsonl"], output=tmp_path / "bad.html", history=tmp_path / "c1.jsonl")
