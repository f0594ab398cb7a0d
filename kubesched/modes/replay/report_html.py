"""``report.html`` of ``kubesched replay``: one self-contained page (plotly.js is embedded, so it
opens offline; no ``<script src=http...>``) with a summary table and four plots per report:

* start-up latency CDF per config (creation -> container running, log x axis when all > 0);
* bytes pulled over time (cumulative, GB = 10^9 bytes) per config;
* cache hit ratio over time (cumulative bytes found on the node / bytes requested) per config;
* utilisation over time: allocated / allocatable per resource (one panel per resource) per config.

Plots are made with plotly (``plotly.graph_objects``); times on the x axes are hours since the
replay origin.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kubesched.modes.replay.run import ReplayResult
from kubesched.trace.workload import Workload

__all__ = ["render_html", "write_report_html", "CDF_MAX_POINTS"]

#: at most this many points per CDF line (evenly spaced order statistics, ends included)
CDF_MAX_POINTS = 2000
_HOUR = 3600.0


def _cdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return [], []
    if n <= CDF_MAX_POINTS:
        idx = list(range(n))
    else:
        idx = sorted({round(k * (n - 1) / (CDF_MAX_POINTS - 1)) for k in range(CDF_MAX_POINTS)})
    return [xs[i] for i in idx], [(i + 1) / n for i in idx]


def _latency_cdf(results: Sequence[ReplayResult]) -> go.Figure:
    fig = go.Figure()
    all_positive = True
    for r in results:
        values = r.phase_values("startup")
        all_positive = all_positive and all(v > 0 for v in values)
        x, y = _cdf(values)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=r.config, line={"shape": "hv"}))
    fig.update_layout(title="Start-up latency CDF (creation to container running)",
                      xaxis_title="seconds", yaxis_title="fraction of started pods", yaxis_range=[0, 1.01])
    if all_positive:
        fig.update_xaxes(type="log")
    return fig


def _over_time(results: Sequence[ReplayResult], title: str, ytitle: str, value: Any) -> go.Figure:
    fig = go.Figure()
    for r in results:
        fig.add_trace(go.Scatter(x=[p.t / _HOUR for p in r.series], y=[value(p) for p in r.series], mode="lines",
                                 name=r.config))
    fig.update_layout(title=title, xaxis_title="hours since the replay origin", yaxis_title=ytitle)
    return fig


def _utilisation(results: Sequence[ReplayResult]) -> go.Figure:
    resources: list[str] = []
    for r in results:
        for res in r.mean_allocated_fraction:
            if res not in resources:
                resources.append(res)
    fig = make_subplots(rows=len(resources), cols=1, shared_xaxes=True, subplot_titles=resources,
                        vertical_spacing=0.08)
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    for k, r in enumerate(results):
        for row, res in enumerate(resources, start=1):
            fig.add_trace(go.Scatter(x=[p.t / _HOUR for p in r.series],
                                     y=[p.allocated_fraction.get(res, 0.0) for p in r.series], mode="lines",
                                     name=r.config, legendgroup=r.config, showlegend=row == 1,
                                     line={"color": colours[k % len(colours)]}),
                          row=row, col=1)
    fig.update_layout(title="Utilisation: allocated / allocatable", height=260 * max(1, len(resources)))
    fig.update_xaxes(title_text="hours since the replay origin", row=len(resources), col=1)
    return fig


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _summary_table(results: Sequence[ReplayResult]) -> str:
    rows = []
    head = ["config", "pods", "scheduled", "never scheduled", "start-up p50 s", "p95 s", "p99 s", "pull p95 s",
            "GB pulled", "cache hit", "mean cpu", "mean memory", "mean gpu", "wall s"]
    for r in results:
        s = r.summary()
        st = s["startupLatencySeconds"] or {}
        pl = s["pullSeconds"] or {}
        mf = s["meanAllocatedFraction"]
        cells = [r.config, s["pods"], s["scheduled"], s["neverScheduled"], st.get("p50"), st.get("p95"), st.get("p99"),
                 pl.get("p95"), s["bytesPulled"] / 1e9, s["cacheHitRatio"], mf.get("cpu"), mf.get("memory"),
                 mf.get("nvidia.com/gpu"), s["wallSeconds"]]
        rows.append("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in cells) + "</tr>")
    return ("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.note { color: #555; font-size: 90%; }
"""


def report_figures(results: Sequence[ReplayResult]) -> dict[str, go.Figure]:
    """The report's plotly figures by name: ``latency`` (start-up latency CDF), ``bytes``
    (cumulative GB pulled), ``cacheHit`` (cumulative byte cache-hit ratio), ``utilisation``."""
    return {
        "latency": _latency_cdf(results),
        "bytes": _over_time(results, "Bytes pulled (cumulative)", "GB", lambda p: p.bytes_pulled / 1e9),
        "cacheHit": _over_time(results, "Cache hit ratio (cumulative, bytes)", "ratio", lambda p: p.cache_hit_ratio),
        "utilisation": _utilisation(results),
    }


def render_html(results: Sequence[ReplayResult], workload: Workload | None = None,
                kubelet: Mapping[str, Any] | None = None) -> str:
    """The whole page as a string (plotly.js embedded once, in the first figure)."""
    figures = list(report_figures(results).values())
    parts = [fig.to_html(full_html=False, include_plotlyjs=(i == 0), default_width="100%")
             for i, fig in enumerate(figures)]
    meta = []
    if workload is not None:
        meta.append(f"Trace: {html.escape(workload.description)}; {len(workload.pods)} pods, "
                    f"{len(workload.nodes)} nodes; measurement horizon {workload.horizon:g} s.")
        meta.extend(html.escape(n) for n in workload.notes)
    if results:
        meta.append(f"Seed {results[0].seed}.")
    if kubelet is not None:
        meta.append("Kubelet model: " + html.escape(", ".join(f"{k}={v}" for k, v in kubelet.items())))
    notes = "".join(f"<p class='note'>{m}</p>" for m in meta)
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>kubesched replay report</title>"
            f"<style>{_STYLE}</style></head><body><h1>kubesched replay</h1>{notes}{_summary_table(results)}"
            + "".join(f"<div>{p}</div>" for p in parts) + "</body></html>\n")


def write_report_html(path: str | Path, results: Sequence[ReplayResult], workload: Workload | None = None,
                      kubelet: Mapping[str, Any] | None = None) -> Path:
    """Write :func:`render_html` to ``path``; returns the path."""
    p = Path(path)
    p.write_text(render_html(results, workload, kubelet), encoding="utf-8")
    return p
