"""What the replay measures: per-pod timelines, per-run percentiles, packing over time.

All times are seconds since the replay origin; bytes are compressed (registry transfer) bytes.

Per pod (:class:`PodTimeline`), each phase is ``None`` until the pod reached it:

* queue wait = first scheduling attempt - creation (arrival);
* scheduling = assumed (the attempt that reserved a node) - first attempt; it includes time spent
  in backoff / unschedulable between failed attempts;
* binding = bound (``spec.nodeName`` written) - assumed (non-zero only when a Permit plugin makes
  the pod wait, or with a per-attempt cost);
* image pull wait / pull = the kubelet model's ``pull_wait_seconds`` / ``pull_seconds`` (summed over
  the pod's images; see :class:`~kubesched.embedded.kubelet.pull_records.PodPullRecord`);
* container start = container running - last image present;
* start-up latency = container running - creation.

Percentiles use linear interpolation between order statistics (numpy's default ``linear``
method: the q-th percentile of sorted ``x[0..n-1]`` is at position ``q/100 * (n-1)``), over the
pods that reached the phase.

Packing: ``allocated / allocatable`` per resource, where allocated is the sum of the effective
requests (``pod_requests``: max of init containers and the sum of containers, plus overhead) of
the bound pods not yet finished, and allocatable the sum over nodes. The mean is time-weighted
(exact integral of the step function) over the measurement interval ``[0, horizon]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "PodTimeline",
    "percentiles",
    "AllocationTracker",
    "SeriesPoint",
    "PERCENTILES",
    "PHASES",
    "PACKING_RESOURCES",
]

#: the percentiles reported, by JSON key
PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0))
#: per-pod phases: (report key, PodTimeline property)
PHASES: tuple[tuple[str, str], ...] = (
    ("queueWaitSeconds", "queue_wait"),
    ("schedulingSeconds", "scheduling"),
    ("bindingSeconds", "binding"),
    ("pullWaitSeconds", "pull_wait"),
    ("pullSeconds", "pull"),
    ("containerStartSeconds", "container_start"),
    ("startupLatencySeconds", "startup"),
)
#: resources always reported in ``meanAllocatedFraction`` (others appear when a node has them)
PACKING_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
#: Name under which the allocation tracker counts the DRA devices allocated to pods' claims in a
#: ``replay --gpu dra`` run (the report's ``meanAllocatedFraction`` key for its GPUs).
DRA_DEVICES_RESOURCE = "gpu.kubesched.io/devices"


@dataclass(slots=True)
class PodTimeline:
    """One pod's life in a replay (seconds since origin; see the module docstring)."""

    key: str
    arrival: float
    first_attempt: float | None = None
    attempts: int = 0
    assumed: float | None = None
    bound: float | None = None
    node: str | None = None
    pull_wait_seconds: float | None = None
    pull_seconds: float | None = None
    pulls_done: float | None = None
    started: float | None = None
    finished: float | None = None
    preempted: bool = False
    images: tuple[str, ...] = ()
    bytes_requested: int = 0
    bytes_cache_hit: int = 0
    bytes_pulled: int = 0

    @property
    def queue_wait(self) -> float | None:
        return None if self.first_attempt is None else self.first_attempt - self.arrival

    @property
    def scheduling(self) -> float | None:
        if self.assumed is None or self.first_attempt is None:
            return None
        return self.assumed - self.first_attempt

    @property
    def binding(self) -> float | None:
        return None if self.bound is None or self.assumed is None else self.bound - self.assumed

    @property
    def pull_wait(self) -> float | None:
        return self.pull_wait_seconds if self.pulls_done is not None else None

    @property
    def pull(self) -> float | None:
        return self.pull_seconds if self.pulls_done is not None else None

    @property
    def container_start(self) -> float | None:
        return None if self.started is None or self.pulls_done is None else self.started - self.pulls_done

    @property
    def startup(self) -> float | None:
        return None if self.started is None else self.started - self.arrival

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (camelCase phase keys, times since origin)."""
        return {
            "pod": self.key,
            "node": self.node,
            "arrival": self.arrival,
            "firstAttempt": self.first_attempt,
            "attempts": self.attempts,
            "assumed": self.assumed,
            "bound": self.bound,
            "pullsDone": self.pulls_done,
            "started": self.started,
            "finished": self.finished,
            "preempted": self.preempted,
            "images": list(self.images),
            "bytesRequested": self.bytes_requested,
            "bytesCacheHit": self.bytes_cache_hit,
            "bytesPulled": self.bytes_pulled,
            **{key: getattr(self, prop) for key, prop in PHASES},
        }


def percentiles(values: Sequence[float] | Iterable[float]) -> dict[str, float] | None:
    """``{"p50", "p90", "p95", "p99"}`` of ``values`` (linear interpolation), or None when empty."""
    arr = np.fromiter(values, dtype=float)
    if arr.size == 0:
        return None
    qs = np.percentile(arr, [q for _, q in PERCENTILES])
    return {key: float(v) for (key, _), v in zip(PERCENTILES, qs, strict=True)}


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """State sampled at ``t``: cumulative ``bytes_pulled``/``bytes_requested``/``bytes_cache_hit``,
    pods ``pending`` (created, not bound), ``running`` (bound, not finished) and the allocated
    fraction per resource."""

    t: float
    bytes_pulled: int
    bytes_requested: int
    bytes_cache_hit: int
    pending: int
    running: int
    allocated_fraction: Mapping[str, float]

    @property
    def cache_hit_ratio(self) -> float:
        return self.bytes_cache_hit / self.bytes_requested if self.bytes_requested else 0.0


@dataclass
class AllocationTracker:
    """Allocated requests of bound pods against node allocatable, integrated over time.

    ``allocatable``: resource -> total over nodes (cpu in millicores, others base units);
    ``horizon``: end of the measurement interval (s). Call :meth:`add` / :meth:`remove` with a
    pod's requests at time ``t`` (non-decreasing); :meth:`mean_fractions` closes the integral.
    """

    allocatable: Mapping[str, int]
    horizon: float
    resources: tuple[str, ...] = ()
    allocated: dict[str, int] = field(default_factory=dict)
    _area: dict[str, float] = field(default_factory=dict)
    _last: float = 0.0

    def __post_init__(self) -> None:
        if not self.resources:
            extra = sorted(
                r
                for r in self.allocatable
                if r not in PACKING_RESOURCES and r != "pods" and r != "ephemeral-storage"
            )
            self.resources = (*PACKING_RESOURCES, *extra)
        self.allocated = dict.fromkeys(self.resources, 0)
        self._area = dict.fromkeys(self.resources, 0.0)

    def _advance(self, t: float) -> None:
        end = min(t, self.horizon)
        if end > self._last:
            dt = end - self._last
            for r in self.resources:
                self._area[r] += self.allocated[r] * dt
            self._last = end

    def add(self, requests: Mapping[str, int], t: float) -> None:
        """A pod with ``requests`` was bound at ``t``."""
        self._advance(t)
        for r in self.resources:
            self.allocated[r] += requests.get(r, 0)

    def remove(self, requests: Mapping[str, int], t: float) -> None:
        """A bound pod with ``requests`` finished (was deleted) at ``t``."""
        self._advance(t)
        for r in self.resources:
            self.allocated[r] -= requests.get(r, 0)

    def fractions(self) -> dict[str, float]:
        """Allocated / allocatable now, per resource (0.0 for a resource no node has)."""
        return {
            r: (self.allocated[r] / self.allocatable[r] if self.allocatable.get(r) else 0.0)
            for r in self.resources
        }

    def mean_fractions(self) -> dict[str, float]:
        """Time-weighted mean of :meth:`fractions` over ``[0, horizon]`` (0.0 when horizon is 0)."""
        self._advance(self.horizon)
        if self.horizon <= 0:
            return dict.fromkeys(self.resources, 0.0)
        return {
            r: (self._area[r] / self.horizon / self.allocatable[r] if self.allocatable.get(r) else 0.0)
            for r in self.resources
        }
