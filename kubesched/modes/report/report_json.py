"""``report.json`` and ``pods.csv`` of ``kubesched replay``.

``report.json``::

    {"runs": [{"config": "a.yaml", "pods": N, "scheduled": N, "neverScheduled": N,
               "startupLatencySeconds": {"p50": s, "p90": s, "p95": s, "p99": s},
               "pullSeconds": {...same...}, "bytesPulled": bytes, "cacheHitRatio": 0..1,
               "meanAllocatedFraction": {"cpu": f, "memory": f, "nvidia.com/gpu": f, ...},
               ...more keys: see ReplayResult.summary(),
               "plots": {...the data of report.html's plots: see kubesched.sim.report_plots}}],
     "workload": {"trace": ..., "pods": N, "nodes": N, "horizonSeconds": s, "originSeconds": s, "notes": [...]},
     "kubelet": {camelCase KubeletImageConfig}, "seed": N,
     "recording": {...}}      # a replayed recording only: calibration and per-config agreement

A percentile block is null when no pod reached that phase. ``pods.csv`` has one row per pod and
config with the timeline (seconds since the replay origin) and the per-phase durations.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubesched.atomic_file import atomic_open, atomic_write_text
from kubesched.modes.report.metrics import PHASES
from kubesched.modes.report.report_plots import plot_data
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.workload import Workload

__all__ = ["report_dict", "write_report_json", "write_pods_csv", "POD_COLUMNS"]

POD_COLUMNS = (
    "config",
    "pod",
    "node",
    "arrival",
    "firstAttempt",
    "attempts",
    "assumed",
    "bound",
    "pullsDone",
    "started",
    "finished",
    "preempted",
    "images",
    "bytesRequested",
    "bytesCacheHit",
    "bytesPulled",
    *(key for key, _ in PHASES),
)


def report_dict(
    results: Sequence[ReplayResult],
    workload: Workload | None = None,
    kubelet: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report as a JSON-ready dict (``runs`` in the order the configs were given); ``extra``:
    more top-level keys (``recording`` for a replayed recording)."""
    out: dict[str, Any] = {"runs": [{**r.summary(), "plots": plot_data(r)} for r in results]}
    if workload is not None:
        out["workload"] = {
            "trace": workload.description,
            "pods": len(workload.pods),
            "nodes": len(workload.nodes),
            "horizonSeconds": workload.horizon,
            "originSeconds": workload.origin,
            "notes": list(workload.notes),
        }
    if kubelet is not None:
        out["kubelet"] = dict(kubelet)
    if results:
        out["seed"] = results[0].seed
    if extra:
        out.update(extra)
    return out


def write_report_json(
    path: str | Path,
    results: Sequence[ReplayResult],
    workload: Workload | None = None,
    kubelet: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write :func:`report_dict` as indented JSON to ``path`` (atomically: complete or absent);
    returns the path."""
    return atomic_write_text(
        path, json.dumps(report_dict(results, workload, kubelet, extra), indent=2) + "\n"
    )


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return value


def write_pods_csv(path: str | Path, results: Sequence[ReplayResult], label: str = "config") -> Path:
    """Write one row per (config, pod) with :data:`POD_COLUMNS`; empty cells for phases not reached.
    ``label`` names the first column (``scheduler`` in ``kubesched startup``'s pods.csv). Written
    atomically (complete or absent)."""
    p = Path(path)
    with atomic_open(p, newline="") as f:
        w = csv.writer(f)
        w.writerow((label, *POD_COLUMNS[1:]))
        for r in results:
            for tl in r.timelines:
                d = tl.to_dict()
                w.writerow([r.config, *(_cell(d[c]) for c in POD_COLUMNS[1:])])
    return p
