"""The scheduler's event loop on virtual time, shared by ``simulate``, ``bench`` and the UI's runs.

kube-scheduler runs on wall time: ``ScheduleOne`` blocks on the queue while the queue's own loops
(backoff and unschedulable flushes), Permit timeouts and lease renewals fire on timers. On a
:class:`~kubesched.clock.VirtualClock` nothing fires by itself, so :class:`VirtualTimeDriver` is the
loop instead: it runs a scheduling cycle (``Scheduler.schedule_one``, binding inline) whenever the
queue has a poppable pod, and otherwise advances the clock to its next timer, so that whatever was
scheduled on the clock - the queue's timers when it runs them, Permit waits, a run mode's own
events - fires at its time. The run is *quiet* when no pod is poppable and no timer is pending.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kubesched.clock import VirtualClock
from kubesched.framework.queued_pod_info import QueuedPodInfo

__all__ = ["AttemptHook", "IdleHook", "VirtualTimeDriver"]


class _Queue(Protocol):
    def pop(self) -> QueuedPodInfo | None: ...


class _Cycles(Protocol):
    """What the driver needs of a ``Scheduler``: its queue and one scheduling cycle."""

    @property
    def queue(self) -> _Queue: ...

    def schedule_one(self, qpi: QueuedPodInfo) -> None: ...

#: called with the popped pod before or after its scheduling cycle
AttemptHook = Callable[[QueuedPodInfo], None]
#: called when no pod is poppable, with the clock's next timer time (None: no timer); returns the
#: virtual time to advance to, or None to end the run
IdleHook = Callable[[float | None], float | None]


def _next_timer(next_timer: float | None) -> float | None:
    return next_timer


class VirtualTimeDriver:
    """Runs ``sched`` on ``clock`` (see the module docstring)."""

    def __init__(self, sched: _Cycles, clock: VirtualClock) -> None:
        self.sched = sched
        self.clock = clock

    def step(self, before_attempt: AttemptHook | None = None, after_attempt: AttemptHook | None = None) -> bool:
        """One scheduling cycle if a pod is poppable now (no clock change); False when none is."""
        qpi = self.sched.queue.pop()
        if qpi is None:
            return False
        if before_attempt is not None:
            before_attempt(qpi)
        self.sched.schedule_one(qpi)
        if after_attempt is not None:
            after_attempt(qpi)
        return True

    def run_until_quiet(self, *, max_attempts: int | None = None, until: Callable[[], bool] | None = None,
                        before_attempt: AttemptHook | None = None, after_attempt: AttemptHook | None = None,
                        idle: IdleHook = _next_timer) -> int:
        """Schedule until quiet; returns the number of scheduling cycles run.

        Stops early after ``max_attempts`` cycles, or when ``until()`` is true (checked before each
        cycle). ``idle`` decides where the clock goes when nothing is poppable (default: to the next
        timer, and the run ends when there is none); the clock never goes back.
        """
        attempts = 0
        clock = self.clock
        while max_attempts is None or attempts < max_attempts:
            if until is not None and until():
                break
            if self.step(before_attempt, after_attempt):
                attempts += 1
                continue
            target = idle(clock.next_timer_time())
            if target is None:
                break
            clock.advance_to(max(target, clock.now()))
        return attempts
