"""Replay and start-up reports in the UI: one or more ``report.json`` documents (``kubesched
replay``'s, one run per config, or ``kubesched startup``'s, one run per scheduler) side by side,
with the same summary columns as the printed table and, when plotly (the optional extra
``report``) is installed, the same plots as ``report.html``
(:mod:`kubesched.modes.report.report_plots`); without plotly the table is shown with a note."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.modes.report.report_plots import report_figures

__all__ = ["RUN_NAMES", "SUMMARY_COLUMNS", "report_view"]

#: What names a run: ``config`` in a replay report, ``scheduler`` in a startup report.
RUN_NAMES = ("config", "scheduler")

#: (column title, key in the run summary, nested key or None, scale)
SUMMARY_COLUMNS: tuple[tuple[str, str, str | None, float], ...] = (
    ("pods", "pods", None, 1.0),
    ("scheduled", "scheduled", None, 1.0),
    ("never scheduled", "neverScheduled", None, 1.0),
    ("start-up p50 s", "startupLatencySeconds", "p50", 1.0),
    ("p95 s", "startupLatencySeconds", "p95", 1.0),
    ("p99 s", "startupLatencySeconds", "p99", 1.0),
    ("pull p95 s", "pullSeconds", "p95", 1.0),
    ("GB pulled", "bytesPulled", None, 1e9),
    ("cache hit", "cacheHitRatio", None, 1.0),
    ("mean cpu", "meanAllocatedFraction", "cpu", 1.0),
    ("mean memory", "meanAllocatedFraction", "memory", 1.0),
    ("mean gpu", "meanAllocatedFraction", "nvidia.com/gpu", 1.0),
    ("wall s", "wallSeconds", None, 1.0),
)


def _cell(run: Mapping[str, Any], key: str, sub: str | None, scale: float) -> Any:
    v = run.get(key)
    if sub is not None:
        v = v.get(sub) if isinstance(v, Mapping) else None
    if isinstance(v, int | float) and not isinstance(v, bool) and scale != 1.0:
        return v / scale
    return v


def report_view(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``reports``: ``[{"name": "report.json", "report": <parsed report.json>}, ...]``.

    Returns ``{"columns": [...], "rows": [{"config", "report", "cells": [...]}], "figures": [plotly
    figure JSON, ...], "withoutPlots": [configs whose report has no plot data], "note": why there
    are no plots ("" otherwise)}``. A run is named by its ``config`` (replay) or ``scheduler``
    (startup); as ``name: config`` when more than one report is open. Raises ValueError for a
    document that is neither report."""
    runs: list[dict[str, Any]] = []
    rows = []
    without = []
    for i, item in enumerate(reports):
        name = str(item.get("name") or f"report {i + 1}")
        doc = item.get("report")
        if not isinstance(doc, Mapping) or not isinstance(doc.get("runs"), list):
            raise ValueError(f'{name}: not a kubesched replay or startup report.json (no "runs" list)')
        for j, run in enumerate(doc["runs"]):
            key = next((k for k in RUN_NAMES if isinstance(run, Mapping) and k in run), None)
            if key is None:
                raise ValueError(f"{name}: runs[{j}]: not a replay or startup run (no config or scheduler)")
            label = f"{name}: {run[key]}" if len(reports) > 1 else str(run[key])
            rows.append(
                {
                    "config": label,
                    "report": name,
                    "cells": [_cell(run, k, s, sc) for _, k, s, sc in SUMMARY_COLUMNS],
                }
            )
            if isinstance(run.get("plots"), Mapping):
                runs.append({"config": label, "plots": run["plots"]})
            else:
                without.append(label)
    figures: list[Any] = []
    note = ""
    if runs:
        try:
            figures = [json.loads(f.to_json()) for f in report_figures(runs)]
        except ImportError as e:  # plotly, the optional extra "report": the table still shows
            note = str(e)
    return {
        "columns": ["config", *(c[0] for c in SUMMARY_COLUMNS)],
        "rows": rows,
        "figures": figures,
        "withoutPlots": without,
        "note": note,
    }
