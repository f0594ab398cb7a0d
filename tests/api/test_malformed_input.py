"""Malformed input never escapes as a traceback or a hang.

- A hypothesis fuzz replaces one field of a rich object of every parsed kind with a value of the
  wrong type (or removes it, or adds junk), and runs it through the parsers ``run`` applies to
  watched objects (:class:`EventHandlers` for Pods/Nodes, the storage views, PDB/Service
  compilation). Nothing but ``KubeschedError`` may come out, and a wrong type names its field.
- A smaller mutation fuzz runs whole manifests through ``simulate``.
- Alias bombs and deep nesting are refused, in bounded time, by every YAML/JSON entry point.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.shape import check_shape
from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass, csi_node_limits
from kubesched.api.yaml_limits import MAX_DEPTH, YAMLLimitError, check_yaml, load_json, safe_load
from kubesched.embedded.manifests import load_manifests
from kubesched.errors import KubeschedError, ManifestError

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "uid": "u1",
        "resourceVersion": "7",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "creationTimestamp": "2025-01-01T00:00:00Z",
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "r1", "controller": True}
        ],
    },
    "spec": {
        "schedulerName": "default-scheduler",
        "priority": 10,
        "preemptionPolicy": "Never",
        "nodeSelector": {"disk": "ssd"},
        "containers": [
            {
                "name": "c",
                "image": "nginx:1",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1"}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
            }
        ],
        "initContainers": [
            {
                "name": "i",
                "image": "busybox",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "10m"}},
            }
        ],
        "overhead": {"cpu": "10m"},
        "tolerations": [
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a"]},
                                {"key": "gen", "operator": "Gt", "values": ["3"]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [{"key": "z", "operator": "Exists"}]}}
                ],
            },
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchLabels": {"app": "db"},
                            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}],
                        },
                        "topologyKey": "zone",
                        "namespaces": ["shop"],
                        "matchLabelKeys": ["app"],
                    }
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 3,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "namespaceSelector": {},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "minDomains": 2,
                "nodeAffinityPolicy": "Honor",
                "matchLabelKeys": ["pod-template-hash"],
            }
        ],
        "schedulingGates": [{"name": "g"}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {
                "name": "tmp",
                "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
            },
        ],
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
    },
    "status": {
        "phase": "Pending",
        "startTime": "2025-01-01T00:00:01Z",
        "nominatedNodeName": "n1",
        "conditions": [{"type": "PodScheduled", "status": "False"}],
    },
}
NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "n1",
        "uid": "n1",
        "labels": {"zone": "a"},
        "annotations": {"x": "y"},
        "resourceVersion": "3",
    },
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": False},
    "status": {
        "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
        "allocatable": {"cpu": "4", "memory": "16Gi", "pods": 110},
        "images": [{"names": ["nginx:1"], "sizeBytes": 1000}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}
PV: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv1", "labels": {"a": "b"}, "annotations": {"c": "d"}},
    "spec": {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "fast",
        "claimRef": {"namespace": "shop", "name": "data", "uid": "c1"},
        "csi": {"driver": "d", "volumeHandle": "h"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
                        ]
                    }
                ]
            }
        },
    },
    "status": {"phase": "Bound"},
}
PVC: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "data",
        "namespace": "shop",
        "uid": "c1",
        "annotations": {"x": "y"},
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "u1", "controller": True}
        ],
    },
    "spec": {
        "storageClassName": "fast",
        "accessModes": ["ReadWriteOnce"],
        "volumeName": "pv1",
        "resources": {"requests": {"storage": "1Gi"}},
        "selector": {"matchLabels": {"a": "b"}},
    },
    "status": {"phase": "Bound"},
}
SC: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "fast"},
    "provisioner": "p",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}],
}
CSINODE: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSINode",
    "metadata": {"name": "n1"},
    "spec": {"drivers": [{"name": "d", "nodeID": "n1", "allocatable": {"count": 3}}]},
}
PDB: dict[str, Any] = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "pdb", "namespace": "shop"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    "status": {
        "disruptionsAllowed": 0,
        "disruptedPods": {"web": "2025-01-01T00:00:00Z"},
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    },
}
SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "svc", "namespace": "shop"},
    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
}
REPLICASET: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "rs", "namespace": "shop"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
    },
}
OBJECTS = [POD, NODE, PV, PVC, SC, CSINODE, PDB, SERVICE, REPLICASET]

WRONG: list[Any] = [
    "str",
    "soon",
    "",
    0,
    -1,
    7,
    2**70,
    1.5,
    True,
    None,
    [],
    ["x"],
    [1, {"a": []}],
    {},
    {"a": "b"},
    {"key": [1]},
    "invalid value: ___@#$%^",
    "{{.bad-value.}}",
    "-1Gi",
    "1.5.0",
    "x" * 300,
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


CASES = [(i, p) for i, o in enumerate(OBJECTS) for p in _paths(o) if p[0] not in ("apiVersion", "kind")]


def _mutated(index: int, path: tuple[Any, ...], action: str, new: Any) -> dict[str, Any]:
    obj = copy.deepcopy(OBJECTS[index])
    parent: Any = obj
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "junk" and isinstance(parent[last], dict):
        parent[last]["zz-unknown"] = new
    else:
        parent[last] = new
    return obj


def _parse_as_run_does(obj: dict[str, Any]) -> None:
    """What ``run`` does with a watched object of this kind."""
    from kubesched.plugins.defaultpreemption.victims import compile_pdbs
    from kubesched.plugins.podtopologyspread.common import default_selector
    from kubesched.scheduler.event_handlers import EventHandlers

    kind = obj["kind"]
    if kind == "Pod":
        h = EventHandlers(None, None, {})  # type: ignore[arg-type]  # the parsers touch neither
        h.parsed_pod(obj)
        Pod.from_manifest(obj)
    elif kind == "Node":
        h = EventHandlers(None, None, {})  # type: ignore[arg-type]
        h.parsed_node(obj)
        Node.from_manifest(obj)
    elif kind == "PersistentVolume":
        PersistentVolume.from_obj(obj)
    elif kind == "PersistentVolumeClaim":
        PersistentVolumeClaim.from_obj(obj)
    elif kind == "StorageClass":
        StorageClass.from_obj(obj)
    elif kind == "CSINode":
        csi_node_limits(obj)
    elif kind == "PodDisruptionBudget":
        compile_pdbs([obj])
    elif kind in ("Service", "ReplicaSet"):

        class Objects:
            def list(self, k: str, ns: str | None = None) -> list[dict[str, Any]]:
                return [obj] if k == kind else []

            def get(self, k: str, ns: str, name: str) -> dict[str, Any] | None:
                return obj if k == kind else None

        default_selector(Pod.from_manifest(POD), Objects())
        check_shape(obj, kind)


def test_base_objects_parse() -> None:
    for obj in OBJECTS:
        _parse_as_run_does(copy.deepcopy(obj))
        check_shape(obj, obj["kind"])


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(CASES), st.sampled_from(["replace", "replace", "delete", "junk"]), st.sampled_from(WRONG)
)
def test_fuzzed_objects_raise_only_project_errors(
    case: tuple[int, tuple[Any, ...]], action: str, new: Any
) -> None:
    index, path = case
    obj = _mutated(index, path, action, new)
    try:
        _parse_as_run_does(obj)
    except KubeschedError as e:
        assert "\n" not in str(e)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("metadata", "labels"), "app=web", "metadata.labels: must be an object, got string"),
        (("status", "startTime"), ["2025"], "status.startTime: must be a timestamp string, got list"),
        (("spec",), "nope", "spec: must be an object, got string"),
        (
            ("spec", "containers", 0, "resources", "requests", "cpu"),
            {"a": 1},
            "spec.containers[0].resources.requests.cpu: must be a string, got object",
        ),
        (
            ("spec", "tolerations", 0, "tolerationSeconds"),
            "soon",
            "spec.tolerations[0].tolerationSeconds: must be an integer, got string",
        ),
        (
            ("spec", "containers", 0, "ports", 0, "hostPort"),
            "8080",
            "spec.containers[0].ports[0].hostPort: must be an integer, got string",
        ),
        (
            (
                "spec",
                "affinity",
                "podAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
                0,
                "labelSelector",
                "matchExpressions",
                0,
                "values",
            ),
            "x",
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
            ".matchExpressions[0].values: must be a list, got string",
        ),
        (("spec", "schedulingGates", 0), "a", "spec.schedulingGates[0]: must be an object, got string"),
    ],
)
def test_wrong_type_names_the_field(path: tuple[Any, ...], value: Any, message: str) -> None:
    obj = _mutated(0, path, "replace", value)
    with pytest.raises(ManifestError) as err:
        Pod.from_manifest(obj)
    assert str(err.value) == message


def test_node_labels_string_names_the_field() -> None:
    obj = _mutated(1, ("metadata", "labels"), "replace", "zone=a")
    with pytest.raises(ManifestError) as err:
        Node.from_manifest(obj)
    assert str(err.value) == "metadata.labels: must be an object, got string"


# ---- simulate ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CASES), st.sampled_from(["replace", "delete"]), st.sampled_from(WRONG))
def test_fuzzed_manifests_through_simulate(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[int, tuple[Any, ...]], action: str, new: Any
) -> None:
    from kubesched.modes.simulate.run import run_simulation

    index, path = case
    objs = [copy.deepcopy(o) for o in OBJECTS]
    objs[index] = _mutated(index, path, action, new)
    f = tmp_path_factory.mktemp("fuzz") / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    try:
        result = run_simulation(load_manifests([f]).manifests, None, seed=1, record=False)
    except KubeschedError as e:
        assert "\n" not in str(e)
        return
    assert [p.status for p in result.pods if p.name == "web"] in (
        [],
        ["Error"],
        ["Unschedulable"],
        ["Scheduled"],
        ["Gated"],
        ["Ignored"],
    )


def _schedulable() -> list[dict[str, Any]]:
    """The objects above made schedulable, so that every Filter, Score and PreBind plugin reads the
    pod's fields: no gate or claim, tolerated taints, three nodes (two feasible, so scores run), a
    bound pod for the affinity term, the ephemeral volume's claim and a topology for the classes."""
    objs = copy.deepcopy(OBJECTS)
    pod, node, pv, _pvc, sc = objs[:5]
    del pod["spec"]["schedulingGates"], pod["spec"]["resourceClaims"], pod["status"]["nominatedNodeName"]
    pod["spec"]["tolerations"].append({"key": "k", "operator": "Exists", "effect": "NoSchedule"})
    affinity = pod["spec"]["affinity"]
    required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    required["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = ["a", "b"]
    term = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    term["labelSelector"]["matchLabels"] = {"tier": "y"}
    pod["spec"]["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"]["tier"] = "front"
    node["metadata"]["labels"].update({"disk": "ssd", "gen": "4", "kubernetes.io/hostname": "n1"})
    nodes = []
    for name, zone in (("n2", "a"), ("n3", "b")):
        other = copy.deepcopy(node)
        other["metadata"].update(name=name, uid=name)
        other["metadata"]["labels"].update({"kubernetes.io/hostname": name, "zone": zone})
        nodes.append(other)
    pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = [
        "n1",
        "n2",
        "n3",
    ]
    sc["allowedTopologies"][0]["matchLabelExpressions"][0]["values"] = ["a", "b"]
    bound = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db", "namespace": "shop", "labels": {"app": "web", "tier": "y"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
    }
    tmp = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "web-tmp",
            "namespace": "shop",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "u1", "controller": True}
            ],
        },
        "spec": {
            "storageClassName": "fast",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    return [*objs, *nodes, bound, tmp]


SCHEDULABLE = _schedulable()
SCHEDULABLE_CASES = [
    (i, p) for i, o in enumerate(SCHEDULABLE) for p in _paths(o) if p[0] not in ("apiVersion", "kind")
]


def _simulate_list(tmp_path: Path, objs: list[dict[str, Any]]) -> tuple[Path, Any]:
    from kubesched.modes.simulate.run import run_simulation

    f = tmp_path / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return f, run_simulation(load_manifests([f]).manifests, None, seed=1, record=False)


def test_schedulable_base_is_scheduled(tmp_path: Path) -> None:
    _, result = _simulate_list(tmp_path, SCHEDULABLE)
    assert [(p.name, p.status, p.node) for p in result.pods if p.name == "web"] == [
        ("web", "Scheduled", "n2")
    ]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SCHEDULABLE_CASES),
    st.sampled_from(["replace", "replace", "delete", "junk"]),
    st.sampled_from(WRONG),
)
def test_fuzzed_fields_every_plugin_reads_are_located(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[int, tuple[Any, ...]], action: str, new: Any
) -> None:
    """A field broken in an object the plugins read is refused on load (one located line), or its
    pod (or the pod a workload made) ends in ``Error`` naming the file and object it came from;
    nothing else is an error."""
    index, path = case
    objs = copy.deepcopy(SCHEDULABLE)
    parent: Any = objs[index]
    for part in path[:-1]:
        parent = parent[part]
    if action == "delete":
        del parent[path[-1]]
    elif action == "junk" and isinstance(parent[path[-1]], dict):
        parent[path[-1]]["zz-unknown"] = new
    else:
        parent[path[-1]] = new
    tmp = tmp_path_factory.mktemp("fuzz")
    try:
        f, result = _simulate_list(tmp, objs)
    except KubeschedError as e:
        assert "\n" not in str(e) and str(e).startswith(str(tmp / "cluster.json"))
        return
    for p in result.pods:
        if p.status == "Error":
            assert p.message.startswith(f"{f} doc 1 item "), p.message


# ---- bounded YAML -----------------------------------------------------------------------------

BOMB = "\n".join(
    ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    + [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)


def _bounded(fn: Any, *args: Any) -> Exception:
    start = time.monotonic()
    with pytest.raises((YAMLLimitError, KubeschedError)) as err:
        fn(*args)
    assert time.monotonic() - start < 2.0
    return err.value


def test_alias_bomb_refused_quickly() -> None:
    assert str(_bounded(check_yaml, BOMB)) == "document contains excessive aliasing (line 4, column 11)"
    assert str(_bounded(safe_load, BOMB.encode())).startswith("document contains excessive aliasing")


def test_deep_nesting_refused_quickly() -> None:
    deep_flow = "[" * 100_000 + "]" * 100_000
    assert (
        str(_bounded(check_yaml, deep_flow))
        == f"exceeded max depth of {MAX_DEPTH} (line 1, column {MAX_DEPTH + 1})"
    )
    deep_block = "\n".join(" " * i + "a:" for i in range(2000)) + " 1"
    assert str(_bounded(check_yaml, deep_block)).startswith(
        f"exceeded max depth of {MAX_DEPTH} (line {MAX_DEPTH + 1},"
    )
    assert str(_bounded(check_yaml, "- " * 5000 + "x")).startswith(f"exceeded max depth of {MAX_DEPTH}")
    assert str(_bounded(load_json, "[" * 100_000 + "]" * 100_000)) == f"exceeded max depth of {MAX_DEPTH}"
    assert str(_bounded(load_json, "[" * 300 + "]" * 300)) == f"exceeded max depth of {MAX_DEPTH}"


def test_recursive_alias_refused() -> None:
    assert str(_bounded(check_yaml, "a: &x [1, *x]\n")) == "recursive alias *x (line 1, column 11)"


def test_ordinary_anchors_and_nesting_still_load() -> None:
    assert safe_load("base: &b {cpu: 1}\nuse: *b\n") == {"base": {"cpu": 1}, "use": {"cpu": 1}}
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    check_yaml(nested)
    load_json(nested)


def test_manifest_and_config_loaders_refuse_bombs(tmp_path: Path) -> None:
    from kubesched.config.load import load_config

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n---\n" + BOMB + "\n")
    err = _bounded(load_manifests, [bomb])
    assert str(err) == f"{bomb} doc 2: invalid YAML: document contains excessive aliasing (line 8, column 11)"
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000 + "]" * 50_000)
    assert (
        str(_bounded(load_manifests, [deep]))
        == f"{deep} doc 1: invalid JSON: exceeded max depth of {MAX_DEPTH}"
    )
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(BOMB)
    assert str(_bounded(load_config, cfg)) == (
        f"{cfg}: invalid YAML: document contains excessive aliasing (line 4, column 11)"
    )


# ---- configs ----------------------------------------------------------------------------------

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "clientConnection": {"qps": 50, "burst": 100},
    "leaderElection": {
        "leaderElect": False,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
    },
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "score": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 2}],
                    "disabled": [{"name": "ImageLocality"}],
                }
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                },
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                        ],
                    },
                },
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}},
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
            ],
        }
    ],
    "extenders": [
        {
            "urlPrefix": "http://127.0.0.1:1/",
            "filterVerb": "filter",
            "weight": 1,
            "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
        }
    ],
}
CONFIG_CASES = _paths(CONFIG)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(CONFIG_CASES), st.sampled_from(["replace", "replace", "delete"]), st.sampled_from(WRONG)
)
def test_fuzzed_configs_raise_only_config_errors(path: tuple[Any, ...], action: str, new: Any) -> None:
    from kubesched.config.load import parse_config

    doc = copy.deepcopy(CONFIG)
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    if action == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    try:
        parse_config(doc)
    except KubeschedError as e:
        assert "\n" not in str(e)


def test_base_config_parses() -> None:
    from kubesched.config.load import parse_config

    config = parse_config(copy.deepcopy(CONFIG))
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]


@pytest.mark.parametrize(
    ("index", "path", "new", "outcome"),
    [
        # a uid that is not a string is kept as loaded and reported by the Pod's parser
        (
            0,
            ("metadata", "uid"),
            ["x"],
            ("Error", "doc 1 item 1 (Pod shop/web): metadata.uid: must be a string, got list"),
        ),
        (
            0,
            ("metadata", "uid"),
            {"a": "b"},
            ("Error", "doc 1 item 1 (Pod shop/web): metadata.uid: must be a string, got object"),
        ),
        # the PV controller writes into a volume or claim whose spec is null as into an empty one
        (2, ("spec",), None, ("Gated", "waiting for scheduling gates: [g]")),
        (3, ("spec",), None, ("Gated", "waiting for scheduling gates: [g]")),
    ],
)
def test_fuzz_findings_through_simulate(
    tmp_path: Path, index: int, path: tuple[Any, ...], new: Any, outcome: tuple[str, str]
) -> None:
    from kubesched.modes.simulate.run import run_simulation

    objs = [copy.deepcopy(o) for o in OBJECTS]
    objs[index] = _mutated(index, path, "replace", new)
    f = tmp_path / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    result = run_simulation(load_manifests([f]).manifests, None, seed=1, record=False)
    [web] = [p for p in result.pods if p.name == "web"]
    status, message = outcome
    assert (web.status, web.message) == (status, f"{f} {message}" if status == "Error" else message)
