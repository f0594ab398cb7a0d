"""Rendering of benchmark results: a rich table and the JSON document of ``--output``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from kubesched.modes.bench.runner import WorkloadResult


def results_json(results: Sequence[WorkloadResult]) -> dict[str, object]:
    """``{"workloads": [...]}`` (see :meth:`WorkloadResult.to_json`)."""
    return {"workloads": [r.to_json() for r in results]}


def write_json(path: str | Path, results: Sequence[WorkloadResult]) -> None:
    """Write :func:`results_json` to ``path`` (indented, trailing newline)."""
    Path(path).write_text(json.dumps(results_json(results), indent=2) + "\n", encoding="utf-8")


def results_table(results: Sequence[WorkloadResult]) -> Table:
    """One row per workload: throughput (avg/p50/p90/p99 pods/s), pods per CPU second (less
    sensitive to a loaded machine than wall-clock throughput), attempt latency, RSS, threshold."""
    t = Table(title="kubesched bench (SchedulingThroughput, pods/s)")
    for col, just in (("workload", "left"), ("nodes", "right"), ("pods", "right"), ("avg", "right"),
                      ("p50", "right"), ("p90", "right"), ("p99", "right"), ("pods/CPU s", "right"), ("lat p50 ms", "right"),
                      ("lat p99 ms", "right"), ("peak RSS MiB", "right"), ("threshold", "right"), ("status", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in results:
        tp, lat = r.throughput, r.latency
        thr = f"{r.threshold:.0f}" if r.threshold is not None else "-"
        if r.status != "ok":
            status = f"[red]{r.status}[/red]: {r.error.splitlines()[0] if r.error else ''}"
        elif r.threshold is not None:
            status = "[green]pass[/green]" if tp.get("average", 0) >= r.threshold else "[red]below threshold[/red]"
        else:
            status = "ok"
        if r.skipped_plugins:
            status += f" (without {', '.join(r.skipped_plugins)})"
        t.add_row(r.name, str(r.nodes), str(r.measured_pods), f"{tp.get('average', 0):.0f}", f"{tp.get('perc50', 0):.0f}",
                  f"{tp.get('perc90', 0):.0f}", f"{tp.get('perc99', 0):.0f}",
                  f"{r.scheduled_pods / r.cpu_seconds:.0f}" if r.cpu_seconds > 0 else "-", f"{lat.get('perc50', 0) * 1e3:.2f}",
                  f"{lat.get('perc99', 0) * 1e3:.2f}", f"{r.peak_rss / 2**20:.0f}", thr, status)
    return t
