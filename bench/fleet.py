#!/usr/bin/env python3
"""A sharded run at scale on one machine, and a model of its wall time on a fleet (issue 18,
section 4; docs/FLEET.md).

1. Runs the selection whole (`opval run ... --jsonl whole.jsonl`), timing it.
2. Runs it as N shards (`--shard I/N`), `--jobs` processes at a time, timing each shard.
3. Merges the shards (`opval merge`) and checks that the merged journal is the whole run's,
   timings, memory and the build identity aside; exits 1 when it is not.
4. Models the wall time on K nodes for each K of --nodes: the cases assigned to K shards as
   `--shard` assigns them (opval's estimated costs), each shard's time the sum of its cases'
   recorded times in the whole run plus a per-shard overhead, the whole run's wall time less
   its cases' times (a process starting, selecting or generating every case, starting its
   worker, reporting: what every shard does too); the run's time on K nodes is its slowest
   shard's. With more shard processes than cores, each runs with OMP_NUM_THREADS=1. Beside it: the same with the cases assigned by their recorded times (what
   history would allow), and the ideal, the total over K.

Usage (the figures of docs/FLEET.md come from exactly this):

    .venv/bin/python bench/fleet.py build/opval --shards 8 -- --tag generated --suite-budget 50

Everything after `--` is the selection and options of `opval run`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

VARYING = ("timings", "memory", "opval")


def comparable(path):
    """The journal's lines without what differs between two runs of the same cases."""
    out = []
    for line in Path(path).read_text().splitlines():
        record = json.loads(line)
        for key in VARYING:
            record.pop(key, None)
        out.append(json.dumps(record))
    return out


def timed_run(command, env=None):
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"fleet: {' '.join(map(str, command))} exited {done.returncode}: {done.stderr.strip()}")
    return time.monotonic() - start, done


def case_records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if not line.startswith('{"coverage":')]


def shard_times(costs, times, count, overhead):
    """Each shard's modelled time when the cases are assigned by `costs` to `count` shards."""
    from opval import _opval

    shard_of = _opval.assign_shards(costs, count)
    totals = [overhead] * count
    for shard, seconds in zip(shard_of, times):
        totals[shard] += seconds
    return totals


def model(records, nodes, overhead):
    """Rows (K, estimated-cost slowest shard, recorded-cost slowest shard, ideal) in seconds."""
    from opval import Problem, _opval

    estimated = [_opval.estimated_case_cost(Problem(r["descriptor"])) for r in records]
    recorded = [r["timings"]["total"] for r in records]
    total = sum(recorded)
    return [(k, max(shard_times(estimated, recorded, k, overhead)), max(shard_times(recorded, recorded, k, overhead)),
             total / k + overhead) for k in nodes]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("opval", help="the opval binary, e.g. build/opval")
    ap.add_argument("--shards", type=int, default=8, help="shards run here (default 8)")
    ap.add_argument("--jobs", type=int, default=0, help="shards at once (default: all)")
    ap.add_argument("--nodes", default="1,2,4,8,16,32", help="node counts of the model (default 1,2,4,8,16,32)")
    ap.add_argument("--keep", metavar="DIR", help="keep the journals in DIR")
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    run = argv[cut + 1:]  # after --: opval run's selection and options
    nodes = [int(k) for k in a.nodes.split(",")]
    folder = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="opval-fleet-"))
    folder.mkdir(parents=True, exist_ok=True)

    whole_seconds, whole = timed_run([a.opval, "run", *run, "--jsonl", folder / "whole.jsonl"])
    journals = [folder / f"shard-{i}.jsonl" for i in range(a.shards)]
    jobs = a.jobs or a.shards
    # More shard processes than cores: one OpenMP thread each, or their threads spin waiting
    # for each other's cores (a fleet gives each shard its own node).
    env = {**os.environ, "OMP_NUM_THREADS": "1"} if jobs > 1 and jobs >= (os.cpu_count() or 1) else None
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        shard_runs = list(pool.map(lambda i: timed_run([a.opval, "run", *run, "--shard", f"{i}/{a.shards}",
                                                        "--jsonl", journals[i]], env), range(a.shards)))
    parallel_seconds = time.monotonic() - start
    merge_seconds, merged = timed_run([a.opval, "merge", *journals, "--jsonl", folder / "merged.jsonl"])
    identical = comparable(folder / "merged.jsonl") == comparable(folder / "whole.jsonl")

    records = case_records(folder / "whole.jsonl")
    # What a shard costs besides its cases, as the whole run measured it alone: its wall time less
    # its cases' recorded times (starting, selecting or generating every case, the worker, the
    # report). Every shard does all of that; the shards run here share the cores, so their walls
    # also hold waiting.
    overhead = max(0.0, whole_seconds - sum(r["timings"]["total"] for r in records))
    print(f"fleet: {len(records)} cases; whole run {whole_seconds:.1f} s; {a.shards} shards, "
          f"{a.jobs or a.shards} at a time: {parallel_seconds:.1f} s "
          f"(each {min(s for s, _ in shard_runs):.1f} to {max(s for s, _ in shard_runs):.1f} s); "
          f"merge {merge_seconds:.2f} s")
    print(f"fleet: merged journal {'identical to' if identical else 'DIFFERS from'} the whole run's "
          f"({', '.join(VARYING)} aside); exit codes whole {whole.returncode}, merge {merged.returncode}")
    print(f"fleet: per-shard overhead {overhead:.2f} s (the whole run's wall less its cases' times); sum of case "
          f"times {sum(r['timings']['total'] for r in records):.1f} s"
          + ("; shards ran with OMP_NUM_THREADS=1" if env else ""))
    print("\n| nodes | wall, opval's estimated costs (s) | wall, recorded costs (s) | ideal (s) | speed-up |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for k, estimated, recorded, ideal in model(records, nodes, overhead):
        print(f"| {k} | {estimated:.2f} | {recorded:.2f} | {ideal:.2f} | {whole_seconds / estimated:.1f} |")
    return 0 if identical and merged.returncode == whole.returncode else 1


if __name__ == "__main__":
    sys.exit(main())
