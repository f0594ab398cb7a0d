"""Metric hooks of the scheduling queue (``pkg/scheduler/metrics/metrics.go``).

The queue reports through a small :class:`QueueMetrics` protocol so it does not depend on a
Prometheus client; ``kubesched.metrics`` (or a test) supplies a recorder. Names and label
keys are upstream's:

* ``scheduler_queue_incoming_pods_total{queue, event}`` (counter, ``inc``)
* ``scheduler_pending_pods{queue}`` (gauge, ``set`` to the current size; queue is
  ``active``/``backoff``/``unschedulable``/``gated``)
* ``scheduler_unschedulable_pods{plugin, profile}`` (gauge, ``inc`` by +1/-1)
* ``scheduler_queueing_hint_execution_duration_seconds{plugin, event, hint}`` (histogram, ``observe``)
* ``scheduler_framework_extension_point_duration_seconds{extension_point="PreEnqueue", status, profile}``
  (histogram, ``observe``)
* ``scheduler_inflight_events{event}`` (gauge, ``inc`` by +n/-n; ``PodPopped`` for pops)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

QUEUE_INCOMING_PODS = "scheduler_queue_incoming_pods_total"
PENDING_PODS = "scheduler_pending_pods"
UNSCHEDULABLE_PODS = "scheduler_unschedulable_pods"
QUEUEING_HINT_DURATION = "scheduler_queueing_hint_execution_duration_seconds"
EXTENSION_POINT_DURATION = "scheduler_framework_extension_point_duration_seconds"
INFLIGHT_EVENTS = "scheduler_inflight_events"

#: ``queue`` label values.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

#: ``scheduler_inflight_events`` label for popped pods.
POD_POPPED = "PodPopped"


class QueueMetrics(Protocol):
    """Recorder the queue calls; ``labels`` maps label name -> value."""

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """Add ``amount`` (may be negative for gauges) to a counter/gauge."""
        ...

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Set a gauge."""
        ...

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Observe a histogram sample (seconds for durations)."""
        ...


class NullQueueMetrics:
    """The default recorder: drops everything."""

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """No-op."""

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """No-op."""

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """No-op."""
