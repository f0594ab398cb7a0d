"""Tests for watches on kubesched.embedded.store: ordering, replay, 410 Gone, re-entrancy."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.client.client import WatchEvent
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import GoneError


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": {**spec}}


def brief(ev: WatchEvent) -> tuple[str, str, str]:
    return (ev.type, ev.object["metadata"]["name"], ev.object["metadata"]["resourceVersion"])


def test_watch_events_types_and_old_objects() -> None:
    store = MemoryCluster(VirtualClock())
    seen: list[WatchEvent] = []
    store.watch("Pod", store.resource_version, seen.append)
    p = store.create(pod("a"))
    store.bind("default", "a", p["metadata"]["uid"], "n1")
    store.delete("Pod", "default", "a")
    store.create({"kind": "Node", "metadata": {"name": "n1"}})  # other kind: not delivered
    assert [brief(e) for e in seen] == [("ADDED", "a", "1"), ("MODIFIED", "a", "2"), ("DELETED", "a", "3")]
    assert seen[0].old_object is None
    assert seen[1].old_object is p
    assert seen[2].old_object is seen[1].object
    assert seen[2].object["spec"]["nodeName"] == "n1"
    assert all(e.kind == "Pod" for e in seen)


def test_watch_replays_history_after_resource_version() -> None:
    store = MemoryCluster(VirtualClock())
    for name in "abc":
        store.create(pod(name))
    store.create({"kind": "Node", "metadata": {"name": "n1"}})
    store.delete("Pod", "default", "b")
    seen: list[WatchEvent] = []
    store.watch("Pod", "1", seen.append)
    assert [brief(e) for e in seen] == [("ADDED", "b", "2"), ("ADDED", "c", "3"), ("DELETED", "b", "5")]
    store.create(pod("d"))
    assert brief(seen[-1]) == ("ADDED", "d", "6")


def test_watch_without_resource_version_lists_current_state_first() -> None:
    store = MemoryCluster(VirtualClock())
    for name in ["b", "a"]:
        store.create(pod(name))
    store.delete("Pod", "default", "b")
    for rv in (None, "", "0"):
        seen: list[WatchEvent] = []
        sub = store.watch("Pod", rv, seen.append)
        assert [brief(e) for e in seen] == [("ADDED", "a", "2")]
        sub.stop()


def test_watch_too_old_resource_version_is_gone() -> None:
    store = MemoryCluster(VirtualClock(), history_limit=3)
    for i in range(5):
        store.create(pod(f"p{i}"))  # rv 1..5; kept: 3, 4, 5; dropped up to 2
    with pytest.raises(GoneError) as err:
        store.watch("Pod", "1", lambda e: None)
    assert str(err.value) == "too old resource version: 1 (2)"
    seen: list[WatchEvent] = []
    store.watch("Pod", "2", seen.append)
    assert [brief(e)[1] for e in seen] == ["p2", "p3", "p4"]
    with pytest.raises(ValueError, match="Too large resource version: 9, current: 5"):
        store.watch("Pod", "9", lambda e: None)
    with pytest.raises(ValueError, match="invalid resource version 'x'"):
        store.watch("Pod", "x", lambda e: None)


def test_load_without_watchers_keeps_no_history() -> None:
    store = MemoryCluster(VirtualClock())
    store.load([pod("a"), pod("b")])
    with pytest.raises(GoneError, match=r"^too old resource version: 1 \(2\)$"):
        store.watch("Pod", "1", lambda e: None)
    res = store.list("Pod")
    seen: list[WatchEvent] = []
    store.watch("Pod", res.resource_version, seen.append)
    store.load([pod("c")])  # a watcher exists now: events flow
    assert [brief(e) for e in seen] == [("ADDED", "c", "3")]


def test_a_loaded_store_answers_watches_from_before_the_load_with_gone_for_every_kind() -> None:
    store = MemoryCluster(VirtualClock())
    store.load(
        [pod("a"), {"kind": "Node", "metadata": {"name": "n1"}}]
        + [{"kind": "Namespace", "metadata": {"name": f"ns{i}"}} for i in range(5)]
    )  # rv 1..7
    # Pods were loaded at rv 1, but a watch from rv 3..6 belongs to another history too
    for kind in ("Pod", "Node", "PersistentVolumeClaim", "Service", "Event"):
        with pytest.raises(GoneError, match=r"^too old resource version: 5 \(7\)$"):
            store.watch(kind, "5", lambda e: None)
    seen: list[WatchEvent] = []
    store.watch("Pod", "7", seen.append)
    store.create(pod("b"))
    assert [brief(e) for e in seen] == [("ADDED", "b", "8")]


def test_first_resource_version_starts_a_new_epoch() -> None:
    store = MemoryCluster(VirtualClock(), first_resource_version=1_000_000)
    assert store.resource_version == "1000000"
    assert store.create(pod("a"))["metadata"]["resourceVersion"] == "1000001"
    for kind in ("Pod", "Node"):
        with pytest.raises(GoneError, match=r"^too old resource version: 999 \(1000000\)$"):
            store.watch(kind, "999", lambda e: None)
    seen: list[WatchEvent] = []
    store.watch("Pod", "1000000", seen.append)
    assert [brief(e) for e in seen] == [("ADDED", "a", "1000001")]
    with pytest.raises(ValueError, match="must be >= 0"):
        MemoryCluster(VirtualClock(), first_resource_version=-1)


def test_epoch_resource_version_passes_the_clock_and_a_dumps_versions() -> None:
    from kubesched.embedded.apiserver import epoch_resource_version

    clock = VirtualClock(start=1_700_000_000.5)
    assert epoch_resource_version(clock) == 1_700_000_000_500_000
    dump = [{"metadata": {"resourceVersion": "1800000000000000"}}, {"metadata": {"resourceVersion": "x"}}, {}]
    assert epoch_resource_version(clock, dump) == 1_800_000_000_000_000


def test_handlers_called_in_registration_order_and_stop() -> None:
    store = MemoryCluster(VirtualClock())
    calls: list[str] = []
    s1 = store.watch("Pod", "0", lambda e: calls.append("first:" + e.object["metadata"]["name"]))
    store.watch("Pod", "0", lambda e: calls.append("second:" + e.object["metadata"]["name"]))
    store.create(pod("a"))
    s1.stop()
    s1.stop()
    store.create(pod("b"))
    assert calls == ["first:a", "second:a", "second:b"]


def test_writes_from_handlers_are_delivered_after_current_event_in_order() -> None:
    store = MemoryCluster(VirtualClock())
    log: list[tuple[str, str, str]] = []

    def binder(ev: WatchEvent) -> None:
        log.append(("binder",) + brief(ev)[:2])
        if ev.type == "ADDED":
            store.bind("default", ev.object["metadata"]["name"], "", "n1")

    store.watch("Pod", "0", binder)
    store.watch("Pod", "0", lambda ev: log.append(("observer",) + brief(ev)[:2]))
    store.create(pod("a"))
    assert log == [
        ("binder", "ADDED", "a"),
        ("observer", "ADDED", "a"),
        ("binder", "MODIFIED", "a"),
        ("observer", "MODIFIED", "a"),
    ]


def test_watch_registered_inside_handler_sees_each_event_once() -> None:
    store = MemoryCluster(VirtualClock())
    late: list[tuple[str, str, str]] = []

    def starter(ev: WatchEvent) -> None:
        if ev.object["metadata"]["name"] == "a":
            store.create(pod("b"))  # queued, not yet delivered
            store.watch("Pod", "0", lambda e: late.append(brief(e)))

    store.watch("Pod", "0", starter)
    store.create(pod("a"))
    store.create(pod("c"))
    assert late == [("ADDED", "a", "1"), ("ADDED", "b", "2"), ("ADDED", "c", "3")]


def test_handler_error_is_reraised_after_delivery() -> None:
    store = MemoryCluster(VirtualClock())
    seen: list[str] = []

    def broken(ev: WatchEvent) -> None:
        raise RuntimeError("boom")

    store.watch("Pod", "0", broken)
    store.watch("Pod", "0", lambda e: seen.append(e.object["metadata"]["name"]))
    with pytest.raises(RuntimeError, match="boom"):
        store.create(pod("a"))
    assert seen == ["a"]
    assert store.get("Pod", "default", "a")["metadata"]["resourceVersion"] == "1"


def test_event_watch() -> None:
    store = MemoryCluster(VirtualClock())
    seen: list[WatchEvent] = []
    store.watch("Event", None, seen.append)
    store.create_event(
        {"kind": "Event", "regarding": {"name": "web-1", "namespace": "default"}, "reason": "Scheduled"}
    )
    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [("ADDED", "web-1.1")]
