"""Selectors the API server would refuse are an error on the pod; values only upstream's scheduler
cannot convert make the term match nothing (node affinity) or fail InterPodAffinity's PreFilter
with ``parsing pod: ...`` (pod affinity), as ``nodeaffinity.go`` / ``framework/types.go`` do.
Run through ``simulate`` for the exact outcome and message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import main

VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
KEY_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _node(name: str) -> dict[str, Any]:
    res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": "a"}},
        "status": {"capacity": res, "allocatable": res},
    }


def _pod(name: str, affinity: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}],
        **spec,
    }
    if affinity is not None:
        s["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": s,
    }


def _simulate(tmp_path: Path, *objs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    f = tmp_path / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node("n1"), _node("n2"), *objs]}))
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"], catch_exceptions=False)
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert r.exit_code == (1 if any(p["status"] == "Error" for p in pods.values()) else 0), r.stderr
    return pods


def _required_node_affinity(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]
            }
        }
    }


def test_node_affinity_value_upstream_cannot_parse_matches_nothing(tmp_path: Path) -> None:
    pods = _simulate(
        tmp_path,
        _pod(
            "notin",
            _required_node_affinity(
                {"key": "zone", "operator": "NotIn", "values": ["invalid value: ___@#$%^"]}
            ),
        ),
        _pod("gt", _required_node_affinity({"key": "zone", "operator": "Gt", "values": ["three"]})),
        _pod("ok", _required_node_affinity({"key": "zone", "operator": "NotIn", "values": ["b"]})),
    )
    for name in ("notin", "gt"):
        assert pods[name]["status"] == "Unschedulable"
        assert pods[name]["message"].startswith(
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
        ), pods[name]["message"]
    assert pods["ok"]["status"] == "Scheduled"


def test_node_affinity_other_term_still_matches(tmp_path: Path) -> None:
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["{{bad}}"]}]},
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}
                        ]
                    },
                ]
            }
        }
    }
    pods = _simulate(tmp_path, _pod("p", aff))
    assert (pods["p"]["status"], pods["p"]["node"]) == ("Scheduled", "n2")


def test_pod_affinity_value_fails_prefilter_with_parsing_pod(tmp_path: Path) -> None:
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "{{.bad-value.}}"}}, "topologyKey": "zone"}
            ]
        }
    }
    pods = _simulate(tmp_path, _pod("p", aff))
    assert pods["p"]["status"] == "Unschedulable"
    assert pods["p"]["message"].startswith(
        f"0/2 nodes are available: parsing pod: requiredAffinityTerms: values[0][app]: Invalid value: "
        f'"{{{{.bad-value.}}}}": {VALUE_MSG}.'
    ), pods["p"]["message"]


def test_preferred_anti_affinity_value_also_fails_prefilter(tmp_path: Path) -> None:
    aff = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "podAffinityTerm": {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app", "operator": "In", "values": ["ok", "not ok"]}]
                        },
                        "topologyKey": "zone",
                    },
                }
            ]
        }
    }
    pods = _simulate(tmp_path, _pod("p", aff))
    assert pods["p"]["message"].startswith(
        f"0/2 nodes are available: parsing pod: preferredAntiAffinityTerms: values[1][app]: Invalid value: "
        f'"not ok": {VALUE_MSG}.'
    ), pods["p"]["message"]


def test_invalid_label_keys_are_errors_on_the_pod(tmp_path: Path) -> None:
    pods = _simulate(
        tmp_path,
        _pod("node-aff", _required_node_affinity({"key": "bad key!", "operator": "Exists"})),
        _pod(
            "pod-aff",
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {
                                "matchExpressions": [{"key": "bad key!", "operator": "Exists"}]
                            },
                            "topologyKey": "zone",
                        }
                    ]
                }
            },
        ),
        _pod(
            "spread",
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"bad key!": "x"}},
                }
            ],
        ),
        _pod("fine"),
    )
    f = tmp_path / "cluster.json"
    assert pods["node-aff"]["status"] == "Error"
    assert pods["node-aff"]["message"] == (
        f"{f} doc 1 item 3 (Pod default/node-aff): spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
        f'Execution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "bad key!": {KEY_MSG}'
    )
    assert pods["pod-aff"]["message"] == (
        f"{f} doc 1 item 4 (Pod default/pod-aff): spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuring"
        f'Execution[0].labelSelector.matchExpressions[0].key: Invalid value: "bad key!": {KEY_MSG}'
    )
    assert pods["spread"]["message"] == (
        f"{f} doc 1 item 5 (Pod default/spread): spec.topologySpreadConstraints[0].labelSelector.matchLabels: "
        f'Invalid value: "bad key!": {KEY_MSG}'
    )
    assert pods["fine"]["status"] == "Scheduled"


def test_preferred_node_affinity_value_is_a_prescore_error(tmp_path: Path) -> None:
    aff = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "Lt", "values": ["x"]}]},
                }
            ]
        }
    }
    pods = _simulate(tmp_path, _pod("p", aff))
    assert pods["p"]["status"] == "Error"
    assert pods["p"]["message"] == (
        f"{tmp_path / 'cluster.json'} doc 1 item 3 (Pod default/p): "
        'running PreScore plugin "NodeAffinity": [0].matchExpressions[0].values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )
