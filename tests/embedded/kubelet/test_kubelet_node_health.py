"""Node heartbeats, the node lifecycle controller and taint eviction on a virtual clock."""

from __future__ import annotations

from kubesched.api.taints import Taint, Toleration
from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.nodelifecycle import NodeLifecycleController
from kubesched.embedded.controllers.tainteviction import TaintEvictionController, min_toleration_seconds
from kubesched.embedded.kubelet.heartbeat import STOPPED_ANNOTATION, NodeHeartbeats
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0
DEFAULT_TOLERATIONS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


def _cluster() -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.create({"kind": "Namespace", "metadata": {"name": "kube-node-lease"}})
    for name in ("n1", "n2"):
        cluster.create({"kind": "Node", "metadata": {"name": name}})
    NodeHeartbeats(cluster, clock).start()
    NodeLifecycleController(cluster, clock).start()
    TaintEvictionController(cluster, clock).start()
    return cluster, clock


def _ready(cluster: MemoryCluster, node: str) -> str:
    conds = {c["type"]: c for c in cluster.get("Node", None, node)["status"]["conditions"]}
    return conds["Ready"]["status"]


def test_running_kubelets_keep_nodes_ready_and_renew_their_leases() -> None:
    cluster, clock = _cluster()
    clock.run_until(T0 + 1)
    node = cluster.get("Node", None, "n1")
    assert [(c["type"], c["status"], c["reason"]) for c in node["status"]["conditions"]] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    lease = cluster.get("Lease", "kube-node-lease", "n1")
    assert lease["spec"] == {
        "holderIdentity": "n1",
        "leaseDurationSeconds": 40,
        "renewTime": "2023-11-14T22:13:20.000000Z",
    }
    assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
    clock.run_until(T0 + 600)
    assert cluster.get("Lease", "kube-node-lease", "n1")["spec"]["renewTime"] == "2023-11-14T22:23:20.000000Z"
    assert _ready(cluster, "n1") == "True" and cluster.get("Node", None, "n1").get("spec", {}).get(
        "taints"
    ) in (None, [])


def test_a_stopped_node_turns_unknown_is_tainted_and_its_pods_are_evicted_after_300s() -> None:
    cluster, clock = _cluster()
    clock.run_until(T0 + 1)
    for name, tolerations in (("tolerant", DEFAULT_TOLERATIONS), ("intolerant", [])):
        cluster.create(
            {
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "nodeName": "n1",
                    "tolerations": tolerations,
                    "containers": [{"name": "c", "image": "i"}],
                },
            }
        )
    node = cluster.get("Node", None, "n1")
    cluster.update({**node, "metadata": {**node["metadata"], "annotations": {STOPPED_ANNOTATION: "true"}}})
    clock.run_until(T0 + 59)
    # first probe at T0 + 5 saw the last renewal (T0 + 0); Unknown once now > probe + 50 s
    assert _ready(cluster, "n1") == "True"
    clock.run_until(T0 + 65)
    assert _ready(cluster, "n1") == "Unknown" and _ready(cluster, "n2") == "True"
    taints = cluster.get("Node", None, "n1")["spec"]["taints"]
    assert [(t["key"], t["effect"]) for t in taints] == [
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    ]
    tainted_at = taints[1]["timeAdded"]
    assert tainted_at == "2023-11-14T22:14:20Z"  # T0 + 60
    intolerant = cluster.get("Pod", "default", "intolerant")
    assert intolerant["metadata"]["deletionTimestamp"] == "2023-11-14T22:14:50Z"  # graceful: 30 s
    assert [c["reason"] for c in intolerant["status"]["conditions"]] == ["DeletionByTaintManager"]
    clock.run_until(T0 + 60 + 299)
    assert "deletionTimestamp" not in cluster.get("Pod", "default", "tolerant")["metadata"]
    clock.run_until(T0 + 60 + 300)
    assert (
        cluster.get("Pod", "default", "tolerant")["metadata"]["deletionTimestamp"] == "2023-11-14T22:19:50Z"
    )
    node = cluster.get("Node", None, "n1")
    cluster.update({**node, "metadata": {**node["metadata"], "annotations": {}}})
    clock.run_until(T0 + 370)
    assert _ready(cluster, "n1") == "True"
    assert cluster.get("Node", None, "n1")["spec"]["taints"] == []


def test_min_toleration_seconds() -> None:
    unreachable = Taint("node.kubernetes.io/unreachable", "", "NoExecute")
    other = Taint("example.com/x", "", "NoExecute")
    t300 = Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300)
    forever = Toleration("", "Exists", "", "", None)
    assert min_toleration_seconds((unreachable,), (t300,)) == 300.0
    assert min_toleration_seconds((unreachable, other), (t300,)) == 0.0
    assert min_toleration_seconds((unreachable,), (forever,)) is None
    assert min_toleration_seconds((unreachable,), (forever, t300)) == 300.0
    assert min_toleration_seconds((unreachable,), (Toleration("", "Exists", "", "", -5),)) == 0.0
