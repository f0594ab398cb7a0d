"""In-flight pods and the cluster events seen while they are being scheduled
(``pkg/scheduler/backend/queue/scheduling_queue.go`` ``AddUnschedulableIfNotPresent``;
``inFlightPods``/``inFlightEvents`` of ``activeQueue`` in
``pkg/scheduler/backend/queue/active_queue.go``).

Each popped pod records a marker (a sequence number); events are appended with increasing
sequence numbers while any pod is in flight. The events a pod must consider when it comes
back are those after its marker. ``done`` drops the marker and prunes events older than the
oldest remaining in-flight pod. All operations are O(1) amortised except
:meth:`events_since` (O(log n + k)).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, NamedTuple

from kubesched.framework.events import ClusterEvent


class InFlightEvent(NamedTuple):
    """A cluster event recorded while pods were in flight."""

    seq: int
    event: ClusterEvent
    old_obj: Any
    new_obj: Any


def _seq_of(e: InFlightEvent) -> int:
    return e.seq


class InFlightTracker:
    """Markers of in-flight pods (by UID, pop order) and the event log."""

    __slots__ = ("_pods", "_events", "_head", "_seq")

    def __init__(self) -> None:
        self._pods: dict[str, int] = {}
        self._events: list[InFlightEvent] = []
        self._head = 0
        self._seq = 0

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    @property
    def event_count(self) -> int:
        """Number of events currently retained."""
        return len(self._events) - self._head

    def pop_marker(self, uid: str) -> None:
        """Mark ``uid`` in flight from now on."""
        self._seq += 1
        self._pods[uid] = self._seq

    def add_event(self, event: ClusterEvent, old_obj: Any, new_obj: Any) -> bool:
        """Record ``event`` if any pod is in flight; returns whether it was recorded."""
        if not self._pods:
            return False
        self._seq += 1
        self._events.append(InFlightEvent(self._seq, event, old_obj, new_obj))
        return True

    def events_since(self, uid: str) -> list[InFlightEvent] | None:
        """Events recorded after ``uid`` was popped; ``None`` if ``uid`` is not in flight."""
        marker = self._pods.get(uid)
        if marker is None:
            return None
        i = bisect_right(self._events, marker, lo=self._head, key=_seq_of)
        return self._events[i:]

    def done(self, uid: str) -> list[InFlightEvent]:
        """End ``uid``'s flight; returns the events pruned because no in-flight pod needs them."""
        if self._pods.pop(uid, None) is None:
            return []
        events = self._events
        head = self._head
        if not self._pods:
            pruned = events[head:]
            self._events = []
            self._head = 0
            return pruned
        oldest = next(iter(self._pods.values()))
        end = bisect_right(events, oldest, lo=head, key=_seq_of)
        pruned = events[head:end]
        self._head = end
        if end > 1024 and end * 2 > len(events):
            del events[:end]
            self._head = 0
        return pruned
