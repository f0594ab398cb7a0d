"""How well a replay reproduces what a recorded cluster did: per-pod start-up, replayed against
recorded.

The recorded start-up of a pod is ``kubesched startup``'s (:mod:`kubesched.modes.startup.analysis`:
the last container's ``startedAt`` minus ``creationTimestamp``, from the recording's last state of
the pod); the replayed one is the replay's (container start minus arrival). Over the pods started
in both: ``ratio = replayed / recorded`` per pod (a recorded start-up of 0 s counts as 0.5 s, the
timestamps' precision), its median, the share of pods with ``1/2 <= ratio <= 2``, and p50 / p95 of
both sides. No upstream counterpart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.modes.record.recording import Recording
from kubesched.modes.report.metrics import percentiles
from kubesched.modes.report.result import ReplayResult
from kubesched.modes.startup.analysis import StartupData, analyse

__all__ = ["recorded_startups", "startup_agreement", "TIMESTAMP_FLOOR_SECONDS"]

#: a recorded start-up is never taken below this (second-precision timestamps)
TIMESTAMP_FLOOR_SECONDS = 0.5


def recorded_startups(recording: Recording) -> dict[str, float]:
    """``namespace/name`` -> recorded start-up (s) of the pods created and started while recording."""
    runs = analyse(
        StartupData(
            recording.pod_objects(),
            list(recording.nodes.values()),
            recording.image_events(),
            source=str(recording.path),
        )
    )
    out: dict[str, float] = {}
    for run in runs:
        for tl in run.result.timelines:
            if tl.startup is not None:
                out[tl.key] = tl.startup
    return out


def startup_agreement(recorded: Mapping[str, float], result: ReplayResult) -> dict[str, Any]:
    """``{"pods", "medianRatio", "within2x", "recorded": {"p50", "p95"}, "replayed": {"p50", "p95"}}``
    over the pods started in both (see the module docstring); ``pods`` 0 and None figures when
    none is."""
    pairs = [
        (recorded[tl.key], tl.startup)
        for tl in result.timelines
        if tl.startup is not None and tl.key in recorded
    ]
    if not pairs:
        return {"pods": 0, "medianRatio": None, "within2x": None, "recorded": None, "replayed": None}
    rec = np.array([max(r, TIMESTAMP_FLOOR_SECONDS) for r, _ in pairs])
    rep = np.array([max(p, TIMESTAMP_FLOOR_SECONDS) for _, p in pairs])
    ratio = rep / rec
    prec = percentiles([r for r, _ in pairs]) or {}
    prep = percentiles([p for _, p in pairs]) or {}
    return {
        "pods": len(pairs),
        "medianRatio": round(float(np.median(ratio)), 4),
        "within2x": round(float(np.mean((ratio >= 0.5) & (ratio <= 2.0))), 4),
        "recorded": {"p50": round(prec["p50"], 3), "p95": round(prec["p95"], 3)},
        "replayed": {"p50": round(prep["p50"], 3), "p95": round(prep["p95"], 3)},
    }
