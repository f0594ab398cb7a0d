"""Spread of start-up percentiles and bytes over repeated runs: live runs (``kubesched load --out``,
``kubesched startup --out``) and replays (``kubesched replay --out``, e.g. one per
``--scheduler-seed``), one row per group.

Usage::

    python scripts/report_spread.py [--within SECONDS] "LABEL=GLOB[@CONFIG]" ...

``GLOB`` matches ``report.json`` files; ``@CONFIG`` keeps the runs whose config (replay) or
scheduler (live) name contains ``CONFIG``. Per group it prints the runs, then for start-up p50 and
p95 (seconds) the median over the runs, the mean and the range, and the median of the gigabytes of
images the pods pulled and pre-pulled (10^9 bytes; a live report's ``bytesPulled`` counts whole
images, as the kubelet's ``Pulled`` Events report them, a replay's ``imageBytesPulled`` the same
way). With ``--within SECONDS`` a last column counts, per run, the pods that started within that
many seconds of their arrival (from the ``pods.csv`` beside each ``report.json``, its rows of the
run's config or scheduler): the median, then every run's count in order. Where start-ups come in
steps, that count says on which side of a step a percentile falls. Exits 2 when a group matches no
run or a ``pods.csv`` is missing.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import statistics
import sys
from pathlib import Path
from typing import Any


def _run_name(row: dict[str, Any]) -> str:
    """A run's (or a ``pods.csv`` row's) config (replay) or scheduler (live) name."""
    return str(row.get("config") or row.get("scheduler") or "")


def runs_with_paths(spec: str) -> tuple[str, list[tuple[Path, dict[str, Any]]]]:
    """``LABEL=GLOB[@CONFIG]`` -> (label, (report path, run) of the matching runs, in path order)."""
    label, _, rest = spec.partition("=")
    pattern, _, config = rest.partition("@")
    runs = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for run in json.load(f)["runs"]:
                if config in _run_name(run):
                    runs.append((Path(path), run))
    return label, runs


def started_within(report: Path, run: dict[str, Any], seconds: float) -> int:
    """Pods of ``run`` (rows of its config or scheduler in the ``pods.csv`` beside ``report``) whose
    start-up took at most ``seconds``. Raises FileNotFoundError naming a missing ``pods.csv``."""
    name = _run_name(run)
    with (report.parent / "pods.csv").open(newline="") as f:
        return sum(
            1
            for row in csv.DictReader(f)
            if _run_name(row) == name
            and row["startupLatencySeconds"]
            and float(row["startupLatencySeconds"]) <= seconds
        )


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--within", type=float, default=None, help="also count the pods started within SECONDS")
    ap.add_argument("groups", nargs="+", metavar="LABEL=GLOB[@CONFIG]")
    a = ap.parse_args(argv)
    columns = [
        "runs",
        "n",
        "p50 s: median (mean, range)",
        "p95 s: median (mean, range)",
        "GB pulled by pods",
        "GB pre-pulled",
    ]
    if a.within is not None:
        columns.append(f"started within {a.within:g} s: median (runs)")
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for spec in a.groups:
        label, found = runs_with_paths(spec)
        if not found:
            print(f"error: {spec}: no run matches", file=sys.stderr)
            return 2
        runs = [run for _, run in found]
        pulled, prepulled = zip(*(image_bytes(r) for r in runs), strict=True)
        p50 = [float(r["startupLatencySeconds"]["p50"]) for r in runs]
        p95 = [float(r["startupLatencySeconds"]["p95"]) for r in runs]
        line = (
            f"| {label} | {len(runs)} | {spread(p50)} | {spread(p95)} | "
            f"{statistics.median(pulled) / 1e9:.1f} | {statistics.median(prepulled) / 1e9:.1f} |"
        )
        if a.within is not None:
            try:
                counts = [started_within(path, run, a.within) for path, run in found]
            except FileNotFoundError as e:
                print(f"error: {spec}: {e.filename}: no such file", file=sys.stderr)
                return 2
            line += f" {statistics.median(counts):g} ({', '.join(str(c) for c in counts)}) |"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
