"""``QueueSortKey``: a QueueSort plugin whose order is a total key (kubesched's own; no upstream
counterpart).

The scheduling queue orders activeQ with the profile's QueueSort ``less(a, b)``. A plugin that
also implements :class:`QueueSortKey` gives the queue a heap key with the same order, which is
cheaper than calling ``less`` per comparison. ``sort_key(a) < sort_key(b)`` must hold exactly when
``less(a, b)`` does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.framework.queued_pod_info import QueuedPodInfo


class QueueSortKey(ABC):
    """Optional interface of a QueueSort plugin (see the module docstring)."""

    __slots__ = ()

    @abstractmethod
    def sort_key(self, qpi: QueuedPodInfo) -> tuple[Any, ...]:
        """The heap key of ``qpi`` (smaller pops first)."""
