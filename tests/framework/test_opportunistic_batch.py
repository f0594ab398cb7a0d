"""OpportunisticBatching (``pkg/scheduler/framework/runtime/batch.go``, ``framework.go: SignPod``):
placements and batched pods of upstream's scenarios (``test/integration/scheduler/batch``:
``TestBatchScenarios``), the hint/flush rules of ``batch_test.go`` one by one, the signatures of
the in-tree plugins, and a property: with the gate on or off every placement passes the same
filters and a pod is left pending only when no node can take it."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.config.load import parse_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.manifests import Manifest
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, SignPlugin
from kubesched.framework.metrics_sink import NULL_SINK
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.opportunistic_batch import (
    MAX_BATCH_AGE,
    OpportunisticBatch,
    SortedScoredNodes,
)
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.signers import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.modes.simulate.run import SimulationResult, run_simulation
from kubesched.plugins import in_tree_registry
from kubesched.scheduler.core import Scheduler
from kubesched.testing import make_node, make_pod, node_info, node_manifest, pod_manifest

# ---- upstream's scenarios ------------------------------------------------------------------------


class NoSign(FilterPlugin):
    """A Filter plugin that does not implement SignPlugin (the profile signs no pod)."""

    NAME = "nosign"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class EmptySign(FilterPlugin, SignPlugin):
    """A Filter plugin that refuses to sign every pod."""

    NAME = "emptysign"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return None, Status(Code.Unschedulable)


def _profile(name: str, extra_filter: str | None = None) -> dict[str, Any]:
    prof: dict[str, Any] = {
        "schedulerName": name,
        # upstream's scenarios clear the system default spread constraints (they make every pod
        # unsignable)
        "pluginConfig": [
            {"name": "PodTopologySpread", "args": {"defaultConstraints": [], "defaultingType": "List"}}
        ],
    }
    if extra_filter:
        prof["plugins"] = {"filter": {"enabled": [{"name": extra_filter}]}}
    return prof


def _config(batch: bool) -> KubeSchedulerConfiguration:
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "featureGates": {"OpportunisticBatching": batch},
            "profiles": [
                _profile("default-scheduler"),
                _profile("mysched"),
                _profile("nosign", "nosign"),
                _profile("emptysign", "emptysign"),
            ],
        }
    )


def _registry() -> Any:
    reg = in_tree_registry()
    reg.register(NoSign)
    reg.register(EmptySign)
    return reg


def _pod(
    name: str,
    affinity: Sequence[str] = (),
    node_selector: dict[str, str] | None = None,
    scheduler: str | None = None,
) -> dict[str, Any]:
    """Upstream's ``newPod``: 10 CPUs, 4 MiB, a preferred node affinity per listed node (weights
    descending), an optional node selector and scheduler name."""
    prefs = [
        {
            "weight": len(affinity) - i,
            "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]},
        }
        for i, n in enumerate(affinity)
    ]
    spec: dict[str, Any] = {
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefs}}
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return pod_manifest(name, cpu="10", memory="4Mi", spec=spec, scheduler_name=scheduler)


def _node(name: str, max_pods: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """Upstream's ``newNode``: 100 CPUs, 4 GiB, ``max_pods`` pods."""
    return node_manifest(name, cpu="100", memory="4Gi", pods=max_pods, labels=labels)


class _Batched:
    """Observer: which pods were placed on a hinted node (the profile's ``batched_pods`` grew)."""

    def __init__(self) -> None:
        self.sched: Scheduler | None = None
        self.before = 0
        self.batched: dict[str, bool] = {}

    def _count(self) -> int:
        assert self.sched is not None
        return sum(f.batch.batched_pods for f in self.sched.profiles.values() if f.batch is not None)

    def loaded(self, cluster: Any, sched: Scheduler) -> None:
        self.sched = sched

    def before_attempt(self, qpi: QueuedPodInfo) -> None:
        self.before = self._count()

    def after_attempt(self, qpi: QueuedPodInfo) -> None:
        self.batched[qpi.pod.name] = self._count() > self.before


def _run(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], batch: bool = True, seed: int = 1
) -> tuple[dict[str, str | None], dict[str, bool], SimulationResult]:
    # pods are created one after the other (upstream waits for each): later creation times
    for i, p in enumerate(pods):
        p["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:{i:02d}Z"
    manifests = [Manifest(o, "t.yaml", i + 1) for i, o in enumerate(nodes + pods)]
    obs = _Batched()
    res = run_simulation(manifests, _config(batch), seed=seed, registry=_registry(), observer=obs)
    return {p.name: p.node for p in res.pods}, obs.batched, res


SCENARIOS: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, str], set[str]]] = [
    ("one pod one node", [_node("n1", 1)], [_pod("p1")], {"p1": "n1"}, set()),
    (
        "distinct pods on distinct nodes",
        [_node(f"n{i}", 10, {"forpod": str(i)}) for i in (3, 2, 1)],
        [_pod(f"p{i}", node_selector={"forpod": str(i)}) for i in (1, 2, 3)],
        {"p1": "n1", "p2": "n2", "p3": "n3"},
        set(),
    ),
    (
        "three pod batch",
        [_node(n, 1) for n in ("n3", "n2", "n1")],
        [_pod(f"p{i}", ["n1", "n2", "n3"]) for i in (1, 2, 3)],
        {"p1": "n1", "p2": "n2", "p3": "n3"},
        {"p2", "p3"},
    ),
    (
        "two consecutive batches",
        [_node(n, 1) for n in ("n4", "n3", "n2", "n1")],
        [
            _pod("p1", ["n1", "n2"]),
            _pod("p2", ["n1", "n2"]),
            _pod("p3", ["n4", "n3"]),
            _pod("p4", ["n4", "n3"]),
        ],
        {"p1": "n1", "p2": "n2", "p3": "n4", "p4": "n3"},
        {"p2", "p4"},
    ),
    (
        "multiple pods per node means no batching",
        [_node(n, 2) for n in ("n4", "n3", "n2", "n1")],
        [
            _pod("p1", ["n1", "n2"]),
            _pod("p2", ["n1", "n2"]),
            _pod("p3", ["n4", "n3"]),
            _pod("p4", ["n4", "n3"]),
        ],
        {"p1": "n1", "p2": "n1", "p3": "n4", "p4": "n4"},
        set(),
    ),
    (
        "no batching between schedulers",
        [_node(n, 1) for n in ("n3", "n2", "n1")],
        [_pod("p1", ["n1", "n2", "n3"]), _pod("p2", ["n1", "n2", "n3"], scheduler="mysched")],
        {"p1": "n1", "p2": "n2"},
        set(),
    ),
    (
        "no batching missing sign",
        [_node(n, 1) for n in ("n3", "n2", "n1")],
        [_pod(f"p{i}", ["n1", "n2", "n3"], scheduler="nosign") for i in (1, 2)],
        {"p1": "n1", "p2": "n2"},
        set(),
    ),
    (
        "no batching empty sign",
        [_node(n, 1) for n in ("n3", "n2", "n1")],
        [_pod(f"p{i}", ["n1", "n2", "n3"], scheduler="emptysign") for i in (1, 2)],
        {"p1": "n1", "p2": "n2"},
        set(),
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "expected", "batched"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_upstream_batch_scenarios(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], expected: dict[str, str], batched: set[str]
) -> None:
    placed, was_batched, _ = _run(nodes, pods)
    assert placed == expected
    assert {n for n, b in was_batched.items() if b} == batched


def test_gate_off_same_nodes_no_batch() -> None:
    """With ``OpportunisticBatching: false`` the three-pod scenario lands on the same nodes through
    full cycles, and the profile keeps no batch state."""
    _, nodes, pods, expected, _ = SCENARIOS[2]
    placed, was_batched, res = _run(nodes, pods, batch=False)
    assert placed == expected
    assert not any(was_batched.values())
    assert all(f.batch is None for f in res.scheduler.profiles.values())


def test_default_profile_signs_no_pod() -> None:
    """The default profile's PodTopologySpread has the system default constraints: no pod is
    signed, so no pod is ever batched (as upstream)."""
    manifests = [Manifest(o, "t.yaml", i + 1) for i, o in enumerate([_node("n1", 1), _node("n2", 1)])]
    pods = [_pod(f"p{i}", ["n1", "n2"]) for i in (1, 2)]
    manifests += [Manifest(p, "t.yaml", 10 + i) for i, p in enumerate(pods)]
    res = run_simulation(manifests, None, seed=1)
    fwk = res.scheduler.profiles["default-scheduler"]
    assert fwk.signer.enabled
    assert fwk.signer.sign_pod(Pod.from_manifest(pods[0])) is None
    assert fwk.batch is not None and fwk.batch.batched_pods == 0
    assert {p.name: p.node for p in res.pods} == {"p1": "n1", "p2": "n2"}


# ---- signatures ----------------------------------------------------------------------------------


def _signer() -> Any:
    from kubesched.framework.runtime import Framework

    cfg = _config(True)
    return Framework(cfg.profiles[0], _registry()).signer


def test_signature_is_upstream_json_of_the_fragments() -> None:
    pod = make_pod(
        "a",
        cpu="1",
        spec={
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "b", "operator": "Exists"}, {"key": "a", "operator": "Exists"}],
            "containers": [
                {"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 8080}]}
            ],
        },
        labels={"app": "web"},
    )
    sig = json.loads(_signer().sign_pod(pod))
    assert sig == {
        "v1.Pod.Spec.SchedulerName": "default-scheduler",
        "v1.Pod.Spec.NodeName": "",
        "v1.Pod.Spec.Tolerations": [["a", "Exists", "", "", None], ["b", "Exists", "", "", None]],
        "v1.Pod.Spec.Affinity.NodeAffinity": None,
        "v1.Pod.Spec.Affinity.NodeSelector": {"disk": "ssd"},
        "v1.Pod.Spec.HostPorts()": [8080],
        "v1.Pod.Spec.ContainerResourcesAndOverheads()": dict(pod.requests),
        "v1.Pod.Spec.Volumes.NonSyntheticSources()": [],
        "v1.Pod.Labels": {"app": "web"},
        "v1.Pod.Spec.CanonicalImageNames()": ["nginx"],
    }


def test_equal_pods_sign_equal_whatever_their_name_and_secret_volumes() -> None:
    signer = _signer()
    spec_a = {"volumes": [{"name": "tok-a", "secret": {"secretName": "a"}}, {"name": "d", "emptyDir": {}}]}
    spec_b = {"volumes": [{"name": "tok-b", "configMap": {"name": "b"}}, {"name": "x", "emptyDir": {}}]}
    a = make_pod("a", cpu="1", spec=spec_a)
    b = make_pod("b", cpu="1", spec=spec_b)
    assert signer.sign_pod(a) == signer.sign_pod(b) is not None
    assert signer.sign_pod(make_pod("c", cpu="2")) != signer.sign_pod(make_pod("d", cpu="1"))
    assert signer.sign_pod(make_pod("e", cpu="1", labels={"x": "1"})) != signer.sign_pod(
        make_pod("f", cpu="1")
    )


@pytest.mark.parametrize(
    "spec",
    [
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        },
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"a": "b"}},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            }
        },
        {"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]},
    ],
    ids=["topology spread", "pod anti-affinity", "resource claim"],
)
def test_unbatchable_pods_are_not_signed(spec: dict[str, Any]) -> None:
    assert _signer().sign_pod(make_pod("a", cpu="1", spec=spec)) is None


def test_extenders_or_an_unsigning_plugin_disable_signatures() -> None:
    from kubesched.framework.options import FrameworkOptions
    from kubesched.framework.runtime import Framework

    cfg = _config(True)
    assert not Framework(cfg.profiles[2], _registry()).signer.enabled  # "nosign" Filter plugin
    assert Framework(cfg.profiles[3], _registry()).signer.enabled  # signs, but refuses each pod
    with_ext = Framework(cfg.profiles[0], _registry(), FrameworkOptions(extenders=[object()]))  # type: ignore[list-item]
    assert not with_ext.signer.enabled and with_ext.signer.sign_pod(make_pod("a")) is None


# ---- GetNodeHint / StoreScheduleResults rules (batch_test.go) -------------------------------------


class _Fixture:
    """An OpportunisticBatch with a fake signer (a pod's ``sig`` label), Filter (rejects a node
    whose name is in ``full``), snapshot (``nodes``) and clock."""

    def __init__(self) -> None:
        self.now = 100.0
        self.full: set[str] = set()
        self.nodes: dict[str, NodeInfo] = {n: node_info(make_node(n)) for n in ("n1", "n2", "n3")}
        self.batch = OpportunisticBatch(
            "default-scheduler",
            sign=lambda pod, _rec: pod.labels["sig"].encode() if "sig" in pod.labels else None,
            run_filter=lambda _s, _p, ni: (
                Status(Code.Unschedulable, "full") if ni.name in self.full else None
            ),
            node_info=self.nodes.get,
            now=lambda: self.now,
            rng=random.Random(0),
            sink=NULL_SINK,
        )

    def first(self, chosen: str = "n3", others: Sequence[str] = ("n1",), sig: str = "sig") -> None:
        hint, signature = self.batch.get_node_hint(CycleState(), make_pod("p1", labels={"sig": sig}), 1)
        assert hint == ""
        names = [chosen, *others]
        totals = [100 - i for i in range(len(names))]
        self.batch.store_schedule_results(
            signature, hint, chosen, SortedScoredNodes(names, totals, 0, random.Random(0)), 1
        )

    def second(self, cycle: int = 2, sig: str | None = "sig") -> str:
        labels = {"sig": sig} if sig is not None else {}
        return self.batch.get_node_hint(CycleState(), make_pod("p2", labels=labels), cycle)[0]


def test_hint_when_the_last_node_is_full() -> None:
    f = _Fixture()
    f.first()
    f.full = {"n3"}
    assert f.second() == "n1"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("node not full", ""),
        ("skipped cycle", ""),
        ("same cycle", ""),
        ("different signature", ""),
        ("unsigned pod", ""),
        ("expired", ""),
        ("node missing", ""),
        ("not expired yet", "n1"),
    ],
)
def test_hint_dropped(change: str, expected: str) -> None:
    f = _Fixture()
    f.first()
    f.full = {"n3"}
    cycle, sig = 2, "sig"
    if change == "node not full":
        f.full = set()
    elif change == "skipped cycle":
        cycle = 3
    elif change == "same cycle":
        cycle = 1
    elif change == "different signature":
        sig = "other"
    elif change == "unsigned pod":
        sig = None  # type: ignore[assignment]
    elif change == "expired":
        f.now += MAX_BATCH_AGE + 0.001
    elif change == "not expired yet":
        f.now += MAX_BATCH_AGE
    elif change == "node missing":
        del f.nodes["n3"]
    assert f.second(cycle, sig) == expected


def test_hint_used_keeps_the_ranking_for_the_next_pod() -> None:
    f = _Fixture()
    f.first(chosen="n3", others=("n1", "n2"))
    f.full = {"n3"}
    hint = f.second()
    assert hint == "n1"
    f.batch.store_schedule_results(b"sig", hint, "n1", None, 2)
    assert f.batch.batched_pods == 1
    f.full = {"n3", "n1"}
    assert f.batch.get_node_hint(CycleState(), make_pod("p3", labels={"sig": "sig"}), 3)[0] == "n2"
    f.batch.store_schedule_results(b"sig", "n2", "n2", None, 3)
    f.full = {"n3", "n1", "n2"}
    # the ranking is used up: no hint, nothing to flush
    assert f.batch.get_node_hint(CycleState(), make_pod("p4", labels={"sig": "sig"}), 4)[0] == ""


def test_hint_not_used_replaces_the_ranking() -> None:
    f = _Fixture()
    f.first(chosen="n3", others=("n1",))
    f.full = {"n3"}
    hint = f.second()
    assert hint == "n1"
    # the full cycle chose n2 (n1 did not pass Filter): its own ranking is stored
    f.batch.store_schedule_results(
        b"sig", hint, "n2", SortedScoredNodes(["n2", "n3"], [9, 5], 0, random.Random(0)), 2
    )
    assert f.batch.batched_pods == 0
    f.full = {"n2"}
    assert f.batch.get_node_hint(CycleState(), make_pod("p3", labels={"sig": "sig"}), 3)[0] == "n3"


@pytest.mark.parametrize(("sig", "others"), [(None, ("n1",)), (b"sig", ())])
def test_unsigned_or_single_node_result_flushes(sig: bytes | None, others: Sequence[str]) -> None:
    f = _Fixture()
    f.first()
    names = ["n2", *others]
    f.batch.store_schedule_results(
        sig, "", "n2", SortedScoredNodes(names, [5] * len(names), 0, random.Random(0)), 2
    )
    assert f.batch.state is None
    f.full = {"n2"}
    assert f.second(3) == ""


def test_sorted_scored_nodes_best_first_ties_random() -> None:
    names = ["a", "b", "c", "d", "e"]
    orders = set()
    for seed in range(40):
        s = SortedScoredNodes(names, [5, 9, 5, 1, 9], 1, random.Random(seed))
        assert len(s) == 4
        out = [s.pop() for _ in range(4)]
        assert out[0] == "e" and out[3] == "d" and set(out[1:3]) == {"a", "c"}
        orders.add(tuple(out))
    assert len(orders) == 2  # both orders of the tied a and c occur
    with pytest.raises(IndexError):
        s.pop()


# ---- property: same filters satisfied with the gate on and off ------------------------------------

_GROUPS = st.lists(
    st.tuples(
        st.sampled_from(["250m", "500m", "1", "2"]),
        st.sampled_from([None, "a", "b"]),
        st.integers(1, 6),
    ),
    min_size=1,
    max_size=4,
)


def _cpu_milli(v: str) -> int:
    return int(v[:-1]) if v.endswith("m") else int(v) * 1000


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(
        st.tuples(st.sampled_from([1, 2, 4]), st.integers(1, 4), st.sampled_from(["a", "b"])),
        min_size=1,
        max_size=8,
    ),
    groups=_GROUPS,
    seed=st.integers(0, 3),
)
def test_property_gate_on_and_off_place_pods_that_pass_the_same_filters(
    nodes: list[tuple[int, int, str]], groups: list[tuple[str, str | None, int]], seed: int
) -> None:
    """Upstream's guarantee: a hint is only taken when it passes every Filter plugin. So with the
    gate on as off, each node holds no more CPU and pods than it allows, each pod sits on a node
    its node selector matches, and a pod is left pending only when no node can take it in the
    final state. Pods come in groups of identical pods (equal signatures), as batches do."""
    node_objs = [
        node_manifest(f"n{i}", cpu=str(cpu), pods=pods, labels={"disk": disk})
        for i, (cpu, pods, disk) in enumerate(nodes)
    ]
    pod_objs: list[dict[str, Any]] = []
    for g, (cpu, disk, count) in enumerate(groups):
        for k in range(count):
            spec = {"nodeSelector": {"disk": disk}} if disk else {}
            pod_objs.append(pod_manifest(f"g{g}-{k}", cpu=cpu, spec=spec, labels={"group": str(g)}))
    by_name = {p["metadata"]["name"]: p for p in pod_objs}
    for batch in (True, False):
        placed, _, res = _run(
            [dict(n) for n in node_objs], [json.loads(json.dumps(p)) for p in pod_objs], batch, seed
        )
        used_cpu = {n["metadata"]["name"]: 0 for n in node_objs}
        used_pods = dict.fromkeys(used_cpu, 0)
        spec_of = {n["metadata"]["name"]: n for n in node_objs}
        for name, node in placed.items():
            if node is None:
                continue
            p = by_name[name]
            used_cpu[node] += _cpu_milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"])
            used_pods[node] += 1
            want = p["spec"].get("nodeSelector", {}).get("disk")
            assert want is None or spec_of[node]["metadata"]["labels"]["disk"] == want
        for n, node in spec_of.items():
            assert used_cpu[n] <= int(node["status"]["allocatable"]["cpu"]) * 1000
            assert used_pods[n] <= int(node["status"]["allocatable"]["pods"])
        for name, node in placed.items():
            if node is not None:
                continue
            p = by_name[name]
            cpu = _cpu_milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"])
            want = p["spec"].get("nodeSelector", {}).get("disk")
            for n, spec in spec_of.items():
                fits = (
                    used_cpu[n] + cpu <= int(spec["status"]["allocatable"]["cpu"]) * 1000
                    and used_pods[n] < int(spec["status"]["allocatable"]["pods"])
                    and (want is None or spec["metadata"]["labels"]["disk"] == want)
                )
                assert not fits, (batch, name, n)
