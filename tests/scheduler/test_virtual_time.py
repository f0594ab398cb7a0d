"""The virtual-time lifecycle: ``Scheduler.run_until_quiet`` schedules until nothing is poppable and
no timer is pending, fires the clock's timers at their times, and stops on its bounds."""

from __future__ import annotations

import pytest

from kubesched.clock import RealClock, VirtualClock
from kubesched.cluster.memory import MemoryCluster
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
    assert sched.run_until_quiet() == 3          # two fit (800m of 1 cpu), the third is unschedulable
    assert _bound(cluster) == ["p0", "p1"]
    assert clock.now() == T0                     # nothing on the clock: no time passed
    assert sched.run_until_quiet() == 0          # quiet stays quiet


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
