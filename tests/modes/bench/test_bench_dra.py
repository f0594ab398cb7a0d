"""``kubesched bench``: upstream's DRA scheduler_perf workloads (their counts and thresholds), the
DRA ops' objects, and small DRA workloads run end to end in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.errors import ConfigError
from kubesched.modes.bench import load_workloads, run_workload
from kubesched.modes.bench.api import workload_plan
from kubesched.modes.bench.dra_ops import allocate_claims, any_objects, driver_slices
from kubesched.modes.bench.workloads import Op


def test_shipped_dra_workloads_have_upstream_counts_and_thresholds() -> None:
    ws = {w.name: w for w in load_workloads()}
    rows = {
        name: (w.nodes, w.measured_pods, w.threshold, w.params)
        for name, w in ws.items()
        if name.startswith(
            ("SchedulingWithResourceClaimTemplate/", "SteadyStateClusterResourceClaimTemplate/")
        )
    }
    assert rows["SchedulingWithResourceClaimTemplate/5000pods_500nodes"] == (
        500,
        2500,
        56.0,
        {
            "nodesWithDRA": 500,
            "nodesWithoutDRA": 0,
            "initPods": 2500,
            "measurePods": 2500,
            "maxClaimsPerNode": 10,
        },
    )
    assert rows["SteadyStateClusterResourceClaimTemplate/empty_500nodes"][:3] == (500, 10, 64.0)
    assert rows["SteadyStateClusterResourceClaimTemplate/half_500nodes"][2:] == (
        60.0,
        {
            "nodesWithDRA": 500,
            "nodesWithoutDRA": 0,
            "initClaims": 2500,
            "maxClaimsPerNode": 10,
            "duration": "10s",
        },
    )
    assert rows["SteadyStateClusterResourceClaimTemplate/full_500nodes"][2] == 60.0
    assert sorted(rows) == sorted(
        [
            f"SchedulingWithResourceClaimTemplate/{n}"
            for n in ("fast", "2000pods_100nodes", "2000pods_200nodes", "5000pods_500nodes")
        ]
        + [
            f"SteadyStateClusterResourceClaimTemplate/{n}"
            for n in (
                "fast",
                "empty_100nodes",
                "empty_200nodes",
                "empty_500nodes",
                "half_100nodes",
                "half_200nodes",
                "half_500nodes",
                "full_100nodes",
                "full_200nodes",
                "full_500nodes",
            )
        ]
    )
    steady = ws["SteadyStateClusterResourceClaimTemplate/full_500nodes"]
    assert [op.opcode for op in steady.ops] == [
        "createNodes",
        "createNodes",
        "createResourceDriver",
        "createAny",
        "createAny",
        "allocResourceClaims",
        "createAny",
        "createPods",
    ]
    assert steady.ops[2].count == 10 and steady.ops[2].node_glob == "scheduler-perf-dra-*"
    assert steady.ops[4].count == 4990
    pods = steady.ops[7]
    assert (pods.count, pods.steady_state, pods.duration_seconds, pods.collect_metrics) == (
        10,
        True,
        10.0,
        True,
    )
    assert steady.uses_dra and not ws["SchedulingBasic/5000Nodes_10000Pods"].uses_dra


def test_dra_op_objects() -> None:
    driver = Op(
        "createResourceDriver",
        count=2,
        driver_name="test-driver.cdi.k8s.io",
        node_glob="scheduler-perf-dra-*",
    )
    (s,) = driver_slices(driver, ["scheduler-perf-0", "scheduler-perf-dra-1"])
    assert s == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "scheduler-perf-dra-1"},
        "spec": {
            "driver": "test-driver.cdi.k8s.io",
            "nodeName": "scheduler-perf-dra-1",
            "pool": {"name": "scheduler-perf-dra-1", "generation": 0, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(2)
            ],
        },
    }
    claim_op = Op(
        "createAny",
        count=3,
        template={
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "test-claim-{{.Index}}"},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "c"}}]}},
        },
    )
    claims = any_objects(claim_op, "init")
    assert [(c["metadata"]["name"], c["metadata"]["namespace"]) for c in claims] == [
        ("test-claim-0", "init"),
        ("test-claim-1", "init"),
        ("test-claim-2", "init"),
    ]
    slices = driver_slices(driver, ["scheduler-perf-dra-0", "scheduler-perf-dra-1"])
    got = allocate_claims(claims, slices)
    assert [
        (n, a["devices"]["results"][0]["pool"], a["devices"]["results"][0]["device"]) for n, a in got
    ] == [
        ("test-claim-0", "scheduler-perf-dra-0", "instance-0"),
        ("test-claim-1", "scheduler-perf-dra-0", "instance-1"),
        ("test-claim-2", "scheduler-perf-dra-1", "instance-0"),
    ]
    assert got[0][1] == {
        "devices": {
            "results": [
                {
                    "request": "req-0",
                    "driver": "test-driver.cdi.k8s.io",
                    "pool": "scheduler-perf-dra-0",
                    "device": "instance-0",
                }
            ]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-dra-0"]}
                    ]
                }
            ]
        },
    }
    # more claims than devices: the rest stay unallocated
    assert (
        len(allocate_claims(any_objects(Op("createAny", count=5, template=claim_op.template), "x"), slices))
        == 4
    )


def test_bad_dra_ops_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "- name: X\n  workloadTemplate:\n  - {opcode: createResourceDriver, nodes: '*'}\n"
        "  workloads: [{name: w}]\n"
    )
    with pytest.raises(ConfigError, match=r"^\[0\]\.workloadTemplate\[0\]\.driverName: required$"):
        load_workloads(bad)
    bad.write_text(
        "- name: X\n  defaultPodTemplatePath: pod-default.yaml\n  workloadTemplate:\n"
        "  - {opcode: createPods, count: 1, steadyState: true}\n  workloads: [{name: w}]\n"
    )
    with pytest.raises(ConfigError, match=r"\.duration: a steadyState createPods needs a duration > 0"):
        load_workloads(bad)


def test_scheduling_with_claim_template_fast_binds_every_pod_with_its_own_device() -> None:
    (w,) = [w for w in load_workloads() if w.name == "SchedulingWithResourceClaimTemplate/fast"]
    r = run_workload(w, seed=0)
    assert r.status == "ok", r.error
    assert (r.nodes, r.measured_pods, r.scheduled_pods, r.attempts) == (2, 10, 10, 10)


def test_steady_state_fast_keeps_replacing_pods() -> None:
    (w,) = [w for w in load_workloads() if w.name == "SteadyStateClusterResourceClaimTemplate/fast"]
    r = run_workload(w, seed=0)
    assert r.status == "ok", r.error
    # 10 devices, 10 pods at a time for 2 s of wall time: many more bindings than devices
    assert r.scheduled_pods > 10 and r.attempts == r.scheduled_pods


def test_full_cluster_steady_state_frees_devices_of_deleted_pods() -> None:
    (w,) = [w for w in load_workloads() if w.name == "SteadyStateClusterResourceClaimTemplate/full_100nodes"]
    # shrink: 3 nodes x 4 devices, 2 pre-allocated claims, 1 s
    for op in w.ops:
        if op.opcode == "createNodes":
            op.count = 3 if op.template and "dra" in str(op.template["metadata"].get("generateName")) else 0
        elif op.opcode == "createResourceDriver":
            op.count = 4
        elif op.opcode == "createAny" and op.template and op.template["kind"] == "ResourceClaim":
            op.count = 2
        elif op.opcode == "createPods":
            op.duration_seconds = 1.0
    r = run_workload(w, seed=0)
    assert r.status == "ok", r.error
    assert r.scheduled_pods > 10


def test_api_plan_loads_slices_claims_and_allocations() -> None:
    ws = {w.name: w for w in load_workloads()}
    plan = workload_plan(ws["SchedulingWithResourceClaimTemplate/2000pods_100nodes"])
    kinds = [o["kind"] for o in plan.objects]
    assert kinds.count("ResourceSlice") == 100 and kinds.count("DeviceClass") == 1
    assert kinds.count("ResourceClaimTemplate") == 2 and kinds.count("Pod") == 2000
    assert {o["metadata"]["name"] for o in plan.objects if o["kind"] == "Namespace"} == {"init", "test"}
    steady = workload_plan(ws["SteadyStateClusterResourceClaimTemplate/half_100nodes"])
    claims = [o for o in steady.objects if o["kind"] == "ResourceClaim"]
    assert len(claims) == 500 and all(c["status"]["allocation"]["devices"]["results"] for c in claims)
    devices = {
        (r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]
    }
    assert len(devices) == 500
