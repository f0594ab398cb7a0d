"""``kubesched snapshot`` and ``simulate --kubeconfig`` read a live cluster (here ``kubesched serve``,
or the real cluster of KUBESCHED_E2E_KUBECONFIG) and never write to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from run_support import Cluster

from kubesched.cli.main import main


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _setup(cluster: Cluster) -> None:
    cluster.add_nodes(2, cpu="1")
    cluster.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    bound = cluster.pod_manifest("bound-elsewhere", cpu="900m")
    bound["metadata"]["namespace"] = "other"
    bound["spec"]["nodeName"] = "node-0"
    cluster.core.create_namespaced_pod("other", bound)
    pending_other = cluster.pod_manifest("pending-elsewhere", cpu="100m")
    pending_other["metadata"]["namespace"] = "other"
    cluster.core.create_namespaced_pod("other", pending_other)
    cluster.create_pod("web", cpu="500m")


def test_snapshot_reads_strips_and_loads_back(cluster: Cluster, tmp_path: Path) -> None:
    if not cluster.embedded:
        pytest.skip("exact object counts need the embedded cluster")
    _setup(cluster)
    out = tmp_path / "snap.yaml"
    code, _, err = run(
        "snapshot", "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "--output", str(out)
    )
    assert code == 0, err
    objs = [o for o in yaml.safe_load_all(out.read_text()) if o]
    names = sorted((o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objs)
    assert names == [
        ("Namespace", "", cluster.namespace),
        ("Node", "", "node-0"),
        ("Node", "", "node-1"),
        ("Pod", cluster.namespace, "web"),
        ("Pod", "other", "bound-elsewhere"),
    ]
    for o in objs:
        assert "managedFields" not in o["metadata"] and "resourceVersion" not in o["metadata"]
    node = next(o for o in objs if o["kind"] == "Node")
    assert sorted(node["status"]) == ["allocatable", "capacity"]
    # simulate loads it unchanged: web cannot go to node-0 (900m of 1 cpu used by the other namespace)
    code, out_text, err = run(
        "simulate", "-f", str(out), "-o", "json", "--seed", "1", "--config", str(_profile(tmp_path))
    )
    assert code == 0, err
    pods = {p["name"]: p for p in json.loads(out_text)["pods"]}
    assert (pods["web"]["status"], pods["web"]["node"]) == ("Scheduled", "node-1")
    code, json_text, _ = run("snapshot", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    assert code == 0 and json.loads(json_text)["kind"] == "List"


def test_simulate_on_live_state_writes_nothing(cluster: Cluster, tmp_path: Path) -> None:
    if not cluster.embedded:
        pytest.skip("exact placements need the embedded cluster's nodes")
    _setup(cluster)
    before = cluster.handle.cluster.resource_version  # type: ignore[union-attr]
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        yaml.safe_dump_all(
            [
                {
                    **cluster.pod_manifest(f"replica-{i}", cpu="400m"),
                    "metadata": {"name": f"replica-{i}", "namespace": "shop"},
                }
                for i in range(3)
            ]
        )
    )
    code, out, err = run(
        "simulate",
        "--kubeconfig",
        cluster.kubeconfig,
        "-f",
        str(extra),
        "--seed",
        "1",
        "--config",
        str(_profile(tmp_path)),
        "-o",
        "wide",
        "--no-headers",
    )
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines()}
    assert rows[f"{cluster.namespace}/web"] == ["node-1", "Scheduled"]
    assert rows["other/pending-elsewhere"] == ["node-1", "Scheduled"]  # LeastAllocated: 500m free vs 100m
    placed = sorted(rows[f"shop/replica-{i}"][0] for i in range(3))
    assert placed == ["<pending>", "<pending>", "node-1"]
    assert cluster.handle.cluster.resource_version == before  # type: ignore[union-attr]
    assert cluster.bound() == {}
    assert "bound-elsewhere" in cluster.core.read_namespaced_pod("bound-elsewhere", "other").metadata.name


def _profile(tmp_path: Path) -> Path:
    p = tmp_path / "sched.yaml"
    p.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: kubesched-it\n"
    )
    return p


def test_read_only_on_any_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """Runs against the real cluster of KUBESCHED_E2E_KUBECONFIG too: the snapshot holds the test
    namespace's pending pod without managedFields, and a what-if on the live state writes nothing."""
    cluster.add_nodes(1)
    cluster.create_pod("pending-web", cpu="10m")
    before = {n: p["metadata"]["resourceVersion"] for n, p in cluster.pods().items()}
    out = tmp_path / "snap.json"
    code, _, err = run(
        "snapshot", "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "--output", str(out)
    )
    assert code == 0, err
    items = json.loads(out.read_text())["items"]
    mine = [o for o in items if o["kind"] == "Pod" and o["metadata"].get("namespace") == cluster.namespace]
    assert [o["metadata"]["name"] for o in mine] == ["pending-web"]
    assert all("managedFields" not in o["metadata"] for o in items)
    assert not any(o["kind"] == "Secret" for o in items)
    code, text, err = run(
        "simulate",
        "--kubeconfig",
        cluster.kubeconfig,
        "-n",
        cluster.namespace,
        "--config",
        str(_profile(tmp_path)),
        "-o",
        "name",
    )
    assert code == 0, err
    assert "pod/pending-web" in text.splitlines()
    assert {n: p["metadata"]["resourceVersion"] for n, p in cluster.pods().items()} == before
    assert cluster.bound() == {}
