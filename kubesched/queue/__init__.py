"""The scheduling queue (``pkg/scheduler/backend/queue/scheduling_queue.go``): :class:`PriorityQueue` with
activeQ, backoffQ,
unschedulable pods, queueing hints, PreEnqueue gating and the :class:`Nominator`."""

from kubesched.queue.metrics import NullQueueMetrics, QueueMetrics
from kubesched.queue.nominator import Nominator
from kubesched.queue.pod_events import pod_scheduling_properties_change
from kubesched.queue.queueing_hints import QueueingStrategy
from kubesched.queue.scheduling_queue import PriorityQueue, QueueError

__all__ = [
    "Nominator",
    "NullQueueMetrics",
    "PriorityQueue",
    "QueueError",
    "QueueMetrics",
    "QueueingStrategy",
    "pod_scheduling_properties_change",
]
