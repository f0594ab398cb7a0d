"""Prometheus metrics of the scheduler with upstream names, types, labels and buckets
(``pkg/scheduler/metrics/metrics.go``).

Public API:

* :class:`SchedulerMetrics` - the recorder (``inc``/``set``/``observe`` by metric name, i.e. the
  queue's :class:`~kubesched.queue.metrics.QueueMetrics` protocol), passed as
  ``new_scheduler(..., metrics=SchedulerMetrics())``; ``None`` there means no metrics and no cost.
* :data:`METRICS` / :class:`MetricSpec` - the metric table; name constants such as
  :data:`SCHEDULE_ATTEMPTS`.
* :func:`instrument_framework` / :func:`instrument_placement` - attach timing (used by the scheduler).

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
from kubesched.metrics.instrument import instrument_framework, instrument_placement
from kubesched.metrics.recorder import SchedulerMetrics

__all__ = [
    "BINDING", "CACHE_SIZE", "ERROR", "EXTENSION_POINT_DURATION", "GOROUTINES", "METRICS", "PERMIT_WAIT_DURATION",
    "PREEMPTION_ATTEMPTS", "PREEMPTION_VICTIMS", "SCHEDULED", "SCHEDULE_ATTEMPTS", "SCHEDULING_ALGORITHM_DURATION",
    "UNSCHEDULABLE", "MetricSpec", "SchedulerMetrics", "attempts_label", "exponential_buckets",
    "instrument_framework", "instrument_placement",
]
