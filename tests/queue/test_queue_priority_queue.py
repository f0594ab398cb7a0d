"""PriorityQueue behaviour on a virtual clock (``pkg/scheduler/backend/queue/scheduling_queue.go``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.clock import VirtualClock
from kubesched.framework.events import (
    NODE_ADD,
    NODE_DELETE,
    WILDCARD_EVENT,
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import PreEnqueuePlugin
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.status import Code, Status
from kubesched.queue import PriorityQueue, QueueError
from kubesched.testing import make_pod

PROFILE = "default-scheduler"
NODE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
GATES_ELIMINATED = ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)
POD_LABEL = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)


def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    pa, pb = a.pod.priority, b.pod.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def sort_key(p: QueuedPodInfo) -> tuple[int, float]:
    return (-p.pod.priority, p.timestamp)


class Recorder:
    """Metrics recorder keeping counters/gauges by (name, sorted labels)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self.observed: list[tuple[str, dict[str, str]]] = []

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        k = (name, tuple(sorted(labels.items())))
        self.values[k] = self.values.get(k, 0) + amount

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        self.values[(name, tuple(sorted(labels.items())))] = value

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        self.observed.append((name, dict(labels)))

    def get(self, name: str, **labels: str) -> float:
        return self.values.get((name, tuple(sorted(labels.items()))), 0)


class SchedulingGates(PreEnqueuePlugin):
    NAME = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.scheduling_gates:
            return Status(
                Code.UnschedulableAndUnresolvable,
                f"waiting for scheduling gates: {list(pod.scheduling_gates)}",
            )
        return None


def zone_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.Queue if new is not None and new.get("zone") == "a" else QueueingHint.QueueSkip


def failing_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("boom")


def default_hints() -> dict[str, list[tuple[ClusterEvent, list[tuple[str, Any]]]]]:
    return {
        PROFILE: [
            (NODE_ADD, [("NodeResourcesFit", None), ("Pender", None)]),
            (NODE_LABEL, [("NodeAffinity", zone_hint), ("Broken", failing_hint)]),
            (NODE_DELETE, [("Other", None)]),
            (GATES_ELIMINATED, [("SchedulingGates", None)]),
            (
                ClusterEvent(EventResource.Pod, ActionType.Add),
                [("PodTopologySpread", None), ("InterPodAffinity", None)],
            ),
        ]
    }


def make_queue(
    clock: VirtualClock | None = None, *, fast: bool = False, metrics: Recorder | None = None, **kw: Any
) -> tuple[PriorityQueue, VirtualClock]:
    clock = clock or VirtualClock(0.0)
    kw.setdefault("queueing_hints", default_hints())
    kw.setdefault("pre_enqueue_plugins", {PROFILE: [SchedulingGates()]})
    q = PriorityQueue(clock, less, sort_key=sort_key if fast else None, metrics=metrics, **kw)
    return q, clock


def fail(
    q: PriorityQueue, p: QueuedPodInfo, plugins: tuple[str, ...] = (), pending: tuple[str, ...] = ()
) -> None:
    p.unschedulable_plugins = set(plugins)
    p.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle())


def where(q: PriorityQueue, key: str) -> str:
    if key in [p.key for p in (q._active.items())]:
        return "active"
    if q._backoff.get(key) is not None:
        return "backoff"
    if q._unsched.get(key) is not None:
        return "gated" if q._unsched.get(key).gating_plugin else "unschedulable"  # type: ignore[union-attr]
    return "none"


# --- activeQ ordering ---------------------------------------------------------------------------


@pytest.mark.parametrize("fast", [False, True])
def test_active_order_priority_then_timestamp(fast: bool) -> None:
    q, clock = make_queue(fast=fast)
    for t, name, prio in [
        (0.0, "low-old", 0),
        (1.0, "high-new", 10),
        (2.0, "low-new", 0),
        (3.0, "high-newer", 10),
        (4.0, "mid", 5),
    ]:
        clock.advance_to(t)
        q.add(make_pod(name, priority=prio))
    names = []
    while (p := q.pop()) is not None:
        names.append(p.pod.name)
    assert names == ["high-new", "high-newer", "mid", "low-old", "low-new"]
    assert q.scheduling_cycle() == 5
    assert q.in_flight_count() == 5


def test_pop_sets_attempts_and_initial_timestamp() -> None:
    q, clock = make_queue()
    clock.advance_to(7.0)
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    assert (p.attempts, p.timestamp, p.initial_attempt_timestamp) == (1, 7.0, 7.0)
    assert q.pop() is None


# --- backoff -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fast", [False, True])
def test_backoff_1_2_4_8_10_with_whole_second_windows(fast: bool) -> None:
    q, clock = make_queue(fast=fast)
    q.run()
    q.add(make_pod("a"))
    expirations, releases = [], []
    for _ in range(6):
        p = q.pop()
        assert p is not None
        fail(q, p, plugins=("NodeResourcesFit",))  # no in-flight event -> unschedulablePods
        assert where(q, "default/a") == "unschedulable"
        # force it to backoffQ through an event: NodeAdd interests NodeResourcesFit
        q.move_all_to_active_or_backoff(NODE_ADD, None, {"name": "n"})
        assert where(q, "default/a") == "backoff"
        expirations.append(q.next_backoff_expiry())
        while q.len_active() == 0:
            clock.advance_to(clock.now() + 1.0)
        releases.append(clock.now())
    # failure times are the release times; durations 1, 2, 4, 8, 10, 10
    assert releases == [2.0, 5.0, 10.0, 19.0, 30.0, 41.0]
    assert expirations == [1.0, 4.0, 9.0, 18.0, 29.0, 40.0]


def test_error_backoff_and_fractional_timestamps() -> None:
    q, clock = make_queue()
    q.run()
    clock.advance_to(0.5)
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p)  # no rejector plugins: error -> backoffQ (error heap)
    assert p.consecutive_errors_count == 1 and p.unschedulable_count == 0
    assert where(q, "default/a") == "backoff"
    assert q._backoff.errors.get("default/a") is p
    assert q.backoff_expiration(p) == 1.0  # floor(0.5 + 1)
    assert q.pop() is None  # error heap is not popped early
    clock.advance_to(1.999)
    assert q.len_active() == 0
    clock.advance_to(2.0)
    assert q.len_active() == 1


def test_pop_from_backoffq_when_active_empty() -> None:
    m = Recorder()
    q, clock = make_queue(metrics=m)
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})  # event while in flight
    fail(q, p, plugins=("NodeResourcesFit",))
    assert where(q, "default/a") == "backoff"
    assert q.is_backing_off(p)
    again = q.pop()
    assert again is p and p.attempts == 2
    assert m.get("scheduler_queue_incoming_pods_total", queue="active", event="PopFromBackoffQ") == 1
    assert m.get("scheduler_queue_incoming_pods_total", queue="backoff", event="ScheduleAttemptFailure") == 1


# --- events and hints ----------------------------------------------------------------------------


def test_registered_event_moves_unrelated_does_not() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeResourcesFit",))
    assert where(q, "default/a") == "unschedulable"
    q.move_all_to_active_or_backoff(NODE_DELETE, {}, None)  # registered, but by another plugin
    q.move_all_to_active_or_backoff(ClusterEvent(EventResource.PersistentVolume, ActionType.Add), None, {})
    assert where(q, "default/a") == "unschedulable"
    clock.advance_to(5.0)  # backoff (1 s) is over
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})
    assert where(q, "default/a") == "active"


def test_hint_queue_skip_keeps_pod_and_queue_moves_it() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeAffinity",))
    q.move_all_to_active_or_backoff(NODE_LABEL, {}, {"zone": "b"})
    assert where(q, "default/a") == "unschedulable"
    q.move_all_to_active_or_backoff(NODE_LABEL, {}, {"zone": "a"})
    assert where(q, "default/a") == "backoff"  # t=0: still backing off


def test_hint_error_counts_as_queue() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("Broken",))
    clock.advance_to(3.0)
    q.move_all_to_active_or_backoff(NODE_LABEL, {}, {"zone": "z"})
    assert where(q, "default/a") == "active"


def test_pending_plugin_goes_immediately_to_active() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("Pender",), pending=("Pender",))
    assert where(q, "default/a") == "unschedulable"
    assert q.is_backing_off(p)
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})
    assert where(q, "default/a") == "active"


def test_event_while_in_flight_requeues_on_failure() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a, b = q.pop(), q.pop()
    assert a is not None and b is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, {"name": "n1"})
    assert q._in_flight.event_count == 1
    fail(q, a, plugins=("NodeResourcesFit",))  # NodeAdd seen while in flight -> worth retrying
    assert where(q, "default/a") == "backoff"
    assert q._in_flight.event_count == 1  # b still needs it
    fail(q, b, plugins=("NodeAffinity",))  # NodeAdd does not interest NodeAffinity
    assert where(q, "default/b") == "unschedulable"
    assert q._in_flight.event_count == 0 and q.in_flight_count() == 0


def test_event_before_pop_is_not_replayed() -> None:
    q, _ = make_queue()
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a = q.pop()
    assert a is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})
    b = q.pop()
    assert b is not None
    fail(q, b, plugins=("NodeResourcesFit",))
    assert where(q, "default/b") == "unschedulable"
    q.done(a.pod.uid)
    assert q._in_flight.event_count == 0


def test_unregistered_event_is_not_recorded_in_flight() -> None:
    q, _ = make_queue()
    q.add(make_pod("a"))
    assert q.pop() is not None
    q.move_all_to_active_or_backoff(ClusterEvent(EventResource.StorageClass, ActionType.Add), None, {})
    assert q._in_flight.event_count == 0


def test_pre_check_filters_candidates() -> None:
    q, clock = make_queue()
    for n in ("a", "b"):
        q.add(make_pod(n))
    for _ in range(2):
        p = q.pop()
        assert p is not None
        fail(q, p, plugins=("NodeResourcesFit",))
    clock.advance_to(5.0)
    q.move_all_to_active_or_backoff(NODE_ADD, None, {}, pre_check=lambda pod: pod.name == "b")
    assert (where(q, "default/a"), where(q, "default/b")) == ("unschedulable", "active")


def test_wildcard_event_moves_everything_not_gated() -> None:
    q, clock = make_queue()
    q.add(make_pod("a"))
    q.add(make_pod("g", spec={"schedulingGates": [{"name": "x"}]}))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("Whatever",))
    clock.advance_to(5.0)
    q.move_all_to_active_or_backoff(WILDCARD_EVENT)
    assert (where(q, "default/a"), where(q, "default/g")) == ("active", "gated")


# --- gating --------------------------------------------------------------------------------------


def test_gating_and_ungating() -> None:
    m = Recorder()
    q, clock = make_queue(metrics=m)
    q.run()
    gated = make_pod("g", spec={"schedulingGates": [{"name": "example.com/wait"}]})
    q.add(gated)
    assert (q.len_active(), q.len_gated(), q.len_unschedulable()) == (0, 1, 0)
    assert q.pop() is None
    info = q.unschedulable_pods_info()[0]
    assert info.gating_plugin == "SchedulingGates"
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert info.gating_plugin_events == [GATES_ELIMINATED]
    assert m.get("scheduler_pending_pods", queue="gated") == 1
    assert m.get("scheduler_queue_incoming_pods_total", queue="gated", event="UnscheduledPodAdd") == 1
    # unrelated events and the unschedulable timeout leave it alone
    q.move_all_to_active_or_backoff(NODE_ADD, None, {})
    clock.advance_to(400.0)
    assert q.len_gated() == 1
    # a label change does not lift the gate
    relabel = make_pod("g", labels={"x": "y"}, spec={"schedulingGates": [{"name": "example.com/wait"}]})
    q.update(gated, relabel)
    assert q.len_gated() == 1
    ungated = make_pod("g", labels={"x": "y"})
    q.update(relabel, ungated)
    assert (q.len_active(), q.len_gated()) == (1, 0)
    p = q.pop()
    assert p is not None and p.pod is ungated and p.gating_plugin == ""
    assert p.initial_attempt_timestamp == 400.0
    assert m.get("scheduler_pending_pods", queue="gated") == 0


def test_activate_keeps_gated_pod_gated() -> None:
    q, _ = make_queue()
    g = make_pod("g", spec={"schedulingGates": [{"name": "x"}]})
    q.add(g)
    q.activate({g.key: g})
    assert where(q, "default/g") == "gated"


# --- unschedulable timeout -----------------------------------------------------------------------


def test_unschedulable_timeout_after_five_minutes() -> None:
    m = Recorder()
    q, clock = make_queue(metrics=m)
    q.run()
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeResourcesFit",))
    clock.advance_to(329.0)  # the 300 s flush sees exactly 300 s: not more than the limit
    assert where(q, "default/a") == "unschedulable"
    clock.advance_to(330.0)
    assert where(q, "default/a") == "active"
    assert m.get("scheduler_queue_incoming_pods_total", queue="active", event="UnschedulableTimeout") == 1


# --- activate ------------------------------------------------------------------------------------


def test_activate_from_unschedulable_backoff_and_in_flight() -> None:
    m = Recorder()
    q, clock = make_queue(metrics=m)
    for n in ("u", "b", "f", "other"):
        q.add(make_pod(n))
    u, b, f, other = q.pop(), q.pop(), q.pop(), q.pop()
    assert u and b and f and other
    fail(q, u, plugins=("NodeResourcesFit",))
    fail(q, b)  # error -> backoffQ
    assert (where(q, "default/u"), where(q, "default/b")) == ("unschedulable", "backoff")
    q.activate(
        {"default/u": u.pod, "default/b": b.pod, "default/f": f.pod, "default/missing": make_pod("missing")}
    )
    assert (where(q, "default/u"), where(q, "default/b")) == ("active", "active")
    assert m.get("scheduler_queue_incoming_pods_total", queue="active", event="ForceActivate") == 2
    # the in-flight pod saw a targeted ForceActivate: retried after backoff; the other is skipped
    fail(q, f, plugins=("NodeResourcesFit",))
    fail(q, other, plugins=("NodeResourcesFit",))
    assert (where(q, "default/f"), where(q, "default/other")) == ("backoff", "unschedulable")


# --- assigned pod events -------------------------------------------------------------------------


def test_assigned_pod_added_only_moves_cross_topology_pods() -> None:
    q, clock = make_queue()
    aff = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
                ]
            }
        }
    }
    q.add(make_pod("spread", "ns1"))
    q.add(make_pod("spread-other-ns", "ns2"))
    q.add(make_pod("affine", "ns1", spec=aff))
    q.add(make_pod("fit", "ns1"))
    for _ in range(4):
        p = q.pop()
        assert p is not None
        fail(
            q,
            p,
            plugins=("NodeResourcesFit",)
            if p.pod.name == "fit"
            else ("InterPodAffinity",)
            if p.pod.name == "affine"
            else ("PodTopologySpread",),
        )
    clock.advance_to(5.0)
    q.assigned_pod_added(make_pod("web", "ns1", node_name="n1", labels={"app": "web"}))
    assert [where(q, k) for k in ("ns1/spread", "ns2/spread-other-ns", "ns1/affine", "ns1/fit")] == [
        "active",
        "unschedulable",
        "unschedulable",
        "unschedulable",
    ]
    q.assigned_pod_added(make_pod("db", "ns1", node_name="n1", labels={"app": "db"}))
    assert where(q, "ns1/affine") == "active"
    assert where(q, "ns2/spread-other-ns") == "unschedulable"


def test_assigned_pod_scale_down_considers_all() -> None:
    hints = default_hints()
    hints[PROFILE].append(
        (ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown), [("NodeResourcesFit", None)])
    )
    q, clock = make_queue(queueing_hints=hints)
    q.add(make_pod("fit"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeResourcesFit",))
    clock.advance_to(5.0)
    old = make_pod("x", node_name="n1", cpu="2")
    new = make_pod("x", node_name="n1", cpu="1")
    q.assigned_pod_updated(old, new, ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown))
    assert where(q, "default/fit") == "active"


# --- update / delete -----------------------------------------------------------------------------


@pytest.mark.parametrize("fast", [False, True])
def test_update_in_active_reorders_and_unknown_is_added(fast: bool) -> None:
    q, clock = make_queue(fast=fast)
    a, b = make_pod("a", priority=1), make_pod("b", priority=2)
    q.add(a)
    q.add(b)
    a2 = make_pod("a", priority=5)
    q.update(a, a2)
    q.update(None, make_pod("c", priority=3))
    assert [p.pod.name for p in (q.pop(), q.pop(), q.pop()) if p] == ["a", "c", "b"]


def test_update_of_in_flight_pod_is_recorded() -> None:
    q, clock = make_queue()
    hints = q._hints
    assert hints.is_event_of_interest(POD_LABEL) is False
    old = make_pod("a")
    q.add(old)
    p = q.pop()
    assert p is not None
    new = make_pod("a", labels={"k": "v"})
    q.update(old, new)
    assert where(q, "default/a") == "none"
    events = q._in_flight.events_since(old.uid)
    assert events is not None and [e.event.label for e in events] == ["UnscheduledPodUpdatePodLabel"]


def test_update_unschedulable_pod_with_hinted_event() -> None:
    hints = default_hints()
    hints[PROFILE].append((POD_LABEL, [("NodeAffinity", None)]))
    q, clock = make_queue(queueing_hints=hints)
    old = make_pod("a")
    q.add(old)
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeAffinity",))
    clock.advance_to(5.0)
    q.update(old, make_pod("a", cpu="1"))  # generic Update: NodeAffinity registered only labels
    assert where(q, "default/a") == "unschedulable"
    q.update(old, make_pod("a", labels={"k": "v"}))
    assert where(q, "default/a") == "active"


def test_delete_from_each_queue() -> None:
    q, clock = make_queue()
    pods = {n: make_pod(n) for n in ("act", "back", "uns", "gate")}
    pods["gate"] = make_pod("gate", spec={"schedulingGates": [{"name": "x"}]})
    for n in ("back", "uns"):
        q.add(pods[n])
        p = q.pop()
        assert p is not None
        fail(q, p) if n == "back" else fail(q, p, plugins=("NodeResourcesFit",))
    q.add(pods["act"])
    q.add(pods["gate"])
    assert [where(q, f"default/{n}") for n in pods] == ["active", "backoff", "unschedulable", "gated"]
    for pod in pods.values():
        q.delete(pod)
    assert [where(q, f"default/{n}") for n in pods] == ["none"] * 4
    assert q.pending_pods() == ([], "activeQ:0; backoffQ:0; unschedulablePods:0")


def test_add_unschedulable_rejects_already_queued() -> None:
    q, _ = make_queue()
    a = make_pod("a")
    q.add(a)
    p = q.pop()
    assert p is not None
    q.add(a)  # informer re-add while in flight
    with pytest.raises(QueueError, match="already present in the active queue"):
        fail(q, p, plugins=("X",))
    assert q.in_flight_count() == 0


def test_pending_pods_summary() -> None:
    q, _ = make_queue()
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    q.add(make_pod("g", spec={"schedulingGates": [{"name": "x"}]}))
    p = q.pop()
    assert p is not None
    fail(q, p)
    pods, summary = q.pending_pods()
    assert summary == "activeQ:1; backoffQ:1; unschedulablePods:1"
    assert [x.name for x in pods] == ["b", "a", "g"]


# --- nominator via the queue ---------------------------------------------------------------------


def test_nominated_pods_resolve_to_queued_version() -> None:
    q, _ = make_queue()
    a = make_pod("a", status={"nominatedNodeName": "n1"})
    q.add(a)  # UnscheduledPodAdd nominates with Noop -> status.nominatedNodeName
    assert [pi.pod.name for pi in q.nominated_pods_for_node("n1")] == ["a"]
    a2 = make_pod("a", labels={"v": "2"}, status={"nominatedNodeName": "n1"})
    q.update(a, a2)
    assert q.nominated_pods_for_node("n1")[0].pod is a2
    q.delete(a2)
    assert q.nominated_pods_for_node("n1") == []


# --- metrics and blocking pop --------------------------------------------------------------------


def test_unschedulable_pods_metric() -> None:
    m = Recorder()
    q, _ = make_queue(metrics=m)
    q.add(make_pod("a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeResourcesFit", "NodeAffinity"))
    assert m.get("scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 1
    assert m.get("scheduler_pending_pods", queue="unschedulable") == 1
    q.activate({p.key: p.pod})
    assert q.pop() is p
    assert m.get("scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 0
    assert m.get("scheduler_unschedulable_pods", plugin="NodeAffinity", profile=PROFILE) == 0
    assert m.get("scheduler_pending_pods", queue="active") == 0


def test_pop_blocking_timeout_and_close() -> None:
    q, _ = make_queue()
    assert q.pop_blocking(timeout=0) is None
    q.add(make_pod("a"))
    p = q.pop_blocking(timeout=0)
    assert p is not None and p.pod.name == "a"
    results: list[QueuedPodInfo | None] = []
    t = threading.Thread(target=lambda: results.append(q.pop_blocking()))
    t.start()
    q.close()
    t.join()
    assert results == [None]
    assert q.closed


def test_pop_blocking_wakes_on_add_from_other_thread() -> None:
    q, _ = make_queue()
    results: list[QueuedPodInfo | None] = []
    t = threading.Thread(target=lambda: results.append(q.pop_blocking()))
    t.start()
    q.add(make_pod("a"))
    t.join()
    assert results[0] is not None and results[0].pod.name == "a"


def test_close_stops_loops() -> None:
    q, clock = make_queue()
    q.run()
    assert clock.next_timer_time() is None  # nothing to flush: no timer
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    fail(q, q.pop(), plugins=("NodeResourcesFit",))  # type: ignore[arg-type]
    fail(q, q.pop())  # type: ignore[arg-type]
    assert (clock.next_timer_time(), clock.pending()) == (0.0, 2)  # unschedulable flush now, backoff at 2 s
    q.close()
    assert clock.next_timer_time() is None


# --- invariants under random operations ---------------------------------------------------------

_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "add",
                "gated",
                "pop",
                "fail",
                "fail_err",
                "done",
                "event",
                "activate",
                "delete",
                "tick",
                "ungate",
            ]
        ),
        st.integers(0, 5),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(_OPS, st.booleans())
def test_each_pod_in_at_most_one_place(ops: list[tuple[str, int]], fast: bool) -> None:
    q, clock = make_queue(fast=fast)
    q.run()
    popped: dict[str, QueuedPodInfo] = {}
    for op, i in ops:
        name = f"p{i}"
        key = f"default/{name}"
        if op == "add":
            q.add(make_pod(name))
        elif op == "gated":
            q.add(make_pod(name, spec={"schedulingGates": [{"name": "g"}]}))
        elif op == "ungate":
            q.update(make_pod(name, spec={"schedulingGates": [{"name": "g"}]}), make_pod(name))
        elif op == "pop":
            p = q.pop()
            if p is not None:
                assert p.key not in popped
                popped[p.key] = p
        elif op in ("fail", "fail_err") and popped:
            k = sorted(popped)[i % len(popped)]
            p = popped.pop(k)
            try:
                fail(q, p, plugins=("NodeResourcesFit",) if op == "fail" else ())
            except QueueError:
                pass
        elif op == "done" and popped:
            k = sorted(popped)[i % len(popped)]
            q.done(popped.pop(k).pod.uid)
        elif op == "event":
            q.move_all_to_active_or_backoff(NODE_ADD, None, {})
        elif op == "activate":
            pod = make_pod(name)
            q.activate({key: pod})
        elif op == "delete":
            q.delete(make_pod(name))
        elif op == "tick":
            clock.advance_to(clock.now() + i)
        places: dict[str, int] = {}
        for p in q._active.items() + q._backoff.items() + q._unsched.values():
            places[p.key] = places.get(p.key, 0) + 1
        assert all(v == 1 for v in places.values())
        pods, summary = q.pending_pods()
        assert len(pods) == q.len_active() + q.len_backoff() + q.len_unschedulable() + q.len_gated()
        assert q.in_flight_count() == len(popped)
        assert q.len_gated() == sum(1 for p in q._unsched.values() if p.gating_plugin)


def test_retries_would_repeat_only_for_errors_with_no_event_since_their_attempt() -> None:
    q, _ = make_queue()
    assert not q.retries_would_repeat()  # nothing queued
    q.add(make_pod("a", uid="a"))
    assert not q.retries_would_repeat()  # in activeQ
    p = q.pop()
    assert p is not None
    assert not q.retries_would_repeat()  # in flight
    fail(q, p)  # an error: no rejector plugin
    assert where(q, "default/a") == "backoff"
    assert q.retries_would_repeat()
    q.add(make_pod("b", uid="b"))  # a cluster event after a's attempt began
    b = q.pop()
    assert b is not None and b.key == "default/b"
    fail(q, b)
    assert not q.retries_would_repeat()  # a's attempt predates b's arrival


def test_retries_would_repeat_is_false_for_an_unschedulable_pod_moved_to_backoff() -> None:
    q, _ = make_queue()
    q.add(make_pod("a", uid="a"))
    p = q.pop()
    assert p is not None
    fail(q, p, plugins=("NodeAffinity",))
    assert not q.retries_would_repeat()
