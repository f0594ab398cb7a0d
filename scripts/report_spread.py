"""Spread of start-up percentiles and bytes over repeated runs: live runs (``kubesched load --out``,
``kubesched startup --out``) and replays (``kubesched replay --out``, e.g. one per
``--scheduler-seed``), one row per group.

Usage::

    python scripts/report_spread.py "LABEL=GLOB[@CONFIG]" ...

``GLOB`` matches ``report.json`` files; ``@CONFIG`` keeps the runs whose config (replay) or
scheduler (live) name contains ``CONFIG``. Per group it prints the runs, then for start-up p50 and
p95 (seconds) the median over the runs, the mean and the range, and the median of the gigabytes of
images the pods pulled and pre-pulled (10^9 bytes; a live report's ``bytesPulled`` counts whole
images, as the kubelet's ``Pulled`` Events report them, a replay's ``imageBytesPulled`` the same
way). Exits 2 when a group matches no run.
"""

from __future__ import annotations

import glob
import json
import statistics
import sys
from typing import Any


def runs_of(spec: str) -> tuple[str, list[dict[str, Any]]]:
    """``LABEL=GLOB[@CONFIG]`` -> (label, the matching ``runs`` entries, in path order)."""
    label, _, rest = spec.partition("=")
    pattern, _, config = rest.partition("@")
    runs = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for run in json.load(f)["runs"]:
                if config in str(run.get("config", run.get("scheduler", ""))):
                    runs.append(run)
    return label, runs


def image_bytes(run: dict[str, Any]) -> tuple[int, int]:
    """(bytes of images pulled by pods, bytes of images pre-pulled) of one run, whole images."""
    if "scheduler" in run:  # a live report: Pulled Events give whole images; pre-pulls are the agent's
        return int(run["bytesPulled"]), 0
    return int(run["imageBytesPulled"]), int(run["imageBytesPrepulled"])


def spread(values: list[float]) -> str:
    """``median (mean m, min-max)`` with one decimal."""
    return (
        f"{statistics.median(values):.1f} (mean {statistics.fmean(values):.1f}, "
        f"{min(values):.1f}-{max(values):.1f})"
    )


def main(argv: list[str]) -> int:
    print(
        "| runs | n | p50 s: median (mean, range) | p95 s: median (mean, range) | GB pulled by pods | GB pre-pulled |"
    )
    print("|---|---|---|---|---|---|")
    for spec in argv:
        label, runs = runs_of(spec)
        if not runs:
            print(f"error: {spec}: no run matches", file=sys.stderr)
            return 2
        pulled, prepulled = zip(*(image_bytes(r) for r in runs), strict=True)
        p50 = [float(r["startupLatencySeconds"]["p50"]) for r in runs]
        p95 = [float(r["startupLatencySeconds"]["p95"]) for r in runs]
        print(
            f"| {label} | {len(runs)} | {spread(p50)} | {spread(p95)} | "
            f"{statistics.median(pulled) / 1e9:.1f} | {statistics.median(prepulled) / 1e9:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
