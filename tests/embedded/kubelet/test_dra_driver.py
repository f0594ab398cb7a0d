"""The fake DRA driver: the slices and DeviceClass it publishes, per-node configuration and errors."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.dra_driver import FakeGPUDriver, device_class, node_gpus
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import KubeschedError

Obj = dict[str, Any]


def node(
    name: str,
    gpus: int | str | None = None,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    alloc: Obj = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    if gpus is not None:
        alloc["nvidia.com/gpu"] = str(gpus)
    meta: Obj = {"name": name, "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": alloc}}


def slices(cluster: MemoryCluster) -> list[Obj]:
    out = []
    for s in cluster.list("ResourceSlice").items:
        meta = s["metadata"]
        out.append(
            {
                "name": meta["name"],
                "generateName": meta["generateName"],
                "owner": [(o["kind"], o["name"], o["uid"], o["controller"]) for o in meta["ownerReferences"]],
                "spec": s["spec"],
            }
        )
    return out


def started(*nodes: Obj) -> tuple[MemoryCluster, FakeGPUDriver]:
    cluster = MemoryCluster(VirtualClock(1_700_000_000.0))
    cluster.load(nodes)
    return cluster, FakeGPUDriver(cluster).start()


def test_slices_for_gpu_nodes_only() -> None:
    cluster, _ = started(
        node("cpu-1"),
        node("gpu-a", 2, labels={"alibabacloud.com/gpu-model": "T4"}),
        node("gpu-b", 1, labels={"alibabacloud.com/gpu-model": "G2"}),
    )
    a_uid = cluster.get("Node", None, "gpu-a")["metadata"]["uid"]
    b_uid = cluster.get("Node", None, "gpu-b")["metadata"]["uid"]
    assert slices(cluster) == [
        {
            "name": "gpu-a-gpu.kubesched.io-q7rcl",
            "generateName": "gpu-a-gpu.kubesched.io-",
            "owner": [("Node", "gpu-a", a_uid, True)],
            "spec": {
                "driver": "gpu.kubesched.io",
                "nodeName": "gpu-a",
                "pool": {"name": "gpu-a", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {"index": {"int": 0}, "model": {"string": "T4"}},
                        "capacity": {"memory": {"value": "16Gi"}},
                    },
                    {
                        "name": "gpu-1",
                        "attributes": {"index": {"int": 1}, "model": {"string": "T4"}},
                        "capacity": {"memory": {"value": "16Gi"}},
                    },
                ],
            },
        },
        {
            "name": "gpu-b-gpu.kubesched.io-vtq89",
            "generateName": "gpu-b-gpu.kubesched.io-",
            "owner": [("Node", "gpu-b", b_uid, True)],
            "spec": {
                "driver": "gpu.kubesched.io",
                "nodeName": "gpu-b",
                "pool": {"name": "gpu-b", "generation": 1, "resourceSliceCount": 1},
                # G2 is anonymised in the trace: no published memory size
                "devices": [
                    {"name": "gpu-0", "attributes": {"index": {"int": 0}, "model": {"string": "G2"}}}
                ],
            },
        },
    ]
    dc = cluster.get("DeviceClass", None, "gpu.kubesched.io")
    assert dc["spec"] == {"selectors": [{"cel": {"expression": 'device.driver == "gpu.kubesched.io"'}}]}
    assert dc["apiVersion"] == "resource.k8s.io/v1"


def test_annotations_override_allocatable_and_labels() -> None:
    n = node(
        "n1",
        8,
        labels={"nvidia.com/gpu.product": "NVIDIA-H100"},
        annotations={"gpu.kubesched.io/devices": "1", "gpu.kubesched.io/memory": "80Gi"},
    )
    assert node_gpus(n) == (1, "NVIDIA-H100", "80Gi")
    n2 = node(
        "n2", 2, labels={"alibabacloud.com/gpu-model": "T4"}, annotations={"gpu.kubesched.io/model": "A10"}
    )
    assert node_gpus(n2) == (2, "A10", "24Gi")
    assert node_gpus(node("n3", None)) == (0, None, None)
    assert node_gpus(node("n4", 1)) == (1, None, None)
    off = node("n5", 4, annotations={"gpu.kubesched.io/devices": "0"})
    cluster, _ = started(off)
    assert slices(cluster) == []


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (
            node("bad", "1.5"),
            "Node bad: status.allocatable[\"nvidia.com/gpu\"]: must be a whole number of GPUs, got '1.5'",
        ),
        (
            node("bad", annotations={"gpu.kubesched.io/devices": "two"}),
            "Node bad: metadata.annotations[\"gpu.kubesched.io/devices\"]: must be a whole number of GPUs, got 'two'",
        ),
        (
            node("bad", 1, annotations={"gpu.kubesched.io/memory": "lots"}),
            "Node bad: metadata.annotations[\"gpu.kubesched.io/memory\"]: must be a quantity such as 16Gi, got 'lots'",
        ),
    ],
)
def test_malformed_node_is_reported(n: Obj, message: str) -> None:
    with pytest.raises(KubeschedError) as e:
        node_gpus(n)
    assert str(e.value) == message


def test_malformed_node_publishes_nothing_and_others_still_do(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.embedded.kubelet.dra_driver"):
        cluster, _ = started(node("bad", "x"), node("good", 1))
    assert [s["spec"]["nodeName"] for s in slices(cluster)] == ["good"]
    assert [r.getMessage() for r in caplog.records] == [
        "fake DRA driver: Node bad: status.allocatable[\"nvidia.com/gpu\"]: must be a whole number of GPUs, got 'x'"
    ]


def test_node_changes_bump_generation_and_deletion_removes_slice() -> None:
    cluster, _ = started(node("n1", 1))
    (before,) = slices(cluster)
    cluster.delete("Node", None, "n1")
    assert slices(cluster) == []
    cluster.create(node("n1", 2))
    (after,) = slices(cluster)
    assert after["spec"]["pool"]["generation"] == 1 and len(after["spec"]["devices"]) == 2
    assert after["name"] != before["name"]
    n = cluster.get("Node", None, "n1")
    cluster.update({**n, "metadata": {**n["metadata"], "annotations": {"gpu.kubesched.io/model": "T4"}}})
    (updated,) = slices(cluster)
    assert updated["name"] == after["name"]
    assert updated["spec"]["pool"] == {"name": "n1", "generation": 2, "resourceSliceCount": 1}
    assert updated["spec"]["devices"][1] == {
        "name": "gpu-1",
        "attributes": {"index": {"int": 1}, "model": {"string": "T4"}},
        "capacity": {"memory": {"value": "16Gi"}},
    }
    n = cluster.get("Node", None, "n1")
    cluster.update({**n, "metadata": {**n["metadata"], "annotations": {"gpu.kubesched.io/devices": "0"}}})
    assert slices(cluster) == []


def test_existing_device_class_and_slices_are_kept() -> None:
    custom = {**device_class(), "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    cluster = MemoryCluster(VirtualClock(0.0))
    cluster.load([custom, node("n1", 1)])
    FakeGPUDriver(cluster).start()
    (first,) = slices(cluster)
    FakeGPUDriver(cluster).start()  # a restarted driver adopts its slice
    assert slices(cluster) == [first]
    assert cluster.get("DeviceClass", None, "gpu.kubesched.io")["spec"] == custom["spec"]
