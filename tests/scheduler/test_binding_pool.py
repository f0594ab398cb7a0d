"""BindingPool: the binding executor of ``kubesched run`` (threads on demand, bounded in flight)."""

from __future__ import annotations

import threading

from kubesched.scheduler.core import BindingPool


def _names() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("binding_")}


def test_runs_every_cycle_on_at_most_max_workers_threads() -> None:
    before = _names()
    pool = BindingPool(max_workers=3, max_in_flight=8)
    gate = threading.Event()
    ran: list[int] = []
    lock = threading.Lock()

    def cycle(i: int) -> None:
        gate.wait(5)
        with lock:
            ran.append(i)

    for i in range(8):
        pool(lambda i=i: cycle(i))
    assert pool.in_flight() == 8
    assert len(_names() - before) == 3  # three started, the other five cycles queue
    gate.set()
    pool.shutdown(wait=True)
    assert sorted(ran) == list(range(8))
    assert pool.in_flight() == 0
    assert _names() - before == set()


def test_free_thread_is_reused_and_a_failing_cycle_does_not_kill_it() -> None:
    before = _names()
    pool = BindingPool(max_workers=4)
    done = threading.Event()

    def boom() -> None:
        raise RuntimeError("bind failed")

    pool(boom)
    # wait until the first cycle finished, then the next one takes the same thread
    while pool.in_flight():
        threading.Event().wait(0.01)
    pool(done.set)
    assert done.wait(5)
    assert len(_names() - before) == 1
    pool.shutdown(wait=True)


def test_halt_drops_queued_and_later_cycles() -> None:
    pool = BindingPool(max_workers=1)
    gate = threading.Event()
    ran: list[str] = []
    started = threading.Event()
    pool(lambda: (started.set(), gate.wait(5), ran.append("first")))
    assert started.wait(5)
    pool(lambda: ran.append("queued"))
    pool.halt()
    pool(lambda: ran.append("later"))
    gate.set()
    pool.shutdown(wait=True)
    assert ran == ["first"]
    assert pool.in_flight() == 0


def test_after_shutdown_cycles_are_dropped() -> None:
    pool = BindingPool(max_workers=2)
    pool.shutdown(wait=True)
    ran: list[int] = []
    pool(lambda: ran.append(1))
    assert ran == [] and pool.in_flight() == 0
