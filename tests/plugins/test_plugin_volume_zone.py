"""VolumeZone: bound PVs' zone/region labels versus node labels
(``pkg/scheduler/framework/plugins/volumezone``)."""

from __future__ import annotations

from plugin_volume_support import FakeStore, pv, pvc, pvc_volumes, storage_class

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumezone.volume_zone import VolumeZone, label_zones_to_set
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

CONFLICT = Status(Code.UnschedulableAndUnresolvable, "node(s) had no available volume zone")


def _plugin(objects) -> VolumeZone:
    return VolumeZone(None, FakeHandle(objects=FakeStore(objects)))


def _objs(pv_labels: dict) -> list[dict]:
    return [
        pv("pv1", labels=pv_labels, claim=("default", "data")),
        pvc("data", volume_name="pv1", bound=True),
    ]


def test_zone_mismatch_and_match() -> None:
    pl = _plugin(_objs({"topology.kubernetes.io/zone": "a__b", "topology.kubernetes.io/region": "r1"}))
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    zc = make_node("zc", labels={"topology.kubernetes.io/zone": "c", "topology.kubernetes.io/region": "r1"})
    zb = make_node("zb", labels={"topology.kubernetes.io/zone": "b", "topology.kubernetes.io/region": "r1"})
    other_region = make_node(
        "zr", labels={"topology.kubernetes.io/zone": "a", "topology.kubernetes.io/region": "r2"}
    )
    zone_only = make_node("zo", labels={"topology.kubernetes.io/zone": "a"})
    unlabeled = make_node("nl")
    assert pl.filter(state, pod, node_info(zc)) == CONFLICT
    assert pl.filter(state, pod, node_info(zb)) is None
    assert pl.filter(state, pod, node_info(other_region)) == CONFLICT
    assert pl.filter(state, pod, node_info(zone_only)) == CONFLICT  # region key missing on the node
    assert pl.filter(state, pod, node_info(unlabeled)) is None  # no topology labels: single-zone cluster


def test_beta_pv_label_matches_ga_node_label() -> None:
    pl = _plugin(_objs({"failure-domain.beta.kubernetes.io/zone": "a"}))
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    assert (
        pl.filter(state, pod, node_info(make_node("n", labels={"topology.kubernetes.io/zone": "a"}))) is None
    )
    assert (
        pl.filter(state, pod, node_info(make_node("m", labels={"topology.kubernetes.io/zone": "b"})))
        == CONFLICT
    )


def test_skip_and_prefilter_errors() -> None:
    objs = [
        storage_class("wffc"),
        storage_class("imm", mode="Immediate"),
        pvc("late", sc="wffc"),
        pvc("now", sc="imm"),
        pvc("nosc", sc=None),
        pvc("ghost", volume_name="pv-x", bound=True),
        pv("plain", claim=("default", "p")),
        pvc("p", volume_name="plain", bound=True),
    ]
    pl = _plugin(objs)

    def pf(*claims: str):
        return pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes(*claims)), [])[1]

    assert pf("late") == Status(Code.Skip)
    assert pf("p") == Status(Code.Skip)  # PV without topology labels
    assert pf("now") == Status(Code.UnschedulableAndUnresolvable, "PersistentVolume had no name")
    assert pf("nosc") == Status(
        Code.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name"
    )
    assert pf("ghost") == Status(Code.UnschedulableAndUnresolvable, 'persistentvolume "pv-x" not found')
    assert pf("missing") == Status(
        Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "missing" not found'
    )
    assert pl.pre_filter(CycleState(), make_pod("plain"), [])[1] == Status(Code.Skip)


def test_label_zones_to_set() -> None:
    assert label_zones_to_set("a__b") == frozenset({"a", "b"})
    assert label_zones_to_set("a") == frozenset({"a"})
    assert label_zones_to_set("a____b") is None


def test_hints() -> None:
    pl = _plugin([])
    ev = pl.events_to_register()
    pod = make_pod("web", spec=pvc_volumes("data"))
    sc_hint, pvc_hint, pv_hint = ev[0].queueing_hint_fn, ev[2].queueing_hint_fn, ev[3].queueing_hint_fn
    assert sc_hint and pvc_hint and pv_hint
    assert sc_hint(pod, None, storage_class("x")) == 1
    assert sc_hint(pod, None, storage_class("x", mode="Immediate")) == 0
    assert pvc_hint(pod, None, pvc("data")) == 1 and pvc_hint(pod, None, pvc("other")) == 0
    assert pv_hint(pod, None, pv("a")) == 1
    old = pv("a", labels={"topology.kubernetes.io/zone": "a"})
    assert pv_hint(pod, old, pv("a", labels={"topology.kubernetes.io/zone": "b"})) == 1
    assert pv_hint(pod, old, pv("a", labels={"topology.kubernetes.io/zone": "a", "x": "y"})) == 0
