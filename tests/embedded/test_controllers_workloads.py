"""ReplicaSet and Deployment controllers on the embedded store and a virtual clock."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.controller_utils import compute_hash as template_hash
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.deployment_util import resolve_fenceposts
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.store import MemoryCluster

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
        cluster.patch_status(
            "Pod",
            "default",
            pod["metadata"]["name"],
            {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        )
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
    cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "orphan", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
        }
    )
    rs = cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _template()},
        }
    )
    clock.run_until(T0)
    pods = cluster.list("Pod").items
    assert len(pods) == 3
    assert all(
        p["metadata"]["ownerReferences"]
        == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": rs["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        for p in pods
    )
    assert sorted(p["metadata"]["name"] for p in pods if p["metadata"]["name"] != "orphan") == sorted(
        p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith("web-")
    )
    assert cluster.get("ReplicaSet", "default", "web")["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "observedGeneration": 1,
    }
    rs = cluster.get("ReplicaSet", "default", "web")
    cluster.update({**rs, "spec": {**rs["spec"], "replicas": 1}})
    clock.run_until(T0)
    # the two unscheduled pods go first; the bound orphan stays
    assert [p["metadata"]["name"] for p in cluster.list("Pod").items] == ["orphan"]
    assert cluster.get("ReplicaSet", "default", "web")["status"]["observedGeneration"] == 2


def test_deployment_rolls_out_within_surge_and_unavailability() -> None:
    cluster, clock = _setup()
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": "web"}},
                "template": _template(),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            },
        }
    )
    clock.run_until(T0)
    _ready_all(cluster, clock)
    d = cluster.get("Deployment", "default", "web")
    assert {k: d["status"][k] for k in ("replicas", "updatedReplicas", "availableReplicas")} == {
        "replicas": 4,
        "updatedReplicas": 4,
        "availableReplicas": 4,
    }
    assert [(c["type"], c["reason"]) for c in d["status"]["conditions"]] == [
        ("Available", "MinimumReplicasAvailable"),
        ("Progressing", "NewReplicaSetAvailable"),
    ]
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    spec = {**d["spec"], "template": _template("nginx:1.27")}
    cluster.update({**d, "spec": spec})
    clock.run_until(T0)

    def sizes() -> list[tuple[str, int]]:
        return sorted(
            (rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
            for rs in cluster.list("ReplicaSet").items
        )

    steps = [sizes()]
    for _ in range(6):
        _ready_all(cluster, clock)
        _finish_deletions(cluster, clock)
        steps.append(sizes())
    assert steps[:5] == [
        [("nginx", 4), ("nginx:1.27", 1)],
        [("nginx", 3), ("nginx:1.27", 2)],
        [("nginx", 2), ("nginx:1.27", 3)],
        [("nginx", 1), ("nginx:1.27", 4)],
        [("nginx", 0), ("nginx:1.27", 4)],
    ]
    d = cluster.get("Deployment", "default", "web")
    assert d["metadata"]["generation"] == 2 and d["status"]["observedGeneration"] == 2
    assert d["status"]["updatedReplicas"] == 4 and d["status"]["replicas"] == 4
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_recreate_waits_for_old_pods_to_go() -> None:
    cluster, clock = _setup()
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": _template(),
                "strategy": {"type": "Recreate"},
            },
        }
    )
    clock.run_until(T0)
    for pod in cluster.list("Pod").items:
        cluster.bind("default", pod["metadata"]["name"], "", "n1")
    _ready_all(cluster, clock)
    d = cluster.get("Deployment", "default", "db")
    cluster.update({**d, "spec": {**d["spec"], "template": _template("nginx:2")}})
    clock.run_until(T0)
    images = sorted(
        (rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
        for rs in cluster.list("ReplicaSet").items
    )
    assert images == [("nginx", 0)]  # bound old pods terminating: no new ReplicaSet yet
    _finish_deletions(cluster, clock)
    images = sorted(
        (rs["spec"]["template"]["spec"]["containers"][0]["image"], rs["spec"]["replicas"])
        for rs in cluster.list("ReplicaSet").items
    )
    assert images == [("nginx", 0), ("nginx:2", 2)]


def _job_setup() -> tuple[MemoryCluster, VirtualClock]:
    from kubesched.embedded.controllers.job import JobController

    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    JobController(cluster, clock).start()
    return cluster, clock


def _finish(cluster: MemoryCluster, clock: VirtualClock, phase: str, count: int) -> None:
    """Play the kubelet: ``count`` active pods end in ``phase``."""
    done = 0
    for pod in cluster.list("Pod").items:
        if done == count:
            break
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        cluster.patch_status("Pod", "default", pod["metadata"]["name"], {"phase": phase})
        done += 1
    clock.run_until(clock.now())


def test_job_runs_parallelism_pods_to_completions() -> None:
    cluster, clock = _job_setup()
    job = cluster.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default"},
            "spec": {
                "completions": 5,
                "parallelism": 2,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}
                },
            },
        }
    )
    clock.run_until(T0)
    uid = job["metadata"]["uid"]
    job = cluster.get("Job", "default", "pi")
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    pods = cluster.list("Pod").items
    assert len(pods) == 2 and all(p["metadata"]["labels"]["job-name"] == "pi" for p in pods)
    for _ in range(2):
        _finish(cluster, clock, "Succeeded", 2)
    assert cluster.get("Job", "default", "pi")["status"]["succeeded"] == 4
    assert cluster.get("Job", "default", "pi")["status"]["active"] == 1
    _finish(cluster, clock, "Succeeded", 1)
    status = cluster.get("Job", "default", "pi")["status"]
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert (status["succeeded"], status.get("active"), status["completionTime"]) == (
        5,
        None,
        "2023-11-14T22:13:20Z",
    )
    assert len(cluster.list("Pod").items) == 5


def test_indexed_job_and_backoff_limit() -> None:
    cluster, clock = _job_setup()
    cluster.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "idx", "namespace": "default"},
            "spec": {
                "completions": 3,
                "parallelism": 3,
                "completionMode": "Indexed",
                "backoffLimit": 1,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                },
            },
        }
    )
    clock.run_until(T0)
    pods = cluster.list("Pod").items
    assert sorted(
        (
            p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
            p["spec"]["hostname"],
            p["metadata"]["name"].rsplit("-", 1)[0],
        )
        for p in pods
    ) == [("0", "idx-0", "idx-0"), ("1", "idx-1", "idx-1"), ("2", "idx-2", "idx-2")]
    first = sorted(
        pods, key=lambda p: p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
    )[0]
    cluster.patch_status("Pod", "default", first["metadata"]["name"], {"phase": "Succeeded"})
    clock.run_until(T0)
    assert cluster.get("Job", "default", "idx")["status"]["completedIndexes"] == "0"
    _finish(cluster, clock, "Failed", 2)  # indexes 1 and 2 fail: 2 failures > backoffLimit 1
    status = cluster.get("Job", "default", "idx")["status"]
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded"),
        ("Failed", "BackoffLimitExceeded"),
    ]
    assert status["failed"] == 2


def test_daemon_set_runs_one_pinned_pod_per_eligible_node() -> None:
    from kubesched.embedded.controllers.daemonset import DaemonSetController

    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    DaemonSetController(cluster, clock).start()
    cluster.create({"kind": "Node", "metadata": {"name": "n1", "labels": {"disk": "ssd"}}})
    cluster.create(
        {
            "kind": "Node",
            "metadata": {"name": "n2", "labels": {"disk": "ssd"}},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
        }
    )
    cluster.create({"kind": "Node", "metadata": {"name": "n3", "labels": {"disk": "hdd"}}})
    cluster.create(
        {
            "kind": "Node",
            "metadata": {"name": "n4", "labels": {"disk": "ssd"}},
            "spec": {
                "unschedulable": True,
                "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            },
        }
    )
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {
                        "nodeSelector": {"disk": "ssd"},
                        "containers": [{"name": "c", "image": "agent"}],
                    },
                },
            },
        }
    )
    clock.run_until(T0)
    pods = cluster.list("Pod").items
    nodes = sorted(
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"][0]
        for p in pods
    )
    assert nodes == ["n1", "n4"]  # n2: untolerated NoSchedule taint; n3: nodeSelector
    assert [(t["key"], t["effect"]) for t in pods[0]["spec"]["tolerations"]] == [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    assert all(
        t.get("operator") == "Exists" and "tolerationSeconds" not in t for t in pods[0]["spec"]["tolerations"]
    )
    assert cluster.get("DaemonSet", "default", "agent")["status"] == {
        "currentNumberScheduled": 2,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 2,
        "numberReady": 0,
        "observedGeneration": 1,
        "updatedNumberScheduled": 2,
        "numberUnavailable": 2,
    }
    cluster.create({"kind": "Node", "metadata": {"name": "n5", "labels": {"disk": "ssd"}}})
    clock.run_until(T0)
    assert len(cluster.list("Pod").items) == 3
    node = cluster.get("Node", None, "n1")
    cluster.update({**node, "metadata": {**node["metadata"], "labels": {"disk": "hdd"}}})
    clock.run_until(T0)
    assert len([p for p in cluster.list("Pod").items if not p["metadata"].get("deletionTimestamp")]) == 2


def test_stateful_set_ordered_ready_with_claims() -> None:
    from kubesched.embedded.controllers.statefulset import StatefulSetController

    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    StatefulSetController(cluster, clock).start()
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "postgres"}]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        }
    )
    clock.run_until(T0)

    def names(kind: str) -> list[str]:
        return [o["metadata"]["name"] for o in cluster.list(kind).items]

    assert names("Pod") == ["db-0"] and names("PersistentVolumeClaim") == ["data-db-0"]
    pod = cluster.get("Pod", "default", "db-0")
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("db-0", "db")
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    assert cluster.get("PersistentVolumeClaim", "default", "data-db-0")["metadata"]["labels"] == {"app": "db"}
    for i in range(3):
        cluster.patch_status(
            "Pod",
            "default",
            f"db-{i}",
            {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        )
        clock.run_until(T0)
    assert names("Pod") == ["db-0", "db-1", "db-2"]
    assert names("PersistentVolumeClaim") == ["data-db-0", "data-db-1", "data-db-2"]
    status = cluster.get("StatefulSet", "default", "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)
    sts = cluster.get("StatefulSet", "default", "db")
    cluster.update({**sts, "spec": {**sts["spec"], "replicas": 1}})
    clock.run_until(T0)
    # the highest ordinal first, one at a time: unbound pods go at once, so both are gone
    assert names("Pod") == ["db-0"]
    assert names("PersistentVolumeClaim") == ["data-db-0", "data-db-1", "data-db-2"]  # Retain


def _gc_setup() -> tuple[MemoryCluster, VirtualClock]:
    from kubesched.embedded.controllers.garbagecollector import GarbageCollector

    cluster, clock = _setup()
    GarbageCollector(cluster, clock).start()
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": _template()},
        }
    )
    clock.run_until(T0)
    assert len(cluster.list("ReplicaSet").items) == 1 and len(cluster.list("Pod").items) == 2
    return cluster, clock


def test_background_deletion_removes_dependents() -> None:
    cluster, clock = _gc_setup()
    cluster.delete("Deployment", "default", "web")
    clock.run_until(T0)
    assert cluster.list("ReplicaSet").items == [] and cluster.list("Pod").items == []


def test_foreground_deletion_waits_for_dependents() -> None:
    cluster, clock = _gc_setup()
    for pod in cluster.list("Pod").items:
        cluster.bind("default", pod["metadata"]["name"], "", "n1")
    d = cluster.get("Deployment", "default", "web")
    cluster.update({**d, "metadata": {**d["metadata"], "finalizers": ["foregroundDeletion"]}})
    cluster.delete("Deployment", "default", "web")
    clock.run_until(T0)
    # bound pods terminate gracefully: the ReplicaSet and the Deployment wait for them
    assert cluster.get("Deployment", "default", "web")["metadata"]["deletionTimestamp"]
    assert cluster.list("ReplicaSet").items[0]["metadata"]["finalizers"] == ["foregroundDeletion"]
    _finish_deletions(cluster, clock)
    clock.run_until(T0)
    assert cluster.list("Pod").items == [] and cluster.list("ReplicaSet").items == []
    assert cluster.list("Deployment").items == []


def test_orphan_deletion_keeps_dependents_without_the_owner_reference() -> None:
    cluster, clock = _gc_setup()
    d = cluster.get("Deployment", "default", "web")
    cluster.update({**d, "metadata": {**d["metadata"], "finalizers": ["orphan"]}})
    cluster.delete("Deployment", "default", "web")
    clock.run_until(T0)
    assert cluster.list("Deployment").items == []
    [rs] = cluster.list("ReplicaSet").items
    assert rs["metadata"]["ownerReferences"] == [] and len(cluster.list("Pod").items) == 2
