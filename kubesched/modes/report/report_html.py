"""``report.html`` of ``kubesched replay``: one self-contained page (plotly.js is embedded, so it
opens offline; no ``<script src=http...>``) with a summary table and the four plots of
:mod:`kubesched.modes.report.report_plots` (latency CDF, bytes pulled, cache hit ratio, utilisation), made
with plotly from the same data ``report.json`` carries.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubesched.atomic_file import atomic_write_text
from kubesched.modes.report.report_plots import CDF_MAX_POINTS, plot_data, report_figures
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.workload import Workload

__all__ = ["render_html", "write_report_html", "CDF_MAX_POINTS"]


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _summary_table(results: Sequence[ReplayResult], label: str = "config", wall: bool = True) -> str:
    rows = []
    head = [
        label,
        "pods",
        "scheduled",
        "never scheduled",
        "start-up p50 s",
        "p95 s",
        "p99 s",
        "pull p95 s",
        "GB pulled",
        "cache hit",
        "mean cpu",
        "mean memory",
        "mean gpu",
    ] + (["wall s"] if wall else [])
    for r in results:
        s = r.summary()
        st = s["startupLatencySeconds"] or {}
        pl = s["pullSeconds"] or {}
        mf = s["meanAllocatedFraction"]
        cells = [
            r.config,
            s["pods"],
            s["scheduled"],
            s["neverScheduled"],
            st.get("p50"),
            st.get("p95"),
            st.get("p99"),
            pl.get("p95"),
            s["bytesPulled"] / 1e9,
            s["cacheHitRatio"],
            mf.get("cpu"),
            mf.get("memory"),
            mf.get("nvidia.com/gpu"),
        ] + ([s["wallSeconds"]] if wall else [])
        rows.append("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in cells) + "</tr>")
    return (
        "<table><thead><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.note { color: #555; font-size: 90%; }
"""


def render_html(
    results: Sequence[ReplayResult],
    workload: Workload | None = None,
    kubelet: Mapping[str, Any] | None = None,
    *,
    title: str = "kubesched replay",
    label: str = "config",
    wall: bool = True,
) -> str:
    """The whole page as a string (plotly.js embedded once, in the first figure). ``title`` heads
    the page, ``label`` names the table's first column, ``wall=False`` leaves out wall seconds (as
    for :func:`~kubesched.modes.report.report_table.summary_table`)."""
    figures = report_figures([{"config": r.config, "plots": plot_data(r)} for r in results])
    parts = [
        fig.to_html(full_html=False, include_plotlyjs=(i == 0), default_width="100%")
        for i, fig in enumerate(figures)
    ]
    meta = []
    if workload is not None:
        meta.append(
            f"Trace: {html.escape(workload.description)}; {len(workload.pods)} pods, "
            f"{len(workload.nodes)} nodes; measurement horizon {workload.horizon:g} s."
        )
        meta.extend(html.escape(n) for n in workload.notes)
    if results and results[0].seed is not None:
        meta.append(f"Seed {results[0].seed}.")
    if kubelet is not None:
        meta.append("Kubelet model: " + html.escape(", ".join(f"{k}={v}" for k, v in kubelet.items())))
    notes = "".join(f"<p class='note'>{m}</p>" for m in meta)
    head = html.escape(title)
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{head} report</title>"
        f"<style>{_STYLE}</style></head><body><h1>{head}</h1>{notes}{_summary_table(results, label, wall)}"
        + "".join(f"<div>{p}</div>" for p in parts)
        + "</body></html>\n"
    )


def write_report_html(
    path: str | Path,
    results: Sequence[ReplayResult],
    workload: Workload | None = None,
    kubelet: Mapping[str, Any] | None = None,
    *,
    title: str = "kubesched replay",
    label: str = "config",
    wall: bool = True,
) -> Path:
    """Write :func:`render_html` to ``path`` (atomically: complete or absent); returns the path."""
    return atomic_write_text(
        path, render_html(results, workload, kubelet, title=title, label=label, wall=wall)
    )
