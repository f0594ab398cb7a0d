"""NodeUnschedulable (``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.nodeunschedulable.node_unschedulable import NodeUnschedulable
from kubesched.testing import make_node, make_pod, node_info


def tol(*ts: dict[str, Any], name: str = "p") -> Any:
    return make_pod(name, spec={"tolerations": list(ts)})


UNSCHED_TOL = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def test_identity() -> None:
    assert NodeUnschedulable().name() == "NodeUnschedulable"
    assert NodeUnschedulable.Args is None


def test_schedulable_node_passes() -> None:
    assert NodeUnschedulable().filter(CycleState(), make_pod("p"), node_info(make_node("n"))) is None


def test_unschedulable_node_rejected() -> None:
    st = NodeUnschedulable().filter(
        CycleState(), make_pod("p"), node_info(make_node("n", unschedulable=True))
    )
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["node(s) were unschedulable"]


@pytest.mark.parametrize(
    "t",
    [
        UNSCHED_TOL,
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
        {"operator": "Exists"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "", "effect": "NoSchedule"},
    ],
)
def test_tolerating_pod_passes(t: dict[str, Any]) -> None:
    assert (
        NodeUnschedulable().filter(CycleState(), tol(t), node_info(make_node("n", unschedulable=True)))
        is None
    )


@pytest.mark.parametrize(
    "t",
    [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"},
        {
            "key": "node.kubernetes.io/unschedulable",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        },
        {"key": "other", "operator": "Exists"},
    ],
)
def test_non_matching_toleration_rejected(t: dict[str, Any]) -> None:
    st = NodeUnschedulable().filter(CycleState(), tol(t), node_info(make_node("n", unschedulable=True)))
    assert st is not None and st.message() == "node(s) were unschedulable"


def test_nil_node() -> None:
    st = NodeUnschedulable().filter(CycleState(), make_pod("p"), NodeInfo())
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["node(s) had unknown conditions"]


def test_events() -> None:
    evs = NodeUnschedulable().events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert all(e.queueing_hint_fn is not None for e in evs)
    assert evs[0].event.match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint))
    assert not evs[0].event.match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel))


def test_node_hint() -> None:
    pl = NodeUnschedulable()
    p = make_pod("p")
    cordoned, free = make_node("n", unschedulable=True), make_node("n")
    assert pl.is_schedulable_after_node_change(p, None, free) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, None, cordoned) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, cordoned, free) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, free, cordoned) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, free, free) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, cordoned, cordoned) == QueueingHint.QueueSkip


def test_pod_toleration_hint() -> None:
    pl = NodeUnschedulable()
    p = make_pod("p")
    assert pl.is_schedulable_after_pod_toleration_change(p, p, tol(UNSCHED_TOL)) == QueueingHint.Queue
    assert (
        pl.is_schedulable_after_pod_toleration_change(p, p, tol({"key": "x", "operator": "Exists"}))
        == QueueingHint.QueueSkip
    )
    assert (
        pl.is_schedulable_after_pod_toleration_change(p, None, tol(UNSCHED_TOL, name="q"))
        == QueueingHint.QueueSkip
    )


def test_hint_type_error() -> None:
    with pytest.raises(TypeError):
        NodeUnschedulable().is_schedulable_after_node_change(make_pod("p"), None, make_pod("x"))
