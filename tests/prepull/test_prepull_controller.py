"""Pre-pull on a real cluster: puller pods (shape, outcome), the planner's cluster view (one per
node, caps, disk pressure), precision, and ``kubesched run --prepull`` against ``kubesched serve``."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.api.node import Node
from kubesched.framework.node_info import NodeInfo
from kubesched.images.catalogue import default_catalogue
from kubesched.prepull.cluster_view import ClusterImageView
from kubesched.prepull.precision import PrecisionTracker
from kubesched.prepull.puller_pod import pull_outcome, puller_pod

REDIS = "docker.io/library/redis:latest"
NGINX = "docker.io/library/nginx:latest"


def test_puller_pod_shape() -> None:
    pod = puller_pod("n1", "uid-1", [REDIS, NGINX], "kube-system")
    assert pod == {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "generateName": "kubesched-prepull-", "namespace": "kube-system",
            "labels": {"kubesched.io/prepull": "true", "kubesched.io/prepull-node": "n1"},
            "annotations": {"kubesched.io/prepull-images": f"{REDIS},{NGINX}"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-1",
                                 "blockOwnerDeletion": False}],
        },
        "spec": {
            "nodeName": "n1", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False, "enableServiceLinks": False,
            "priorityClassName": "kubesched-prepull",
            "containers": [{
                "name": f"pull-{i}", "image": image, "imagePullPolicy": "IfNotPresent", "command": ["/bin/true"],
                "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"cpu": "10m", "memory": "32Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            } for i, image in enumerate([REDIS, NGINX])],
        },
    }
    assert "priorityClassName" not in puller_pod("n1", "u", [REDIS], "ns", None)["spec"]


def _status(*states: dict[str, Any], phase: str = "Pending") -> dict[str, Any]:
    pod = puller_pod("n1", "u", [REDIS, NGINX], "ns")
    pod["status"] = {"phase": phase, "containerStatuses": [
        {"name": f"pull-{i}", **s} for i, s in enumerate(states)]}
    return pod


def test_pull_outcome() -> None:
    terminated = {"state": {"terminated": {"exitCode": 0}}, "imageID": "sha256:x"}
    start_error = {"state": {"terminated": {"exitCode": 128, "reason": "StartError"}}, "imageID": "sha256:y"}
    pulling = {"state": {"waiting": {"reason": "ContainerCreating"}}}
    assert pull_outcome(_status(terminated, start_error, phase="Failed")) == "succeeded"
    assert pull_outcome(_status(terminated, pulling)) is None
    assert pull_outcome(_status(terminated, {"state": {"waiting": {"reason": "ImagePullBackOff"}}})) == "failed"
    assert pull_outcome(puller_pod("n1", "u", [REDIS], "ns")) is None
    rejected = puller_pod("n1", "u", [REDIS], "ns")
    rejected["status"] = {"phase": "Failed", "reason": "OutOfpods"}
    assert pull_outcome(rejected) == "failed"


def _ni(name: str, images: list[tuple[list[str], int]] | None = None, disk_pressure: bool = False,
        storage: str | None = None) -> NodeInfo:
    status: dict[str, Any] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                              "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                              "images": [{"names": n, "sizeBytes": s} for n, s in images or []],
                              "conditions": [{"type": "DiskPressure", "status": "True" if disk_pressure else "False"}]}
    if storage:
        status["capacity"]["ephemeral-storage"] = storage
    ni = NodeInfo()
    ni.set_node(Node.from_manifest({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"u-{name}"},
                                    "status": status}))
    return ni


def _pod(node: str, image: str, phase: str = "Pending", puller: bool = False) -> dict[str, Any]:
    if puller:
        p = puller_pod(node, "u", [image], "kube-system")
        p["metadata"]["name"] = f"pull-{node}"
    else:
        p = {"metadata": {"name": f"p-{node}", "namespace": "default"},
             "spec": {"nodeName": node, "containers": [{"name": "c", "image": image}]}}
    p["status"] = {"phase": phase}
    return p


def test_cluster_view_one_puller_per_node_caps_and_disk_pressure() -> None:
    view = ClusterImageView(default_catalogue(), max_new_per_tick=2)
    nodes = [_ni("a", [(["redis:latest"], 55474442)]), _ni("b"), _ni("c"), _ni("d"), _ni("dp", disk_pressure=True),
             _ni("busy")]
    view.refresh(nodes, [_pod("busy", NGINX, puller=True), _pod("c", NGINX), _pod("d", NGINX, phase="Running")])
    assert view.has_image("a", "redis") and view.has_image("a", REDIS) and not view.has_image("b", REDIS)
    assert (view.pulling("busy", NGINX), view.pending_pulls("busy")) == (True, 1)
    assert (view.pulling("c", NGINX), view.pending_pulls("c")) == (True, 1)   # a bound pod still Pending
    assert (view.pulling("d", NGINX), view.pending_pulls("d")) == (False, 0)  # Running: pulled
    assert view.prepull("a", REDIS) is False                 # present
    assert view.prepull("busy", REDIS) is False              # a puller pod runs there
    assert view.prepull("dp", REDIS) is False and view.refused_disk_pressure == 1
    assert view.prepull("b", REDIS) is True and view.prepull("b", NGINX) is True   # one pod, two images
    assert view.prepull("b", REDIS) is False                 # already queued
    assert view.prepull("d", REDIS) is True
    assert view.prepull("c", REDIS) is False                 # past the cap of 2 new puller pods
    assert view.requests == {"b": [REDIS, NGINX], "d": [REDIS]}
    assert view.prepull("x", REDIS) is False                 # unknown node
    # redis shares no layer with nginx; on "a" it is all present
    assert view.layer_bytes("a", REDIS) == (55474442, 0)
    assert view.layer_bytes("b", REDIS) == (0, 55474442)     # coming with b's puller
    dp = view.store("dp")
    assert dp.usage_bytes == dp.capacity_bytes               # full: the planner's disk check refuses it
    e = _ni("e", [(["nginx:latest"], 63110572)], storage="100Gi")
    view.refresh([e], [])
    disk = view.store("e")
    assert (disk.usage_bytes, disk.capacity_bytes, disk.has_image(NGINX)) == (63110572, 100 * 2**30, True)


def test_precision() -> None:
    t = PrecisionTracker()
    for node in ("a", "b", "c"):
        t.started(node, REDIS)
    t.pulled("a", REDIS)
    t.pulled("b", REDIS)
    t.failed("c", REDIS)
    t.node_images("a", {REDIS})
    t.node_images("b", {REDIS})
    assert t.pod_bound("a", [REDIS, NGINX]) == 1
    t.node_images("b", set())                     # GC removed it before any pod came
    assert t.pod_bound("b", [REDIS]) == 0
    assert (t.prepulls, t.succeeded, t.used, t.wasted, t.precision) == (3, 2, 1, 1, 1 / 3)


# ---------------------------------------------------------------------------------------- run --prepull


def _node(cluster: Cluster, name: str, cpu: str, *, disk_pressure: bool = False) -> None:
    res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    conditions = [{"type": "Ready", "status": "True"},
                  {"type": "DiskPressure", "status": "True" if disk_pressure else "False"}]
    spec = {"taints": [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]} if disk_pressure else {}
    cluster.core.create_node({"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": spec,
                              "status": {"capacity": res, "allocatable": res, "conditions": conditions}})


def _app_pod(cluster: Cluster, name: str) -> None:
    cluster.core.create_namespaced_pod(cluster.namespace, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": cluster.namespace},
        "spec": {"schedulerName": "kubesched-it", "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "c", "image": "redis:latest",
                                 "resources": {"requests": {"cpu": "600m", "memory": "8Mi"}}}]}})


def _pullers(cluster: Cluster) -> list[dict[str, Any]]:
    resp = cluster.core.list_namespaced_pod("prepull", label_selector="kubesched.io/prepull=true",
                                            _preload_content=False)
    return list(json.loads(resp.data)["items"])


def _metric(replica: Replica, name: str) -> float | None:
    code, body, _ = replica.get("/metrics")
    m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", body.decode(), re.M)
    return float(m.group(1)) if m else None


@needs_hooks
def test_run_prepull_against_serve(cluster: Cluster, replicas: list[Any]) -> None:
    """Two redis pods fill n0 and n1; the application is hot and has no warm room left, so the
    controller pre-pulls redis on a node with room: never ``dp`` (DiskPressure, most room), so
    ``n2``. Once the puller pod reports its container done, it is deleted (outcome succeeded);
    the next redis pod lands on n2, where the pre-pulled image is: precision 1."""
    cluster.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prepull"}})
    for name, cpu in (("n0", "1"), ("n1", "1"), ("n2", "1")):
        _node(cluster, name, cpu)
    _node(cluster, "dp", "8", disk_pressure=True)
    config = scheduler_config(cluster.tmp, cluster.namespace)
    r = Replica(cluster, config, "--prepull", "--prepull-namespace", "prepull", "--prepull-interval", "0.3",
                "--leader-elect", "false")
    replicas.append(r)
    r.wait_ready()
    _app_pod(cluster, "redis-0")
    _app_pod(cluster, "redis-1")
    bound = cluster.wait_bound(["redis-0", "redis-1"])
    assert sorted(bound.values()) == ["n0", "n1"]

    pullers = wait_for(lambda: _pullers(cluster), 20, "a puller pod")
    assert len(pullers) == 1
    p = pullers[0]
    node_uid = cluster.core.read_node("n2").metadata.uid
    assert p["spec"]["nodeName"] == "n2"
    assert p["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "n2", "uid": node_uid,
                                                 "blockOwnerDeletion": False}]
    assert p["metadata"]["labels"] == {"kubesched.io/prepull": "true", "kubesched.io/prepull-node": "n2"}
    c = p["spec"]["containers"]
    assert [(x["image"], x["imagePullPolicy"], x["resources"]["requests"]) for x in c] == [
        (REDIS, "IfNotPresent", {"cpu": "1m", "memory": "8Mi"})]
    assert (p["spec"]["restartPolicy"], p["spec"]["priorityClassName"], p["spec"]["priority"]) == (
        "Never", "kubesched-prepull", -1000000)
    pc = cluster.api.call_api("/apis/scheduling.k8s.io/v1/priorityclasses/kubesched-prepull", "GET",
                              response_type="object", _return_http_data_only=True)
    assert pc["value"] == -1000000
    # one puller per node at a time, none on dp, whatever the ticks since
    time.sleep(1.0)
    assert [x["spec"]["nodeName"] for x in _pullers(cluster)] == ["n2"]

    # the "kubelet" reports the pull done (containers terminated) and the image in n2's status
    cluster.core.patch_namespaced_pod_status(p["metadata"]["name"], "prepull", {"status": {
        "phase": "Failed", "containerStatuses": [{"name": "pull-0", "image": REDIS, "imageID": "sha256:abc",
                                                  "ready": False, "restartCount": 0,
                                                  "state": {"terminated": {"exitCode": 127, "reason": "StartError"}}}]}})
    cluster.core.patch_node_status("n2", {"status": {"images": [{"names": [REDIS], "sizeBytes": 55474442}]}})
    wait_for(lambda: not _pullers(cluster), 20, "the puller pod deleted")
    assert _metric(r, 'kubesched_prepulls_total{outcome="succeeded"}') == 1.0
    assert _metric(r, "kubesched_prepull_bytes_total") == 55474442.0

    _app_pod(cluster, "redis-2")
    assert cluster.wait_bound(["redis-2"])["redis-2"] == "n2"
    wait_for(lambda: _metric(r, "kubesched_prepull_precision") == 1.0, 20, "precision 1")
    assert _metric(r, "kubesched_prepull_used_total") == 1.0
    resp = cluster.events_api.list_namespaced_event("default", _preload_content=False)
    events = [(e["reason"], e["regarding"]["name"]) for e in json.loads(resp.data)["items"]
              if e.get("reportingController") == "kubesched-prepull"]
    assert ("PrePulling", "n2") in events and ("PrePulled", "n2") in events
    assert not any(node == "dp" for _, node in events)
