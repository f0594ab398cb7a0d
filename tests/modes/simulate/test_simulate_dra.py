"""``kubesched simulate -f examples/dra/``: claims created from templates, GPUs allocated by the
DynamicResources plugin, allocations in ``--write-snapshot``, upstream's message for the pod that
does not fit, and no device given twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.cli.main import main
from kubesched.config.load import parse_config
from kubesched.embedded.manifests import load_manifests
from kubesched.modes.simulate.run import run_simulation

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "dra"


def test_examples_dra_schedules_fitting_pods_and_writes_allocations(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    r = CliRunner().invoke(
        main,
        ["simulate", "-f", str(EXAMPLE), "--seed", "1", "-o", "json", "--write-snapshot", str(snap)],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert {n: (p["status"], p["node"]) for n, p in pods.items()} == {
        "train-1": ("Scheduled", "gpu-node-1"),
        "train-2": ("Scheduled", "gpu-node-1"),
        "train-3": ("Scheduled", "gpu-node-2"),
        "pair": ("Scheduled", "gpu-node-2"),
        "too-big": ("Unschedulable", None),
    }
    assert pods["too-big"]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    claims = {
        d["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"]
        + "@"
        + d["metadata"]["ownerReferences"][0]["name"]: d
        for d in docs
        if d["kind"] == "ResourceClaim"
    }
    got = {
        k: [
            (r["request"], r["driver"], r["pool"], r["device"])
            for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
        ]
        for k, c in claims.items()
    }
    assert got == {
        "gpu@train-1": [("gpu", "gpu.example.com", "gpu-node-1", "gpu-0")],
        "gpu@train-2": [("gpu", "gpu.example.com", "gpu-node-1", "gpu-1")],
        "gpu@train-3": [("gpu", "gpu.example.com", "gpu-node-2", "gpu-1")],
        # matchAttribute numa: gpu-0 and gpu-2 share NUMA node 0 (gpu-1 is on NUMA node 1)
        "gpu@pair": [
            ("gpus", "gpu.example.com", "gpu-node-2", "gpu-0"),
            ("gpus", "gpu.example.com", "gpu-node-2", "gpu-2"),
        ],
        "gpu@too-big": [],
    }
    for key, c in claims.items():
        pod = key.split("@")[1]
        if pod == "too-big":
            assert "status" not in c or not c["status"]
            continue
        assert c["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        assert [x["name"] for x in c["status"]["reservedFor"]] == [pod]
        node = pods[pod]["node"]
        assert c["status"]["allocation"]["nodeSelector"] == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
        assert c["metadata"]["name"].startswith(f"{pod}-gpu-")
    devices = [d for v in got.values() for d in v]
    assert len({(x[2], x[3]) for x in devices}) == len(devices)
    statuses = {
        d["metadata"]["name"]: d["status"]["resourceClaimStatuses"] for d in docs if d["kind"] == "Pod"
    }
    assert statuses["pair"] == [{"name": "gpu", "resourceClaimName": claims["gpu@pair"]["metadata"]["name"]}]


def test_malformed_slice_is_reported_with_its_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: d, nodeName: n, pool: {name: p}}\n"
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(f)])
    assert r.exit_code != 0
    assert "spec.pool.resourceSliceCount: Required value" in r.output


class _PodWrites:
    """Records, per pod, ``(nominatedNodeName, nodeName)`` of every stored version, and per claim
    whether it was reserved, in store order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str | None, str | None]] = []

    def loaded(self, cluster: Any, sched: Any) -> None:
        def on_pod(ev: Any) -> None:
            o = ev.object
            self.log.append(
                (
                    "Pod",
                    o["metadata"]["name"],
                    (o.get("status") or {}).get("nominatedNodeName"),
                    (o.get("spec") or {}).get("nodeName"),
                )
            )

        def on_claim(ev: Any) -> None:
            o = ev.object
            owner = (o["metadata"].get("ownerReferences") or [{}])[0].get("name")
            reserved = bool((o.get("status") or {}).get("reservedFor"))
            self.log.append(("ResourceClaim", owner, "reserved" if reserved else None, None))

        cluster.watch("Pod", "0", on_pod)
        cluster.watch("ResourceClaim", "0", on_claim)

    def before_attempt(self, qpi: Any) -> None:
        pass

    def after_attempt(self, qpi: Any) -> None:
        pass


@pytest.mark.parametrize("enabled", [True, False])
def test_nominated_node_name_and_reservation_before_binding(enabled: bool) -> None:
    """NominatedNodeNameForExpectation (on in v1.35): a pod whose PreBind has work (claims) gets
    ``nominatedNodeName`` before its claims are written and before it is bound; the claim's
    ``reservedFor`` is written before the binding either way."""
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "featureGates": {"NominatedNodeNameForExpectation": enabled},
        }
    )
    writes = _PodWrites()
    run_simulation(load_manifests([EXAMPLE]).manifests, config, seed=1, observer=writes)
    train1 = [e for e in writes.log if e[1] == "train-1"]
    bound = next(i for i, e in enumerate(train1) if e[0] == "Pod" and e[3] == "gpu-node-1")
    reserved = next(i for i, e in enumerate(train1) if e[0] == "ResourceClaim" and e[2] == "reserved")
    nominated = [i for i, e in enumerate(train1) if e[0] == "Pod" and e[2] == "gpu-node-1" and e[3] is None]
    assert reserved < bound
    if enabled:
        assert nominated and nominated[0] < reserved
    else:
        assert nominated == []


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    devices_per_node=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    counts=st.lists(st.integers(1, 3), min_size=1, max_size=8),
    seed=st.integers(0, 5),
)
def test_property_no_device_is_allocated_twice(
    devices_per_node: list[int], counts: list[int], seed: int
) -> None:
    """Whatever the cluster and the pods, every scheduled pod's claims are allocated and reserved
    for it, no device appears in two allocations, and a pod is unschedulable only when its claim
    does not fit next to the others."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for n, k in enumerate(devices_per_node):
        node = f"n{n}"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
            }
        )
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-gpu"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": node,
                    "pool": {"name": node, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}"} for i in range(k)],
                },
            }
        )
    for c in sorted(set(counts)):
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpus-{c}", "namespace": "default"},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": c}}]
                        }
                    }
                },
            }
        )
    for i, c in enumerate(counts):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": f"gpus-{c}"}],
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1"}],
                },
            }
        )
    text = "\n---\n".join(json.dumps(d) for d in docs)
    from kubesched.embedded.manifests import load_manifest_text

    res = run_simulation(load_manifest_text(text, "gen.yaml").manifests, None, seed=seed)
    claims = [o for o in res.cluster.list("ResourceClaim").items]
    used: list[tuple[str, str]] = []
    by_owner = {c["metadata"]["ownerReferences"][0]["name"]: c for c in claims}
    free = dict(enumerate(devices_per_node))
    for o in res.pods:
        claim = by_owner[o.name]
        alloc = (claim.get("status") or {}).get("allocation")
        if o.status == "Scheduled":
            assert alloc is not None
            assert [r["name"] for r in claim["status"]["reservedFor"]] == [o.name]
            devs = [(r["pool"], r["device"]) for r in alloc["devices"]["results"]]
            assert {p for p, _ in devs} == {o.node}
            assert len(devs) == counts[int(o.name[1:])]
            used += devs
            free[int(str(o.node)[1:])] -= len(devs)
        else:
            assert o.status == "Unschedulable" and alloc is None
    assert len(used) == len(set(used))
    for o in res.pods:
        if o.status != "Scheduled":
            assert all(counts[int(o.name[1:])] > f for f in free.values())
