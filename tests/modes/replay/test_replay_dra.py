"""``replay --gpu dra``: the workload conversion (exact manifests and templates) and a replay of the
same small GPU workload with the device plugin and with DRA."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kubesched.errors import ManifestError
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.dra_gpus import claim_template, pod_gpu_devices, with_dra_gpus
from kubesched.modes.replay.run import run_replay
from kubesched.modes.report.metrics import DRA_DEVICES_RESOURCE
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.openb import TracePod
from kubesched.trace.workload import Workload, WorkloadPod

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
IMAGE = "example.com/base:1"


def gpu_node(name: str, gpus: int, model: str) -> dict[str, Any]:
    alloc = {
        "cpu": "32000m",
        "memory": "262144Mi",
        "pods": "110",
        "nvidia.com/gpu": str(gpus),
        "alibabacloud.com/gpu-milli": str(gpus * 1000),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "alibabacloud.com/gpu-model": model},
        },
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def trace_pod(name: str, num_gpu: int, milli: int, spec: tuple[str, ...] = ()) -> TracePod:
    return TracePod(name, 1000, 1024, num_gpu, milli, spec, "LS", "Running", 0.0, None, 0.0)


def workload() -> Workload:
    rows = [
        ("whole-t4", 1, 1000, ("T4",)),
        ("two", 2, 1000, ()),
        ("half", 1, 500, ()),
        ("half-2", 1, 500, ()),
        ("cpu-only", 0, 0, ()),
    ]
    pods = [
        WorkloadPod(r[0], "default", float(i), 100.0, trace_pod(*r).manifest(image=IMAGE))
        for i, r in enumerate(rows)
    ]
    return Workload([gpu_node("p100-node", 2, "P100"), gpu_node("t4-node", 2, "T4")], pods, horizon=200.0)


def test_conversion_of_nodes_pods_and_templates() -> None:
    wl = with_dra_gpus(workload())
    assert wl.gpu == "dra"
    node = wl.nodes[1]
    assert node["metadata"]["annotations"] == {"gpu.kubesched.io/devices": "2"}
    assert node["status"]["allocatable"] == {"cpu": "32000m", "memory": "262144Mi", "pods": "110"}
    assert node["status"]["capacity"] == node["status"]["allocatable"]
    assert workload().nodes[1]["status"]["allocatable"]["nvidia.com/gpu"] == "2"  # input untouched
    pods = {p.name: p.manifest for p in wl.pods}
    assert pods["whole-t4"]["spec"] == {
        "containers": [
            {
                "name": "main",
                "image": IMAGE,
                "resources": {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "claims": [{"name": "gpu"}]},
            }
        ],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-1-t4"}],
    }
    assert pods["two"]["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-2"}]
    assert pods["half"]["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-1"}]
    assert pods["cpu-only"] == workload().pods[4].manifest
    assert [o["metadata"]["name"] for o in wl.objects] == ["gpu-1", "gpu-1-t4", "gpu-2"]
    assert wl.objects[1] == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-1-t4", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.kubesched.io",
                                "allocationMode": "ExactCount",
                                "count": 1,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": 'device.attributes["gpu.kubesched.io"].model in ["T4"]'
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            }
        },
    }


def test_model_constraint_keeps_other_affinity() -> None:
    m = copy.deepcopy(trace_pod("p", 1, 1000, ("P100", "T4")).manifest())
    terms = m["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    terms[0]["matchExpressions"].append({"key": "zone", "operator": "In", "values": ["a"]})
    wl = with_dra_gpus(Workload([], [WorkloadPod("p", "default", 0.0, None, m)], horizon=1.0))
    assert wl.pods[0].manifest["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    assert wl.objects[0]["metadata"]["name"] == "gpu-1-p100-t4"
    assert claim_template("default", 1, ("P100", "T4"))["spec"]["spec"]["devices"]["requests"][0]["exactly"][
        "selectors"
    ] == [{"cel": {"expression": 'device.attributes["gpu.kubesched.io"].model in ["P100", "T4"]'}}]


def test_device_counts_and_bad_quantity() -> None:
    assert pod_gpu_devices(trace_pod("a", 8, 1000).manifest()) == 8
    assert pod_gpu_devices(trace_pod("a", 1, 460).manifest()) == 1
    assert pod_gpu_devices(trace_pod("a", 0, 0).manifest()) == 0
    bad = trace_pod("a", 1, 1000).manifest()
    bad["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "x"
    with pytest.raises(ManifestError) as e:
        with_dra_gpus(Workload([], [WorkloadPod("a", "default", 0.0, None, bad)], horizon=1.0))
    assert (
        str(e.value)
        == "Pod default/a: spec.containers[0].resources.requests[nvidia.com/gpu]: invalid quantity 'x'"
    )


@pytest.fixture(scope="module")
def runs() -> dict[str, ReplayResult]:
    catalogue = load_catalogue(FIX / "catalogue.yaml")
    return {
        "device-plugin": run_replay(workload(), catalogue=catalogue, seed=0),
        "dra": run_replay(with_dra_gpus(workload()), catalogue=catalogue, seed=0),
    }


def test_same_trace_with_device_plugin_and_dra(runs: dict[str, ReplayResult]) -> None:
    nodes = {mode: {t.key.split("/")[1]: t.node for t in r.timelines} for mode, r in runs.items()}
    assert all(t.finished is not None for r in runs.values() for t in r.timelines)
    # the T4-only pod lands on the T4 node either way (node affinity / CEL selector on the model)
    assert nodes["device-plugin"]["whole-t4"] == nodes["dra"]["whole-t4"] == "t4-node"
    # device plugin: 4 GPUs hold whole-t4 (1), two (2) and both halves on one GPU (500 + 500 milli)
    # DRA: each half takes a whole device, so 1 + 2 + 1 + 1 = 5 devices: one half waits for a device
    dp, dra = runs["device-plugin"], runs["dra"]
    assert dp.summary()["scheduled"] == dra.summary()["scheduled"] == 5
    tl = {t.key.split("/")[1]: t for t in dra.timelines}
    assert [tl[n].bound for n in ("whole-t4", "two", "half", "cpu-only")] == [0.0, 1.0, 2.0, 4.0]
    # half-2 is bound when whole-t4 and half end and their claims release two T4 devices
    assert tl["half-2"].bound == tl["whole-t4"].finished == tl["half"].finished
    assert tl["half-2"].node == "t4-node"
    assert DRA_DEVICES_RESOURCE not in dp.mean_allocated_fraction
    assert dra.mean_allocated_fraction["nvidia.com/gpu"] == 0.0
    # devices x seconds over 4 devices x the 200 s horizon
    area = sum(
        n * (min(tl[p].finished, 200.0) - tl[p].bound)
        for p, n in (("whole-t4", 1), ("two", 2), ("half", 1), ("half-2", 1))
    )
    assert dra.mean_allocated_fraction[DRA_DEVICES_RESOURCE] == pytest.approx(area / 800.0, abs=1e-9)
