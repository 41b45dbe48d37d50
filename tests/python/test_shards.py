"""opval.run(..., shard="I/N") and opval.merge (docs/FLEET.md): the Python callers of the
library's sharded session and merge give the whole run's results and records, and a missing
shard is a ValueError naming it."""
import io
import json

import pytest

import opval
from journal_testing import comparable

SELECTION = dict(tag="smoke", ops=["relu", "softmax", "matmul"])


def test_shards_merge_into_the_whole_run(tmp_path):
    whole = opval.run(["sim"], **SELECTION, jsonl=str(tmp_path / "whole.jsonl"), out=io.StringIO())
    journals = []
    for i in (2, 0, 1):
        journal = tmp_path / f"shard{i}.jsonl"
        part = opval.run(["sim"], **SELECTION, shard=f"{i}/3", jsonl=str(journal), out=io.StringIO())
        assert 0 < len(part.results) < len(whole.results)
        assert all(json.loads(line)["shard"]["index"] == i for line in journal.read_text().splitlines())
        journals.append(str(journal))
    out = io.StringIO()
    merged = opval.merge(journals, jsonl=str(tmp_path / "merged.jsonl"), out=out)
    assert [(r.descriptor, r.backend, r.state) for r in merged.results] == \
        [(r.descriptor, r.backend, r.state) for r in whole.results]
    assert comparable(tmp_path / "merged.jsonl") == comparable(tmp_path / "whole.jsonl")
    assert out.getvalue().rstrip().splitlines()[-1] == f"{len(whole.results)} passed, 0 failed, 0 skipped"


def test_a_missing_shard_is_named(tmp_path):
    journals = []
    for i in (0, 1):
        journals.append(str(tmp_path / f"shard{i}.jsonl"))
        opval.run(["sim"], **SELECTION, shard=f"{i}/3", jsonl=journals[-1], out=io.StringIO())
    with pytest.raises(ValueError, match="shard 2 of 3 missing"):
        opval.merge(journals, out=io.StringIO())
    with pytest.raises(ValueError, match="shard"):
        opval.run(["sim"], **SELECTION, shard="3/3", out=io.StringIO())
    with pytest.raises(TypeError):
        opval.merge(journals[0])
