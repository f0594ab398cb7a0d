"""Property: after any sequence of node/pod operations (with snapshot updates interleaved), the
incrementally updated snapshot matches a snapshot rebuilt from scratch from an independent model."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.node import ZONE_LABEL, Node
from kubesched.api.pod import Pod
from kubesched.cache import Cache
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import make_node, make_pod, node_info, snapshot_of

NODES = [f"n{i}" for i in range(6)]
ZONES = ["a", "b", "c", None]
IMAGES = ["img0:1", "img1:1", "img2:1", "img3:1"]
ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}
PREF = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 1,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "x"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
}


def build_node(name: str, zone: int, images: frozenset[int]) -> Node:
    z = ZONES[zone]
    imgs = [([IMAGES[i], f"img{i}@sha256:{i}"], 1000 * (i + 1)) for i in sorted(images)]
    return make_node(name, labels={ZONE_LABEL: z} if z else {}, images=imgs)


def build_pod(i: int, node: str, cpu: int, kind: int, claim: int) -> Pod:
    spec: dict[str, Any] = {}
    if kind == 1:
        spec["affinity"] = ANTI
    elif kind == 2:
        spec["affinity"] = PREF
    if claim:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": f"c{claim}"}}]
    spec["containers"] = [
        {
            "name": "c",
            "image": "x",
            "ports": [{"containerPort": 80, "hostPort": 8000 + i}],
            "resources": {"requests": {"cpu": f"{cpu}m"}},
        }
    ]
    return make_pod(f"p{i}", cpu=f"{cpu}m", node_name=node, spec=spec)


class Model:
    """Independent model: current nodes, a zone round-robin tree, and pods (assumed or not)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.zones: list[tuple[str, list[str]]] = []
        self.pods: dict[str, tuple[Pod, bool]] = {}

    @staticmethod
    def zkey(n: Node) -> str:
        z = n.labels.get(ZONE_LABEL, "")
        return f":\x00:{z}" if z else ""

    def tree_add(self, n: Node) -> None:
        for z, names in self.zones:
            if z == self.zkey(n):
                if n.name not in names:
                    names.append(n.name)
                return
        self.zones.append((self.zkey(n), [n.name]))

    def tree_remove(self, n: Node) -> None:
        for i, (z, names) in enumerate(self.zones):
            if z == self.zkey(n) and n.name in names:
                names.remove(n.name)
                if not names:
                    del self.zones[i]
                return

    def order(self) -> list[str]:
        out = []
        for k in range(max((len(ns) for _, ns in self.zones), default=0)):
            out += [ns[k] for _, ns in self.zones if k < len(ns)]
        return out

    def reference(self) -> Snapshot:
        infos: list[NodeInfo] = []
        for name in self.order():
            infos.append(
                node_info(self.nodes[name], [p for p, _ in self.pods.values() if p.node_name == name])
            )
        return snapshot_of(infos)


op = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODES), st.integers(0, 3), st.frozensets(st.integers(0, 3))),
    st.tuples(st.just("rmnode"), st.sampled_from(NODES)),
    st.tuples(
        st.just("assume"),
        st.integers(0, 9),
        st.sampled_from(NODES),
        st.integers(1, 900),
        st.integers(0, 2),
        st.integers(0, 2),
    ),
    st.tuples(
        st.just("add"),
        st.integers(0, 9),
        st.sampled_from(NODES),
        st.integers(1, 900),
        st.integers(0, 2),
        st.integers(0, 2),
    ),
    st.tuples(
        st.just("update"), st.integers(0, 9), st.integers(1, 900), st.integers(0, 2), st.integers(0, 2)
    ),
    st.tuples(st.just("forget"), st.integers(0, 9)),
    st.tuples(st.just("rmpod"), st.integers(0, 9)),
    st.tuples(st.just("snap")),
)


def summary(ni: NodeInfo, with_counts: bool) -> tuple[Any, ...]:
    images = {k: (v.size, v.num_nodes if with_counts else None) for k, v in ni.image_states.items()}
    return (
        ni.name,
        sorted(p.pod.uid for p in ni.pods),
        sorted(p.pod.uid for p in ni.pods_with_affinity),
        sorted(p.pod.uid for p in ni.pods_with_required_anti_affinity),
        ni.requested.as_dict(),
        ni.non_zero_requested.as_dict(),
        ni.allocatable.as_dict(),
        ni.pvc_ref_counts,
        {ip: sorted(s) for ip, s in ni.used_ports.ports.items()},
        images,
    )


def check(c: Cache, snap: Snapshot, m: Model, rebuilt: bool) -> None:
    ref = m.reference()
    fresh = c.new_snapshot()
    order = m.order()
    assert [ni.name for ni in fresh.list()] == order
    assert sorted(ni.name for ni in snap.list()) == sorted(order)
    if rebuilt:
        assert [ni.name for ni in snap.list()] == order
    assert snap.node_info_map.keys() == ref.node_info_map.keys() == fresh.node_info_map.keys()
    for name, r in ref.node_info_map.items():
        assert summary(fresh.node_info_map[name], True) == summary(r, True)
        assert summary(snap.node_info_map[name], False) == summary(r, False)
        assert snap.node_info_map[name].node is m.nodes[name]
    assert snap.have_pods_with_affinity_list == [n for n in snap.node_info_list if n.pods_with_affinity]
    assert snap.have_pods_with_required_anti_affinity_list == [
        n for n in snap.node_info_list if n.pods_with_required_anti_affinity
    ]
    assert {n.name for n in snap.have_pods_with_affinity_list} == {
        n.name for n in ref.have_pods_with_affinity_list
    }
    assert snap.used_pvc_set == ref.used_pvc_set == fresh.used_pvc_set
    assert snap.node_index == {n.name: i for i, n in enumerate(snap.node_info_list)}
    assert c.pod_count() == len(m.pods)
    assert c.assumed_pod_count() == sum(1 for _, a in m.pods.values() if a)


@settings(max_examples=300, deadline=None)
@given(st.lists(op, max_size=60))
def test_incremental_snapshot_matches_rebuild(ops: list[tuple[Any, ...]]) -> None:
    c, m, snap = Cache(), Model(), Snapshot()
    rebuilt = True
    for o in ops:
        kind = o[0]
        if kind == "node":
            _, name, zone, imgs = o
            new = build_node(name, zone, imgs)
            if name in m.nodes:
                old = m.nodes[name]
                c.update_node(old, new)
                if m.zkey(old) != m.zkey(new):
                    m.tree_remove(old)
                    m.tree_add(new)
            else:
                c.add_node(new)
                m.tree_add(new)
            m.nodes[name] = new
        elif kind == "rmnode":
            _, name = o
            if name in m.nodes:
                c.remove_node(m.nodes[name])
                m.tree_remove(m.nodes.pop(name))
        elif kind in ("assume", "add"):
            _, i, node, cpu, aff, claim = o
            p = build_pod(i, node, cpu, aff, claim)
            cur = m.pods.get(p.uid)
            if kind == "assume":
                if cur is None:
                    c.assume_pod(p)
                    m.pods[p.uid] = (p, True)
            elif cur is None or cur[1]:
                c.add_pod(p)
                m.pods[p.uid] = (p, False)
        elif kind == "update":
            _, i, cpu, aff, claim = o
            cur = m.pods.get(f"uid-default-p{i}")
            if cur is not None and not cur[1]:
                new_pod = build_pod(i, cur[0].node_name, cpu, aff, claim)
                c.update_pod(cur[0], new_pod)
                m.pods[new_pod.uid] = (new_pod, False)
        elif kind == "forget":
            cur = m.pods.get(f"uid-default-p{o[1]}")
            if cur is not None and cur[1]:
                c.forget_pod(cur[0])
                del m.pods[cur[0].uid]
        elif kind == "rmpod":
            cur = m.pods.get(f"uid-default-p{o[1]}")
            if cur is not None and not cur[1]:
                c.remove_pod(cur[0])
                del m.pods[cur[0].uid]
        else:
            rebuilt = c.update_snapshot(snap).lists_rebuilt
            check(c, snap, m, rebuilt)
    rebuilt = c.update_snapshot(snap).lists_rebuilt
    check(c, snap, m, rebuilt)
    # a second update with no changes copies nothing
    assert c.update_snapshot(snap).changed == []
