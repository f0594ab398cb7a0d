"""The terminal table of ``kubesched replay`` (rich): one row per config."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from kubesched.modes.report.metrics import DRA_DEVICES_RESOURCE
from kubesched.modes.report.result import ReplayResult

__all__ = ["summary_table"]


def _s(block: dict[str, float] | None, key: str) -> str:
    return "-" if block is None else f"{block[key]:.1f}"


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def summary_table(
    results: Sequence[ReplayResult],
    *,
    title: str = "kubesched replay",
    label: str = "config",
    wall: bool = True,
) -> Table:
    """Pods, scheduled / never scheduled, start-up latency p50/p95/p99 (s), pull p95 (s), GB pulled
    (10^9 bytes), cache hit ratio, mean allocated fraction of cpu/memory/GPU (``nvidia.com/gpu``, or the
    DRA driver's devices in a ``--gpu dra`` run), wall seconds.

    ``title`` heads the table, ``label`` names the first column (each run's ``config``: a config
    file in the replay, a scheduler name in ``kubesched startup``); ``wall=False`` leaves out the
    wall-seconds column (a report read from a live cluster has none)."""
    t = Table(title=title, show_lines=False)
    cols = [
        "pods",
        "sched",
        "never",
        "start p50 s",
        "p95 s",
        "p99 s",
        "pull p95 s",
        "GB pulled",
        "cache hit",
        "cpu",
        "mem",
        "gpu",
    ] + (["wall s"] if wall else [])
    t.add_column(label, justify="left")
    for col in cols:
        t.add_column(col, justify="right")
    for r in results:
        s = r.summary()
        mf = s["meanAllocatedFraction"]
        cells = [
            r.config,
            str(s["pods"]),
            str(s["scheduled"]),
            str(s["neverScheduled"]),
            _s(s["startupLatencySeconds"], "p50"),
            _s(s["startupLatencySeconds"], "p95"),
            _s(s["startupLatencySeconds"], "p99"),
            _s(s["pullSeconds"], "p95"),
            f"{s['bytesPulled'] / 1e9:.1f}",
            f"{s['cacheHitRatio']:.3f}",
            _f(mf.get("cpu")),
            _f(mf.get("memory")),
            _f(mf[DRA_DEVICES_RESOURCE] if DRA_DEVICES_RESOURCE in mf else mf.get("nvidia.com/gpu")),
        ]
        if wall:
            cells.append(f"{s['wallSeconds']:.1f}")
        t.add_row(*cells)
    return t
