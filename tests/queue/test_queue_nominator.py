"""Nominator (``pkg/scheduler/backend/queue/nominator.go``) and derived pod-update events
(``pkg/scheduler/backend/queue/scheduling_queue.go`` ``MoveAllToActiveOrBackoffQueue``)."""

from __future__ import annotations

from kubesched.api.pod import Pod
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.node_info import PodInfo
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.queue import Nominator, pod_scheduling_properties_change
from kubesched.testing import make_pod

OVERRIDE = NominatingMode.Override


def names(n: Nominator, node: str) -> list[str]:
    return [pi.pod.name for pi in n.nominated_pods_for_node(node)]


def test_add_noop_uses_status_and_override_replaces() -> None:
    n = Nominator()
    a = make_pod("a", status={"nominatedNodeName": "n1"})
    b = make_pod("b")
    n.add_nominated_pod(PodInfo(a), None)
    n.add_nominated_pod(PodInfo(b), NominatingInfo("", NominatingMode.Noop))  # nothing to nominate
    assert names(n, "n1") == ["a"] and len(n) == 1
    n.add_nominated_pod(PodInfo(b), NominatingInfo("n1", OVERRIDE))
    assert names(n, "n1") == ["a", "b"]
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n2", OVERRIDE))  # override moves it
    assert names(n, "n1") == ["b"] and names(n, "n2") == ["a"]
    n.add_nominated_pod(PodInfo(a), NominatingInfo("", OVERRIDE))  # cleared
    assert names(n, "n2") == [] and n.nominated_node(a.uid) is None


def test_delete() -> None:
    n = Nominator()
    a = make_pod("a")
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n1", OVERRIDE))
    n.delete_nominated_pod_if_exists(a)
    n.delete_nominated_pod_if_exists(a)
    assert names(n, "n1") == [] and len(n) == 0


def test_pod_lister_gone_or_bound_is_not_nominated() -> None:
    store: dict[str, Pod] = {}
    n = Nominator(lambda key: store.get(key))
    a = make_pod("a")
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n1", OVERRIDE))
    assert names(n, "n1") == []
    store[a.key] = make_pod("a", node_name="n9")
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n1", OVERRIDE))
    assert names(n, "n1") == []
    store[a.key] = a
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n1", OVERRIDE))
    assert names(n, "n1") == ["a"]


def test_update_keeps_in_memory_nomination_without_status() -> None:
    n = Nominator()
    a = make_pod("a")
    n.add_nominated_pod(PodInfo(a), NominatingInfo("n1", OVERRIDE))
    a2 = make_pod("a", labels={"v": "2"})
    n.update_nominated_pod(a, PodInfo(a2))
    got = n.nominated_pods_for_node("n1")
    assert len(got) == 1 and got[0].pod is a2
    # the new pod carries a nomination: it wins
    a3 = make_pod("a", status={"nominatedNodeName": "n2"})
    n.update_nominated_pod(a2, PodInfo(a3))
    assert names(n, "n1") == [] and names(n, "n2") == ["a"]
    # the nomination was removed from the status: dropped
    n.update_nominated_pod(a3, PodInfo(make_pod("a")))
    assert names(n, "n2") == [] and len(n) == 0


def _ev(action: ActionType, assigned: bool = False) -> ClusterEvent:
    return ClusterEvent(EventResource.AssignedPod if assigned else EventResource.UnscheduledPod, action)


def test_pod_update_events() -> None:
    base = make_pod("a", cpu="2", memory="1Gi", spec={"schedulingGates": [{"name": "g"}]})
    changed = make_pod(
        "a",
        cpu="1",
        memory="1Gi",
        labels={"x": "y"},
        spec={"tolerations": [{"key": "k", "operator": "Exists"}]},
    )
    assert pod_scheduling_properties_change(changed, base) == [
        _ev(ActionType.UpdatePodLabel),
        _ev(ActionType.UpdatePodScaleDown),
        _ev(ActionType.UpdatePodSchedulingGatesEliminated),
        _ev(ActionType.UpdatePodToleration),
    ]
    same = make_pod("a", cpu="2", memory="1Gi", spec={"schedulingGates": [{"name": "g"}]})
    assert pod_scheduling_properties_change(same, base) == [_ev(ActionType.Update)]
    assert [e.label for e in pod_scheduling_properties_change(same, base)] == ["UnscheduledPodUpdate"]
    # scaling up or removing a request
    assert pod_scheduling_properties_change(
        make_pod("a", cpu="3", memory="1Gi"), make_pod("a", cpu="2", memory="1Gi")
    ) == [_ev(ActionType.Update)]
    assert pod_scheduling_properties_change(make_pod("a", cpu="2"), make_pod("a", cpu="2", memory="1Gi")) == [
        _ev(ActionType.UpdatePodScaleDown)
    ]
    bound = make_pod("a", node_name="n1", labels={"x": "z"})
    assert pod_scheduling_properties_change(bound, make_pod("a", node_name="n1")) == [
        _ev(ActionType.UpdatePodLabel, assigned=True)
    ]
    claims_old = make_pod("a", status={"resourceClaimStatuses": []})
    claims_new = make_pod("a", status={"resourceClaimStatuses": [{"name": "c", "resourceClaimName": "a-c"}]})
    assert pod_scheduling_properties_change(claims_new, claims_old) == [
        _ev(ActionType.UpdatePodGeneratedResourceClaim)
    ]
