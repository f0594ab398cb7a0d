"""NodePorts (``pkg/scheduler/framework/plugins/nodeports/node_ports.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.nodeports.node_ports import NodePorts, fits
from kubesched.testing import make_node, make_pod, node_info


def port(host_port: int, protocol: str | None = None, host_ip: str | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"containerPort": host_port + 1, "hostPort": host_port}
    if protocol:
        p["protocol"] = protocol
    if host_ip:
        p["hostIP"] = host_ip
    return p


def ppod(
    name: str,
    *ports: dict[str, Any],
    node_name: str | None = None,
    init_ports: list[dict[str, Any]] | None = None,
    sidecar: bool = False,
    nominated: str | None = None,
) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "ports": list(ports)}]}
    if init_ports is not None:
        ic: dict[str, Any] = {"name": "init", "image": "i", "ports": init_ports}
        if sidecar:
            ic["restartPolicy"] = "Always"
        spec["initContainers"] = [ic]
    return make_pod(
        name, node_name=node_name, spec=spec, status={"nominatedNodeName": nominated} if nominated else None
    )


def run(p: Any, existing: list[Any]) -> Any:
    pl = NodePorts()
    state = CycleState()
    res, s = pl.pre_filter(state, p, [])
    assert res is None and s is None
    return pl.filter(state, p, node_info(make_node("n1"), existing))


def test_identity() -> None:
    assert NodePorts().name() == "NodePorts"
    assert NodePorts.Args is None


def test_prefilter_skip_without_host_ports() -> None:
    p = make_pod("p", spec={"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]})
    res, s = NodePorts().pre_filter(CycleState(), p, [])
    assert res is None and s is not None and s.code == Code.Skip


def test_prefilter_skip_with_only_regular_init_container_port() -> None:
    p = make_pod(
        "p",
        spec={
            "containers": [{"name": "c", "image": "i"}],
            "initContainers": [{"name": "x", "image": "i", "ports": [port(80)]}],
        },
    )
    _, s = NodePorts().pre_filter(CycleState(), p, [])
    assert s is not None and s.code == Code.Skip


def test_free_ports_fit() -> None:
    assert run(ppod("p", port(8080)), [ppod("o", port(8081), node_name="n1")]) is None


@pytest.mark.parametrize(
    ("want", "used", "conflict"),
    [
        (port(8080), port(8080), True),
        (port(8080, "UDP"), port(8080), False),
        (port(8080, "UDP"), port(8080, "UDP"), True),
        (port(8080, host_ip="127.0.0.1"), port(8080, host_ip="127.0.0.2"), False),
        (port(8080, host_ip="127.0.0.1"), port(8080, host_ip="127.0.0.1"), True),
        (port(8080, host_ip="127.0.0.1"), port(8080), True),  # used on 0.0.0.0
        (port(8080), port(8080, host_ip="10.0.0.1"), True),  # want 0.0.0.0 vs any IP
        (port(8080, "SCTP", "10.0.0.1"), port(8080, "TCP", "10.0.0.1"), False),
    ],
)
def test_conflicts(want: dict[str, Any], used: dict[str, Any], conflict: bool) -> None:
    s = run(ppod("p", want), [ppod("o", used, node_name="n1")])
    if conflict:
        assert s is not None
        assert s.code == Code.Unschedulable
        assert s.reasons == ["node(s) didn't have free ports for the requested pod ports"]
    else:
        assert s is None


def test_sidecar_ports_count_both_ways() -> None:
    s = run(
        ppod("p", port(1), init_ports=[port(9000)], sidecar=True), [ppod("o", port(9000), node_name="n1")]
    )
    assert s is not None and s.code == Code.Unschedulable
    s = run(
        ppod("p", port(9000)), [ppod("o", port(2), node_name="n1", init_ports=[port(9000)], sidecar=True)]
    )
    assert s is not None and s.code == Code.Unschedulable


def test_filter_without_prefilter_is_error() -> None:
    s = NodePorts().filter(CycleState(), ppod("p", port(1)), node_info(make_node("n1")))
    assert s is not None and s.code == Code.Error
    assert s.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_fits_helper() -> None:
    ni = node_info(make_node("n1"), [ppod("o", port(80), node_name="n1")])
    assert not fits(ppod("p", port(80)), ni)
    assert fits(ppod("p", port(81)), ni)


def test_events() -> None:
    evs = NodePorts().events_to_register()
    assert [e.event for e in evs] == [ASSIGNED_POD_DELETE, NODE_ADD]
    assert evs[0].queueing_hint_fn is not None
    assert evs[1].queueing_hint_fn is None


def test_pod_deleted_hint() -> None:
    pl = NodePorts()
    target = ppod("p", port(80))
    assert (
        pl.is_schedulable_after_pod_deleted(target, ppod("o", port(80), node_name="n1"), None)
        == QueueingHint.Queue
    )
    assert (
        pl.is_schedulable_after_pod_deleted(target, ppod("o", port(80), nominated="n1"), None)
        == QueueingHint.Queue
    )
    # unscheduled and not nominated
    assert pl.is_schedulable_after_pod_deleted(target, ppod("o", port(80)), None) == QueueingHint.QueueSkip
    # no host ports
    assert (
        pl.is_schedulable_after_pod_deleted(target, ppod("o", node_name="n1"), None) == QueueingHint.QueueSkip
    )
    # no common port
    assert (
        pl.is_schedulable_after_pod_deleted(target, ppod("o", port(81), node_name="n1"), None)
        == QueueingHint.QueueSkip
    )
    # specific IP vs the target's 0.0.0.0
    assert (
        pl.is_schedulable_after_pod_deleted(
            target, ppod("o", port(80, host_ip="10.0.0.1"), node_name="n1"), None
        )
        == QueueingHint.Queue
    )
