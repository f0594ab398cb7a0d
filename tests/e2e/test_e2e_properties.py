"""End-to-end invariants of ``run_simulation`` with the default profile: determinism (same seed,
same bytes) and, over small random clusters (hypothesis), no over-commitment by the scheduler's
placements and the ``0/<nodes> nodes are available`` prefix of every Unschedulable message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.cli.main import main
from kubesched.embedded.manifests import Manifest
from kubesched.modes.simulate.report import result_dict
from kubesched.modes.simulate.run import SimulationResult, run_simulation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "e2e"
MI = 1024 * 1024


# ---- determinism ------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.yaml")))
def test_same_seed_gives_byte_identical_json(fixture: str, tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        snap = tmp_path / f"snap{i}.yaml"
        res = CliRunner().invoke(
            main,
            [
                "simulate",
                "-f",
                str(FIXTURES / fixture),
                "-o",
                "json",
                "--seed",
                "7",
                "--write-snapshot",
                str(snap),
            ],
        )
        assert res.exit_code == 0, res.output
        outs.append((res.stdout, snap.read_bytes()))
    assert outs[0] == outs[1]


# ---- random clusters --------------------------------------------------------------------------


def _node(
    i: int, cpu_m: int, mem_mi: int, pods: int, zone: str, tainted: bool, cordoned: bool
) -> dict[str, Any]:
    alloc = {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi", "pods": str(pods)}
    spec: dict[str, Any] = {}
    if tainted:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    if cordoned:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"n{i}",
            "labels": {"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": zone},
        },
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def _pod(
    name: str,
    cpu_m: int,
    mem_mi: int,
    prio: int,
    app: str,
    node: str | None = None,
    features: frozenset[str] = frozenset(),
    init_cpu_m: int = 0,
) -> dict[str, Any]:
    req: dict[str, str] = {}
    if cpu_m:
        req["cpu"] = f"{cpu_m}m"
    if mem_mi:
        req["memory"] = f"{mem_mi}Mi"
    c: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10.1"}
    if req:
        c["resources"] = {"requests": req}
    spec: dict[str, Any] = {"containers": [c], "priority": prio}
    if init_cpu_m:
        spec["initContainers"] = [
            {"name": "i", "image": "busybox:1.36", "resources": {"requests": {"cpu": f"{init_cpu_m}m"}}}
        ]
    if node:
        spec["nodeName"] = node
    sel = {"matchLabels": {"app": app}}
    if "spread-zone" in features:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    if "spread-host-soft" in features:
        spec.setdefault("topologySpreadConstraints", []).append(
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": sel,
            }
        )
    if "anti" in features:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": sel}
                ]
            }
        }
    if "tolerate" in features:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    if "affinity" in features:
        spec.setdefault("affinity", {})["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "topologyKey": "topology.kubernetes.io/zone",
                    "labelSelector": {"matchLabels": {"app": "db"}},
                }
            ]
        }
    if "preferred" in features:
        spec.setdefault("affinity", {})["podAntiAffinity"] = dict(
            spec.get("affinity", {}).get("podAntiAffinity") or {},
            preferredDuringSchedulingIgnoredDuringExecution=[
                {
                    "weight": 50,
                    "podAffinityTerm": {
                        "topologyKey": "topology.kubernetes.io/zone",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                    },
                }
            ],
        )
    if "port" in features:
        c["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    if "never" in features:
        spec["preemptionPolicy"] = "Never"
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": spec,
    }
    if node:
        obj["status"] = {"phase": "Running", "startTime": "2025-01-01T00:00:00Z"}
    return obj


node_st = st.tuples(
    st.integers(1, 8).map(lambda k: k * 500),
    st.integers(1, 8).map(lambda k: k * 512),
    st.integers(1, 5),
    st.sampled_from(["a", "b", "c"]),
    st.booleans(),
    st.integers(0, 5).map(lambda k: k == 0),
)
pod_st = st.tuples(
    st.integers(0, 8).map(lambda k: k * 250),
    st.integers(0, 8).map(lambda k: k * 256),
    st.sampled_from([0, 10, 100, 1000]),
    st.sampled_from(["web", "db"]),
    st.frozensets(
        st.sampled_from(
            ["spread-zone", "spread-host-soft", "anti", "tolerate", "never", "affinity", "preferred", "port"]
        ),
        max_size=3,
    ),
    st.sampled_from([0, 0, 0, 1500]),
)


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    nodes = draw(st.lists(node_st, min_size=1, max_size=4))
    docs: list[dict[str, Any]] = [_node(i, *n) for i, n in enumerate(nodes)]
    # pre-bound pods: only those that fit, so the start state is never over-committed
    for i, (cpu_m, mem_mi, pods, *_rest) in enumerate(nodes):
        used = [0, 0, 0]
        for j, (c, m, prio, app, _f, _i) in enumerate(draw(st.lists(pod_st, max_size=3))):
            if used[0] + c <= cpu_m and used[1] + m <= mem_mi and used[2] + 1 <= pods:
                used = [used[0] + c, used[1] + m, used[2] + 1]
                docs.append(_pod(f"b{i}-{j}", c, m, prio, app, node=f"n{i}"))
    for k, (c, m, prio, app, feats, init_c) in enumerate(draw(st.lists(pod_st, min_size=1, max_size=8))):
        docs.append(_pod(f"p{k}", c, m, prio, app, features=feats, init_cpu_m=init_c))
    if draw(st.booleans()):
        docs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "db", "namespace": "default"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "db"}}},
                "status": {"disruptionsAllowed": draw(st.integers(0, 1))},
            }
        )
    return docs


def _simulate(docs: list[dict[str, Any]], seed: int) -> SimulationResult:
    return run_simulation([Manifest(d, "random.yaml", i + 1) for i, d in enumerate(docs)], None, seed=seed)


def _requests(pod: dict[str, Any]) -> tuple[int, int]:
    """(millicores, MiB) as the generator wrote them: max(sum of containers, each init container)."""

    def one(c: dict[str, Any]) -> tuple[int, int]:
        r = (c.get("resources") or {}).get("requests") or {}
        return int(r.get("cpu", "0m")[:-1] or 0), int(r.get("memory", "0Mi")[:-2] or 0)

    cs = [one(c) for c in pod["spec"]["containers"]]
    cpu, mem = sum(c for c, _ in cs), sum(m for _, m in cs)
    for ic in pod["spec"].get("initContainers") or []:
        ic_cpu, ic_mem = one(ic)
        cpu, mem = max(cpu, ic_cpu), max(mem, ic_mem)
    return cpu, mem


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 2**16))
def test_random_clusters_never_overcommit(docs: list[dict[str, Any]], seed: int) -> None:
    res = _simulate(docs, seed)
    nodes = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Node"}
    used: dict[str, list[int]] = {n: [0, 0, 0] for n in nodes}
    ports: dict[str, int] = {n: 0 for n in nodes}
    for pod in res.cluster.list("Pod").items:
        node = pod["spec"].get("nodeName")
        if not node:
            continue
        ports[node] += sum(1 for c in pod["spec"]["containers"] for _ in c.get("ports") or [])
        cpu, mem = _requests(pod)
        u = used[node]
        used[node] = [u[0] + cpu, u[1] + mem, u[2] + 1]
    assert all(v <= 1 for v in ports.values()), ports  # hostPort 8080 at most once per node
    for name, (cpu, mem, count) in used.items():
        alloc = nodes[name]["status"]["allocatable"]
        assert cpu <= int(alloc["cpu"][:-1]), (name, used)
        assert mem <= int(alloc["memory"][:-2]), (name, used)
        assert count <= int(alloc["pods"]), (name, used)
    for p in res.pods:
        assert p.status in {"Scheduled", "Unschedulable", "Preempted"}, (p.name, p.status, p.message)
        if p.status == "Preempted":
            assert p.name.startswith("b") or p.name.startswith("p"), p.name
        if p.status == "Unschedulable":
            assert p.message.startswith(f"0/{len(nodes)} nodes are available"), p.message
        if p.status == "Scheduled":
            pod = res.cluster.get("Pod", "default", p.name)
            assert pod is not None and pod["spec"]["nodeName"] == p.node
            spec = pod["spec"]
            # placements respect the hard rules the pod carries
            node_obj = nodes[p.node]
            assert not node_obj["spec"].get("unschedulable")
            if node_obj["spec"].get("taints"):
                assert spec.get("tolerations")
            if ((spec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            ):
                # required anti-affinity (hostname, same app) is symmetric: no other pod of the app
                # may share the node, whichever of the two was placed first
                app = pod["metadata"]["labels"]["app"]
                others = [
                    q["metadata"]["name"]
                    for q in res.cluster.list("Pod").items
                    if q["spec"].get("nodeName") == p.node
                    and q["metadata"]["name"] != p.name
                    and q["metadata"]["labels"].get("app") == app
                ]
                assert others == [], (p.name, p.node, others)
    # the same input and seed give the same document
    again = _simulate(docs, seed)
    assert json.dumps(result_dict(res)) == json.dumps(result_dict(again))
