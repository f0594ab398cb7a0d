"""The virtual-time lifecycle: ``Scheduler.run_until_quiet`` schedules until nothing is poppable and
no timer is pending, fires the clock's timers at their times, and stops on its bounds."""

from __future__ import annotations

import pytest

from kubesched.clock import RealClock, VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.scheduler import new_scheduler
from kubesched.testing import node_manifest, pod_manifest

T0 = 1_000_000.0


def _env(pods: int) -> tuple[VirtualClock, MemoryCluster, object]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.create(node_manifest("n1", cpu="1"))
    for i in range(pods):
        cluster.create(pod_manifest(f"p{i}", cpu="400m"))
    sched = new_scheduler(cluster, None, clock=clock, seed=1)
    sched.start()
    return clock, cluster, sched


def _bound(cluster: MemoryCluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in cluster.list("Pod").items if p["spec"].get("nodeName"))


def test_runs_until_quiet() -> None:
    clock, cluster, sched = _env(3)
    assert sched.run_until_quiet() == 3  # two fit (800m of 1 cpu), the third is unschedulable
    assert _bound(cluster) == ["p0", "p1"]
    assert clock.now() == T0  # nothing on the clock: no time passed
    assert sched.run_until_quiet() == 0  # quiet stays quiet


def test_timers_fire_at_their_time_and_bounds_stop() -> None:
    clock, cluster, sched = _env(0)
    clock.call_later(30.0, lambda: cluster.create(pod_manifest("late", cpu="100m")))
    seen: list[tuple[str, float]] = []
    n = sched.run_until_quiet(after_attempt=lambda q: seen.append((q.pod.name, clock.now())))
    assert n == 1 and seen == [("late", T0 + 30.0)] and _bound(cluster) == ["late"]
    clock, cluster, sched = _env(3)
    assert sched.run_until_quiet(max_attempts=1) == 1
    assert sched.run_until_quiet(until=lambda: True) == 0
    clock.call_later(5.0, lambda: None)
    assert sched.run_until_quiet(idle=lambda nxt: None) == 2  # the idle hook keeps the clock where it is
    assert clock.now() == T0


def test_needs_a_virtual_clock_and_stops() -> None:
    clock = RealClock()
    try:
        sched = new_scheduler(MemoryCluster(clock), None, clock=clock, seed=1)
        with pytest.raises(TypeError, match="run_until_quiet needs a VirtualClock"):
            sched.run_until_quiet()
        sched.start()
        sched.stop()
        assert sched.queue.closed
    finally:
        clock.close()


def test_only_daemon_timers_left_is_quiet() -> None:
    clock, cluster, sched = _env(0)
    ticks: list[float] = []

    def tick() -> None:
        ticks.append(clock.now())
        clock.call_later(10.0, tick, daemon=True)

    clock.call_later(10.0, tick, daemon=True)
    assert sched.run_until_quiet() == 0 and clock.now() == T0 and ticks == []  # housekeeping alone: quiet
    clock.call_later(25.0, lambda: cluster.create(pod_manifest("late", cpu="100m")))
    seen: list[float] = []
    assert sched.run_until_quiet(after_attempt=lambda q: seen.append(clock.now())) == 1
    # moving to the work passed the daemon ticks on the way, in time order; then quiet again
    assert ticks == [T0 + 10.0, T0 + 20.0] and seen == [T0 + 25.0] and clock.now() == T0 + 25.0


def test_ready_and_before_advance_hooks() -> None:
    clock, cluster, sched = _env(3)
    busy_until = [T0]
    seen: list[float] = []
    moves: list[tuple[float, float]] = []

    def before(q: object) -> None:
        busy_until[0] = clock.now() + 2.0
        clock.call_at(busy_until[0], lambda: None)  # the scheduler is free again then

    n = sched.run_until_quiet(
        before_attempt=before,
        after_attempt=lambda q: seen.append(clock.now() - T0),
        ready=lambda: clock.now() >= busy_until[0],
        before_advance=lambda now, to: moves.append((now - T0, to - T0)),
    )
    assert n == 3 and seen == [0.0, 2.0, 4.0]
    assert moves == [(0.0, 2.0), (2.0, 4.0), (4.0, 6.0)]
    assert _bound(cluster) == ["p0", "p1"]


def test_queue_flushes_run_on_the_clock_when_started_with_them() -> None:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.create(node_manifest("n1", cpu="1"))
    cluster.create(pod_manifest("big", cpu="2"))
    sched = new_scheduler(cluster, None, clock=clock, seed=1)
    sched.start(queue_flushes=True)
    attempts: list[float] = []
    assert sched.run_until_quiet(after_attempt=lambda q: attempts.append(clock.now() - T0)) == 1
    # unschedulable: only the (daemon) unschedulable flush is armed, so the run is quiet
    assert clock.next_timer_time() == T0 + 0.0 and not clock.has_pending_work()
    clock.call_at(T0 + 330.0, lambda: None)  # some work later: the flushes on the way retry the pod
    sched.run_until_quiet(after_attempt=lambda q: attempts.append(clock.now() - T0))
    assert attempts == [0.0, 330.0]  # UnschedulableTimeout: unschedulable for more than 300 s
    sched.stop()
    assert clock.next_timer_time() is None
