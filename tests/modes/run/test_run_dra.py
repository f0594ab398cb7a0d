"""GPU pods with claim templates through ``kubesched run`` against the embedded cluster with
kubelets and the fake DRA driver (what ``kubesched serve --kubelet`` runs): the ResourceClaim
controller creates each pod's claim, the scheduler allocates a device and reserves the claim before
binding, the kubelet finishes the pod, and the controller releases and removes the claim so that
waiting pods get the device. Checked on every change the store makes: no device is ever allocated
to two claims, and a pod is bound only once its claim holds an allocation and lists the pod in
``status.reservedFor``."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections import Counter
from typing import Any

import pytest
from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.clock import RealClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.dra_driver import FakeGPUDriver
from kubesched.embedded.kubelet.live import RUN_SECONDS_ANNOTATION, LiveKubelets
from kubesched.images.catalogue import load_catalogue

pytestmark = needs_hooks  # the embedded controllers, kubelets and driver play the cluster's part

NODES, GPUS_PER_NODE, PODS = 3, 2, 10


class Checks:
    """Watch handlers on the store (called under its lock, so every state is seen)."""

    def __init__(self, store: Any, namespace: str) -> None:
        self.store = store
        self.ns = namespace
        self.problems: list[str] = []
        #: devices held by two claims at once
        self.duplicates: list[str] = []
        self.bindings = 0
        self.max_allocated = 0
        self.lock = threading.Lock()

    def on_claim(self, ev: Any) -> None:
        holders: dict[tuple[str, str], list[str]] = {}
        for c in self.store.list("ResourceClaim", self.ns).items:
            for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
                "results"
            ) or []:
                holders.setdefault((r["pool"], r["device"]), []).append(c["metadata"]["name"])
        devices = Counter({d: len(h) for d, h in holders.items()})
        with self.lock:
            self.max_allocated = max(self.max_allocated, len(holders))  # distinct devices in use
            self.duplicates += [
                f"device {d} allocated to {holders[d]}"
                for d, n in devices.items()
                if n > 1 and f"device {d} allocated to {holders[d]}" not in self.duplicates
            ]

    def on_pod(self, ev: Any) -> None:
        old = ev.old_object
        if (
            ev.type != "MODIFIED"
            or old is None
            or (old.get("spec") or {}).get("nodeName")
            or not (ev.object.get("spec") or {}).get("nodeName")
        ):
            return
        pod = ev.object
        name = pod["metadata"]["name"]
        statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
        with self.lock:
            self.bindings += 1
            if len(statuses) != 1:
                self.problems.append(f"{name} bound without its claim in status.resourceClaimStatuses")
                return
            claim = self.store.get("ResourceClaim", self.ns, statuses[0]["resourceClaimName"])
            status = claim.get("status") or {}
            if not status.get("allocation"):
                self.problems.append(f"{name} bound before its claim was allocated")
            if [r.get("uid") for r in status.get("reservedFor") or []] != [pod["metadata"]["uid"]]:
                self.problems.append(f"{name} bound before its claim was reserved for it")
            node = status["allocation"]["devices"]["results"][0]["pool"] if status.get("allocation") else None
            if node != pod["spec"]["nodeName"]:
                self.problems.append(f"{name} bound to {pod['spec']['nodeName']}, its device is on {node}")


def _gpu_nodes(store: Any, nodes: int = NODES, gpus: int = GPUS_PER_NODE) -> None:
    for i in range(nodes):
        res = {"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
        store.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"gpu-{i}",
                    "labels": {"kubernetes.io/hostname": f"gpu-{i}", "nvidia.com/gpu.product": "NVIDIA-T4"},
                },
                "status": {
                    "capacity": res,
                    "allocatable": res,
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )


def _gpu_pod(cluster: Cluster, name: str, run_seconds: str | None) -> dict[str, Any]:
    pod = cluster.pod_manifest(name)
    if run_seconds is not None:
        pod["metadata"]["annotations"] = {RUN_SECONDS_ANNOTATION: run_seconds}
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return pod


def test_gpu_pods_with_claim_templates(cluster: Cluster, replicas: list[Replica]) -> None:
    _run_gpu_pods(cluster, replicas, NODES, GPUS_PER_NODE, PODS, run_seconds="1", timeout=90)


@pytest.mark.skipif(
    not os.environ.get("KUBESCHED_SCALE_TESTS"), reason="set KUBESCHED_SCALE_TESTS=1 (about 3 min)"
)
def test_1000_gpu_pods_over_100_nodes(cluster: Cluster, replicas: list[Replica]) -> None:
    _run_gpu_pods(cluster, replicas, 100, 8, 1000, run_seconds="20", timeout=1500, full=False)


def _run_gpu_pods(
    cluster: Cluster,
    replicas: list[Replica],
    nodes: int,
    gpus: int,
    n_pods: int,
    *,
    run_seconds: str,
    timeout: float,
    full: bool = True,
) -> None:
    """``n_pods`` pods of one GPU each that run ``run_seconds`` on ``nodes`` nodes of ``gpus``
    GPUs, plus one that runs until deleted; ``full``: the pods outnumber the devices."""
    assert cluster.handle is not None
    store, ns = cluster.handle.cluster, cluster.namespace
    checks = Checks(store, ns)
    store.watch("ResourceClaim", store.resource_version, checks.on_claim)
    store.watch("Pod", store.resource_version, checks.on_pod)
    _gpu_nodes(store, nodes, gpus)
    FakeGPUDriver(store).start()
    fast = KubeletImageConfig(
        node_bandwidth_bps=1e12,
        decompress_bps=1e12,
        layer_latency_seconds=0.0,
        pull_fixed_seconds=0.0,
        container_start_seconds=0.1,
    )
    kubelets = LiveKubelets(store, RealClock(), load_catalogue(None), fast)
    kubelets.start()
    try:
        assert len(store.list("ResourceSlice").items) == nodes
        store.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": ns},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.kubesched.io"}}]
                        }
                    }
                },
            }
        )
        r = Replica(cluster, scheduler_config(cluster.tmp, ns))
        replicas.append(r)
        r.wait_ready()
        # more pods than devices: the last ones wait until finished pods release theirs
        names = [f"train-{i}" for i in range(n_pods)]
        for name in names:
            store.create(_gpu_pod(cluster, name, run_seconds))
        store.create(_gpu_pod(cluster, "server", None))  # runs until deleted: its claim stays

        def finished() -> bool:
            pods = cluster.pods()
            return all((pods[n].get("status") or {}).get("phase") == "Succeeded" for n in names)

        wait_for(finished, timeout, "every train pod to succeed", interval=0.25 if n_pods < 100 else 2.0)
        wait_for(
            lambda: len(store.list("ResourceClaim", ns).items) == 1,
            30,
            "the claims of finished pods to be removed",
        )
        (left,) = store.list("ResourceClaim", ns).items
        server = store.get("Pod", ns, "server")
        assert left["metadata"]["ownerReferences"][0]["uid"] == server["metadata"]["uid"]
        assert left["status"]["reservedFor"] == [
            {"resource": "pods", "name": "server", "uid": server["metadata"]["uid"]}
        ]
        assert left["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert checks.problems == []
        assert checks.duplicates == []
        assert checks.bindings == n_pods + 1
        if full:
            assert checks.max_allocated == nodes * gpus  # the cluster was full at some point
        if shutil.which("kubectl"):
            out = subprocess.run(
                ["kubectl", "--kubeconfig", cluster.kubeconfig, "-n", ns, "get", "resourceclaims"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert out.returncode == 0, out.stderr
            assert left["metadata"]["name"] in out.stdout
        store.delete("Pod", ns, "server")
        wait_for(lambda: not store.list("ResourceClaim", ns).items, 30, "the server's claim to be removed")
    finally:
        kubelets.stop()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_kubectl_lists_resource_slices_and_device_classes(cluster: Cluster) -> None:
    assert cluster.handle is not None
    store = cluster.handle.cluster
    _gpu_nodes(store)
    FakeGPUDriver(store).start()
    out = subprocess.run(
        ["kubectl", "--kubeconfig", cluster.kubeconfig, "get", "resourceslices,deviceclasses", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert "deviceclass.resource.k8s.io/gpu.kubesched.io" in lines
    assert sum(line.startswith("resourceslice.resource.k8s.io/gpu-") for line in lines) == NODES
