"""Incremental snapshot update (``pkg/scheduler/backend/cache/cache.go`` ``UpdateSnapshot``), ghosts, image
states (``pkg/scheduler/backend/cache/cache.go`` ``AddNode``/``UpdateNode``) and isolation."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.node import ZONE_LABEL
from kubesched.api.pod import Pod
from kubesched.cache import Cache, SnapshotInconsistentError
from kubesched.framework.node_info import ImageStateSummary
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

ANTI = {
    "affinity": {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
}
PREF = {
    "affinity": {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "x"}},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    }
}


def pvc(*claims: str) -> dict[str, Any]:
    return {
        "volumes": [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
        ]
    }


def names(nis: list[Any]) -> list[str]:
    return [ni.name for ni in nis]


def cluster(n: int = 3) -> tuple[Cache, Snapshot]:
    c = Cache()
    for i in range(1, n + 1):
        c.add_node(make_node(f"n{i}"))
    snap = Snapshot()
    c.update_snapshot(snap)
    return c, snap


def test_first_update_fills_everything() -> None:
    c, snap = cluster()
    assert names(snap.list()) == ["n1", "n2", "n3"]
    assert sorted(snap.node_info_map) == ["n1", "n2", "n3"]
    assert snap.generation == max(ni.generation for ni in snap.list())
    assert snap.generation > 0


def test_only_changed_nodes_are_copied() -> None:
    c, snap = cluster()
    objs = {ni.name: ni for ni in snap.list()}
    pods_lists = {ni.name: ni.pods for ni in snap.list()}
    gens = {ni.name: ni.generation for ni in snap.list()}
    list_obj = snap.node_info_list
    p = make_pod("web", cpu="700m").with_node_name("n2")
    c.assume_pod(p)
    upd = c.update_snapshot(snap)
    assert upd.changed == ["n2"] and upd.removed == [] and not upd.lists_rebuilt
    assert snap.node_info_list is list_obj
    for name in ("n1", "n3"):
        assert snap.get(name) is objs[name]
        assert snap.get(name).pods is pods_lists[name]  # type: ignore[union-attr]
        assert snap.get(name).generation == gens[name]  # type: ignore[union-attr]
    n2 = snap.get("n2")
    assert n2 is objs["n2"]  # updated in place, like upstream's *existing = *clone
    assert n2 is not None and n2.pods is not pods_lists["n2"]
    assert [pi.pod for pi in n2.pods] == [p] and n2.requested.milli_cpu == 700
    assert snap.generation == n2.generation > gens["n2"]
    # nothing changed: nothing copied
    assert c.update_snapshot(snap).changed == []


def test_adds_and_removes_are_reflected() -> None:
    c, snap = cluster()
    c.add_node(make_node("n4"))
    upd = c.update_snapshot(snap)
    assert upd.changed == ["n4"] and upd.lists_rebuilt
    assert names(snap.list()) == ["n1", "n2", "n3", "n4"]
    c.remove_node(make_node("n2"))
    upd = c.update_snapshot(snap)
    assert upd.removed == ["n2"] and upd.changed == [] and upd.lists_rebuilt
    assert names(snap.list()) == ["n1", "n3", "n4"]
    assert snap.get("n2") is None and len(snap) == 3
    assert c.node_count() == 3


def test_readded_node_keeps_position_until_next_add_or_remove() -> None:
    """Upstream quirk: remove + re-add between two updates does not rebuild the list."""
    c, snap = cluster()
    c.remove_node(make_node("n1"))
    c.add_node(make_node("n1"))
    c.update_snapshot(snap)
    assert names(snap.list()) == ["n1", "n2", "n3"]
    assert c.node_names() == ["n2", "n3", "n1"]
    c.add_node(make_node("n4"))
    c.update_snapshot(snap)
    assert names(snap.list()) == ["n2", "n3", "n1", "n4"]


def test_ghost_node() -> None:
    c, snap = cluster(2)
    p = make_pod("web", cpu="1", node_name="n1")
    c.add_pod(p)
    c.remove_node(make_node("n1"))
    assert c.node_count() == 2  # the ghost is still cached (upstream NodeCount)
    assert c.pod_count() == 1 and c.get_pod(p) is p
    upd = c.update_snapshot(snap)
    assert upd.removed == ["n1"] and upd.changed == []
    assert names(snap.list()) == ["n2"] and "n1" not in snap.node_info_map
    assert c.dump().nodes["n1"].node is None
    assert c.new_snapshot().node_info_map.keys() == {"n2"}
    # the node comes back: its pods are still accounted
    c.add_node(make_node("n1"))
    c.update_snapshot(snap)
    n1 = snap.get("n1")
    assert n1 is not None and n1.requested.milli_cpu == 1000
    assert names(snap.list()) == ["n2", "n1"]
    # removed again, then its last pod goes: the ghost disappears
    c.remove_node(make_node("n1"))
    c.remove_pod(p)
    assert c.node_count() == 1 and c.pod_count() == 0
    c.update_snapshot(snap)
    assert names(snap.list()) == ["n2"]


def test_affinity_lists_and_pvcs_incremental() -> None:
    c, snap = cluster(4)
    anti = make_pod("anti", node_name="n3", labels={"app": "x"}, spec=ANTI)
    pref = make_pod("pref", node_name="n1", spec=PREF)
    c.add_pod(anti)
    upd = c.update_snapshot(snap)
    assert not upd.lists_rebuilt
    assert names(snap.have_pods_with_affinity_list) == ["n3"]
    assert names(snap.have_pods_with_required_anti_affinity_list) == ["n3"]
    c.add_pod(pref)
    c.add_pod(make_pod("pref2", node_name="n4", spec=PREF))
    c.update_snapshot(snap)
    assert names(snap.have_pods_with_affinity_list) == ["n1", "n3", "n4"]
    assert names(snap.have_pods_with_required_anti_affinity_list) == ["n3"]
    c.remove_pod(anti)
    c.update_snapshot(snap)
    assert names(snap.have_pods_with_affinity_list) == ["n1", "n4"]
    assert snap.have_pods_with_required_anti_affinity_list == []

    a = make_pod("a", node_name="n1", spec=pvc("c1", "c2"))
    b = make_pod("b", node_name="n2", spec=pvc("c1"))
    c.add_pod(a)
    c.add_pod(b)
    c.update_snapshot(snap)
    assert snap.used_pvc_set == {"default/c1", "default/c2"}
    assert snap.is_pvc_used_by_pods("default/c1")
    c.remove_pod(a)
    c.update_snapshot(snap)
    assert snap.used_pvc_set == {"default/c1"}
    c.remove_pod(b)
    c.update_snapshot(snap)
    assert snap.used_pvc_set == set()
    fresh = c.new_snapshot()
    assert names(fresh.have_pods_with_affinity_list) == names(snap.have_pods_with_affinity_list)


def test_snapshot_isolation() -> None:
    c, snap = cluster(2)
    c.add_pod(make_pod("old", cpu="100m", node_name="n1", spec=pvc("c")))
    c.update_snapshot(snap)
    n1 = snap.get("n1")
    assert n1 is not None
    before = (list(n1.pods), n1.requested.milli_cpu, dict(n1.pvc_ref_counts), n1.generation)
    c.assume_pod(make_pod("new", cpu="2", spec=pvc("d"), images=["busybox"]).with_node_name("n1"))
    c.remove_pod(make_pod("old", node_name="n1"))
    c.update_node(make_node("n1"), make_node("n1", cpu="64", images=[(["busybox:latest"], 10)]))
    c.remove_node(make_node("n2"))
    assert (list(n1.pods), n1.requested.milli_cpu, dict(n1.pvc_ref_counts), n1.generation) == before
    assert n1.allocatable.milli_cpu == 4000 and n1.image_states == {}
    assert names(snap.list()) == ["n1", "n2"] and snap.used_pvc_set == {"default/c"}
    c.update_snapshot(snap)
    assert n1.requested.milli_cpu == 2000 and n1.allocatable.milli_cpu == 64000
    assert n1.image_states == {"busybox:latest": ImageStateSummary(10, 1)}
    assert snap.used_pvc_set == {"default/d"} and names(snap.list()) == ["n1"]


def test_image_states_num_nodes() -> None:
    c = Cache()
    img = (["img:1", "img@sha256:aa"], 100)
    n1 = c.add_node(make_node("n1", images=[img]))
    assert n1.image_states == {"img:1": ImageStateSummary(100, 1), "img@sha256:aa": ImageStateSummary(100, 1)}
    n2 = c.add_node(make_node("n2", images=[(["img:1"], 100), (["other:2"], 50)]))
    assert n2.image_states == {"img:1": ImageStateSummary(100, 2), "other:2": ImageStateSummary(50, 1)}
    snap = Snapshot()
    c.update_snapshot(snap)
    # both cloned now: current counts
    assert snap.get("n1").image_states == {  # type: ignore[union-attr]
        "img:1": ImageStateSummary(100, 2),
        "img@sha256:aa": ImageStateSummary(100, 1),
    }
    # n3 gains img:1 (with another size: the first-seen size wins)
    c.add_node(make_node("n3", images=[(["img:1"], 999)]))
    c.update_snapshot(snap)
    assert c.image_num_nodes("img:1") == 3
    assert snap.get("n3").image_states == {"img:1": ImageStateSummary(100, 3)}  # type: ignore[union-attr]
    # unchanged nodes keep the counts of their last clone (upstream)
    assert snap.get("n1").image_states["img:1"] == ImageStateSummary(100, 2)  # type: ignore[union-attr]
    assert snap.get("n2").image_states["img:1"] == ImageStateSummary(100, 2)  # type: ignore[union-attr]
    # a change to n1 (a pod) re-clones it with fresh counts
    c.assume_pod(make_pod("p").with_node_name("n1"))
    c.update_snapshot(snap)
    assert snap.get("n1").image_states["img:1"] == ImageStateSummary(100, 3)  # type: ignore[union-attr]
    assert snap.get("n2").image_states["img:1"] == ImageStateSummary(100, 2)  # type: ignore[union-attr]
    # n3 loses the image, n2 is removed: names nobody reports are dropped
    c.update_node(make_node("n3", images=[(["img:1"], 999)]), make_node("n3"))
    c.remove_node(make_node("n2", images=[(["img:1"], 100), (["other:2"], 50)]))
    assert c.image_num_nodes("img:1") == 1 and c.image_num_nodes("other:2") == 0
    assert c.new_snapshot().get("n1").image_states == {  # type: ignore[union-attr]
        "img:1": ImageStateSummary(100, 1),
        "img@sha256:aa": ImageStateSummary(100, 1),
    }
    assert c.new_snapshot().get("n3").image_states == {}  # type: ignore[union-attr]


def test_zone_order_in_snapshot() -> None:
    c = Cache()
    for name, z in [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("c1", "C"), ("c2", "C")]:
        c.add_node(make_node(name, labels={ZONE_LABEL: z}))
    assert names(c.new_snapshot().list()) == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert names(list(c.node_infos())) == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_inconsistent_list_is_rebuilt_and_raises() -> None:
    c, snap = cluster(2)
    snap.node_info_list = snap.node_info_list[:1]
    with pytest.raises(SnapshotInconsistentError) as e:
        c.update_snapshot(snap)
    assert str(e.value) == (
        "snapshot state is not consistent, length of NodeInfoList=1 not equal to length of "
        "nodes in tree=2 , length of NodeInfoMap=2, length of nodes in cache=2, trying to recover"
    )
    assert names(snap.list()) == ["n1", "n2"]
    c.update_snapshot(snap)


def test_dump() -> None:
    c, _ = cluster(1)
    p: Pod = make_pod("p").with_node_name("n1")
    c.assume_pod(p)
    d = c.dump()
    assert d.assumed_pods == {"uid-default-p"}
    assert list(d.nodes) == ["n1"] and [pi.pod for pi in d.nodes["n1"].pods] == [p]
