"""WaitForFirstConsumer claims through ``kubesched run`` against ``kubesched serve``: the scheduler
writes only what upstream's volume binder writes (PV claimRef, PVC selected-node), the embedded PV
controller binds (and provisions), and PreBind waits for it before binding the pod."""

from __future__ import annotations

from typing import Any

from run_support import Cluster, Replica, needs_hooks, scheduler_config

pytestmark = needs_hooks  # the embedded PV controller plays kube-controller-manager's part


def _storage_objects(cluster: Cluster) -> list[dict[str, Any]]:
    ns = cluster.namespace
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "csi"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "local-pv"},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/mnt/disk"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                                ]
                            }
                        ]
                    }
                },
            },
            "status": {"phase": "Available"},
        },
        *(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": sc,
                    "resources": {"requests": {"storage": "5Gi"}},
                },
                "status": {"phase": "Pending"},
            }
            for name, sc in (("data", "local"), ("scratch", "csi"))
        ),
    ]


def _pod(cluster: Cluster, name: str, claim: str) -> dict[str, Any]:
    pod = cluster.pod_manifest(name)
    pod["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    return pod


def _writes(cluster: Cluster) -> list[tuple[str, str]]:
    return sorted(
        (row["method"], row["path"])
        for row in cluster.hook("GET", "/kubesched/requests")["requests"]
        if row["method"] != "GET" and ("persistentvolume" in row["path"])
    )


def test_wait_for_first_consumer_claims_bind_through_the_pv_controller(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    assert cluster.handle is not None
    store = cluster.handle.cluster
    cluster.add_nodes(3)
    for obj in _storage_objects(cluster):
        store.create(obj)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    store.create(_pod(cluster, "uses-local", "data"))
    store.create(_pod(cluster, "uses-csi", "scratch"))
    bound = cluster.wait_bound(["uses-local", "uses-csi"], timeout=30)
    assert bound["uses-local"] == "node-1"  # the only node the local PV reaches
    ns = cluster.namespace
    # the scheduler's own writes: one PV update, one PVC update, nothing else on storage objects
    assert _writes(cluster) == [
        ("PUT", f"/api/v1/namespaces/{ns}/persistentvolumeclaims/scratch"),
        ("PUT", "/api/v1/persistentvolumes/local-pv"),
    ]
    data = store.get("PersistentVolumeClaim", ns, "data")
    pv = store.get("PersistentVolume", "", "local-pv")
    assert pv["spec"]["claimRef"]["uid"] == data["metadata"]["uid"] and pv["status"]["phase"] == "Bound"
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert data["spec"]["volumeName"] == "local-pv" and data["status"]["phase"] == "Bound"
    assert data["metadata"]["annotations"] == {
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    scratch = store.get("PersistentVolumeClaim", ns, "scratch")
    assert scratch["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == bound["uses-csi"]
    provisioned = store.get("PersistentVolume", "", scratch["spec"]["volumeName"])
    assert provisioned["metadata"]["name"] == f"pvc-{scratch['metadata']['uid']}"
    assert provisioned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"
    ] == [bound["uses-csi"]]
    assert scratch["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "5Gi"},
    }
