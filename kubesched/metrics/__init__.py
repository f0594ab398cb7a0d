"""Prometheus metrics of the scheduler with upstream names, types, labels and buckets
(``pkg/scheduler/metrics/metrics.go``).

Public API:

* :class:`SchedulerMetrics` - the recorder (``inc``/``set``/``observe`` by metric name, i.e. the
  queue's :class:`~kubesched.queue.metrics.QueueMetrics` protocol), passed as
  ``new_scheduler(..., metrics=SchedulerMetrics())``; ``None`` there means no metrics and no cost.
* :data:`METRICS` / :class:`MetricSpec` - the metric table; name constants such as
  :data:`SCHEDULE_ATTEMPTS`.
  It is also the scheduler's :class:`~kubesched.framework.metrics_sink.MetricsSink` (extension
  point and plugin timing, plugin evaluations), recorded by the framework runtime itself.

Expose with ``prometheus_client.generate_latest(metrics.registry)``.
"""

from __future__ import annotations

from kubesched.metrics.definitions import (
    BINDING,
    CACHE_SIZE,
    ERROR,
    EXTENSION_POINT_DURATION,
    GOROUTINES,
    METRICS,
    PERMIT_WAIT_DURATION,
    PREEMPTION_ATTEMPTS,
    PREEMPTION_VICTIMS,
    SCHEDULE_ATTEMPTS,
    SCHEDULED,
    SCHEDULING_ALGORITHM_DURATION,
    UNSCHEDULABLE,
    MetricSpec,
    attempts_label,
    exponential_buckets,
)
from kubesched.metrics.recorder import SchedulerMetrics

__all__ = [
    "BINDING",
    "CACHE_SIZE",
    "ERROR",
    "EXTENSION_POINT_DURATION",
    "GOROUTINES",
    "METRICS",
    "PERMIT_WAIT_DURATION",
    "PREEMPTION_ATTEMPTS",
    "PREEMPTION_VICTIMS",
    "SCHEDULED",
    "SCHEDULE_ATTEMPTS",
    "SCHEDULING_ALGORITHM_DURATION",
    "UNSCHEDULABLE",
    "MetricSpec",
    "SchedulerMetrics",
    "attempts_label",
    "exponential_buckets",
]
