"""Backoff arithmetic and the two backoff heaps (``pkg/scheduler/backend/queue/backoff_queue.go``)."""

from __future__ import annotations

from kubesched.clock import VirtualClock
from kubesched.framework.node_info import PodInfo
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.queue.backoff import BackoffQueue, floor_to_second
from kubesched.testing import make_pod


def _less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def _qpi(
    name: str,
    ts: float,
    unsched: int = 0,
    errors: int = 0,
    priority: int = 0,
    plugins: set[str] | None = None,
) -> QueuedPodInfo:
    p = QueuedPodInfo(PodInfo(make_pod(name, priority=priority)), timestamp=ts)
    p.unschedulable_count = unsched
    p.consecutive_errors_count = errors
    p.unschedulable_plugins = set(plugins or ())
    return p


def test_durations_1_2_4_8_10() -> None:
    bq = BackoffQueue(VirtualClock(), 1.0, 10.0, _less)
    assert [bq.backoff_duration(_qpi("p", 0, unsched=n)) for n in range(0, 8)] == [0, 1, 2, 4, 8, 10, 10, 10]
    # consecutive errors take precedence over the unschedulable count
    assert bq.backoff_duration(_qpi("p", 0, unsched=5, errors=1)) == 1
    assert bq.backoff_duration(_qpi("p", 0, unsched=100)) == 10


def test_expiration_aligned_to_whole_seconds_and_cached() -> None:
    clock = VirtualClock(100.0)
    bq = BackoffQueue(clock, 1.0, 10.0, _less)
    p = _qpi("p", 100.7, unsched=2)  # 2 s backoff
    assert bq.backoff_time(p) == 102.0
    assert p.backoff_expiration == 102.0
    p.timestamp = 200.0  # cached until cleared
    assert bq.backoff_time(p) == 102.0
    # backing off while expiration >= floor(now)
    clock.advance_to(102.9)
    assert bq.is_backing_off(p) is True
    clock.advance_to(103.0)
    assert bq.is_backing_off(p) is False


def test_never_penalised_and_disabled_backoff() -> None:
    bq = BackoffQueue(VirtualClock(5.0), 1.0, 10.0, _less)
    assert bq.is_backing_off(_qpi("p", 5.0)) is False
    off = BackoffQueue(VirtualClock(5.0), 1.0, 0.0, _less)
    assert off.is_backing_off(_qpi("p", 5.0, unsched=3)) is False


def test_floor_to_second() -> None:
    assert floor_to_second(3.99) == 3.0
    assert floor_to_second(4.0) == 4.0


def test_heaps_split_by_rejectors_and_ordering() -> None:
    clock = VirtualClock(0.0)
    bq = BackoffQueue(clock, 1.0, 10.0, _less)
    a = _qpi("a", 0.2, unsched=1, plugins={"X"})  # exp 1
    b = _qpi("b", 0.5, unsched=1, priority=10, plugins={"X"})  # exp 1, higher priority
    c = _qpi("c", 0.1, errors=1)  # error heap, exp 1
    d = _qpi("d", 0.0, unsched=3, plugins={"X"})  # exp 4
    for p in (a, b, c, d):
        bq.add(p)
    assert len(bq.regular) == 3 and len(bq.errors) == 1
    assert bq.next_expiry() == 1.0
    # pop_regular ignores backoff and the error heap
    assert bq.pop_regular() is b
    bq.add(b)
    clock.advance_to(1.5)
    assert bq.pop_all_completed() == []
    clock.advance_to(2.0)
    assert [p.key for p in bq.pop_all_completed()] == ["default/b", "default/a", "default/c"]
    assert bq.next_expiry() == 4.0
    assert bq.delete("default/d") is d
    assert len(bq) == 0 and bq.next_expiry() is None


def test_readd_moves_between_heaps() -> None:
    bq = BackoffQueue(VirtualClock(), 1.0, 10.0, _less)
    p = _qpi("p", 0.0, errors=1)
    bq.add(p)
    p.unschedulable_plugins = {"X"}
    bq.add(p)
    assert len(bq.regular) == 1 and len(bq.errors) == 0
    assert bq.get("default/p") is p
