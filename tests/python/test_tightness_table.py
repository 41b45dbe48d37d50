"""bench/tightness.py, the bound-tightness table (issue 17, section 7): on a small problems file
(one seed, two lengths per op, sim only) it prints a row per contract and backend whose values,
worst |error| / bound of a correct implementation, lie in (0, 1]; it reports a backend this
opval lacks and leaves it out; a failed case makes it exit 1 unless the known failures list it;
and --write-doc replaces exactly the generated block of a document.

The opval binary: $OPVAL_CLI, else build/opval of this checkout, else the installed package's.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tightness.py"

PROBLEMS = """\
#> matmul: n = k
matmul m=16 n=16 k=64 dt=f32:f32:f32
matmul m=16 n=16 k=1024 dt=f32:f32:f32
matmul m=16 n=16 k=64 dt=bf16:f32:bf16
matmul m=16 n=16 k=1024 dt=bf16:f32:bf16

#> reduce sum: n = shape[1]
reduce shape=4x64 axes=1 dt=f32:f32:f32
reduce shape=4x1024 axes=1 dt=f32:f32:f32
reduce shape=4x64 axes=1 dt=f16:f16:f16
reduce shape=4x1024 axes=1 dt=f16:f16:f16
"""


def opval_cli():
    if os.environ.get("OPVAL_CLI"):
        return os.environ["OPVAL_CLI"]
    built = ROOT / "build" / "opval"
    if built.exists():
        return str(built)
    opval = pytest.importorskip("opval")
    return opval.worker_executable()


def tightness(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def markdown_rows(text):
    """(section, contract, backend) -> the cells of its row."""
    rows, section = {}, None
    for line in text.splitlines():
        if line.startswith("#### "):
            section = line[5:].split(" (n =")[0]
        elif line.startswith("| ") and not line.startswith(("| contract", "| ---")):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[(section, cells[0], cells[1])] = cells[2:]
    return rows


def ratio(cell):
    """The worst |error| / bound of a cell `0.034 (0.005)` (bold or not)."""
    m = re.fullmatch(r"\**([0-9.e+-]+) \([0-9.e+-]+\)\**", cell)
    assert m, f"not a measured cell: {cell!r}"
    return float(m.group(1))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("tightness")
    (d / "problems.txt").write_text(PROBLEMS)
    done = tightness(opval_cli(), "--problems", d / "problems.txt", "--backend", "sim,no_such_backend",
                     "--seeds", "1", "--markdown", d / "table.md", "--keep", d / "journals", "--variants", "none")
    return d, done


def test_sim_rows_lie_in_zero_one(run):
    d, done = run
    assert done.returncode == 0, done.stderr
    rows = markdown_rows((d / "table.md").read_text())
    assert set(rows) == {("matmul", "f32:f32:f32", "sim"), ("matmul", "bf16:f32:bf16", "sim"),
                         ("reduce sum", "f32:f32:f32", "sim"), ("reduce sum", "f16:f16:f16", "sim")}
    # An f16 accumulation of 1024 terms has a vacuous bound: opval judges it relative to sim,
    # which says nothing of the bound, so the table shows no ratio there.
    f16 = rows.pop(("reduce sum", "f16:f16:f16", "sim"))
    assert f16[1] == "(relative-to-sim)" and 0 < ratio(f16[0]) <= 1, f16
    for key, cells in rows.items():
        assert len(cells) == 2, key  # n=64 and n=1024
        for cell in cells:
            assert 0 < ratio(cell) <= 1, (key, cell)
    # A bf16 output's rounding dominates its bound: the worst case uses most of it.
    assert all(ratio(c) > 0.1 for c in rows[("matmul", "bf16:f32:bf16", "sim")])
    assert "n=64" in done.stdout and "n=1024" in done.stdout


def test_the_table_is_the_journals_worst_case(run):
    d, _ = run
    records = [json.loads(line) for line in (d / "journals" / "seed-1.jsonl").read_text().splitlines()]
    worst = max(o["metrics"]["max_error_over_bound"] for r in records
                if r["descriptor"].startswith("matmul m=16 n=16 k=1024 dt=f32") for o in r["outputs"])
    rows = markdown_rows((d / "table.md").read_text())
    assert ratio(rows[("matmul", "f32:f32:f32", "sim")][1]) == pytest.approx(worst, rel=0.05)


def test_a_missing_backend_is_reported_and_left_out(run):
    _, done = run
    assert "backend no_such_backend: not in this opval" in done.stderr
    assert "no_such_backend" not in done.stdout


def failed_journal(d, tmp_path, known):
    """The run's journal with one matmul case turned into a failure."""
    records = [json.loads(line) for line in (d / "journals" / "seed-1.jsonl").read_text().splitlines()]
    for r in records:
        if r["descriptor"].startswith("matmul m=16 n=16 k=64 dt=f32"):
            r["state"], r["reason"] = "FAILED", "planted: 3 of 64 elements beyond the bound"
            r["outputs"][0]["metrics"]["max_error_over_bound"] = 2.5
            if known:
                r["known_failure"] = "a planted library disagreement"
    (tmp_path / "seed-1.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return tightness("unused-opval", "--problems", d / "problems.txt", "--journals", tmp_path,
                     "--markdown", tmp_path / "table.md")


@pytest.mark.parametrize("known, exit_code, message, cell", [
    (False, 1, "FAILED (not a known failure): opval repro 'matmul m=16 n=16 k=64", "FAIL 2.5"),
    (True, 0, "known failure, 1 cases: sim matmul dt=f32:f32:f32: a planted library disagreement", "known FAIL"),
])
def test_a_failed_case_fails_the_run_unless_it_is_a_known_failure(run, tmp_path, known, exit_code, message, cell):
    d, _ = run
    done = failed_journal(d, tmp_path, known=known)
    assert done.returncode == exit_code, done.stderr
    assert message in done.stderr
    assert markdown_rows((tmp_path / "table.md").read_text())[("matmul", "f32:f32:f32", "sim")][0].startswith(cell)


TEST_MATMUL = ROOT / "build" / "tests" / "cpp" / "test_matmul"


@pytest.mark.skipif(not TEST_MATMUL.exists(), reason="build/tests/cpp/test_matmul is not built")
def test_the_tests_variants_are_rows_of_their_problems(run, tmp_path):
    d, _ = run
    done = tightness(opval_cli(), "--problems", d / "problems.txt", "--backend", "sim", "--seeds", "1",
                     "--variants", TEST_MATMUL, "--markdown", tmp_path / "table.md")
    assert done.returncode == 0, done.stderr
    rows = markdown_rows((tmp_path / "table.md").read_text())
    for name in ("reversed", "split-K", "pairwise"):
        cells = rows[("matmul", "f32:f32:f32", f"variant:{name}")]
        assert len(cells) == 2 and all(0 < ratio(c) <= 1 for c in cells), (name, cells)
    # Only f32 variants exist: no variant row for the bf16 contract, nor for reduce (not asked).
    assert not [k for k in rows if k[2].startswith("variant:") and (k[1] != "f32:f32:f32" or k[0] != "matmul")]


def test_write_doc_replaces_only_the_generated_block(run, tmp_path):
    d, _ = run
    doc = tmp_path / "doc.md"
    sys.path.insert(0, str(SCRIPT.parent))
    import tightness as script
    doc.write_text(f"before\n{script.DOC_BEGIN}\nold table\n{script.DOC_END}\nafter\n")
    done = tightness("build/opval", "--problems", d / "problems.txt", "--journals", d / "journals", "--write-doc", doc)
    assert done.returncode == 0, done.stderr
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith(f"{script.DOC_END}\nafter\n") and "old table" not in text
    assert f"python3 bench/tightness.py build/opval --problems {d / 'problems.txt'} --write-doc {doc}" in text
    assert "| f32:f32:f32 | sim |" in text
    doc.write_text("no block\n")
    refused = tightness("build/opval", "--problems", d / "problems.txt", "--journals", d / "journals", "--write-doc", doc)
    assert refused.returncode == 2 and "no '<!-- tightness-table: begin" in refused.stderr
