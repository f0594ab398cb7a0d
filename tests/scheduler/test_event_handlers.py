"""The informer event handlers (``pkg/scheduler/eventhandlers.go``): which pods go to the queue
and which to the cache, what a binding or a deletion moves, node update events, malformed pods,
and that a pod is parsed once per resourceVersion. First on their own, built from a recording
queue and cache (or the real ones), then wired into a scheduler."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, NODE_DELETE, ActionType, ClusterEvent
from kubesched.queue import PriorityQueue
from kubesched.scheduler import new_scheduler
from kubesched.scheduler.event_handlers import EventHandlers, node_update_events
from kubesched.testing import node_manifest, pod_manifest


class _Recorder:
    """A queue or cache that records each call as (method, argument names/keys)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, *(_describe(a) for a in args)))

        return call


def _describe(a: Any) -> Any:
    if isinstance(a, Pod | Node):
        return a.key if isinstance(a, Pod) else a.name
    if isinstance(a, ClusterEvent):
        return a.label
    if isinstance(a, dict):
        return a["metadata"]["name"]
    return a


class _Events:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def eventf(self, regarding: Any, related: Any, type_: str, reason: str, action: str, note: str) -> None:
        self.events.append((regarding.key, type_, reason))


class _Profile:
    """The part of a Framework the handlers use: its Event recorder and its waiting pods."""

    def __init__(self, waiting: set[str] | None = None) -> None:
        self.event_recorder = _Events()
        self.waiting = waiting or set()

    def reject_waiting_pod(self, uid: str) -> bool:
        return uid in self.waiting


def _handlers(
    profile: _Profile | None = None,
) -> tuple[EventHandlers, _Recorder, _Recorder, list[tuple[str, str]]]:
    cache, queue = _Recorder(), _Recorder()
    patched: list[tuple[str, str]] = []
    h = EventHandlers(
        cache,
        queue,
        {"default-scheduler": profile or _Profile()},  # type: ignore[dict-item]
        patch_failed_status=lambda pod, reason, msg, nom: patched.append((pod.key, reason)),
    )
    return h, cache, queue, patched


def _pod(
    name: str, *, node: str | None = None, scheduler: str | None = None, rv: str = "1", uid: str | None = None
) -> dict[str, Any]:
    m = pod_manifest(name, cpu="100m")
    m["metadata"]["resourceVersion"] = rv
    m["metadata"]["uid"] = uid or f"uid-{name}"
    if node:
        m["spec"]["nodeName"] = node
    if scheduler:
        m["spec"]["schedulerName"] = scheduler
    return m


def test_handlers_route_pending_pods_to_the_queue_and_bound_pods_to_the_cache() -> None:
    h, cache, queue, _ = _handlers()
    h.on_pod_add(_pod("mine"))
    h.on_pod_add(_pod("theirs", scheduler="someone-else"))
    h.on_pod_add(_pod("running", node="n1"))
    assert queue.calls == [("add", "default/mine"), ("assigned_pod_added", "default/running")]
    assert cache.calls == [("add_pod", "default/running")]


def test_handlers_binding_update_moves_the_pod_from_queue_to_cache() -> None:
    h, cache, queue, _ = _handlers()
    pending = _pod("web")
    bound = _pod("web", node="n1", rv="2")
    h.on_pod_add(pending)
    h.on_pod_update(pending, bound)
    assert queue.calls == [
        ("add", "default/web"),
        ("delete", "default/web"),
        ("assigned_pod_added", "default/web"),
    ]
    assert cache.calls == [("add_pod", "default/web")]
    relabelled = _pod("web", node="n1", rv="3")
    relabelled["metadata"]["labels"] = {"app": "web"}
    h.on_pod_update(bound, relabelled)
    assert cache.calls[-1] == ("update_pod", "default/web", "default/web")
    assert queue.calls[-1] == (
        "assigned_pod_updated",
        "default/web",
        "default/web",
        "AssignedPodUpdatePodLabel",
    )
    h.on_pod_delete(relabelled)
    assert cache.calls[-1] == ("remove_pod", "default/web")
    assert queue.calls[-1] == (
        "move_all_to_active_or_backoff",
        ASSIGNED_POD_DELETE.label,
        "default/web",
        None,
        None,
    )


def test_handlers_pending_pod_update_and_delete() -> None:
    profile = _Profile(waiting={"uid-permit"})
    h, _, queue, _ = _handlers(profile)
    old, new = _pod("a"), _pod("a", rv="2")
    new["metadata"]["labels"] = {"x": "y"}
    h.on_pod_update(old, new)
    assert queue.calls == [("update", "default/a", "default/a")]
    h.on_pod_delete(
        _pod("permit", uid="uid-permit")
    )  # a pod waiting in Permit: its rejection frees resources
    assert queue.calls[1:] == [
        ("delete", "default/permit"),
        ("move_all_to_active_or_backoff", ASSIGNED_POD_DELETE.label, "default/permit", None, None),
    ]


def test_handlers_nodes_go_to_the_cache_with_their_events() -> None:
    h, cache, queue, _ = _handlers()
    n1 = node_manifest("n1")
    n1["metadata"]["resourceVersion"] = "1"
    h.on_node_add(n1)
    labelled = node_manifest("n1")
    labelled["metadata"].update(resourceVersion="2", labels={"zone": "a"})
    h.on_node_update(n1, labelled)
    h.on_node_delete(labelled)
    assert cache.calls == [("add_node", "n1"), ("update_node", "n1", "n1"), ("remove_node", "n1")]
    assert queue.calls == [
        ("move_all_to_active_or_backoff", NODE_ADD.label, None, "n1", None),
        ("move_all_to_active_or_backoff", "NodeUpdateNodeLabel", "n1", "n1", None),
        ("move_all_to_active_or_backoff", NODE_DELETE.label, "n1", None, None),
    ]


def test_handlers_report_a_malformed_pending_pod_once() -> None:
    profile = _Profile()
    h, cache, queue, patched = _handlers(profile)
    bad = _pod("bad")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    h.on_pod_add(bad)
    h.on_pod_add(bad)
    assert queue.calls == [] and cache.calls == []
    assert (
        list(h.invalid_pods) == ["default/bad"]
        and "spec.containers[0].resources.requests.cpu" in h.invalid_pods["default/bad"]
    )
    assert profile.event_recorder.events == [("default/bad", "Warning", "FailedScheduling")]
    assert patched == [("default/bad", "SchedulerError")]
    h.on_pod_delete(bad)
    assert h.invalid_pods == {}


def test_handlers_with_the_real_cache_and_queue() -> None:
    clock = VirtualClock(0.0)
    cache, queue = Cache(), PriorityQueue(clock, lambda a, b: a.timestamp < b.timestamp)
    h = EventHandlers(cache, queue, {"default-scheduler": _Profile()})  # type: ignore[dict-item]
    n1 = node_manifest("n1")
    n1["metadata"]["resourceVersion"] = "1"
    h.on_node_add(n1)
    h.on_pod_add(_pod("web"))
    h.on_pod_add(_pod("db", node="n1"))
    assert (cache.node_count(), cache.pod_count(), queue.len_active()) == (1, 1, 1)
    assert queue.get("default/web") is not None


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


def test_pods_are_parsed_once_per_resource_version(
    env: tuple[MemoryCluster, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
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
    assert [e.action_type for e in node_update_events(base, _node(labels={"zone": "a"}))] == [
        ActionType.UpdateNodeLabel
    ]
    assert [e.action_type for e in node_update_events(base, _node(allocatable={"cpu": "8"}))] == [
        ActionType.UpdateNodeAllocatable
    ]
    tainted = _node(spec={"taints": [{"key": "k", "effect": "NoSchedule"}]})
    assert [e.action_type for e in node_update_events(base, tainted)] == [ActionType.UpdateNodeTaint]
    cordoned = _node(spec={"unschedulable": True})
    assert node_update_events(base, cordoned) == []  # cordoning cannot help a pending pod
    assert [e.action_type for e in node_update_events(cordoned, base)] == [
        ActionType.UpdateNodeTaint
    ]  # uncordon can


def test_handlers_neither_parse_nor_report_a_pending_pod_of_another_scheduler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Upstream's unscheduled-pod informer filters pods of other schedulers out before any handler
    sees them: a malformed one is not ours to report. Once bound it is cached (and reported)."""
    profile = _Profile()
    h, cache, queue, patched = _handlers(profile)
    bad = _pod("theirs", scheduler="someone-else")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    with caplog.at_level("ERROR"):
        h.on_pod_add(bad)
        h.on_pod_update(bad, {**bad, "metadata": {**bad["metadata"], "resourceVersion": "2"}})
        h.on_pod_delete(bad)
    assert (queue.calls, cache.calls, h.invalid_pods, patched, caplog.records) == ([], [], {}, [], [])
    assert profile.event_recorder.events == []
    bound = _pod("theirs", scheduler="someone-else", node="n1", rv="3")
    bound["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    with caplog.at_level("ERROR"):
        h.on_pod_add(bound)
    assert list(h.invalid_pods) == ["default/theirs"] and len(caplog.records) == 2
