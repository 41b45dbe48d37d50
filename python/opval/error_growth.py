"""The error-growth view of a stack's run (docs/GRAPH.md, "Error growth"): per node, in
execution order, the accumulated error in units of the node's own bound and the local error in
units of it, as a table and a plot. The accumulated ratio grows along the graph as error is
inherited; the local one stays at or below 1 on a correct stack; a node whose local ratio
exceeds 1 is the one blamed.
"""
from __future__ import annotations

import math
import os
from pathlib import Path


def rows(judgements: list[dict]) -> list[dict]:
    """One row per node: node, op_type, accumulated_max_rel, accumulated_over_bound (None: no
    per-element bound), local_over_bound (the worst output's error / bound of the local
    verdict; None: not judged alone per element), verdict (PASSED, FAILED, or why none)."""
    out = []
    for j in judgements:
        local = j["local"]
        ratios = [o.max_error_over_bound for o in local.outputs] if local is not None and local.outputs else []
        out.append({"node": j["node"], "op_type": j["op_type"], "accumulated_max_rel": j["accumulated_max_rel"],
                    "accumulated_over_bound": j.get("accumulated_over_bound"),
                    "local_over_bound": max(ratios) if ratios else None,
                    "verdict": local.state if local is not None else "not judged"})
    return out


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:9.3g}"


def table(judgements: list[dict]) -> str:
    """The rows as aligned text."""
    lines = [f"  {'#':>3}  {'node':<24} {'op type':<20} {'acc. rel':>9} {'acc./bound':>10} {'local/bound':>11}  verdict"]
    for i, r in enumerate(rows(judgements)):
        lines.append(f"  {i:>3}  {r['node']:<24.24} {r['op_type']:<20.20} {r['accumulated_max_rel']:9.2e} "
                     f"{_ratio(r['accumulated_over_bound']):>10} {_ratio(r['local_over_bound']):>11}  {r['verdict']}")
    return "\n".join(lines)


def plot(judgements: list[dict], path: str | os.PathLike, title: str = "") -> Path:
    """The two ratios per node on a log scale, the line at 1, the failed nodes marked; saved to
    `path` (.png or .svg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = rows(judgements)
    xs = range(len(data))
    floor = 1e-3  # ratios of 0 (exact) and below drawn on the axis
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(data)), 4.0))
    for key, label, marker in (("accumulated_over_bound", "accumulated / own bound", "o"),
                               ("local_over_bound", "local / bound", "s")):
        points = [(x, max(r[key], floor)) for x, r in zip(xs, data) if r[key] is not None and math.isfinite(r[key])]
        if points:
            ax.plot(*zip(*points), marker=marker, linestyle="-", label=label)
    failed = [x for x, r in zip(xs, data) if r["verdict"] == "FAILED"]
    for x in failed:
        ax.axvline(x, color="red", alpha=0.3)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["node"] for r in data], rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("error / bound")
    ax.set_title(title or "error growth along the graph" + (" (red: blamed)" if failed else ""))
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
