"""The backoff queue (``pkg/scheduler/backend/queue/backoff_queue.go``).

Two heaps ordered by backoff expiration: the *regular* heap holds pods rejected by plugins
(ties broken by the activeQ order) and the *error* heap pods that failed with an error (no
rejector plugins). Expirations are aligned to a 1-second ordering window
(``SchedulerPopFromBackoffQ``): ``floor(timestamp + duration)``; a pod is backing off while
``expiration >= floor(now)``. Durations: ``initial * 2**(count-1)`` capped at ``max``
(defaults 1 s and 10 s: 1, 2, 4, 8, 10, 10, ... seconds), where ``count`` is
``consecutive_errors_count`` if non-zero else ``unschedulable_count``.

Not thread-safe on its own: the :class:`~kubesched.queue.scheduling_queue.PriorityQueue` lock guards it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kubesched.api.pod import Pod
from kubesched.clock import Clock
from kubesched.framework.node_info import PodInfo
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.queue.heap import Heap, LessKey

#: Width of the backoff ordering window, seconds (``backoffQOrderingWindowDuration``).
ORDERING_WINDOW = 1.0

_NS = 1_000_000_000


def floor_to_second(t: float) -> float:
    """``time.Truncate(time.Second)`` for epoch seconds."""
    return float(math.floor(t))


def _key(p: QueuedPodInfo) -> str:
    return p.pod_info.pod.key


def has_rejectors(p: QueuedPodInfo) -> bool:
    """True if the pod was rejected by at least one plugin (unschedulable or pending)."""
    return bool(p.unschedulable_plugins) or bool(p.pending_plugins)


class BackoffQueue:
    """Regular + error backoff heaps (see module docstring).

    ``initial_backoff``/``max_backoff`` are seconds; ``max_backoff == 0`` disables backoff.
    ``less``/``sort_key`` give the activeQ order used to break equal expirations in the
    regular heap (``sort_key(qpi) -> tuple`` is an optional fast path that must order exactly
    like ``less``).
    """

    def __init__(
        self,
        clock: Clock,
        initial_backoff: float,
        max_backoff: float,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], tuple[Any, ...]] | None = None,
    ) -> None:
        self._clock = clock
        self._initial_ns = int(round(initial_backoff * _NS))
        self._max_ns = int(round(max_backoff * _NS))
        backoff_time = self.backoff_time

        if sort_key is not None:
            sk = sort_key

            def regular_key(p: QueuedPodInfo, seq: int) -> Any:
                return (backoff_time(p), *sk(p), seq)
        else:

            def regular_key(p: QueuedPodInfo, seq: int) -> Any:
                return (backoff_time(p), LessKey(p, seq, less))

        def error_key(p: QueuedPodInfo, seq: int) -> Any:
            return (backoff_time(p), seq)

        self.regular: Heap[QueuedPodInfo] = Heap(_key, regular_key)
        self.errors: Heap[QueuedPodInfo] = Heap(_key, error_key)

    # -- backoff arithmetic -------------------------------------------------------------------

    def backoff_duration(self, p: QueuedPodInfo) -> float:
        """Backoff in seconds for the pod's current counters (0 when never penalised)."""
        count = p.consecutive_errors_count or p.unschedulable_count
        if count <= 0:
            return 0.0
        shift = count - 1
        if self._initial_ns > (self._max_ns >> shift):
            return self._max_ns / _NS
        return (self._initial_ns << shift) / _NS

    def backoff_time(self, p: QueuedPodInfo) -> float:
        """The (cached) window-aligned expiration; ``-inf`` when the pod is never backed off
        (counters at 0 or backoff disabled) so it sorts first and never counts as backing off."""
        exp = p.backoff_expiration
        if exp is None:
            if self._max_ns == 0:
                return -math.inf
            count = p.consecutive_errors_count or p.unschedulable_count
            if count == 0:
                return -math.inf
            exp = floor_to_second(p.timestamp + self.backoff_duration(p))
            p.backoff_expiration = exp
        return exp

    def is_backing_off(self, p: QueuedPodInfo) -> bool:
        """``expiration >= floor(now)`` (``isPodBackingoff``)."""
        return self.backoff_time(p) >= floor_to_second(self._clock.now())

    # -- heap operations ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.regular) + len(self.errors)

    def __contains__(self, key: str) -> bool:
        return key in self.regular or key in self.errors

    def add(self, p: QueuedPodInfo) -> None:
        """Insert into the regular heap if the pod has rejector plugins, else the error heap
        (removing it from the other heap)."""
        k = _key(p)
        if has_rejectors(p):
            self.regular.add_or_update(p)
            self.errors.delete(k)
        else:
            self.errors.add_or_update(p)
            self.regular.delete(k)

    def get(self, key: str) -> QueuedPodInfo | None:
        """The entry for ``namespace/name`` in either heap."""
        p = self.regular.get(key)
        return p if p is not None else self.errors.get(key)

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove the entry from whichever heap holds it."""
        p = self.regular.delete(key)
        return p if p is not None else self.errors.delete(key)

    def update(self, old_key: str, new_pod: Pod) -> QueuedPodInfo | None:
        """Replace the pod of the entry under ``old_key`` in place; ``None`` if absent."""
        for h in (self.regular, self.errors):
            p = h.get(old_key)
            if p is not None:
                if p.pod_info.pod is not new_pod:
                    p.pod_info = PodInfo(new_pod)
                h.add_or_update(p)
                return p
        return None

    def pop_regular(self) -> QueuedPodInfo | None:
        """Pop the regular heap's head even if it is still backing off (``PopFromBackoffQ``)."""
        return self.regular.pop()

    def pop_all_completed(self) -> list[QueuedPodInfo]:
        """Pop every pod whose backoff completed: regular heap first, then the error heap."""
        out: list[QueuedPodInfo] = []
        limit = floor_to_second(self._clock.now())
        for h in (self.regular, self.errors):
            while True:
                p = h.peek()
                if p is None or self.backoff_time(p) >= limit:
                    break
                h.pop()
                out.append(p)
        return out

    def next_expiry(self) -> float | None:
        """Earliest expiration across both heaps (seconds), or ``None`` when both are empty.

        The 1 s flush releases a pod at the first tick ``t`` with ``floor(t) > expiration``.
        """
        best: float | None = None
        for h in (self.regular, self.errors):
            p = h.peek()
            if p is not None:
                t = self.backoff_time(p)
                if best is None or t < best:
                    best = t
        return best

    def items(self) -> list[QueuedPodInfo]:
        """All entries (regular heap first)."""
        return self.regular.items() + self.errors.items()
