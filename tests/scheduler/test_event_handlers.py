"""The informer event handlers on their own (``pkg/scheduler/eventhandlers.go``): which pods go to
the queue and which to the cache, what a binding or a deletion moves, node update events, and
that a pod is parsed once per resourceVersion."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.clock import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.framework.events import ActionType
from kubesched.scheduler import new_scheduler
from kubesched.scheduler.event_handlers import node_update_events
from kubesched.testing import node_manifest, pod_manifest


@pytest.fixture
def env() -> tuple[MemoryCluster, Any]:
    clock = VirtualClock(1_000_000.0)
    cluster = MemoryCluster(clock)
    sched = new_scheduler(cluster, None, clock=clock, seed=1)
    sched.start()
    return cluster, sched


def test_pending_pods_of_our_profiles_are_queued_bound_pods_cached(env: tuple[MemoryCluster, Any]) -> None:
    cluster, sched = env
    cluster.create(node_manifest("n1"))
    cluster.create(pod_manifest("mine", cpu="100m"))
    other = pod_manifest("theirs", cpu="100m")
    other["spec"]["schedulerName"] = "someone-else"
    cluster.create(other)
    bound = pod_manifest("running", cpu="1")
    bound["spec"]["nodeName"] = "n1"
    cluster.create(bound)
    assert sched.queue.len_active() == 1
    assert sched.queue.get("default/mine") is not None and sched.queue.get("default/theirs") is None
    assert (sched.cache.node_count(), sched.cache.pod_count()) == (1, 1)


def test_binding_moves_a_pod_from_queue_to_cache(env: tuple[MemoryCluster, Any]) -> None:
    cluster, sched = env
    cluster.create(node_manifest("n1"))
    cluster.create(pod_manifest("web", cpu="100m"))
    assert sched.schedule_next()
    assert cluster.get("Pod", "default", "web")["spec"]["nodeName"] == "n1"
    assert sched.queue.len_active() == 0 and sched.queue.get("default/web") is None
    assert sched.cache.pod_count() == 1 and sched.cache.assumed_pod_count() == 0  # the watch confirmed it
    cluster.delete("Pod", "default", "web")
    assert sched.cache.pod_count() == 0


def test_node_delete_leaves_the_cache(env: tuple[MemoryCluster, Any]) -> None:
    cluster, sched = env
    cluster.create(node_manifest("n1"))
    cluster.create(node_manifest("n2"))
    cluster.delete("Node", None, "n1")
    assert sched.cache.node_count() == 1


def test_pods_are_parsed_once_per_resource_version(env: tuple[MemoryCluster, Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, sched = env
    calls: list[str] = []
    original = Pod.from_manifest.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Pod], obj: Any) -> Pod:
        calls.append(obj["metadata"]["resourceVersion"])
        return original(cls, obj)
    monkeypatch.setattr(Pod, "from_manifest", classmethod(counting))
    cluster.create(pod_manifest("web", cpu="100m"))
    obj = cluster.get("Pod", "default", "web")
    for _ in range(3):
        sched.handlers.parsed_pod(obj)
    assert calls == [obj["metadata"]["resourceVersion"]]


def _node(**changes: Any) -> Node:
    m = node_manifest("n1")
    m["metadata"].setdefault("labels", {}).update(changes.pop("labels", {}))
    m["spec"] = {**m.get("spec", {}), **changes.pop("spec", {})}
    m["status"]["allocatable"].update(changes.pop("allocatable", {}))
    return Node.from_manifest(m)


def test_node_update_events() -> None:
    base = _node()
    assert node_update_events(base, _node()) == []
    assert [e.action_type for e in node_update_events(base, _node(labels={"zone": "a"}))] == [ActionType.UpdateNodeLabel]
    assert [e.action_type for e in node_update_events(base, _node(allocatable={"cpu": "8"}))] == [
        ActionType.UpdateNodeAllocatable]
    tainted = _node(spec={"taints": [{"key": "k", "effect": "NoSchedule"}]})
    assert [e.action_type for e in node_update_events(base, tainted)] == [ActionType.UpdateNodeTaint]
    cordoned = _node(spec={"unschedulable": True})
    assert node_update_events(base, cordoned) == []                 # cordoning cannot help a pending pod
    assert [e.action_type for e in node_update_events(cordoned, base)] == [ActionType.UpdateNodeTaint]  # uncordon can
