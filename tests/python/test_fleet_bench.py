"""bench/fleet.py (docs/FLEET.md, "At scale"): on a small selection it runs the whole run and
its shards as parallel processes, finds the merged journal identical to the whole run's, and
prints the wall-time model per node count; a merge that differs makes it exit 1."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPVAL = os.environ.get("OPVAL_CLI") or str(ROOT / "build" / "opval")


def fleet(*args):
    return subprocess.run([sys.executable, ROOT / "bench" / "fleet.py", OPVAL, *args], capture_output=True, text=True,
                          timeout=600)


# A heavy CI stage, time-budgeted (docs/PERFORMANCE.md, "This project's CI").
@pytest.mark.timeout(180)
def test_shards_run_in_parallel_merge_identically_and_the_model_is_printed(tmp_path):
    done = fleet("--shards", "3", "--nodes", "1,2,16", "--keep", tmp_path, "--", "--tag", "smoke", "--op", "relu",
                 "--op", "softmax", "--op", "matmul")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged journal identical to the whole run's" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split("|")[1].strip() for row in rows] == ["1", "2", "16"]
    for row in rows:
        estimated, recorded, ideal = (float(x) for x in row.split("|")[2:5])
        assert ideal <= recorded + 1e-9 and ideal <= estimated + 1e-9 and estimated > 0
    assert sorted(p.name for p in tmp_path.glob("shard-*.jsonl")) == ["shard-0.jsonl", "shard-1.jsonl", "shard-2.jsonl"]
