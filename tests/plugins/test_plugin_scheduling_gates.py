"""SchedulingGates (``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``)."""

from __future__ import annotations

from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin
from kubesched.framework.status import Code
from kubesched.plugins.schedulinggates.scheduling_gates import SchedulingGates
from kubesched.testing import make_node, make_pod


def gated(name: str = "p", *gates: str, uid: str | None = None):  # type: ignore[no-untyped-def]
    return make_pod(name, uid=uid, spec={"schedulingGates": [{"name": g} for g in gates]} if gates else None)


def test_identity() -> None:
    pl = SchedulingGates()
    assert pl.name() == "SchedulingGates"
    assert SchedulingGates.Args is None
    assert isinstance(pl, PreEnqueuePlugin) and isinstance(pl, EnqueueExtensions)


def test_no_gates_passes() -> None:
    assert SchedulingGates().pre_enqueue(make_pod("p")) is None


def test_gates_listed_in_spec_order() -> None:
    st = SchedulingGates().pre_enqueue(gated("p", "example.com/b", "example.com/a"))
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["waiting for scheduling gates: [example.com/b example.com/a]"]
    assert st.message() == "waiting for scheduling gates: [example.com/b example.com/a]"


def test_single_gate() -> None:
    st = SchedulingGates().pre_enqueue(gated("p", "g1"))
    assert st is not None and st.message() == "waiting for scheduling gates: [g1]"


def test_events() -> None:
    pl = SchedulingGates()
    evs = pl.events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)
    ]
    assert evs[0].queueing_hint_fn is not None
    assert evs[0].event.match(
        ClusterEvent(EventResource.UnscheduledPod, ActionType.UpdatePodSchedulingGatesEliminated)
    )
    assert not evs[0].event.match(ClusterEvent(EventResource.UnscheduledPod, ActionType.UpdatePodLabel))


def test_hint_same_pod_gates_removed_queues() -> None:
    pl = SchedulingGates()
    old = gated("p", "g1")
    new = make_pod("p")
    assert pl.is_schedulable_after_gates_eliminated(old, old, new) == QueueingHint.Queue


def test_hint_other_pod_skips() -> None:
    pl = SchedulingGates()
    target = gated("p", "g1")
    other_old, other_new = gated("q", "g1"), make_pod("q")
    assert pl.is_schedulable_after_gates_eliminated(target, other_old, other_new) == QueueingHint.QueueSkip


def test_hint_same_pod_still_gated_skips() -> None:
    pl = SchedulingGates()
    old = gated("p", "g1", "g2")
    new = gated("p", "g2")
    assert pl.is_schedulable_after_gates_eliminated(old, old, new) == QueueingHint.QueueSkip


def test_hint_wrong_type_raises() -> None:
    pl = SchedulingGates()
    p = gated("p", "g1")
    try:
        pl.is_schedulable_after_gates_eliminated(p, None, make_node("n"))
    except TypeError as e:
        assert str(e) == "expected Pod, but got Node"
    else:  # pragma: no cover
        raise AssertionError("no TypeError")
