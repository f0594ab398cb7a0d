"""Replay reports in the UI: one or more ``report.json`` documents side by side, with the same
summary columns and plots as ``report.html`` (:mod:`kubesched.modes.report.report_plots`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.modes.report.report_plots import report_figures

__all__ = ["report_view", "SUMMARY_COLUMNS"]

#: (column title, key in the run summary, nested key or None, scale)
SUMMARY_COLUMNS: tuple[tuple[str, str, str | None, float], ...] = (
    ("pods", "pods", None, 1.0), ("scheduled", "scheduled", None, 1.0),
    ("never scheduled", "neverScheduled", None, 1.0),
    ("start-up p50 s", "startupLatencySeconds", "p50", 1.0), ("p95 s", "startupLatencySeconds", "p95", 1.0),
    ("p99 s", "startupLatencySeconds", "p99", 1.0), ("pull p95 s", "pullSeconds", "p95", 1.0),
    ("GB pulled", "bytesPulled", None, 1e9), ("cache hit", "cacheHitRatio", None, 1.0),
    ("mean cpu", "meanAllocatedFraction", "cpu", 1.0), ("mean memory", "meanAllocatedFraction", "memory", 1.0),
    ("mean gpu", "meanAllocatedFraction", "nvidia.com/gpu", 1.0), ("wall s", "wallSeconds", None, 1.0),
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
    figure JSON, ...], "withoutPlots": [configs whose report has no plot data]}``. A config is shown
    as ``name: config`` when more than one report is open. Raises ValueError for a document that is
    not a replay report."""
    runs: list[dict[str, Any]] = []
    rows = []
    without = []
    for i, item in enumerate(reports):
        name = str(item.get("name") or f"report {i + 1}")
        doc = item.get("report")
        if not isinstance(doc, Mapping) or not isinstance(doc.get("runs"), list):
            raise ValueError(f'{name}: not a kubesched replay report.json (no "runs" list)')
        for j, run in enumerate(doc["runs"]):
            if not isinstance(run, Mapping) or "config" not in run:
                raise ValueError(f"{name}: runs[{j}]: not a replay run (no config)")
            label = f"{name}: {run['config']}" if len(reports) > 1 else str(run["config"])
            rows.append({"config": label, "report": name,
                         "cells": [_cell(run, k, s, sc) for _, k, s, sc in SUMMARY_COLUMNS]})
            if isinstance(run.get("plots"), Mapping):
                runs.append({"config": label, "plots": run["plots"]})
            else:
                without.append(label)
    figures = [json.loads(f.to_json()) for f in report_figures(runs)] if runs else []
    return {"columns": ["config", *(c[0] for c in SUMMARY_COLUMNS)], "rows": rows, "figures": figures,
            "withoutPlots": without}
