"""VolumeRestrictions: inline disk conflicts and ReadWriteOncePod exclusivity
(``pkg/scheduler/framework/plugins/volumerestrictions``)."""

from __future__ import annotations

from plugin_volume_support import FakeStore, pvc, pvc_volumes

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import PodInfo
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumerestrictions.volume_restrictions import VolumeRestrictions
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, snapshot_of

N1, N2 = make_node("n1"), make_node("n2")
RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def _gce(pd: str, read_only: bool = False) -> dict:
    return {"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}]}


def _plugin(nodes, objects=()) -> VolumeRestrictions:
    return VolumeRestrictions(None, FakeHandle(snapshot_of(nodes), objects=FakeStore(list(objects))))


def test_read_write_once_pod_conflict() -> None:
    user = make_pod("user", node_name="n1", spec=pvc_volumes("db"))
    nodes = [node_info(N1, [user]), node_info(N2)]
    pl = _plugin(nodes, [pvc("db", modes=["ReadWriteOncePod"])])
    pod = make_pod("web", spec=pvc_volumes("db"))
    state = CycleState()
    assert pl.pre_filter(state, pod, nodes) == (None, None)
    for ni in nodes:  # cluster-wide: every node is rejected
        assert pl.filter(state, pod, ni) == Status(Code.Unschedulable, RWOP)
    # removing the user (preemption simulation) clears the conflict; adding it back restores it
    ext = pl.pre_filter_extensions()
    assert ext is not None
    s2 = state.clone()
    assert ext.remove_pod(s2, pod, PodInfo(user), nodes[0]) is None
    assert pl.filter(s2, pod, nodes[1]) is None
    assert ext.add_pod(s2, pod, PodInfo(user), nodes[0]) is None
    assert pl.filter(s2, pod, nodes[1]) == Status(Code.Unschedulable, RWOP)
    assert pl.filter(state, pod, nodes[1]) == Status(Code.Unschedulable, RWOP)


def test_rwop_unused_claim_skips() -> None:
    nodes = [node_info(N1)]
    pl = _plugin(nodes, [pvc("db", modes=["ReadWriteOncePod"])])
    assert pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes("db")), nodes) == (
        None,
        Status(Code.Skip),
    )
    assert pl.pre_filter(CycleState(), make_pod("plain"), nodes) == (None, Status(Code.Skip))


def test_rwo_claim_in_use_is_no_conflict() -> None:
    nodes = [node_info(N1, [make_pod("user", node_name="n1", spec=pvc_volumes("db"))])]
    pl = _plugin(nodes, [pvc("db", modes=["ReadWriteOnce"])])
    assert pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes("db")), nodes) == (
        None,
        Status(Code.Skip),
    )


def test_missing_pvc() -> None:
    pl = _plugin([node_info(N1)])
    _, s = pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes("nope")), [])
    assert s == Status(Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "nope" not found')


def test_gce_pd_conflict() -> None:
    nodes = [node_info(N1, [make_pod("old", node_name="n1", spec=_gce("disk-1"))]), node_info(N2)]
    pl = _plugin(nodes)
    pod = make_pod("web", spec=_gce("disk-1"))
    state = CycleState()
    assert pl.pre_filter(state, pod, nodes) == (None, None)
    assert pl.filter(state, pod, nodes[0]) == Status(Code.Unschedulable, "node(s) had no available disk")
    assert pl.filter(state, pod, nodes[1]) is None


def test_read_only_gce_pd_shared() -> None:
    nodes = [node_info(N1, [make_pod("old", node_name="n1", spec=_gce("disk-1", True))])]
    pl = _plugin(nodes)
    pod = make_pod("web", spec=_gce("disk-1", True))
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    assert pl.filter(state, pod, nodes[0]) is None


def test_ebs_rbd_iscsi_rules() -> None:
    def spec(v: dict) -> dict:
        return {"volumes": [{"name": "d", **v}]}

    ebs = {"awsElasticBlockStore": {"volumeID": "vol-1", "readOnly": True}}
    rbd_a = {"rbd": {"monitors": ["m1", "m2"], "image": "img"}}
    rbd_b = {"rbd": {"monitors": ["m2"], "pool": "rbd", "image": "img"}}
    rbd_other_pool = {"rbd": {"monitors": ["m2"], "pool": "x", "image": "img"}}
    iscsi_ro = {"iscsi": {"iqn": "iqn.x", "readOnly": True}}
    cases = [
        (ebs, ebs, False),  # EBS conflicts even when both read-only
        (rbd_a, rbd_b, False),
        (rbd_a, rbd_other_pool, True),
        (iscsi_ro, iscsi_ro, True),
    ]
    for existing, new, fits in cases:
        nodes = [node_info(N1, [make_pod("old", node_name="n1", spec=spec(existing))])]
        pl = _plugin(nodes)
        pod = make_pod("web", spec=spec(new))
        state = CycleState()
        pl.pre_filter(state, pod, nodes)
        expected = None if fits else Status(Code.Unschedulable, "node(s) had no available disk")
        assert pl.filter(state, pod, nodes[0]) == expected, (existing, new)


def test_hints() -> None:
    pl = _plugin([])
    ev = pl.events_to_register()
    assert [e.event.label for e in ev] == ["PodDelete", "NodeAdd", "PersistentVolumeClaimAdd"]
    pod = make_pod("web", spec=pvc_volumes("db"))
    del_hint, pvc_hint = ev[0].queueing_hint_fn, ev[2].queueing_hint_fn
    assert del_hint is not None and pvc_hint is not None
    assert del_hint(pod, make_pod("old", node_name="n1", spec=pvc_volumes("db")), None) == 1
    assert del_hint(pod, make_pod("old", node_name="n1"), None) == 0
    assert del_hint(pod, make_pod("old", "other", node_name="n1", spec=pvc_volumes("db")), None) == 0
    assert pvc_hint(pod, None, pvc("db")) == 1
    assert pvc_hint(pod, None, pvc("xx")) == 0
