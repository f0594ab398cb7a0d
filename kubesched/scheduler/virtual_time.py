"""The scheduler's event loop on virtual time, shared by ``simulate``, ``replay``, ``bench`` and the
UI's runs.

kube-scheduler runs on wall time: ``ScheduleOne`` (``pkg/scheduler/schedule_one.go``) blocks on the
queue while the queue's own loops (``pkg/scheduler/backend/queue/scheduling_queue.go``: ``Run``,
the backoff and unschedulable flushes), Permit timeouts and lease renewals fire on timers. On a
:class:`~kubesched.clock.VirtualClock` nothing fires by itself, so :class:`VirtualTimeDriver` is the
loop instead:

1. while a pod is poppable (and the ``ready`` hook allows it), one scheduling cycle runs
   (``Scheduler.schedule_one``, binding inline); cycles take no virtual time;
2. otherwise the clock advances to its next timer, so that whatever is scheduled on it fires at
   its time, in :class:`~kubesched.clock.Phase` order at one instant: a run mode's events (pulls,
   container starts, pod completions, node status refreshes), Permit waits, the queue's flushes,
   workload arrivals, periodic ticks;
3. the run is *quiet* when no pod is poppable and no timer but daemon timers (periodic
   housekeeping, :meth:`~kubesched.clock.VirtualClock.has_pending_work`) is pending. The ``idle``
   hook may decide otherwise (where to go, or to stop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kubesched.clock import VirtualClock
from kubesched.framework.queued_pod_info import QueuedPodInfo

__all__ = ["AdvanceHook", "AttemptHook", "IdleHook", "ReadyHook", "VirtualTimeDriver"]


class _Queue(Protocol):
    def pop(self) -> QueuedPodInfo | None: ...


class _Cycles(Protocol):
    """What the driver needs of a ``Scheduler``: its queue and one scheduling cycle."""

    @property
    def queue(self) -> _Queue: ...

    def schedule_one(self, qpi: QueuedPodInfo) -> None: ...


#: called with the popped pod before or after its scheduling cycle
AttemptHook = Callable[[QueuedPodInfo], None]
#: called when no cycle runs, with the clock's next timer time (daemon timers included; None: no
#: timer); returns the virtual time to advance to, or None to end the run
IdleHook = Callable[[float | None], float | None]
#: whether a scheduling cycle may start now (False: the scheduler is busy; the clock advances)
ReadyHook = Callable[[], bool]
#: called with (now, the time the clock is about to advance to), before it moves
AdvanceHook = Callable[[float, float], None]


class VirtualTimeDriver:
    """Runs ``sched`` on ``clock`` (see the module docstring)."""

    def __init__(self, sched: _Cycles, clock: VirtualClock) -> None:
        self.sched = sched
        self.clock = clock

    def step(
        self, before_attempt: AttemptHook | None = None, after_attempt: AttemptHook | None = None
    ) -> bool:
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

    def _next_work(self, next_timer: float | None) -> float | None:
        """The default idle decision: the next timer while non-daemon work is pending, else quiet."""
        return next_timer if self.clock.has_pending_work() else None

    def run_until_quiet(
        self,
        *,
        max_attempts: int | None = None,
        until: Callable[[], bool] | None = None,
        before_attempt: AttemptHook | None = None,
        after_attempt: AttemptHook | None = None,
        idle: IdleHook | None = None,
        ready: ReadyHook | None = None,
        before_advance: AdvanceHook | None = None,
    ) -> int:
        """Schedule until quiet; returns the number of scheduling cycles run.

        Stops early after ``max_attempts`` cycles, or when ``until()`` is true (checked before each
        cycle). ``ready()`` (checked before each pop) may hold cycles back, e.g. to model the time a
        cycle takes. ``idle`` decides where the clock goes when no cycle runs (default: to the next
        timer while :meth:`~kubesched.clock.VirtualClock.has_pending_work`, and the run ends
        otherwise); the clock never goes back. ``before_advance(now, target)`` sees each move first
        (sampling state that holds until ``target``).
        """
        attempts = 0
        clock = self.clock
        decide = idle if idle is not None else self._next_work
        while max_attempts is None or attempts < max_attempts:
            if until is not None and until():
                break
            if (ready is None or ready()) and self.step(before_attempt, after_attempt):
                attempts += 1
                continue
            target = decide(clock.next_timer_time())
            if target is None:
                break
            now = clock.now()
            target = max(target, now)
            if before_advance is not None:
                before_advance(now, target)
            clock.advance_to(target)
        return attempts
