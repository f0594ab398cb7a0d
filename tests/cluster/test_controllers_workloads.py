"""ReplicaSet and Deployment controllers on the embedded store and a virtual clock."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.cluster.controllers.deployment import DeploymentController, resolve_fenceposts, template_hash
from kubesched.cluster.controllers.replicaset import ReplicaSetController
from kubesched.cluster.memory import MemoryCluster

T0 = 1_700_000_000.0


def _setup() -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    ReplicaSetController(cluster, clock).start()
    DeploymentController(cluster, clock).start()
    return cluster, clock


def _template(image: str = "nginx") -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _ready_all(cluster: MemoryCluster, clock: VirtualClock) -> None:
    """Play the kubelet: every active pod Running and Ready."""
    for pod in cluster.list("Pod").items:
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") == "Running":
            continue
        cluster.patch_status("Pod", "default", pod["metadata"]["name"], {
            "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    clock.run_until(clock.now())


def _finish_deletions(cluster: MemoryCluster, clock: VirtualClock) -> None:
    for pod in cluster.list("Pod").items:
        if pod["metadata"].get("deletionTimestamp"):
            cluster.delete("Pod", "default", pod["metadata"]["name"], grace=True, grace_period_seconds=0)
    clock.run_until(clock.now())


def test_fenceposts_and_hash() -> None:
    assert resolve_fenceposts({}, 10) == (3, 2)
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, 10) == (0, 1)
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 1}}, 5) == (3, 1)
    h = template_hash(_template())
    assert h == template_hash(_template()) and h != template_hash(_template("nginx:1.27"))
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and h != template_hash(_template(), 1)


def test_replica_set_creates_adopts_and_scales_down_unscheduled_first() -> None:
    cluster, clock = _setup()
    cluster.create({"kind": "Pod", "metadata": {"name": "orphan", "namespace": "default", "labels": {"app": "web"}},
                    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}})
    rs = cluster.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                         "metadata": {"name": "web", "namespace": "default"},
                         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                                  "template": _template()}})
    clock.run_until(T0)
    pods = cluster.list("Pod").items
    assert len(pods) == 3
    assert all(p["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                                     "uid": rs["metadata"]["uid"], "controller": True,
                                                     "blockOwnerDeletion": True}] for p in pods)
    assert sorted(p["metadata"]["name"] for p in pods if p["metadata"]["name"] != "orphan") == sorted(
        p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith("web-"))
    assert cluster.get("ReplicaSet", "default", "web")["status"] == {
        "replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 0, "availableReplicas": 0,
        "observedGeneration": 1}
    rs = cluster.get("ReplicaSet", "default", "web")
    cluster.update({**rs, "spec": {**rs["spec"], "replicas": 1}})
    clock.run_until(T0)
    # the two unscheduled pods go first; the bound orphan stays
    assert [p["metadata"]["name"] for p in cluster.list("Pod").items] == ["orphan"]
    assert cluster.get("ReplicaSet", "default", "web")["status"]["observedGeneration"] == 2


def test_deployment_rolls_out_within_surge_and_unavailability() -> None:
    cluster, clock = _setup()
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": _template(),
                             "strategy": {"type": "RollingUpdate",
                                          "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}})
    clock.run_until(T0)
    _ready_all(cluster, clock)
    d = cluster.get("Deployment", "default", "web")
    assert {k: d["status"][k] for k in ("replicas", "updatedReplicas", "availableReplicas")} == {
        "replicas": 4, "updatedReplicas": 4, "availableReplicas": 4}
    assert [(c["type"], c["reason"]) for c in d["status"]["conditions"]] == [
        ("Available", "MinimumReplicasAvailable"), ("Progressing", "NewReplicaSetAvailable")]
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    spec = {**d["spec"], "template": _template("nginx:1.27")}
    cluster.update({**d, "spec": spec})
    clock.run_until(T0)

    def sizes() -> list[tuple[str, int]]:
        return sorted((rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
                      for rs in cluster.list("ReplicaSet").items)
    steps = [sizes()]
    for _ in range(6):
        _ready_all(cluster, clock)
        _finish_deletions(cluster, clock)
        steps.append(sizes())
    assert steps[:5] == [[("nginx", 4), ("nginx:1.27", 1)], [("nginx", 3), ("nginx:1.27", 2)],
                         [("nginx", 2), ("nginx:1.27", 3)], [("nginx", 1), ("nginx:1.27", 4)],
                         [("nginx", 0), ("nginx:1.27", 4)]]
    d = cluster.get("Deployment", "default", "web")
    assert d["metadata"]["generation"] == 2 and d["status"]["observedGeneration"] == 2
    assert d["status"]["updatedReplicas"] == 4 and d["status"]["replicas"] == 4
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_recreate_waits_for_old_pods_to_go() -> None:
    cluster, clock = _setup()
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "db", "namespace": "default"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": _template(),
                             "strategy": {"type": "Recreate"}}})
    clock.run_until(T0)
    for pod in cluster.list("Pod").items:
        cluster.bind("default", pod["metadata"]["name"], "", "n1")
    _ready_all(cluster, clock)
    d = cluster.get("Deployment", "default", "db")
    cluster.update({**d, "spec": {**d["spec"], "template": _template("nginx:2")}})
    clock.run_until(T0)
    images = sorted((rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
                    for rs in cluster.list("ReplicaSet").items)
    assert images == [("nginx", 0)]  # bound old pods terminating: no new ReplicaSet yet
    _finish_deletions(cluster, clock)
    images = sorted((rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
                    for rs in cluster.list("ReplicaSet").items)
    assert images == [("nginx", 0), ("nginx:2", 2)]
