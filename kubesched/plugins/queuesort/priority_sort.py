"""PrioritySort: the default QueueSort plugin
(``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``).

``less(a, b)`` is True when ``a`` has a higher priority (``spec.priority``, 0 when unset), or the
same priority and an earlier queue ``timestamp`` (seconds on the scheduler clock).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.interfaces import QueueSortPlugin
from kubesched.framework.sort_key import QueueSortKey

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.queued_pod_info import QueuedPodInfo


class PrioritySort(QueueSortPlugin, QueueSortKey):
    """Order activeQ by priority (descending), then by queue timestamp (ascending). No args."""

    NAME = "PrioritySort"
    Args = None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True if ``a`` must be popped before ``b``."""
        p1 = a.pod_info.pod.priority
        p2 = b.pod_info.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        """``less`` as a heap key: higher priority first, then the earlier queue timestamp."""
        return (-qpi.pod_info.pod.priority, qpi.timestamp)
