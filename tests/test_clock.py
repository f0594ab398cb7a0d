"""Tests for kubesched.clock (virtual time, timers, timestamp formatting)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.clock import Phase, RealClock, VirtualClock


def test_virtual_clock_fires_in_time_order_ties_in_insertion_order() -> None:
    clock = VirtualClock(start=100.0)
    fired: list[tuple[str, float]] = []
    clock.call_at(105.0, lambda: fired.append(("c", clock.now())))
    clock.call_later(2.0, lambda: fired.append(("a", clock.now())))
    clock.call_at(105.0, lambda: fired.append(("d", clock.now())))
    clock.call_at(102.0, lambda: fired.append(("b", clock.now())))
    assert clock.next_timer_time() == 102.0
    assert clock.advance_to(104.0) == 2
    assert fired == [("a", 102.0), ("b", 102.0)]
    assert clock.now() == 104.0
    assert clock.next_timer_time() == 105.0
    assert clock.advance_to(110.0) == 2
    assert fired[2:] == [("c", 105.0), ("d", 105.0)]
    assert clock.now() == 110.0
    assert clock.next_timer_time() is None


def test_virtual_clock_cancel_and_run_next() -> None:
    clock = VirtualClock()
    fired: list[str] = []
    t1 = clock.call_at(1.0, lambda: fired.append("one"))
    clock.call_at(2.0, lambda: fired.append("two"))
    assert t1.cancel() is True
    assert t1.cancel() is False
    assert clock.next_timer_time() == 2.0
    assert clock.pending() == 1
    assert clock.run_next() is True
    assert fired == ["two"]
    assert clock.now() == 2.0
    assert clock.run_next() is False
    assert clock.now() == 2.0


def test_virtual_sleep_fires_timers_in_window_including_ones_scheduled_by_callbacks() -> None:
    clock = VirtualClock(start=10.0)
    fired: list[float] = []

    def chain() -> None:
        fired.append(clock.now())
        if len(fired) < 5:
            clock.call_later(1.5, chain)

    clock.call_later(1.0, chain)
    clock.sleep(4.0)
    # 11.0, 12.5, 14.0 are <= 14.0; 15.5 is not.
    assert fired == [11.0, 12.5, 14.0]
    assert clock.now() == 14.0
    assert clock.next_timer_time() == 15.5


def test_virtual_clock_past_timer_fires_at_current_time_and_time_never_goes_back() -> None:
    clock = VirtualClock(start=50.0)
    seen: list[float] = []
    clock.call_at(10.0, lambda: seen.append(clock.now()))
    clock.advance_to(50.0)
    assert seen == [50.0]
    with pytest.raises(ValueError, match="backwards from 50.0 to 40.0"):
        clock.advance_to(40.0)
    assert clock.run_until(40.0) == 0
    assert clock.now() == 50.0


def test_virtual_run_until_none_drains_all_timers() -> None:
    clock = VirtualClock()
    for t in (3.0, 1.0, 2.0):
        clock.call_at(t, lambda: None)
    assert clock.run_until() == 3
    assert clock.now() == 3.0


@given(st.lists(st.tuples(st.floats(0, 1000, allow_nan=False), st.integers(0, 3)), max_size=40))
def test_virtual_clock_order_is_sorted_by_time_then_insertion(entries: list[tuple[float, int]]) -> None:
    clock = VirtualClock()
    fired: list[int] = []
    for i, (when, _) in enumerate(entries):
        clock.call_at(when, lambda i=i: fired.append(i))  # type: ignore[misc]
    clock.advance_to(1000.0)
    assert fired == sorted(range(len(entries)), key=lambda i: (entries[i][0], i))


def test_real_clock_timer_fires_and_cancel_prevents() -> None:
    clock = RealClock()
    done = threading.Event()
    cancelled_ran: list[bool] = []
    t = clock.call_later(30.0, lambda: cancelled_ran.append(True))
    assert t.cancel() is True
    clock.call_later(0.0, done.set)
    assert done.wait(10.0)
    clock.close()
    assert cancelled_ran == []


def test_daemon_timers_are_not_pending_work_but_fire_in_time_order() -> None:
    clock = VirtualClock(0.0)
    fired: list[tuple[str, float]] = []
    clock.call_at(30.0, lambda: fired.append(("flush", clock.now())), daemon=True)
    clock.call_at(10.0, lambda: fired.append(("tick", clock.now())), daemon=True)
    assert (clock.has_pending_work(), clock.pending(), clock.next_timer_time()) == (False, 2, 10.0)
    work = clock.call_at(45.0, lambda: fired.append(("pull", clock.now())))
    assert clock.has_pending_work()
    clock.advance_to(45.0)  # moving for the work passes both daemons, in order
    assert fired == [("tick", 10.0), ("flush", 30.0), ("pull", 45.0)]
    assert not clock.has_pending_work() and work.cancel() is False
    later = clock.call_later(5.0, lambda: None)
    assert clock.has_pending_work() and later.cancel() is True and not clock.has_pending_work()
    assert later.cancel() is False and not clock.has_pending_work()  # counted once


def test_same_instant_timers_fire_by_phase_then_scheduling_order() -> None:
    clock = VirtualClock(0.0)
    fired: list[str] = []
    clock.call_at(5.0, lambda: fired.append("tick"), daemon=True, phase=Phase.TICK)
    clock.call_at(5.0, lambda: fired.append("arrival"), phase=Phase.ARRIVAL)
    clock.call_at(
        5.0, lambda: fired.append("unschedulable flush"), daemon=True, phase=Phase.UNSCHEDULABLE_FLUSH
    )
    clock.call_at(5.0, lambda: fired.append("backoff flush"), phase=Phase.BACKOFF_FLUSH)

    def event() -> None:
        fired.append("event 1")
        clock.call_at(5.0, lambda: fired.append("event 3"))  # same instant: still before the later phases

    clock.call_at(5.0, event)
    clock.call_at(5.0, lambda: fired.append("event 2"))
    clock.call_at(4.0, lambda: fired.append("earlier"), phase=Phase.TICK)
    clock.advance_to(5.0)
    assert fired == [
        "earlier",
        "event 1",
        "event 2",
        "event 3",
        "backoff flush",
        "unschedulable flush",
        "arrival",
        "tick",
    ]


def test_real_clock_accepts_the_virtual_options() -> None:
    clock = RealClock()
    try:
        done = threading.Event()
        clock.call_later(0.0, done.set, daemon=True, phase=Phase.TICK)
        assert done.wait(5.0)
    finally:
        clock.close()


def test_an_earlier_phase_scheduled_for_the_target_instant_waits_for_the_next_advance() -> None:
    clock = VirtualClock(0.0)
    fired: list[str] = []

    def arrival() -> None:
        fired.append("arrival")
        clock.call_at(5.0, lambda: fired.append("event from the arrival"))  # phase EVENT, now

    clock.call_at(5.0, arrival, phase=Phase.ARRIVAL)
    clock.call_at(5.0, lambda: fired.append("tick"), phase=Phase.TICK)
    assert clock.advance_to(5.0) == 2 and fired == ["arrival", "tick"]
    assert clock.next_timer_time() == 5.0 and clock.has_pending_work()  # left for the next advance
    assert clock.advance_to(5.0) == 1 and fired[-1] == "event from the arrival"
    # an advance past the instant fires it in the same call (the instant is not its target)
    clock.call_at(7.0, lambda: clock.call_at(7.0, lambda: fired.append("late event")), phase=Phase.TICK)
    assert clock.advance_to(8.0) == 2 and fired[-1] == "late event" and clock.now() == 8.0
