"""NodeVolumeLimits: CSI attach limits from CSINode (``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``)."""

from __future__ import annotations

from plugin_volume_support import FakeStore, pv, pvc, pvc_volumes, storage_class

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodevolumelimits.csi import NodeVolumeLimits
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

EXCEEDED = Status(Code.Unschedulable, "node(s) exceed max volume count")
DRIVER = "ebs.csi.aws.com"


def _csinode(name: str, count: int | None) -> dict:
    drv: dict = {"name": DRIVER, "nodeID": name}
    if count is not None:
        drv["allocatable"] = {"count": count}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [drv]},
    }


def _bound(i: int) -> list[dict]:
    return [
        pv(f"pv{i}", csi=(DRIVER, f"vol-{i}"), claim=("default", f"c{i}")),
        pvc(f"c{i}", volume_name=f"pv{i}", bound=True),
    ]


def _objects(count: int | None) -> list[dict]:
    objs = [_csinode("n1", count), storage_class("ebs", provisioner=DRIVER), pvc("fresh", sc="ebs")]
    for i in range(4):
        objs += _bound(i)
    return objs


def _node_with_two() -> object:
    return node_info(
        make_node("n1"),
        [
            make_pod("a", node_name="n1", spec=pvc_volumes("c0")),
            make_pod("b", node_name="n1", spec=pvc_volumes("c1", "c0")),
        ],
    )


def test_limit_exceeded() -> None:
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(_objects(2))))
    pod = make_pod("web", spec=pvc_volumes("c2"))
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    assert pl.filter(state, pod, _node_with_two()) == EXCEEDED
    # a volume already attached on the node is not counted twice
    assert pl.filter(state, pod, node_info(make_node("n1"))) is None
    shared = make_pod("web2", spec=pvc_volumes("c0", "c1"))
    assert pl.filter(state, shared, _node_with_two()) is None
    # unbound claims count through their class's provisioner
    assert pl.filter(state, make_pod("web3", spec=pvc_volumes("fresh")), _node_with_two()) == EXCEEDED


def test_within_limit_and_no_limit() -> None:
    pod = make_pod("web", spec=pvc_volumes("c2", "c3"))
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(_objects(4))))
    assert pl.filter(CycleState(), pod, _node_with_two()) is None
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(_objects(3))))
    assert pl.filter(CycleState(), pod, _node_with_two()) == EXCEEDED
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(_objects(None))))
    assert pl.filter(CycleState(), pod, _node_with_two()) is None
    objs = [o for o in _objects(1) if o["kind"] != "CSINode"]
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(objs)))
    assert pl.filter(CycleState(), pod, _node_with_two()) is None


def test_skip_and_missing_pvc() -> None:
    pl = NodeVolumeLimits(None, FakeHandle(objects=FakeStore(_objects(2))))
    assert pl.pre_filter(CycleState(), make_pod("plain"), []) == (None, Status(Code.Skip))
    st = pl.filter(CycleState(), make_pod("web", spec=pvc_volumes("nope")), _node_with_two())
    assert st == Status(
        Code.UnschedulableAndUnresolvable,
        'looking up PVC default/nope: persistentvolumeclaim "nope" not found',
    )


def test_events() -> None:
    pl = NodeVolumeLimits(None, FakeHandle())
    ev = pl.events_to_register()
    assert [e.event.label for e in ev] == [
        "storage.k8s.io/CSINodeAdd",
        "PodDelete",
        "PersistentVolumeClaimAdd",
        "storage.k8s.io/VolumeAttachmentDelete",
    ]
    hint = ev[1].queueing_hint_fn
    assert hint is not None
    pod = make_pod("web", spec=pvc_volumes("c2"))
    assert hint(pod, make_pod("a", node_name="n1", spec=pvc_volumes("c0")), None) == 1
    assert hint(pod, make_pod("a", spec=pvc_volumes("c0")), None) == 0
    assert hint(pod, make_pod("a", node_name="n1"), None) == 0
