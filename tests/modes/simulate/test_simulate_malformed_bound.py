"""``simulate`` with bound pods that do not parse: each still fills its node (a probe pod never
lands there) and is reported as an ``Error`` row that names the bound pod and its node."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main


def _node(name: str) -> dict[str, Any]:
    res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "status": {"capacity": res, "allocatable": res},
    }


def _pod(name: str, cpu: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Running"} if node else {},
    }


BASE = _pod("bound", "4", "full")
REQ = ("spec", "containers", 0, "resources", "requests")


def _set(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(BASE)
    cur: Any = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


CASES = {
    "preemption-policy": (
        _set(("spec", "preemptionPolicy"), "Sometimes"),
        'spec.preemptionPolicy: Unsupported value: "Sometimes"',
    ),
    "toleration-operator": (
        _set(("spec", "tolerations"), [{"key": "k", "operator": "Maybe"}]),
        'spec.tolerations[0].operator: unsupported value "Maybe"',
    ),
    "negative-memory": (
        _set((*REQ, "memory"), "-1Gi"),
        "spec.containers[0].resources.requests.memory: must be greater than or equal to 0",
    ),
    "max-skew-zero": (
        _set(
            ("spec", "topologySpreadConstraints"),
            [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        ),
        "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero",
    ),
    "host-port-string": (
        _set(("spec", "containers", 0, "ports"), [{"containerPort": 80, "hostPort": "80"}]),
        "spec.containers[0].ports[0].hostPort: must be an integer, got string",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unparseable_bound_pod_keeps_its_node_full(tmp_path: Path, case: str) -> None:
    bound, message = CASES[case]
    f = tmp_path / "cluster.json"
    f.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [_node("full"), _node("free"), bound, _pod("probe", "1")],
            }
        )
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"], catch_exceptions=False)
    assert r.exit_code == 1, r.stderr  # a pod ended in Error: the bound one
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert (pods["probe"]["status"], pods["probe"]["node"]) == ("Scheduled", "free")
    assert (pods["bound"]["status"], pods["bound"]["node"]) == ("Error", "full")
    assert pods["bound"]["message"] == (
        f"{f} doc 1 item 3 (Pod default/bound): {message} (bound pod, counted on its node for what can be read)"
    )
    assert r.stderr == f"error: 1 pod(s) ended in Error:\n  {pods['bound']['message']}\n"


def test_probe_that_fits_only_beside_an_unreadable_pod_is_unschedulable(tmp_path: Path) -> None:
    bound = _set((*REQ, "cpu"), "lots")  # requests unreadable: the node counts as full
    bound["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    f = tmp_path / "cluster.json"
    f.write_text(
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [_node("full"), bound, _pod("probe", "100m")]}
        )
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"], catch_exceptions=False)
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert pods["probe"]["status"] == "Unschedulable"
    assert pods["probe"]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."
    )


def test_unreadable_bound_pod_is_never_a_preemption_victim(tmp_path: Path) -> None:
    bound = _set((*REQ, "cpu"), "lots")
    high = _pod("high", "3")
    high["spec"]["priority"] = 1000
    f = tmp_path / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node("full"), bound, high]}))
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"], catch_exceptions=False)
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert (pods["bound"]["status"], pods["bound"]["node"]) == ("Error", "full")
    assert pods["high"]["status"] == "Unschedulable"
    assert pods["high"]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. no new claims to deallocate, "
        "preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod."
    )
