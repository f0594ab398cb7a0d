"""``kubesched bench``: workload files, the runner (end to end on a small cluster) and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.errors import ConfigError
from kubesched.modes.bench import load_workloads, run_workload, select
from kubesched.modes.bench.metrics import ThroughputCollector, percentile
from kubesched.modes.bench.report import results_json

SMALL = """
- name: Small
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
    labelNodePrepareStrategy: {labelKey: topology.kubernetes.io/zone, labelValues: [z1, z2]}
  - opcode: createPods
    countParam: $initPods
  - opcode: sleep
    duration: 2s
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  - opcode: barrier
  workloads:
  - {name: 40Nodes_60Pods, threshold: 1, params: {initNodes: 40, initPods: 10, measurePods: 60}}
"""


def test_shipped_workloads_have_upstream_defaults() -> None:
    ws = {w.name: w for w in load_workloads()}
    basic = ws["SchedulingBasic/5000Nodes_10000Pods"]
    assert (basic.nodes, basic.measured_pods, basic.threshold) == (5000, 10000, 680.0)
    node_tmpl = basic.ops[0].template
    assert node_tmpl is not None and node_tmpl["status"]["capacity"] == {
        "pods": "110",
        "cpu": "4",
        "memory": "32Gi",
    }
    pod_tmpl = basic.ops[2].template
    assert pod_tmpl is not None
    c = pod_tmpl["spec"]["containers"][0]
    assert c["image"] == "registry.k8s.io/pause:3.10.1"
    assert c["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}
    for name in (
        "SchedulingBasic/5000Nodes_50000Pods",
        "SchedulingDaemonset/15000Nodes",
        "SchedulingNodeAffinity/5000Nodes_10000Pods",
        "SchedulingBasic/50000Nodes_100000Pods",
        "TopologySpreading/5000Nodes_5000Pods",
        "PreemptionAsync/5000Nodes",
    ):
        assert name in ws
    assert [w.name for w in select(list(ws.values()), ["SchedulingDaemonset"])] == [
        "SchedulingDaemonset/15000Nodes"
    ]


def test_unknown_workload_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown workload 'Nope'"):
        select(load_workloads(), ["Nope"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: X\n  workloadTemplate:\n  - opcode: fly\n  workloads: [{name: w}]\n")
    with pytest.raises(ConfigError, match=r"\[0\]\.workloadTemplate\[0\]\.opcode"):
        load_workloads(bad)
    bad.write_text(
        "- name: X\n  workloadTemplate:\n  - {opcode: createNodes, countParam: $n}\n  workloads: [{name: w}]\n"
    )
    with pytest.raises(ConfigError, match="parameter 'n' not set"):
        load_workloads(bad)


def test_small_workload_runs_end_to_end(tmp_path: Path) -> None:
    cfg = tmp_path / "small.yaml"
    cfg.write_text(SMALL)
    (w,) = load_workloads(cfg)
    seen: list[tuple[int, int]] = []
    r = run_workload(w, seed=3, progress=lambda d, t: seen.append((d, t)))
    assert r.status == "ok", r.error
    assert (r.nodes, r.measured_pods, r.scheduled_pods) == (40, 60, 60)
    assert r.attempts == 60
    assert seen[-1] == (60, 60)
    assert r.throughput["average"] > 0 and r.latency["perc99"] >= r.latency["perc50"] > 0
    doc = results_json([r])
    entry = doc["workloads"][0]  # type: ignore[index]
    assert set(entry) >= {
        "name",
        "nodes",
        "measuredPods",
        "throughput",
        "attemptLatencySeconds",
        "peakRssBytes",
        "upstreamThreshold",
    }
    assert entry["name"] == "Small/40Nodes_60Pods" and entry["upstreamThreshold"] == 1.0
    assert set(entry["throughput"]) == {"average", "perc50", "perc90", "perc99"}


def test_unschedulable_pods_end_incomplete_not_crash(tmp_path: Path) -> None:
    cfg = tmp_path / "full.yaml"
    cfg.write_text(
        SMALL.replace("initNodes: 40", "initNodes: 1").replace("measurePods: 60", "measurePods: 60")
    )
    (w,) = load_workloads(cfg)
    r = run_workload(w, seed=0)
    assert r.status == "incomplete"
    assert "still unscheduled" in r.error


def test_cli_list_and_run(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["bench", "--list"])
    assert res.exit_code == 0
    assert (
        "SchedulingBasic/5000Nodes_10000Pods\tnodes=5000\tmeasuredPods=10000\tthreshold=680 pods/s"
        in res.output
    )
    cfg = tmp_path / "small.yaml"
    cfg.write_text(SMALL)
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["bench", "--config", str(cfg), "--in-process", "--output", str(out), "Small"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["workloads"][0]["scheduledPods"] == 60
    res = runner.invoke(main, ["bench", "Nope"])
    assert res.exit_code == 2 and "unknown workload" in res.output


def test_throughput_percentiles() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == 4.0
    assert percentile([], 50) == 0.0
    c = ThroughputCollector(samples=[10.0, 30.0, 20.0])
    assert c.summary() == {"average": 20.0, "perc50": 20.0, "perc90": 30.0, "perc99": 30.0}
