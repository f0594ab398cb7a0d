"""Clocks: the only source of time in kubesched.

Nothing in kubesched calls ``time.time()`` directly: backoff, unschedulable
timeouts, Permit waits, lease renewals, timestamps written to objects and the
kubelet model all take a :class:`Clock`. Upstream kube-scheduler does the same
with ``k8s.io/utils/clock`` (``clock.Clock`` / ``clock/testing.FakeClock``).

Two implementations:

* :class:`RealClock` -- wall time (``time.time()``) for ``now()``; timers fire
  on one daemon thread, their delays measured with ``time.monotonic()`` so a
  wall-clock jump does not shift them.
* :class:`VirtualClock` -- time moves only when a driver calls
  :meth:`VirtualClock.advance_to`, :meth:`VirtualClock.run_until`,
  :meth:`VirtualClock.run_next` or :meth:`VirtualClock.sleep`; timers sit in a
  heap and fire in time order, ties by :class:`Phase`, then in scheduling
  order. The simulator, the replay and the benchmark run on it, so runs are
  reproducible.

Two timer options matter only on the virtual clock (the real clock accepts and
ignores them): ``daemon`` timers (periodic housekeeping: the queue's
unschedulable-pods flush, a planner's ticks) fire when time passes them but do
not by themselves keep a virtual-time run going
(:meth:`VirtualClock.has_pending_work`); ``phase`` orders timers due at the
same instant (:class:`Phase`).

All times are seconds (float). ``now()`` is seconds since the Unix epoch for
the real clock and an arbitrary origin (default 0.0) for the virtual clock.
Timestamp text (``metav1.Time`` / ``metav1.MicroTime``) is :mod:`kubesched.api.timestamps`.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from enum import IntEnum
from typing import Protocol

__all__ = [
    "Clock",
    "Phase",
    "Timer",
    "RealClock",
    "VirtualClock",
]

_log = logging.getLogger(__name__)

Callback = Callable[[], object]


class Phase(IntEnum):
    """Order of :class:`VirtualClock` timers due at the same instant (lower first; within a phase,
    scheduling order). The events of an instant come first, so that the background loops see
    them: the scheduling queue's backoff flush, then its unschedulable-pods flush
    (``pkg/scheduler/backend/queue/scheduling_queue.go``: ``flushBackoffQCompleted``,
    ``flushUnschedulablePodsLeftover``), then a run mode's workload arrivals, then periodic ticks
    (pre-pull planners). A timer a callback schedules for the current instant fires in the same
    advance, by its own phase."""

    EVENT = 0
    BACKOFF_FLUSH = 1
    UNSCHEDULABLE_FLUSH = 2
    ARRIVAL = 3
    TICK = 4


class Timer(Protocol):
    """A scheduled callback; ``when`` is the clock time (seconds) it fires at."""

    @property
    def when(self) -> float: ...

    def cancel(self) -> bool:
        """Cancel the timer; returns True if it had not fired or been cancelled yet."""
        ...


class Clock(Protocol):
    """Source of time and timers (upstream ``k8s.io/utils/clock.WithTicker``)."""

    def now(self) -> float:
        """Current time in seconds."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block (real) or advance time firing due timers (virtual) for ``seconds``."""
        ...

    def call_at(
        self, when: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        """Run ``callback()`` once at clock time ``when`` (seconds); past times fire as soon as possible.
        ``daemon`` and ``phase``: see the module docstring (virtual clock only)."""
        ...

    def call_later(
        self, delay: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        """Run ``callback()`` once ``delay`` seconds from now (``call_at(now() + delay, ...)``)."""
        ...


class _HeapTimer:
    """Timer entry shared by both clocks; ordered by (when, phase, seq).

    ``owner`` is the :class:`VirtualClock` counting it as pending work (a non-daemon timer of a
    virtual clock), else None."""

    __slots__ = ("when", "phase", "seq", "callback", "cancelled", "fired", "_deadline", "owner")

    def __init__(
        self,
        when: float,
        seq: int,
        callback: Callback,
        deadline: float = 0.0,
        phase: int = 0,
        owner: VirtualClock | None = None,
    ) -> None:
        self.when = when
        self.phase = phase
        self.seq = seq
        self.callback = callback
        self.cancelled = False
        self.fired = False
        self._deadline = deadline  # monotonic deadline (RealClock only)
        self.owner = owner

    def __lt__(self, other: _HeapTimer) -> bool:
        if self.when != other.when:
            return self.when < other.when
        if self.phase != other.phase:
            return self.phase < other.phase
        return self.seq < other.seq

    def cancel(self) -> bool:
        if self.cancelled or self.fired:
            return False
        self.cancelled = True
        if self.owner is not None:
            self.owner._work_done()
        return True

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "fired" if self.fired else "pending"
        return f"<Timer when={self.when} {state}>"


def _run_callback(timer: _HeapTimer) -> None:
    timer.fired = True
    if timer.owner is not None:
        timer.owner._work_done()
    timer.callback()


class RealClock:
    """Wall-clock time; timers run on a single daemon thread.

    ``now()`` is ``time.time()``. ``call_at(when)`` converts ``when`` to a
    ``time.monotonic()`` deadline at scheduling time. Callbacks run on the timer
    thread, one at a time, in deadline order; an exception in a callback is
    logged and does not stop the thread. :meth:`close` stops the thread
    (pending timers are dropped).

    ``speed`` > 1 makes a sped-up clock: time starts at the wall clock when the clock is made and
    then runs ``speed`` times faster (``now() = t0 + speed * (time.time() - t0)``); delays, sleeps
    and timers are in that clock's seconds (a 30 s timer fires after 30 / ``speed`` wall seconds).
    Raises ValueError for ``speed`` <= 0.
    """

    def __init__(self, speed: float = 1.0) -> None:
        if not speed > 0:
            raise ValueError(f"clock speed must be > 0, got {speed!r}")
        self.speed = float(speed)
        self._t0 = time.time()
        self._m0 = time.monotonic()
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _HeapTimer]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def now(self) -> float:
        if self.speed == 1.0:
            return time.time()
        return self._t0 + (time.time() - self._t0) * self.speed

    def monotonic(self) -> float:
        """Monotonic seconds (in this clock's speed), for measuring intervals."""
        if self.speed == 1.0:
            return time.monotonic()
        return self._m0 + (time.monotonic() - self._m0) * self.speed

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds / self.speed)

    def call_at(
        self, when: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        return self.call_later(when - self.now(), callback)

    def call_later(
        self, delay: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        """See :meth:`Clock.call_later`; ``daemon`` and ``phase`` have no meaning on wall time."""
        seq = next(self._seq)
        delay = max(0.0, delay)
        deadline = time.monotonic() + delay / self.speed
        timer = _HeapTimer(self.now() + delay, seq, callback, deadline)
        with self._cond:
            if self._closed:
                raise RuntimeError("RealClock is closed")
            heapq.heappush(self._heap, (deadline, seq, timer))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="kubesched-clock", daemon=True)
                self._thread.start()
            self._cond.notify()
        return timer

    def close(self) -> None:
        """Stop the timer thread; pending timers never fire."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        timer = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(wait)
            if timer.cancelled:
                continue
            try:
                _run_callback(timer)
            except Exception:  # a timer callback must not kill the clock thread
                _log.exception("timer callback %r failed", timer.callback)


class VirtualClock:
    """Virtual time driven explicitly (upstream ``clock/testing.FakeClock``).

    Time only changes when the driver calls :meth:`advance_to`,
    :meth:`run_until`, :meth:`run_next` or :meth:`sleep`. Timers fire in order
    of ``when``, ties by :class:`Phase`, then in the order they were scheduled;
    while a timer fires, ``now()`` equals its ``when`` (or the current time if it
    was scheduled in the past). Callbacks may schedule more timers; those that
    fall inside the window being advanced fire in the same call. Time never
    goes backwards.

    A *daemon* timer fires like any other when time passes it, but is not
    pending work: :meth:`has_pending_work` is False when only daemon timers are
    left, which is how a virtual-time run
    (:class:`~kubesched.scheduler.virtual_time.VirtualTimeDriver`) knows it is
    quiet although periodic housekeeping is still scheduled.

    Callbacks run on the thread that moves time; exceptions propagate to that
    caller (the timer counts as fired). The heap is guarded by a lock so other
    threads may schedule or cancel timers.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._heap: list[_HeapTimer] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._work = 0  # non-daemon timers neither fired nor cancelled

    def now(self) -> float:
        return self._now

    def call_at(
        self, when: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        """Run ``callback()`` at ``when`` (see the class docstring for ``daemon`` and ``phase``)."""
        timer = _HeapTimer(
            float(when), next(self._seq), callback, phase=int(phase), owner=None if daemon else self
        )
        with self._lock:
            heapq.heappush(self._heap, timer)
            if not daemon:
                self._work += 1
        return timer

    def call_later(
        self, delay: float, callback: Callback, *, daemon: bool = False, phase: Phase = Phase.EVENT
    ) -> Timer:
        return self.call_at(self._now + delay, callback, daemon=daemon, phase=phase)

    def _work_done(self) -> None:
        with self._lock:
            self._work -= 1

    def next_timer_time(self) -> float | None:
        """``when`` of the earliest pending timer (daemon or not), or None when no timer is pending."""
        with self._lock:
            heap = self._heap
            while heap and heap[0].cancelled:
                heapq.heappop(heap)
            return heap[0].when if heap else None

    def has_pending_work(self) -> bool:
        """Whether a non-daemon timer is pending (neither fired nor cancelled)."""
        return self._work > 0

    def pending_work(self) -> int:
        """Number of non-daemon timers pending (neither fired nor cancelled)."""
        return self._work

    def pending(self) -> int:
        """Number of timers (daemon ones included) not yet fired nor cancelled."""
        with self._lock:
            return sum(1 for t in self._heap if not t.cancelled)

    def _pop_due(
        self, limit: float | None, min_phase: int = 0, deferred: list[_HeapTimer] | None = None
    ) -> _HeapTimer | None:
        """The next timer due at or before ``limit``. One that would fire at ``limit`` in a phase
        below ``min_phase`` goes to ``deferred`` instead (see :meth:`advance_to`)."""
        with self._lock:
            heap = self._heap
            while heap:
                top = heap[0]
                if top.cancelled:
                    heapq.heappop(heap)
                    continue
                if limit is not None:
                    if top.when > limit:
                        return None
                    if deferred is not None and top.phase < min_phase and max(top.when, self._now) >= limit:
                        deferred.append(heapq.heappop(heap))
                        continue
                return heapq.heappop(heap)
            return None

    def _fire(self, timer: _HeapTimer) -> None:
        if timer.when > self._now:
            self._now = timer.when
        _run_callback(timer)

    def run_next(self) -> bool:
        """Advance to the earliest pending timer and fire it; False if none is pending."""
        timer = self._pop_due(None)
        if timer is None:
            return False
        self._fire(timer)
        return True

    def advance_to(self, t: float) -> int:
        """Fire every timer due at or before ``t`` (in order), then set ``now()`` to ``t``.

        At the instant ``t`` itself phases never go back within one call: a timer that a callback
        of a later phase schedules for ``t`` in an earlier phase (e.g. a pull a planner tick starts
        that ends at once) is left for the next call, so a driver runs that instant's scheduling
        cycles first (:class:`~kubesched.scheduler.virtual_time.VirtualTimeDriver` then advances
        to ``t`` again).

        Returns the number of timers fired. Raises ValueError if ``t`` is earlier than ``now()``.
        """
        if t < self._now:
            raise ValueError(f"cannot move virtual time backwards from {self._now} to {t}")
        fired = 0
        phase = 0  # the phase of the last timer fired at the instant t
        deferred: list[_HeapTimer] = []
        try:
            while True:
                timer = self._pop_due(t, phase, deferred)
                if timer is None:
                    break
                if max(timer.when, self._now) >= t:
                    phase = timer.phase
                self._fire(timer)
                fired += 1
        finally:
            if deferred:
                with self._lock:
                    for timer in deferred:
                        heapq.heappush(self._heap, timer)
        if t > self._now:
            self._now = t
        return fired

    def run_until(self, t: float | None = None) -> int:
        """Like :meth:`advance_to` but never raises for a past ``t`` (then fires only overdue timers);
        with ``t=None`` fires timers until none is left (time ends at the last one). Returns timers fired.
        """
        if t is None:
            fired = 0
            while self.run_next():
                fired += 1
            return fired
        return self.advance_to(max(t, self._now))

    def sleep(self, seconds: float) -> None:
        """Advance time by ``seconds`` (>= 0), firing timers due in that window."""
        self.advance_to(self._now + max(0.0, seconds))

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now}, pending={self.pending()})"
