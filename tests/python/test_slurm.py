"""A sharded run on a real Slurm (docs/FLEET.md): a one-node cluster on this machine
(deploy/slurm/local-cluster: munged, slurmctld, slurmd), the suite submitted as a 4-task job
array with the merge after it (deploy/slurm/submit), and the merged journal equal to the
unsharded run's. scripts/setup test installs slurm-wlm and munge and starts the cluster for
the test run (SLURM_CONF); run alone, the test starts and stops one itself."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from journal_testing import comparable

ROOT = Path(__file__).resolve().parents[2]
OPVAL = os.environ.get("OPVAL_CLI") or str(ROOT / "build" / "opval")
SELECTION = ["--tag", "smoke", "--op", "relu", "--op", "softmax", "--op", "matmul", "--op", "layer_norm"]

pytestmark = pytest.mark.skipif(shutil.which("slurmctld") is None or os.geteuid() != 0,
                                reason="needs Debian's slurm-wlm and munge (scripts/setup test installs them) and root")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """SLURM_CONF of a running cluster: the test run's, else one started here."""
    if os.environ.get("SLURM_CONF"):
        yield os.environ["SLURM_CONF"]
        return
    env = {**os.environ, "OPVAL_SLURM_DIR": str(tmp_path_factory.mktemp("slurm"))}
    started = subprocess.run([ROOT / "deploy" / "slurm" / "local-cluster", "start"], env=env, capture_output=True,
                             text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    try:
        yield started.stdout.strip().removeprefix("SLURM_CONF=")
    finally:
        subprocess.run([ROOT / "deploy" / "slurm" / "local-cluster", "stop"], env=env, timeout=60)


# A heavy CI stage, time-budgeted (docs/PERFORMANCE.md, "This project's CI").
@pytest.mark.timeout(120)
def test_a_job_array_of_four_shards_merges_into_the_unsharded_run(slurm, tmp_path):
    env = {**os.environ, "SLURM_CONF": slurm, "OPVAL": OPVAL}
    whole = subprocess.run([OPVAL, "run", *SELECTION, "--jsonl", tmp_path / "whole.jsonl"], capture_output=True,
                           text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    results = tmp_path / "results"
    submitted = subprocess.run([ROOT / "deploy" / "slurm" / "submit", "4", results, *SELECTION], env=env,
                               capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    array, merge = submitted.stdout.split()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        queued = subprocess.run(["squeue", "-h", "-j", f"{array},{merge}"], env=env, capture_output=True, text=True)
        if queued.returncode == 0 and not queued.stdout.strip():
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"jobs {array} and {merge} still queued after 300 s")
    for i in range(4):  # each task ran its own shard
        shard = [json.loads(line)["shard"] for line in (results / f"shard-{i}.jsonl").read_text().splitlines()]
        assert shard and all(s["index"] == i and s["count"] == 4 for s in shard), (results / f"shard-{i}.out").read_text()
    report = (results / "merge.out").read_text()
    assert "opval: merged 4 shards" in report, report
    assert comparable(results / "merged.jsonl") == comparable(tmp_path / "whole.jsonl")
    assert whole.stdout.rstrip().splitlines()[-1] in report
