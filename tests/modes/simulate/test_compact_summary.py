"""The compact ``simulate -o json`` document built from :class:`SummaryRecorder` (first rejecting
plugin per node, score lists) equals the one built by compacting full per-node records, byte for
byte: on the example cluster, on generated clusters (taints, node selectors, spreading, host ports,
priorities with preemption and nominated pods, pods that never fit) and on the bench fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.embedded.manifests import Manifest, load_manifests
from kubesched.framework.recorder import CycleRecorder
from kubesched.modes.bench.simulate_fixture import spreading_cluster
from kubesched.modes.simulate import compact as compact_mod
from kubesched.modes.simulate.report import result_dict
from kubesched.modes.simulate.run import run_simulation
from kubesched.scheduler import placement as placement_mod
from kubesched.testing import node_manifest, pod_manifest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "cluster.yaml"


def _both(manifests: list[Manifest], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The compact document from summaries and from full records, both on the batch path (every
    cluster size takes it here)."""
    with monkeypatch.context() as m:
        m.setattr(placement_mod, "BATCH_MIN_NODES", 1)
        summary = json.dumps(result_dict(run_simulation(manifests, None, seed=3, compact=True)))
        m.setattr(compact_mod.CompactRecords, "new_recorder", lambda self, pod: CycleRecorder())
        full = json.dumps(result_dict(run_simulation(manifests, None, seed=3, compact=True)))
    return summary, full


def test_per_node_path_too(monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = load_manifests([str(EXAMPLE)]).manifests
    summary = json.dumps(result_dict(run_simulation(manifests, None, seed=3, compact=True)))
    monkeypatch.setattr(compact_mod.CompactRecords, "new_recorder", lambda self, pod: CycleRecorder())
    assert summary == json.dumps(result_dict(run_simulation(manifests, None, seed=3, compact=True)))


def test_example_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    summary, full = _both(load_manifests([str(EXAMPLE)]).manifests, monkeypatch)
    assert summary == full
    assert (
        '"filterRejections": {"TaintToleration"' in summary
        or '"filterRejections": {"NodeResourcesFit"' in summary
    )


def test_spreading_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    objs = [
        Manifest(o, "fixture", i) for i, o in enumerate(spreading_cluster(12, 150, apps=4, spread_every=3), 1)
    ]
    summary, full = _both(objs, monkeypatch)
    assert summary == full
    assert '"PodTopologySpread": {"score"' in summary


node_st = st.tuples(st.sampled_from(["1", "2", "4"]), st.booleans(), st.sampled_from(["a", "b"]))
pod_st = st.tuples(
    st.sampled_from(["100m", "900m", "1500m", "5"]),
    st.integers(0, 3),
    st.booleans(),
    st.sampled_from([None, "a", "b"]),
    st.booleans(),
)


@settings(max_examples=25, deadline=None)
@given(nodes=st.lists(node_st, min_size=1, max_size=6), pods=st.lists(pod_st, min_size=1, max_size=14))
def test_generated_clusters(
    nodes: list[tuple[str, bool, str]], pods: list[tuple[str, int, bool, str | None, bool]]
) -> None:
    objs: list[dict[str, Any]] = []
    for i, (cpu, tainted, zone) in enumerate(nodes):
        m = node_manifest(f"n{i}", cpu=cpu, labels={"topology.kubernetes.io/zone": zone})
        if tainted:
            m.setdefault("spec", {})["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        objs.append(m)
    for i, (cpu, prio, bound, selector_zone, spread) in enumerate(pods):
        spec: dict[str, Any] = {"priority": prio * 100}
        if selector_zone:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": selector_zone}
        if spread:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "x"}},
                }
            ]
        objs.append(
            pod_manifest(
                f"p{i}",
                cpu=cpu,
                labels={"app": "x"},
                spec=spec,
                node_name=f"n{i % len(nodes)}" if bound else None,
            )
        )
    manifests = [Manifest(o, "gen", i) for i, o in enumerate(objs, 1)]
    with pytest.MonkeyPatch.context() as mp:
        summary, full = _both(manifests, mp)
    assert summary == full


def test_nominated_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    """A preemptor nominated to a node while lower-priority pods are scheduled: those visit the
    nominated node through the per-node run (its verdicts recorded as a whole)."""
    objs: list[dict[str, Any]] = []
    for i in range(6):
        objs.append(node_manifest(f"n{i}", cpu="1"))
        objs.append(pod_manifest(f"low-{i}", cpu="900m", node_name=f"n{i}", spec={"priority": 0}))
    objs.append(pod_manifest("high", cpu="900m", spec={"priority": 1000}))
    for i in range(4):
        objs.append(pod_manifest(f"small-{i}", cpu="50m", spec={"priority": 10}))
    manifests = [Manifest(o, "gen", i) for i, o in enumerate(objs, 1)]
    summary, full = _both(manifests, monkeypatch)
    assert summary == full
    doc = json.loads(summary)
    assert [p["status"] for p in doc["pods"] if p["name"] == "high"] == ["Scheduled"]


def test_json_with_explain_keeps_the_explained_pod_in_full() -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    plain = CliRunner().invoke(main, ["simulate", "-f", str(EXAMPLE), "-o", "json", "--seed", "0"])
    r = CliRunner().invoke(
        main, ["simulate", "-f", str(EXAMPLE), "-o", "json", "--seed", "0", "--explain", "shop/web-1"]
    )
    assert r.exit_code == plain.exit_code == 0, r.output
    assert r.stdout == plain.stdout
    lines = r.stderr.splitlines()
    assert lines[0] == "shop/web-1 — attempt 1: selected node-a1 — PreFilter"
    assert "shop/web-1 — attempt 1: selected node-a1 — Filter" in lines
    assert any(ln.startswith("gpu-b2 ") for ln in lines)  # every node's verdicts
