"""The Kubernetes deployment (deploy/k8s/, docs/FLEET.md) without a cluster: the manifests
validate strictly against Kubernetes' schemas (kubernetes-validate --strict, which rejects a
misspelt field), agree with each other, and their command lines, run here with each index's
environment as the Indexed Job would set it, merge into exactly the unsharded run."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from journal_testing import comparable

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OPVAL = os.environ.get("OPVAL_CLI") or str(ROOT / "build" / "opval")
VALIDATE = Path(sys.executable).parent / "kubernetes-validate"


def manifest(name):
    return yaml.safe_load((K8S / name).read_text())


def container(job):
    return job["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("name", ["shards-job.yaml", "merge-job.yaml", "results-volume.yaml"])
def test_manifests_validate_strictly(name):
    done = subprocess.run([VALIDATE, "--strict", K8S / name], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_strict_validation_rejects_a_misspelt_field(tmp_path):
    wrong = manifest("shards-job.yaml")
    wrong["spec"]["completionMod"] = wrong["spec"].pop("completionMode")
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(wrong))
    done = subprocess.run([VALIDATE, "--strict", path], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "completionMod" in done.stdout + done.stderr


def test_the_manifests_agree():
    shards, merge, volume = manifest("shards-job.yaml"), manifest("merge-job.yaml"), manifest("results-volume.yaml")
    spec = shards["spec"]
    assert spec["completionMode"] == "Indexed"
    env = {e["name"]: e["value"] for e in container(shards)["env"]}
    assert int(env["OPVAL_SHARD_COUNT"]) == spec["completions"]
    for job in (shards, merge):
        volumes = job["spec"]["template"]["spec"]["volumes"]
        assert volumes[0]["persistentVolumeClaim"]["claimName"] == volume["metadata"]["name"]
        assert container(job)["volumeMounts"][0]["mountPath"] == "/results"


# A heavy CI stage, time-budgeted (docs/PERFORMANCE.md, "This project's CI").
@pytest.mark.timeout(180)
def test_the_jobs_command_lines_merge_into_the_unsharded_run(tmp_path):
    """Each pod's command with its JOB_COMPLETION_INDEX, /results a folder here and `opval` the
    build's, then the merge pod's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "opval").symlink_to(OPVAL)
    results = tmp_path / "results"
    results.mkdir()
    shards, merge = manifest("shards-job.yaml"), manifest("merge-job.yaml")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.update({e["name"]: e["value"] for e in container(shards)["env"]})

    def here(command):
        return [part.replace("/results", str(results)) for part in command]

    for index in range(shards["spec"]["completions"]):
        done = subprocess.run(here(container(shards)["command"]), env={**env, "JOB_COMPLETION_INDEX": str(index)},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    merged = subprocess.run(here(container(merge)["command"]), env=env, capture_output=True, text=True, timeout=600)
    assert merged.returncode in (0, 1), merged.stderr
    # The unsharded run: the shards' command without --shard.
    whole_command = container(shards)["command"][-1].split("||")[0].replace("--shard auto", "")
    whole_command = whole_command.replace("/results/shard-$JOB_COMPLETION_INDEX.jsonl", str(tmp_path / "whole.jsonl"))
    whole = subprocess.run(["/bin/sh", "-c", whole_command], env=env, capture_output=True, text=True, timeout=600)
    assert whole.returncode == merged.returncode, whole.stderr
    assert comparable(results / "merged.jsonl") == comparable(tmp_path / "whole.jsonl")
    assert f"merged {shards['spec']['completions']} shards" in merged.stderr
