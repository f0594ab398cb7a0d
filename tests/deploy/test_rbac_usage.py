"""deploy/base/rbac.yaml grants what ``kubesched run`` uses and nothing more: a run through every API
path of the scheduler (informers, leader election, binding, status patches, preemption, events,
volume binding, delegated authentication and authorization of its endpoint) against ``kubesched
serve``, whose request log gives every (API group, resource, verb) the scheduler sent. Each must be
granted, and each grant must have been used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from run_support import METRICS_TOKEN, Cluster, Replica, free_port, needs_hooks, scheduler_config, wait_for

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

#: The built-in ClusterRole ``system:auth-delegator`` that rbac.yaml binds.
AUTH_DELEGATOR = {
    ("authentication.k8s.io", "tokenreviews", "create"),
    ("authorization.k8s.io", "subjectaccessreviews", "create"),
}


#: What kubesched uses of the built-in Role ``extension-apiserver-authentication-reader`` (kube-system)
#: that rbac.yaml binds: reads of the authentication ConfigMap (the Role also grants list and
#: watch of it).
EXTENSION_AUTH_READER = {("", "configmaps", "get")}


def granted() -> set[tuple[str, str, str]]:
    out = set(AUTH_DELEGATOR) | EXTENSION_AUTH_READER
    for doc in yaml.safe_load_all((DEPLOY / "base" / "rbac.yaml").read_text()):
        if (
            doc["kind"] not in ("ClusterRole", "Role")
            or doc["metadata"]["name"] == "kubesched:metrics-reader"
        ):
            continue
        for rule in doc["rules"]:
            for g in rule["apiGroups"]:
                for r in rule["resources"]:
                    for v in rule["verbs"]:
                        out.add((g, r, v))
    return out


def request_attributes(method: str, path: str, watch: bool) -> tuple[str, str, str]:
    """(API group, resource[/subresource], verb) of a request, as the API server's RequestInfo."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource += "/" + rest[2]
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method)
    if verb is None:
        verb = "get" if name else ("watch" if watch else "list")
    return group, resource, verb


def test_request_attributes() -> None:
    assert request_attributes("GET", "/api/v1/pods", True) == ("", "pods", "watch")
    assert request_attributes("GET", "/api/v1/namespaces", False) == ("", "namespaces", "list")
    assert request_attributes("POST", "/api/v1/namespaces/a/pods/p/binding", False) == (
        "",
        "pods/binding",
        "create",
    )
    assert request_attributes("PATCH", "/api/v1/namespaces/a/pods/p/status", False) == (
        "",
        "pods/status",
        "patch",
    )
    assert request_attributes("GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", False) == (
        "coordination.k8s.io",
        "leases",
        "get",
    )
    assert request_attributes("PUT", "/api/v1/persistentvolumes/pv", False) == (
        "",
        "persistentvolumes",
        "update",
    )


def _store_pod(
    cluster: Cluster,
    name: str,
    cpu: str,
    priority: int = 0,
    claim: str | None = None,
    resource_claim: str | None = None,
) -> None:
    assert cluster.handle is not None
    pod: dict[str, Any] = cluster.pod_manifest(name, cpu)
    pod["spec"]["priority"] = priority
    if claim:
        pod["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    if resource_claim:
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": resource_claim}]
    cluster.handle.cluster.create(pod)


@needs_hooks
def test_rbac_grants_exactly_what_run_uses(cluster: Cluster, replicas: list[Replica]) -> None:
    assert cluster.handle is not None
    store = cluster.handle.cluster
    ns = cluster.namespace
    cluster.add_nodes(2, cpu="1")
    store.create(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    store.create(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "csi"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    store.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/d"},
            },
            "status": {"phase": "Available"},
        }
    )
    for claim, sc in (("static", "local"), ("dynamic", "csi")):
        store.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": sc,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        )
    # dynamic resource allocation: one GPU on node-0 and a claim for it
    store.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    store.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-0-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "node-0",
                "pool": {"name": "node-0", "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        }
    )
    store.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        }
    )
    cluster.hook("DELETE", "/kubesched/requests")
    # the secure port as deployed: its client-certificate settings are looked up in the cluster
    r = Replica(
        cluster, scheduler_config(cluster.tmp, cluster.namespace, lease=True), f"--secure-port={free_port()}"
    )
    replicas.append(r)
    r.wait_ready()
    assert r.get("/metrics", token=METRICS_TOKEN)[0] == 200  # TokenReview + SubjectAccessReview
    _store_pod(cluster, "low-0", "800m")
    _store_pod(cluster, "low-1", "800m")
    _store_pod(cluster, "with-pv", "10m", claim="static")
    _store_pod(cluster, "with-provisioned", "10m", claim="dynamic")
    _store_pod(cluster, "with-gpu", "10m", resource_claim="gpu")  # claim get/update, status patch
    # read the store, not the API: the request log is the scheduler's alone

    def bound(*names: str) -> bool:
        pods = {p["metadata"]["name"]: p for p in store.list("Pod", ns).items}
        return all(n in pods and pods[n]["spec"].get("nodeName") for n in names)

    wait_for(lambda: bound("low-0", "low-1", "with-pv", "with-provisioned", "with-gpu"), 30, "pods bound")
    _store_pod(cluster, "high", "800m", priority=100)  # preempts a low pod (nomination, deletion)
    _store_pod(cluster, "huge", "100")  # unschedulable: PodScheduled=False
    wait_for(lambda: bound("high"), 30, "the preemptor bound")
    wait_for(
        lambda: any(
            e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == "huge" for e in store.events()
        ),
        15,
        "huge failed",
    )
    # a node growing to the pod's size (but still holding pods) requeues it: the same failure again,
    # which the event broadcaster folds into a series (PATCH)
    cluster.grow_node("node-0", "100")
    wait_for(
        lambda: any(
            e.get("reason") == "FailedScheduling"
            and e["regarding"]["name"] == "huge"
            and (e.get("series") or {}).get("count", 1) >= 2
            for e in store.events()
        ),
        30,
        "huge failed twice (an Event series)",
    )

    def used_attributes() -> set[tuple[str, str, str]]:
        return {
            request_attributes(row["method"], row["path"], row["watch"])
            for row in cluster.hook("GET", "/kubesched/requests")["requests"]
            if row["path"].startswith(("/api/", "/apis/"))
        }

    # the leader renews its Lease every retry period (500 ms here): wait for one renewal, since the
    # rest of the run can finish within the first period on a fast machine
    wait_for(lambda: ("coordination.k8s.io", "leases", "update") in used_attributes(), 10, "a lease renewal")
    used = used_attributes()
    grants = granted()
    assert used - grants == set(), "sent but not granted"
    assert grants - used == set(), "granted but never sent"
