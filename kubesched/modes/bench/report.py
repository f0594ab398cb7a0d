"""Rendering of benchmark results: a rich table and the JSON document of ``--output``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from kubesched.atomic_file import atomic_write_text
from kubesched.modes.bench.api import ApiResult
from kubesched.modes.bench.runner import WorkloadResult
from kubesched.modes.bench.simulate_bench import SimulateRun


def results_json(results: Sequence[WorkloadResult]) -> dict[str, object]:
    """``{"workloads": [...]}`` (see :meth:`WorkloadResult.to_json`)."""
    return {"workloads": [r.to_json() for r in results]}


def write_json(path: str | Path, results: Sequence[WorkloadResult]) -> None:
    """Write :func:`results_json` to ``path`` (indented, trailing newline; atomically: complete or absent)."""
    atomic_write_text(path, json.dumps(results_json(results), indent=2) + "\n")


def results_table(results: Sequence[WorkloadResult]) -> Table:
    """One row per workload: throughput (avg/p50/p90/p99 pods/s), pods per CPU second (less
    sensitive to a loaded machine than wall-clock throughput), attempt latency, RSS, threshold."""
    t = Table(title="kubesched bench (SchedulingThroughput, pods/s)")
    for col, just in (
        ("workload", "left"),
        ("nodes", "right"),
        ("pods", "right"),
        ("avg", "right"),
        ("p50", "right"),
        ("p90", "right"),
        ("p99", "right"),
        ("pods/CPU s", "right"),
        ("lat p50 ms", "right"),
        ("lat p99 ms", "right"),
        ("peak RSS MiB", "right"),
        ("threshold", "right"),
        ("status", "left"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in results:
        tp, lat = r.throughput, r.latency
        thr = f"{r.threshold:.0f}" if r.threshold is not None else "-"
        if r.status != "ok":
            status = f"[red]{r.status}[/red]: {r.error.splitlines()[0] if r.error else ''}"
        elif r.threshold is not None:
            status = (
                "[green]pass[/green]" if tp.get("average", 0) >= r.threshold else "[red]below threshold[/red]"
            )
        else:
            status = "ok"
        if r.skipped_plugins:
            status += f" (without {', '.join(r.skipped_plugins)})"
        t.add_row(
            r.name,
            str(r.nodes),
            str(r.measured_pods),
            f"{tp.get('average', 0):.0f}",
            f"{tp.get('perc50', 0):.0f}",
            f"{tp.get('perc90', 0):.0f}",
            f"{tp.get('perc99', 0):.0f}",
            f"{r.scheduled_pods / r.cpu_seconds:.0f}" if r.cpu_seconds > 0 else "-",
            f"{lat.get('perc50', 0) * 1e3:.2f}",
            f"{lat.get('perc99', 0) * 1e3:.2f}",
            f"{r.peak_rss / 2**20:.0f}",
            thr,
            status,
        )
    return t


def api_results_table(results: Sequence[ApiResult]) -> Table:
    """One row per API-mode workload: pods/s first to last bind (and per-second p50), pods per
    CPU second of ``run`` + ``serve``, attempt latency, CPU and peak RSS of both processes."""
    t = Table(title="kubesched bench --api (serve + run over HTTP, pods/s first to last bind)")
    for col in (
        "workload",
        "nodes",
        "pods",
        "qps/burst",
        "pods/s",
        "p50",
        "pods/CPU s",
        "lat p50 ms",
        "lat p99 ms",
        "run CPU s",
        "run RSS MiB",
        "serve CPU s",
        "serve RSS MiB",
        "Filter evals/attempt",
        "status",
    ):
        t.add_column(col, justify="left" if col in ("workload", "status") else "right")
    for r in results:
        status = "ok" if r.status == "ok" else f"[red]{r.status}[/red] (below)"  # the error follows the table
        t.add_row(
            r.name,
            str(r.nodes),
            str(r.measured_pods),
            f"{r.qps:g}/{r.burst}",
            f"{r.pods_per_second:.0f}",
            f"{r.throughput.get('perc50', 0):.0f}",
            f"{r.pods_per_cpu_second():.0f}",
            f"{r.latency.get('perc50', 0) * 1e3:.2f}",
            f"{r.latency.get('perc99', 0) * 1e3:.2f}",
            f"{r.run.cpu_seconds:.1f}",
            f"{r.run.peak_rss / 2**20:.0f}",
            f"{r.serve.cpu_seconds:.1f}",
            f"{r.serve.peak_rss / 2**20:.0f}",
            f"{r.filter_evaluations_per_attempt:.0f}",
            status,
        )
    return t


def write_api_json(path: str | Path, results: Sequence[ApiResult]) -> None:
    """Write ``{"workloads": [...]}`` of API-mode results to ``path`` (atomically: complete or absent)."""
    atomic_write_text(path, json.dumps({"workloads": [r.to_json() for r in results]}, indent=2) + "\n")


def simulate_table(runs: Sequence[SimulateRun]) -> Table:
    """One row per measured ``simulate``/``ui`` process: end-to-end (ui: ready) seconds, the load,
    schedule and output phases, peak RSS and output size."""
    t = Table(title="kubesched bench --simulate (one process per row, wall seconds)")
    trees = any(r.tree for r in runs)
    for col in (
        "file",
        *(("tree",) if trees else ()),
        "mode",
        "seconds",
        "CPU s",
        "load s",
        "schedule s",
        "output s",
        "peak RSS MiB",
        "output MiB",
        "status",
    ):
        t.add_column(col, justify="left" if col in ("file", "mode", "status") else "right")
    for r in runs:
        status = "ok" if r.status == "ok" else f"[red]{r.status}[/red]: {r.error}"
        t.add_row(
            r.file,
            *((r.tree or "(this)",) if trees else ()),
            "ui (ready)" if r.mode == "ui" else r.mode,
            f"{r.seconds:.2f}",
            f"{r.cpu_seconds:.2f}",
            f"{r.load_seconds:.2f}",
            f"{r.schedule_seconds:.2f}",
            f"{r.output_seconds:.2f}",
            f"{r.peak_rss / 2**20:.0f}",
            f"{r.output_bytes / 2**20:.1f}",
            status,
        )
    if trees:
        for (file, mode), shas in _shas(runs).items():
            if len(shas) > 1:
                t.caption = (t.caption or "") + f"outputs differ between trees: {file} {mode}. "
    return t


def _shas(runs: Sequence[SimulateRun]) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for r in runs:
        if r.mode != "ui" and r.status == "ok":
            out.setdefault((r.file, r.mode), set()).add(r.output_sha256)
    return out


def write_simulate_json(path: str | Path, runs: Sequence[SimulateRun]) -> None:
    """Write ``{"simulate": [...]}`` (see :meth:`SimulateRun.to_json`) to ``path``."""
    atomic_write_text(path, json.dumps({"simulate": [r.to_json() for r in runs]}, indent=2) + "\n")
