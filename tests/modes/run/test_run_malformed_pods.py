"""``kubesched run`` against ``kubesched serve`` with pods no API server would have accepted:

- a malformed *pending* pod gets exactly one ``FailedScheduling`` Event and ``PodScheduled=False``
  with reason ``SchedulerError`` naming the field (once per resourceVersion; the status update's
  own echo is not reported again), and the watch handler never stops serving other pods;
- a malformed *bound* pod keeps counting on its node for what can be read of it (a node it fills
  stays full), and is reported once with an ``InvalidPod`` Event;
- ``schedulingGates`` of the wrong shape are an error on the pod, not "ungated": no bind loop, and
  an unrelated unschedulable pod is attempted once.

The embedded server's decoder refuses wrongly typed fields with a 400, as kube-apiserver's does,
so the tests put these pods straight into its store (``Cluster.store_malformed_pod`` in
tests/run_support.py): what a faulty proxy or an older server could hand a scheduler's watch.
"""

from __future__ import annotations

import copy
import json
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from run_support import E2E_KUBECONFIG, Cluster, Replica, wait_for

pytestmark = pytest.mark.skipif(bool(E2E_KUBECONFIG), reason="a real API server refuses these pods")

PROFILE = "default-scheduler"


def _config(tmp: Path) -> Path:
    path = tmp / f"config-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        podInitialBackoffSeconds: 1
        podMaxBackoffSeconds: 2
        leaderElection:
          leaderElect: false
        profiles:
        - schedulerName: {PROFILE}
        """)
    )
    return path


def _pod(cluster: Cluster, name: str, cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": cluster.namespace, "labels": {"app": name}},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": cpu, "memory": "8Mi"}},
                }
            ],
            **spec,
        },
    }


def _set(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    cur: Any = out
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return out


def _events(cluster: Cluster, reason: str) -> list[dict[str, Any]]:
    resp = cluster.events_api.list_namespaced_event(cluster.namespace, _preload_content=False)
    return [
        e
        for e in json.loads(resp.data)["items"]
        if e.get("reason") == reason and e.get("reportingController") == PROFILE
    ]


def _expression(op: str, values: list[Any] | None = None, key: str = "zone") -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def _malformed_pending(cluster: Cluster) -> dict[str, tuple[dict[str, Any], str]]:
    """name -> (manifest, the field path its condition must name)."""
    req = ("spec", "containers", 0, "resources", "requests")
    na = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [_expression("Gt", ["3", "4"], "gen")]}]
            }
        }
    }
    pa = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [_expression("Maybe", ["a"], "app")]},
                    "topologyKey": "zone",
                }
            ]
        }
    }
    cases: dict[str, tuple[dict[str, Any], str]] = {}

    def add(name: str, pod: dict[str, Any], path: str) -> None:
        cases[name] = (pod, path)

    base = _pod(cluster, "x")
    add("bad-cpu", _set(base, (*req, "cpu"), "1.5.0"), "spec.containers[0].resources.requests.cpu")
    add("bad-memory", _set(base, (*req, "memory"), "lots"), "spec.containers[0].resources.requests.memory")
    add(
        "negative-memory",
        _set(base, (*req, "memory"), "-1Gi"),
        "spec.containers[0].resources.requests.memory",
    )
    add("list-cpu", _set(base, (*req, "cpu"), ["1"]), "spec.containers[0].resources.requests.cpu")
    add("requests-string", _set(base, (*req,), "1 cpu"), "spec.containers[0].resources.requests")
    add(
        "toleration-seconds",
        _set(
            base,
            ("spec", "tolerations"),
            [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": "soon"}],
        ),
        "spec.tolerations[0].tolerationSeconds",
    )
    add(
        "toleration-operator",
        _set(base, ("spec", "tolerations"), [{"key": "k", "operator": "Maybe"}]),
        "spec.tolerations[0].operator",
    )
    add("spec-null", _set(base, ("spec",), None), "spec.containers")  # stored as an empty spec
    add("containers-missing", _set(base, ("spec", "containers"), []), "spec.containers")
    add("labels-string", _set(base, ("metadata", "labels"), "app=x"), "metadata.labels")
    add("start-time-list", _set(base, ("status",), {"startTime": ["2025"]}), "status.startTime")
    add("preemption-policy", _set(base, ("spec", "preemptionPolicy"), "Sometimes"), "spec.preemptionPolicy")
    add("priority-string", _set(base, ("spec", "priority"), "high"), "spec.priority")
    add(
        "selector-operator",
        _set(base, ("spec", "affinity"), pa),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
        ".matchExpressions[0].operator",
    )
    add(
        "empty-topology-key",
        _set(
            base,
            ("spec", "affinity"),
            {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {}, "topologyKey": ""}
                    ]
                }
            },
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
    )
    add(
        "max-skew-zero",
        _set(
            base,
            ("spec", "topologySpreadConstraints"),
            [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        ),
        "spec.topologySpreadConstraints[0].maxSkew",
    )
    add(
        "when-unsatisfiable",
        _set(
            base,
            ("spec", "topologySpreadConstraints"),
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}],
        ),
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
    )
    add(
        "gt-two-values",
        _set(base, ("spec", "affinity"), na),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values",
    )
    add(
        "invalid-label-key",
        _set(
            base,
            ("spec", "affinity"),
            {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"bad key!": "x"}}, "topologyKey": "zone"}
                    ]
                }
            },
        ),
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels",
    )
    add(
        "host-port-string",
        _set(base, ("spec", "containers", 0, "ports"), [{"containerPort": 80, "hostPort": "80"}]),
        "spec.containers[0].ports[0].hostPort",
    )
    add("node-selector-list", _set(base, ("spec", "nodeSelector"), ["zone=a"]), "spec.nodeSelector")
    add("gates-strings", _set(base, ("spec", "schedulingGates"), ["a", "b"]), "spec.schedulingGates[0]")
    add("api-version", _set(base, ("apiVersion",), "apps/v1"), "apiVersion")
    for name, (pod, _) in cases.items():
        if isinstance(pod.get("metadata"), dict):
            pod["metadata"]["name"] = name
    return cases


def test_malformed_pending_pods_get_one_event_and_condition(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    cluster.add_nodes(2)
    cases = _malformed_pending(cluster)
    assert len(cases) >= 21
    for pod, _ in cases.values():
        cluster.store_malformed_pod(pod)
    r = Replica(cluster, _config(cluster.tmp))
    replicas.append(r)
    r.wait_ready()
    cluster.core.create_namespaced_pod(cluster.namespace, _pod(cluster, "good"))
    cluster.core.create_namespaced_pod(cluster.namespace, _pod(cluster, "huge", cpu="1000"))
    gt = _pod(
        cluster,
        "non-integer-gt",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [_expression("Gt", ["three"], "gen")]}]
                }
            }
        },
    )
    cluster.core.create_namespaced_pod(cluster.namespace, gt)

    def conditions() -> dict[str, dict[str, Any]] | None:
        out = {}
        for name, p in cluster.pods().items():
            status = p.get("status") if isinstance(p.get("status"), dict) else {}
            for c in status.get("conditions") or []:
                if isinstance(c, dict) and c.get("type") == "PodScheduled":
                    out[name] = c
        return out if all(n in out for n in (*cases, "huge", "non-integer-gt")) else None

    conds = wait_for(conditions, 30, "a PodScheduled condition on every malformed pod")
    cluster.wait_bound(["good"])
    for name, (_, path) in cases.items():
        c = conds[name]
        assert (c["status"], c["reason"]) == ("False", "SchedulerError"), name
        assert c["message"].startswith(f"{path}: "), (name, c["message"])
    time.sleep(3.0)  # several backoff periods: nothing is reported twice
    # a Gt value upstream cannot parse is not an API error: the term matches no node
    assert (conds["non-integer-gt"]["reason"], conds["non-integer-gt"]["message"]) == (
        "Unschedulable",
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    )
    failed = Counter(e["regarding"]["name"] for e in _events(cluster, "FailedScheduling"))
    assert failed == Counter({**{n: 1 for n in cases}, "huge": 1, "non-integer-gt": 1})
    notes = {e["regarding"]["name"]: e["note"] for e in _events(cluster, "FailedScheduling")}
    assert (
        notes["toleration-seconds"] == "spec.tolerations[0].tolerationSeconds: must be an integer, got string"
    )
    assert notes["gates-strings"] == "spec.schedulingGates[0]: must be an object, got string"
    assert notes["api-version"] == 'apiVersion: must be "v1" for kind Pod, got "apps/v1"'
    assert "Traceback" not in r.log()
    # the gated-by-strings pod was never bound: no binding request was ever refused
    assert _events(cluster, "Scheduled") and all(
        e["regarding"]["name"] == "good" for e in _events(cluster, "Scheduled")
    )


def test_malformed_bound_pods_keep_their_nodes_full(cluster: Cluster, replicas: list[Replica]) -> None:
    nodes = cluster.add_nodes(6, cpu="4")
    free = nodes[-1]
    bound: dict[str, dict[str, Any]] = {}
    base = _pod(cluster, "x", cpu="4", nodeName="")
    bound["preemption-policy"] = _set(base, ("spec", "preemptionPolicy"), "Sometimes")
    bound["toleration-operator"] = _set(base, ("spec", "tolerations"), [{"key": "k", "operator": "Maybe"}])
    bound["negative-memory"] = _set(
        base, ("spec", "containers", 0, "resources", "requests", "memory"), "-1Gi"
    )
    bound["max-skew-zero"] = _set(
        base,
        ("spec", "topologySpreadConstraints"),
        [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
    )
    bound["host-port-string"] = _set(
        base, ("spec", "containers", 0, "ports"), [{"containerPort": 80, "hostPort": "80"}]
    )
    for (name, pod), node in zip(bound.items(), nodes, strict=False):
        pod["metadata"]["name"] = name
        pod["spec"]["nodeName"] = node
        pod["status"] = {"phase": "Running"}
        cluster.store_malformed_pod(pod)
    r = Replica(cluster, _config(cluster.tmp))
    replicas.append(r)
    r.wait_ready()
    probes = [f"probe-{i}" for i in range(6)]
    for n in probes:
        cluster.core.create_namespaced_pod(cluster.namespace, _pod(cluster, n, cpu="500m"))
    placed = cluster.wait_bound(probes)
    assert {placed[n] for n in probes} == {free}
    reported = wait_for(
        lambda: (ev := _events(cluster, "InvalidPod")) and len(ev) >= len(bound) and ev,
        15,
        "an InvalidPod event per malformed bound pod",
    )
    time.sleep(1.0)
    reported = _events(cluster, "InvalidPod")
    assert Counter(e["regarding"]["name"] for e in reported) == Counter(list(bound))
    notes = {e["regarding"]["name"]: e["note"] for e in reported}
    assert notes["negative-memory"] == (
        "spec.containers[0].resources.requests.memory: must be greater than or equal to 0; counted on node "
        f"{nodes[2]} for what can be read; its requests cannot be read, so the node is full for new pods until "
        "the pod changes"
    )
    assert notes["preemption-policy"] == (
        f'spec.preemptionPolicy: Unsupported value: "Sometimes"; counted on node {nodes[0]} for what can be read'
    )
    # the pods change: the readable one frees its node
    cluster.core.delete_namespaced_pod("negative-memory", cluster.namespace, grace_period_seconds=0)
    wait_for(lambda: "negative-memory" not in cluster.pods(), 10, "the malformed pod deleted")
    cluster.core.create_namespaced_pod(cluster.namespace, _pod(cluster, "after", cpu="3"))
    assert cluster.wait_bound(["after"])["after"] == nodes[2]
