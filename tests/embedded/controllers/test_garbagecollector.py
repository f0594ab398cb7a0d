"""The one garbage collector of the embedded cluster: owners of every kind (Pods owning claims,
ReplicaSets owning pods, Nodes owning Leases), owners never observed, and the controller list."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.manager import CONTROLLERS, ControllerManager
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0

Obj = dict[str, Any]


def ref(kind: str, name: str, uid: str, *, controller: bool = True) -> Obj:
    api = {"ReplicaSet": "apps/v1", "Node": "v1", "Pod": "v1"}[kind]
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def pod(name: str, *owners: Obj) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}


def replicaset(name: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}}},
    }


def claim(name: str, *owners: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "ownerReferences": list(owners),
        },
        "spec": {"devices": {"requests": []}},
    }


def names(cluster: MemoryCluster, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.list(kind).items]


def loaded(*objs: Obj) -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.load(list(objs))
    GarbageCollector(cluster, clock).start()
    clock.run_until(T0)
    return cluster, clock


def test_one_garbage_collector_in_the_controller_list() -> None:
    assert list(CONTROLLERS) == [
        "persistentvolume-binder-controller",
        "resourceclaim-controller",
        "garbage-collector-controller",
    ]
    clock = VirtualClock(T0)
    manager = ControllerManager(MemoryCluster(clock), clock)
    assert isinstance(manager.controllers["garbage-collector-controller"], GarbageCollector)


def test_pods_of_owners_never_seen_are_kept_and_claims_of_absent_pods_go() -> None:
    # a snapshot cut from a real cluster: the pods' ReplicaSet and Node are not in it
    cluster, _ = loaded(
        pod("web-1", ref("ReplicaSet", "web", "uid-absent-rs")),
        pod("mirror", ref("Node", "n1", "uid-absent-node")),
        claim("c-gone", ref("Pod", "gone", "uid-gone")),
        claim("c-web-1", ref("Pod", "web-1", "uid-web-1")),
    )
    assert names(cluster, "Pod") == ["mirror", "web-1"]
    assert names(cluster, "ResourceClaim") == ["c-web-1"]


def test_deleting_a_pod_deletes_its_claim_and_a_replicaset_its_pods_and_their_claims() -> None:
    cluster, clock = loaded(
        replicaset("web"),
        pod("web-1", ref("ReplicaSet", "web", "uid-web")),
        pod("web-2", ref("ReplicaSet", "web", "uid-web")),
        pod("solo"),
        claim("c-web-1", ref("Pod", "web-1", "uid-web-1")),
        claim("c-solo", ref("Pod", "solo", "uid-solo")),
    )
    cluster.delete("Pod", "default", "solo")
    clock.run_until(T0)
    assert names(cluster, "ResourceClaim") == ["c-web-1"]
    cluster.delete("ReplicaSet", "default", "web")
    clock.run_until(T0)
    assert names(cluster, "Pod") == []
    assert names(cluster, "ResourceClaim") == []


def test_a_dependent_with_a_live_owner_left_loses_only_the_gone_reference() -> None:
    cluster, clock = loaded(
        replicaset("a"),
        replicaset("b"),
        pod("shared", ref("ReplicaSet", "a", "uid-a"), ref("ReplicaSet", "b", "uid-b", controller=False)),
    )
    cluster.delete("ReplicaSet", "default", "a")
    clock.run_until(T0)
    [kept] = cluster.list("Pod").items
    assert kept["metadata"]["ownerReferences"] == [ref("ReplicaSet", "b", "uid-b", controller=False)]


def test_an_owner_recreated_under_its_name_does_not_keep_the_old_dependents() -> None:
    cluster, clock = loaded(replicaset("web"), pod("web-1", ref("ReplicaSet", "web", "uid-web")))
    cluster.delete("ReplicaSet", "default", "web")
    cluster.create({**replicaset("web"), "metadata": {"name": "web", "namespace": "default"}})
    clock.run_until(T0)
    assert names(cluster, "Pod") == []
    assert names(cluster, "ReplicaSet") == ["web"]


def test_a_node_deleted_takes_its_lease() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "uid-n1"}}
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": "n1",
            "namespace": "kube-node-lease",
            "ownerReferences": [ref("Node", "n1", "uid-n1")],
        },
        "spec": {"holderIdentity": "n1"},
    }
    cluster, clock = loaded(node, lease)
    assert names(cluster, "Lease") == ["n1"]
    cluster.delete("Node", None, "n1")
    clock.run_until(T0)
    assert names(cluster, "Lease") == []


def _deleting(cluster: MemoryCluster) -> dict[str, bool]:
    return {
        o["metadata"]["name"]: bool(o["metadata"].get("deletionTimestamp")) for o in cluster.list("Pod").items
    }


def test_a_bound_pod_stays_a_dependent_and_a_reference_change_after_it_is_followed() -> None:
    # a binding shares the metadata lists of the previous version: the graph stays as it was (a
    # bound pod's deletion is graceful: it waits for its kubelet with a deletionTimestamp)
    cluster, clock = loaded(
        replicaset("a"),
        replicaset("b"),
        pod("web-1", ref("ReplicaSet", "a", "uid-a")),
        pod("web-2", ref("ReplicaSet", "a", "uid-a")),
    )
    cluster.bind("default", "web-1", "uid-web-1", "n1")
    cluster.bind("default", "web-2", "uid-web-2", "n1")
    clock.run_until(T0)
    # then web-1 moves from a to b
    current = cluster.get("Pod", "default", "web-1")
    owner = ref("ReplicaSet", "b", "uid-b")
    cluster.update({**current, "metadata": {**current["metadata"], "ownerReferences": [owner]}})
    clock.run_until(T0)
    cluster.delete("ReplicaSet", "default", "a")
    clock.run_until(T0)
    assert _deleting(cluster) == {"web-1": False, "web-2": True}
    cluster.delete("ReplicaSet", "default", "b")
    clock.run_until(T0)
    assert _deleting(cluster) == {"web-1": True, "web-2": True}
