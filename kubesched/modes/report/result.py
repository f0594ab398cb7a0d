"""The outcome of one replay run (``kubesched replay``) or of one start-up analysis of a live
cluster (``kubesched startup``): per-pod timelines, pull totals, sampled series; the reports
(``report.json``, ``pods.csv``, ``report.html``, the summary table) are built from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.embedded.kubelet.pull_records import PullMetrics
from kubesched.modes.report.metrics import PHASES, PodTimeline, SeriesPoint, percentiles

__all__ = ["ReplayResult"]


@dataclass
class ReplayResult:
    """The outcome of one run.

    ``timelines`` (one per workload pod, in workload order), ``pull_metrics`` (the kubelet
    model's run totals), ``mean_allocated_fraction`` (time-weighted over ``[0, horizon]``),
    ``series`` (sampled state, for plots), ``attempts`` (scheduling cycles run), ``end_time``
    (virtual seconds when the run ended), ``wall_seconds`` (real time the run took), ``planners``
    (their class names).
    """

    config: str
    profiles: list[str]
    workload: str
    seed: int | None
    horizon: float
    timelines: list[PodTimeline]
    pull_metrics: PullMetrics
    mean_allocated_fraction: dict[str, float]
    series: list[SeriesPoint]
    attempts: int
    end_time: float
    wall_seconds: float
    planners: list[str] = field(default_factory=list)

    @property
    def scheduled(self) -> int:
        """Pods bound at least once."""
        return sum(1 for t in self.timelines if t.bound is not None)

    @property
    def never_scheduled(self) -> int:
        return len(self.timelines) - self.scheduled

    def phase_values(self, prop: str) -> list[float]:
        """Values of PodTimeline property ``prop`` over the pods that reached it."""
        out = []
        for t in self.timelines:
            v = getattr(t, prop)
            if v is not None:
                out.append(v)
        return out

    def summary(self) -> dict[str, Any]:
        """The ``report.json`` entry: ``config``, ``pods``, ``scheduled``,
        ``neverScheduled``, ``startupLatencySeconds``, ``pullSeconds``, ``bytesPulled``,
        ``cacheHitRatio``, ``meanAllocatedFraction``, plus the other phases' percentiles and run
        details. A percentile block is null when no pod reached the phase."""
        m = self.pull_metrics
        out: dict[str, Any] = {
            "config": self.config,
            "pods": len(self.timelines),
            "scheduled": self.scheduled,
            "neverScheduled": self.never_scheduled,
            "startupLatencySeconds": percentiles(self.phase_values("startup")),
            "pullSeconds": percentiles(self.phase_values("pull")),
            "bytesPulled": m.bytes_pulled,
            "cacheHitRatio": m.cache_hit_ratio,
            "meanAllocatedFraction": dict(self.mean_allocated_fraction),
        }
        for key, prop in PHASES:
            if key not in out:
                out[key] = percentiles(self.phase_values(prop))
        out.update(
            {
                "started": sum(1 for t in self.timelines if t.started is not None),
                "preempted": sum(1 for t in self.timelines if t.preempted),
                "bytesRequested": m.bytes_requested,
                "bytesCacheHit": m.bytes_cache_hit,
                "bytesJoined": m.bytes_joined,
                "bytesPrepulled": m.bytes_prepulled,
                "imageBytesPulled": m.image_bytes_pulled,
                "imageBytesPrepulled": m.image_bytes_prepulled,
                "pullsStarted": m.pulls_started,
                "pullsJoined": m.pulls_joined,
                "prepulls": m.prepulls,
                "prepullsUsed": m.prepulls_used,
                "prepullPrecision": m.prepull_precision,
                "imageGCRuns": m.gc_runs,
                "imagesRemoved": m.images_removed,
                "schedulingAttempts": self.attempts,
                "profiles": list(self.profiles),
                "planners": list(self.planners),
                "seed": self.seed,
                "horizonSeconds": self.horizon,
                "endSeconds": self.end_time,
                "wallSeconds": round(self.wall_seconds, 3),
            }
        )
        return out
