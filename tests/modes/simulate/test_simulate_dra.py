"""``kubesched simulate -f examples/dra/``: claims created from templates, GPUs allocated by the
DynamicResources plugin, allocations in ``--write-snapshot``, upstream's message for the pod that
does not fit, and no device given twice."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "dra"


def test_examples_dra_schedules_fitting_pods_and_writes_allocations(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    r = CliRunner().invoke(main, ["simulate", "-f", str(EXAMPLE), "--seed", "1", "-o", "json",
                                  "--write-snapshot", str(snap)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert {n: (p["status"], p["node"]) for n, p in pods.items()} == {
        "train-1": ("Scheduled", "gpu-node-1"), "train-2": ("Scheduled", "gpu-node-1"),
        "train-3": ("Scheduled", "gpu-node-2"), "pair": ("Scheduled", "gpu-node-2"),
        "too-big": ("Unschedulable", None)}
    assert pods["too-big"]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling.")
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    claims = {d["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] + "@" +
              d["metadata"]["ownerReferences"][0]["name"]: d for d in docs if d["kind"] == "ResourceClaim"}
    got = {k: [(r["request"], r["driver"], r["pool"], r["device"])
               for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])]
           for k, c in claims.items()}
    assert got == {
        "gpu@train-1": [("gpu", "gpu.example.com", "gpu-node-1", "gpu-0")],
        "gpu@train-2": [("gpu", "gpu.example.com", "gpu-node-1", "gpu-1")],
        "gpu@train-3": [("gpu", "gpu.example.com", "gpu-node-2", "gpu-1")],
        # matchAttribute numa: gpu-0 and gpu-2 share NUMA node 0 (gpu-1 is on NUMA node 1)
        "gpu@pair": [("gpus", "gpu.example.com", "gpu-node-2", "gpu-0"), ("gpus", "gpu.example.com", "gpu-node-2",
                                                                           "gpu-2")],
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
        assert c["status"]["allocation"]["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        assert c["metadata"]["name"].startswith(f"{pod}-gpu-")
    devices = [d for v in got.values() for d in v]
    assert len({(x[2], x[3]) for x in devices}) == len(devices)
    statuses = {d["metadata"]["name"]: d["status"]["resourceClaimStatuses"] for d in docs if d["kind"] == "Pod"}
    assert statuses["pair"] == [{"name": "gpu", "resourceClaimName": claims["gpu@pair"]["metadata"]["name"]}]


def test_malformed_slice_is_reported_with_its_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                 "spec: {driver: d, nodeName: n, pool: {name: p}}\n")
    r = CliRunner().invoke(main, ["simulate", "-f", str(f)])
    assert r.exit_code != 0
    assert "spec.pool.resourceSliceCount: Required value" in r.output
