"""Journals compared as two runs of the same cases must agree: every record field but what
differs between any two runs (timings, memory figures, the build identity)."""
import json

VARYING = ("timings", "memory", "opval")


def comparable(path):
    """The journal's records, in order, without the fields that vary between runs."""
    records = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for key in VARYING:
            record.pop(key, None)
        records.append(json.dumps(record))
    return records
