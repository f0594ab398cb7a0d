"""``kubesched.simulate``: every kind of input, exact outcomes, and lazily recorded explanations."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import kubesched
from kubesched.errors import ConfigError, ManifestError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "cluster.yaml"

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}},
}


def _pod(name: str, cpu: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]},
    }


def test_inputs_of_every_kind_give_the_same_outcome() -> None:
    text = EXAMPLE.read_text()
    docs = [d for d in yaml.safe_load_all(text) if d]
    by_path = kubesched.simulate(str(EXAMPLE), seed=7)
    for objects in (EXAMPLE, text, docs, [docs[:3], docs[3:]]):
        sim = kubesched.simulate(objects, seed=7)
        assert [(p.name, p.status, p.node) for p in sim.pods] == [
            (p.name, p.status, p.node) for p in by_path.pods
        ]


def test_dicts_and_exact_message() -> None:
    sim = kubesched.simulate([NODE, _pod("a", "1500m"), _pod("b", "1")])
    assert [(p.name, p.status, p.node) for p in sim.pods] == [
        ("a", "Scheduled", "n1"),
        ("b", "Unschedulable", None),
    ]
    assert sim.pod("b").message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for "
        "incoming pod."
    )


def test_explain_and_to_dict_record_the_same_run() -> None:
    sim = kubesched.simulate(EXAMPLE, seed=7)
    assert all(p.results == [] for p in sim.pods)  # nothing recorded during the run
    why = sim.explain("web-1")
    assert why.node == "node-a1" and why.attempts[0]["selectedNode"] == "node-a1"
    assert why.attempts[0]["score"]["node-a1"]["NodeResourcesBalancedAllocation"] == 95
    doc = sim.to_dict()
    assert doc["kind"] == "SimulationResult" and doc["seed"] == 7
    assert {p["name"]: p["node"] for p in doc["pods"]} == {p.name: p.node for p in sim.pods}
    with pytest.raises(KeyError, match="not found"):
        sim.explain("nope")


def test_config_as_dict_text_and_errors() -> None:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                ],
            }
        ],
    }
    nodes = [NODE, {**NODE, "metadata": {"name": "n2"}}]
    pods = [_pod("a", "1"), _pod("b", "500m")]
    packed = kubesched.simulate([*nodes, *pods], config=cfg, seed=3)
    assert packed.pod("a").node == packed.pod("b").node
    assert (
        kubesched.simulate([*nodes, *pods], config=yaml.safe_dump(cfg), seed=3).pod("b").node
        == packed.pod("b").node
    )
    with pytest.raises(ConfigError, match=r"profiles\[0\].pluginConfig\[0\].args.scoringStrategy.type"):
        kubesched.simulate(
            nodes,
            config={
                **cfg,
                "profiles": [
                    {
                        "schedulerName": "x",
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Balanced"}}}
                        ],
                    }
                ],
            },
        )


def test_bad_objects_name_their_position() -> None:
    with pytest.raises(ManifestError) as e:
        kubesched.simulate([NODE, {"kind": "Node", "metadata": {}}])
    assert str(e.value) == "objects[1] doc 1: metadata.name: required"
    with pytest.raises(ManifestError, match="expected objects"):
        kubesched.simulate(42)


def test_client_models() -> None:
    from kubernetes import client as k8s

    node = k8s.V1Node(
        metadata=k8s.V1ObjectMeta(name="m1"),
        status=k8s.V1NodeStatus(allocatable={"cpu": "1", "memory": "1Gi", "pods": "5"}),
    )
    pod = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="p", namespace="default"),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
    )
    sim = kubesched.simulate([node, pod])
    assert [(p.name, p.node) for p in sim.pods] == [("p", "m1")]
