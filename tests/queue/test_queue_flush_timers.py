"""The queue's two background flushes on the clock (``pkg/scheduler/backend/queue/scheduling_queue.go``
``Run``: ``flushBackoffQCompleted`` every second, ``flushUnschedulablePodsLeftover`` every 30 s):
their timers are armed only while there is something to flush, at the ticks of the 1 s / 30 s
loops that can do something, and they release exactly what those loops release."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.clock import VirtualClock
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.queue import PriorityQueue, QueueError
from kubesched.testing import make_pod
from tests.queue.test_queue_priority_queue import NODE_ADD, fail, make_queue, where


def _pop(q: PriorityQueue) -> QueuedPodInfo:
    p = q.pop()
    assert p is not None
    return p


def test_no_timer_without_something_to_flush() -> None:
    q, clock = make_queue(VirtualClock(100.0))
    q.run()
    q.add(make_pod("a"))
    assert clock.next_timer_time() is None and q.len_active() == 1
    _pop(q)
    q.done(_pop.__name__)  # an unknown uid: nothing changes
    assert clock.next_timer_time() is None


def test_backoff_flush_at_the_first_whole_second_after_expiry_and_keeps_a_run_alive() -> None:
    q, clock = make_queue(VirtualClock(100.0))
    q.run()
    clock.advance_to(100.5)
    q.add(make_pod("a"))
    fail(q, _pop(q))  # error: the error heap, expiry floor(101.5) = 101
    assert q.next_backoff_expiry() == 101.0
    assert (clock.next_timer_time(), clock.pending(), clock.has_pending_work()) == (102.0, 1, True)
    clock.advance_to(101.999)
    assert where(q, "default/a") == "backoff"
    clock.advance_to(102.0)
    assert where(q, "default/a") == "active"
    assert (clock.next_timer_time(), clock.has_pending_work()) == (None, False)  # nothing left: disarmed


def test_backoff_timer_moves_to_an_earlier_expiry_and_goes_when_the_queue_empties() -> None:
    q, clock = make_queue()
    q.run()
    q.add(make_pod("long"))
    p = _pop(q)
    p.consecutive_errors_count = 3  # the next error backs off 8 s
    fail(q, p)
    assert clock.next_timer_time() == 9.0  # expiry floor(0 + 8) = 8
    clock.advance_to(3.0)
    q.add(make_pod("short"))
    fail(q, _pop(q))  # 1 s: expiry 4
    assert (clock.next_timer_time(), clock.pending()) == (5.0, 1)
    q.delete(make_pod("short"))
    assert (clock.next_timer_time(), clock.pending()) == (9.0, 1)
    q.delete(make_pod("long"))
    assert (clock.next_timer_time(), clock.pending(), clock.has_pending_work()) == (None, 0, False)


def test_unschedulable_flush_is_a_daemon_on_a_30s_grid_from_run() -> None:
    q, clock = make_queue(VirtualClock(1000.0))
    q.run()
    clock.advance_to(1012.5)
    q.add(make_pod("a"))
    fail(q, _pop(q), plugins=("NodeResourcesFit",))
    assert where(q, "default/a") == "unschedulable"
    # the next grid point (1000 + 30 k) at or after now; a daemon: no pending work
    assert (clock.next_timer_time(), clock.has_pending_work()) == (1030.0, False)
    clock.advance_to(1300.0)  # flushes at 1030 ... 1300 found it younger than 300 s
    assert where(q, "default/a") == "unschedulable" and clock.next_timer_time() == 1330.0
    clock.advance_to(1330.0)  # 317.5 s > 300 s: UnschedulableTimeout
    assert where(q, "default/a") == "active"
    assert clock.next_timer_time() is None  # no unschedulable pod left: disarmed


def test_unschedulable_flush_disarmed_when_the_pods_leave_and_rearmed_past_the_last_flush() -> None:
    q, clock = make_queue()
    q.run()
    q.add(make_pod("a"))
    fail(q, _pop(q), plugins=("NodeResourcesFit",))
    assert clock.next_timer_time() == 0.0  # the grid point of now has not been flushed yet
    clock.advance_to(0.0)
    assert clock.next_timer_time() == 30.0
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})  # leaves for the backoffQ (1 s)
    assert where(q, "default/a") == "backoff" and clock.next_timer_time() == 2.0  # only the backoff flush
    clock.advance_to(2.0)
    fail(q, _pop(q), plugins=("NodeResourcesFit",))
    assert clock.next_timer_time() == 30.0


# --- the lazy timers release exactly what the 1 s and 30 s loops release -------------------------

_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "pop", "fail", "fail_err", "done", "event", "delete", "tick"]),
        st.integers(0, 4),
        st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 7.0, 30.0, 301.0]),
    ),
    max_size=50,
)


def _eager_advance(q: PriorityQueue, clock: VirtualClock, target: float) -> None:
    """Advance a queue without loops to ``target`` running both flushes at every tick of the 1 s
    (whole seconds) and 30 s (grid from 0) loops, backoff flush first at a shared instant."""
    t = clock.now()
    ticks = sorted({float(s) for s in range(math.floor(t) + 1, math.floor(target) + 1)})
    for s in ticks:
        clock.advance_to(s)
        q.flush_backoff_q_completed()
        if s % 30 == 0:
            q.flush_unschedulable_pods_leftover()
    clock.advance_to(target)


def _state(q: PriorityQueue) -> tuple[list[str], str]:
    pods, summary = q.pending_pods()
    return [p.key for p in pods], summary


@settings(max_examples=200, deadline=None)
@given(_STEPS)
def test_lazy_flush_timers_match_the_periodic_loops(steps: list[tuple[str, int, float]]) -> None:
    lazy, clock = make_queue()
    lazy.run()
    eager, eager_clock = make_queue()
    eager.flush_unschedulable_pods_leftover()  # the 30 s loop's first flush, at run()
    popped: dict[str, tuple[QueuedPodInfo, QueuedPodInfo]] = {}
    for op, i, dt in steps:
        name = f"p{i}"
        if op == "add":
            lazy.add(make_pod(name))
            eager.add(make_pod(name))
        elif op == "pop":
            a, b = lazy.pop(), eager.pop()
            assert (a is None) == (b is None)
            if a is not None and b is not None:
                assert a.key == b.key
                popped[a.key] = (a, b)
        elif op in ("fail", "fail_err", "done") and popped:
            k = sorted(popped)[i % len(popped)]
            a, b = popped.pop(k)
            if op == "done":
                lazy.done(a.pod.uid)
                eager.done(b.pod.uid)
                continue
            plugins = ("NodeResourcesFit",) if op == "fail" else ()
            for q, p in ((lazy, a), (eager, b)):
                try:
                    fail(q, p, plugins=plugins)
                except QueueError:
                    pass
        elif op == "event":
            lazy.move_all_to_active_or_backoff(NODE_ADD, None, {})
            eager.move_all_to_active_or_backoff(NODE_ADD, None, {})
        elif op == "delete":
            lazy.delete(make_pod(name))
            eager.delete(make_pod(name))
        elif op == "tick":
            target = clock.now() + dt
            clock.advance_to(target)
            _eager_advance(eager, eager_clock, target)
        assert _state(lazy) == _state(eager)
        # armed only with something to flush; only the backoff flush is pending work
        assert clock.has_pending_work() == (lazy.len_backoff() > 0)
        daemons = clock.pending() - (lazy.len_backoff() > 0)
        if lazy.len_unschedulable() > 0:
            assert daemons == 1
        else:  # at most the flush due at this very instant (it finds nothing)
            assert daemons == 0 or (daemons == 1 and clock.next_timer_time() == clock.now())
