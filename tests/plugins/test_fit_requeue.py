"""A pod that needs a large node is retried only when a deletion frees room for it
(``NodeResourcesFit.is_schedulable_after_pod_event`` over the scheduler cache), through the real
scheduler, queue and event handlers on an embedded cluster."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.scheduler import new_scheduler
from kubesched.testing import node_manifest

T0 = 1_700_000_000.0


def pod(name: str, cpu: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
        "spec": spec,
    }


def drain(sched: Any, clock: VirtualClock) -> int:
    """Run cycles until nothing is poppable, flushing the backoff queue second by second."""
    attempts = 0
    for _ in range(60):
        while sched.schedule_next():
            attempts += 1
        clock.advance_to(clock.now() + 1.0)
        sched.queue.flush_backoff_q_completed()
    return attempts


def test_big_pod_waits_for_room_without_retries() -> None:
    clock = VirtualClock(T0)
    mc = MemoryCluster(clock)
    mc.load([node_manifest("big", cpu="8"), node_manifest("small", cpu="2")])
    for i in range(4):
        mc.create(pod(f"s{i}", "500m", "small"))
    mc.create(pod("b0", "4", "big"))
    mc.create(pod("b1", "2", "big"))
    sched = new_scheduler(mc, None, clock=clock, seed=0, record=False)
    sched.start()
    mc.create(pod("whole", "6"))
    assert drain(sched, clock) == 1  # tried once: 2 of 8 cpus free on big
    assert sched.queue.len_unschedulable() == 1
    for i in range(4):  # deletions on the small node cannot help
        mc.delete("Pod", "default", f"s{i}")
    mc.delete("Pod", "default", "b1")  # big: 4 free, still short of 6
    assert drain(sched, clock) == 0
    assert sched.queue.len_unschedulable() == 1
    mc.delete("Pod", "default", "b0")  # big is empty now
    assert drain(sched, clock) == 1
    assert mc.get("Pod", "default", "whole")["spec"]["nodeName"] == "big"
