"""``SchedulerMetrics``: the Prometheus recorder behind the queue's
:class:`~kubesched.queue.metrics.QueueMetrics` protocol and the scheduler's own observations.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Gauge

from kubesched.metrics.definitions import (
    BY_NAME,
    CACHE_SIZE,
    EXTENSION_POINT_DURATION,
    METRICS,
    PLUGIN_EVALUATION_TOTAL,
    PLUGIN_EXECUTION_DURATION,
    POD_SCHEDULING_ATTEMPTS,
    POD_SCHEDULING_SLI_DURATION,
    SCHEDULE_ATTEMPTS,
    SCHEDULED,
    SCHEDULING_ATTEMPT_DURATION,
    MetricSpec,
    attempts_label,
)
from kubesched.metrics.families import CounterFamily, HistogramFamily

_LOCK = threading.Lock()
#: collectors already registered per registry (upstream registers its globals once, too)
_REGISTERED: weakref.WeakKeyDictionary[CollectorRegistry, dict[str, Any]] = weakref.WeakKeyDictionary()


def _build(spec: MetricSpec, registry: CollectorRegistry) -> Any:
    """Counters and histograms are :mod:`kubesched.metrics.families` (bumped many times per
    cycle; same samples as ``prometheus_client``'s own), gauges ``prometheus_client.Gauge``."""
    if spec.type == "counter":
        return CounterFamily(spec.name, spec.help, spec.labels, registry=registry)
    if spec.type == "gauge":
        return Gauge(spec.name, spec.help, spec.labels, registry=registry)
    return HistogramFamily(spec.name, spec.help, spec.labels, registry=registry, buckets=spec.buckets)


def collectors_for(registry: CollectorRegistry) -> dict[str, Any]:
    """The kubesched collectors registered in ``registry`` (registered on first use, then shared)."""
    with _LOCK:
        got = _REGISTERED.get(registry)
        if got is None:
            got = {spec.name: _build(spec, registry) for spec in METRICS}
            _REGISTERED[registry] = got
        return got


class SchedulerMetrics:
    """Records the scheduler's metrics (``pkg/scheduler/metrics/metrics.go``) into a ``prometheus_client``
    registry: the Prometheus implementation of :class:`kubesched.framework.metrics_sink.MetricsSink`.

    Implements :class:`~kubesched.queue.metrics.QueueMetrics` (``inc``/``set``/``observe`` by
    upstream metric name with a ``{label: value}`` mapping), so the same object goes to the queue,
    the framework (``handle.metrics``), extenders and the scheduler core. Durations are seconds.

    Args:
        registry: where to register; ``None`` = ``prometheus_client.REGISTRY`` (what
            ``prometheus_client.generate_latest()`` and a ``/metrics`` endpoint expose). Several
            ``SchedulerMetrics`` on one registry share its collectors.
        disable_created_series: drop prometheus_client's ``*_created`` samples, which
            kube-scheduler does not export (process-wide switch of prometheus_client).

    Unknown metric names raise ``KeyError``; a negative ``inc`` on a counter raises ``ValueError``.
    """

    def __init__(
        self, registry: CollectorRegistry | None = None, *, disable_created_series: bool = True
    ) -> None:
        if disable_created_series:
            prometheus_client.disable_created_metrics()
        self.registry = registry if registry is not None else prometheus_client.REGISTRY
        self._collectors = collectors_for(self.registry)
        self._children: dict[tuple[str, tuple[str, ...]], Any] = {}
        #: the same children keyed by ``(name, *labels.items())`` as callers pass them (hot path)
        self._fast_children: dict[tuple[Any, ...], Any] = {}
        self._points: dict[tuple[str, str, str], Any] = {}
        self._plugin_durations: dict[tuple[str, str, str], Any] = {}
        self._evaluations: dict[tuple[str, str, str], Any] = {}

    #: a recording sink (``MetricsSink.enabled``)
    enabled = True

    # ---- framework sink (``kubesched.framework.metrics_sink.MetricsSink``) -------------------------

    def extension_point_duration(self, point: str, status: str, profile: str, seconds: float) -> None:
        """``scheduler_framework_extension_point_duration_seconds{extension_point, status, profile}``."""
        key = (point, status, profile)
        c = self._points.get(key)
        if c is None:
            c = self._points[key] = self._collectors[EXTENSION_POINT_DURATION].labels(point, status, profile)
        c.observe(seconds)

    def plugin_execution_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """``scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}``."""
        key = (plugin, point, status)
        c = self._plugin_durations.get(key)
        if c is None:
            c = self._plugin_durations[key] = self._collectors[PLUGIN_EXECUTION_DURATION].labels(
                plugin, point, status
            )
        c.observe(seconds)

    def plugin_evaluations(self, plugin: str, point: str, profile: str, count: int) -> None:
        """Add ``count`` to ``scheduler_plugin_evaluation_total{plugin, extension_point, profile}``."""
        key = (plugin, point, profile)
        c = self._evaluations.get(key)
        if c is None:
            c = self._evaluations[key] = self._collectors[PLUGIN_EVALUATION_TOTAL].labels(
                plugin, point, profile
            )
        c.inc(count)

    def child(self, name: str, labels: Mapping[str, str]) -> Any:
        """The labelled child of metric ``name`` (cached; an unlabelled metric is its own child)."""
        fast = (name, *labels.items())  # the caller's labels as given: one tuple, no lookups
        try:
            c = self._fast_children.get(fast)
        except TypeError:  # an unhashable label value (its str() is the label)
            return self._child(name, labels)
        if c is None:
            c = self._fast_children[fast] = self._child(name, labels)
        return c

    def _child(self, name: str, labels: Mapping[str, str]) -> Any:
        spec = BY_NAME[name]
        values = tuple(str(labels.get(k, "")) for k in spec.labels)
        key = (name, values)
        c = self._children.get(key)
        if c is None:
            coll = self._collectors[name]
            c = coll.labels(*values) if spec.labels else coll
            self._children[key] = c
        return c

    # ---- QueueMetrics protocol --------------------------------------------------------------------

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """Add ``amount`` to a counter or gauge (negative only for gauges)."""
        self.child(name, labels).inc(amount)

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Set a gauge."""
        self.child(name, labels).set(value)

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Observe one histogram sample."""
        self.child(name, labels).observe(value)

    # ---- scheduler observations (``pkg/scheduler/metrics/profile_metrics.go``) ---------------------

    def attempt(self, result: str, profile: str, duration: float) -> None:
        """``observeScheduleAttemptAndLatency``: ``scheduling_attempt_duration_seconds{result, profile}``
        and ``schedule_attempts_total{result, profile}`` (``result``: scheduled/unschedulable/error)."""
        labels = {"result": result, "profile": profile}
        self.child(SCHEDULING_ATTEMPT_DURATION, labels).observe(duration)
        self.child(SCHEDULE_ATTEMPTS, labels).inc()

    def pod_scheduled(
        self, profile: str, duration: float, attempts: int, since_initial: float | None
    ) -> None:
        """A successful binding: the ``scheduled`` attempt, ``pod_scheduling_attempts`` and, when the
        pod has an initial attempt time, ``pod_scheduling_sli_duration_seconds{attempts}``."""
        self.attempt(SCHEDULED, profile, duration)
        self.child(POD_SCHEDULING_ATTEMPTS, {}).observe(attempts)
        if since_initial is not None:
            self.child(POD_SCHEDULING_SLI_DURATION, {"attempts": attempts_label(attempts)}).observe(
                since_initial
            )

    def cache_size(self, sizes: Mapping[str, int]) -> None:
        """``scheduler_cache_size{type}`` from ``{"assumed_pods": n, "pods": n, "nodes": n}``."""
        for t, n in sizes.items():
            self.child(CACHE_SIZE, {"type": t}).set(n)
