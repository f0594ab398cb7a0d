"""The event broadcaster (client-go ``tools/events``): isomorphic events fold into one Event whose
``series`` is written by PATCH, the count is flushed when the series ends or at stop, singletons
leave the cache, a full queue drops instead of blocking, and the embedded store accepts the patch."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubesched.client.event_broadcaster import EventBroadcaster, event_key
from kubesched.client.kube import KubeApiError
from kubesched.clock import RealClock, VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError


def _event(
    pod: str, note: str = "0/3 nodes are available", reason: str = "FailedScheduling"
) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.{abs(hash(note)) % 10**6:x}", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-replica-a",
        "action": "Scheduling",
        "reason": reason,
        "type": "Warning",
        "note": note,
        "regarding": {
            "kind": "Pod",
            "namespace": "default",
            "name": pod,
            "uid": f"uid-{pod}",
            "apiVersion": "v1",
        },
    }


class _Sink:
    """Records the calls and writes into a MemoryCluster."""

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self.calls: list[tuple[str, str, Any]] = []

    def create_event(self, event: dict[str, Any]) -> None:
        self.calls.append(("create", event["metadata"]["name"], event.get("series")))
        self.cluster.create_event(event)

    def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.calls.append(("patch", name, patch))
        self.cluster.patch_event(namespace, name, patch)


def _drain(b: EventBroadcaster, want: int) -> None:
    deadline = time.monotonic() + 5
    while b.written < want and time.monotonic() < deadline:
        time.sleep(0.01)
    assert b.written >= want


def test_repeated_failures_of_one_pod_become_one_event_with_a_series() -> None:
    clock = VirtualClock(1_700_000_000.0)
    mc = MemoryCluster(clock)
    sink = _Sink(mc)
    b = EventBroadcaster(sink, clock, workers=1, finish_time=360.0).start()
    b.record(_event("web", "first message"))
    _drain(b, 1)
    clock.advance_to(clock.now() + 5)
    b.record(_event("web", "second message: a different note is still the same event"))
    _drain(b, 2)
    b.record(_event("web"))
    b.record(_event("web"))
    b.record(_event("other"))
    _drain(b, 3)
    name = sink.calls[0][1]
    assert [c[0] for c in sink.calls] == ["create", "patch", "create"]
    assert sink.calls[1] == (
        "patch",
        name,
        {"series": {"count": 2, "lastObservedTime": "2023-11-14T22:13:25.000000Z"}},
    )
    events = {e["regarding"]["name"]: e for e in mc.events()}
    assert set(events) == {"web", "other"}
    ev2 = events["web"]
    assert ev2["note"] == "first message" and ev2["series"]["count"] == 2
    # counts 3 and 4 are only cached until the series ends (no new occurrence for finish_time)
    b.finish_series(clock.now() + 361)
    ev = next(e for e in mc.events() if e["regarding"]["name"] == "web")
    assert ev["series"]["count"] == 4
    assert sink.calls[-1][0] == "patch" and sink.calls[-1][2]["series"]["count"] == 4
    # the ended series and the old singleton left the cache: the next occurrence is a new Event
    assert b.cached() == 0
    b.stop()


def test_stop_writes_pending_series_counts() -> None:
    clock = VirtualClock(0.0)
    mc = MemoryCluster(clock)
    sink = _Sink(mc)
    b = EventBroadcaster(sink, clock, workers=2).start()
    for _ in range(5):
        b.record(_event("db"))
    b.stop()
    (ev,) = mc.events()
    assert ev["series"]["count"] == 5


def test_a_series_whose_event_is_gone_is_created_again() -> None:
    clock = VirtualClock(0.0)
    calls: list[str] = []

    class Sink:
        def create_event(self, event: dict[str, Any]) -> None:
            calls.append(f"create {event.get('series')}")

        def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
            calls.append("patch")
            raise NotFoundError("gone")

    b = EventBroadcaster(Sink(), clock, workers=1).start()
    b.record(_event("x"))
    b.record(_event("x"))
    b.stop()
    assert calls[0] == "create None" and calls[1] == "patch" and calls[2].startswith("create {'count': 2")


def test_a_full_queue_drops_events_and_never_blocks() -> None:
    gate = threading.Event()

    class SlowSink:
        def create_event(self, event: dict[str, Any]) -> None:
            gate.wait(5)

        def patch_event(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
            gate.wait(5)

    b = EventBroadcaster(SlowSink(), RealClock(), workers=1, max_queued=3).start()
    t0 = time.monotonic()
    for i in range(10):
        b.record(_event(f"p{i}"))
    assert time.monotonic() - t0 < 1.0
    assert 6 <= b.dropped <= 7  # one event taken by the worker, three queued
    gate.set()
    b.stop()


def test_event_key_ignores_the_note_and_the_name() -> None:
    assert event_key(_event("a", "x")) == event_key(_event("a", "y"))
    assert event_key(_event("a")) != event_key(_event("b"))
    assert event_key(_event("a", reason="Scheduled")) != event_key(_event("a"))


class _BatchSink(_Sink):
    """A sink with the batch form; the first creation of ``flaky`` fails with a 503 once."""

    def __init__(self, cluster: MemoryCluster, flaky: str = "") -> None:
        super().__init__(cluster)
        self.batches: list[list[str]] = []
        self.flaky = flaky

    def create_events(self, events: list[dict[str, Any]]) -> list[Exception | None]:
        self.batches.append([e["regarding"]["name"] for e in events])
        out: list[Exception | None] = []
        for e in events:
            if e["regarding"]["name"] == self.flaky:
                self.flaky = ""
                out.append(KubeApiError(503, "ServiceUnavailable", "try again"))
                continue
            self.calls.append(("create", e["metadata"]["name"], e.get("series")))
            self.cluster.create_event(e)
            out.append(None)
        return out


def test_queued_events_are_created_together_and_a_series_patch_waits_for_its_creation() -> None:
    clock = VirtualClock(1_700_000_000.0)
    mc = MemoryCluster(clock)
    sink = _BatchSink(mc, flaky="c")
    b = EventBroadcaster(sink, clock, workers=1, sleep=0.01)
    for pod in ("a", "b", "a", "c", "d"):  # queued before the writer starts: one batch
        b.record(_event(pod))
    b.start()
    _drain(b, 5)
    # "a" and "b" created together, then a's series patch, then "c" (503 once) and "d" together
    assert sink.batches == [["a", "b"], ["c", "d"]]
    names = [c[1].split(".")[0] + ":" + c[0] for c in sink.calls]
    assert names == ["a:create", "b:create", "a:patch", "d:create", "c:create"]
    assert sorted(e["regarding"]["name"] for e in mc.events()) == ["a", "b", "c", "d"]
    assert b.written == 5
    b.stop()


def test_the_cache_is_an_lru_of_max_cached_entries_and_an_evicted_series_writes_its_count() -> None:
    clock = VirtualClock(0.0)
    mc = MemoryCluster(clock)
    sink = _Sink(mc)
    b = EventBroadcaster(sink, clock, workers=1, max_cached=3).start()
    for _ in range(3):
        b.record(_event("a"))  # a series of 3: created, patched with 2, count 3 only cached
    b.record(_event("b"))
    b.record(_event("c"))
    b.record(_event("a"))  # a is the most recently seen again: b leaves first
    _drain(b, 4)
    assert (b.cached(), b.evicted) == (3, 0)
    b.record(_event("d"))  # pushes b (a singleton) out
    b.record(_event("e"))  # pushes c out
    b.record(_event("f"))  # pushes a out: its count 4 is written as it leaves
    _drain(b, 8)
    assert (b.cached(), b.evicted) == (3, 3)
    ev = next(e for e in mc.events() if e["regarding"]["name"] == "a")
    assert ev["series"]["count"] == 4
    b.record(_event("b"))  # b left the cache: a new Event, not a series
    b.stop()
    assert [c[0] for c in sink.calls if c[1].startswith("b.")] == ["create", "create"]
    assert b.cached() == 3


def test_a_cache_entry_rebuilds_the_event_it_keeps() -> None:
    from kubesched.client.event_broadcaster import _Cached

    ev = _event("web", "a note")
    ev["related"] = {"kind": "Pod", "namespace": "default", "name": "victim", "uid": "u2", "apiVersion": "v1"}
    ev["deprecatedCount"] = 3
    ev["metadata"]["labels"] = {"x": "y"}
    ev["metadata"]["resourceVersion"] = "12"
    c = _Cached.of(ev, 0.0)
    want = {**ev, "metadata": {"name": ev["metadata"]["name"], "namespace": "default", "labels": {"x": "y"}}}
    assert c.event(event_key(ev)) == want
    assert c.rest == b'{"deprecatedCount":3,"metadata":{"labels":{"x":"y"}}}'
    assert _Cached.of(_event("web"), 0.0).rest is None
    odd = _event("db")
    odd["regarding"]["extra"] = "kept"
    assert _Cached.of(odd, 0.0).event(event_key(odd))["regarding"]["extra"] == "kept"
