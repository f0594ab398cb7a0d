"""``QueuedPodInfo`` (``pkg/scheduler/backend/queue/scheduling_queue.go`` ``PriorityQueue``): a pod in the
scheduling queue with its attempt bookkeeping.

Times (``timestamp``, ``initial_attempt_timestamp``, ``backoff_expiration``) are seconds on
the scheduler's clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.framework.node_info import PodInfo

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.framework.events import ClusterEvent


@dataclass(eq=False, slots=True)
class QueuedPodInfo:
    """Queue entry for one pod (key ``namespace/name``)."""

    pod_info: PodInfo
    timestamp: float = 0.0
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    backoff_expiration: float | None = None
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_plugin_events: list[ClusterEvent] = field(default_factory=list)
    #: the queue's count of cluster events when the pod was last popped (-1: never popped)
    event_seq_at_pop: int = -1

    @property
    def pod(self) -> Pod:
        """The queued :class:`~kubesched.api.pod.Pod`."""
        return self.pod_info.pod

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return self.pod_info.pod.key
