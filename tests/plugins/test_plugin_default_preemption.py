"""DefaultPreemption (``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``): args,
eligibility, victim selection with reprieve and PDBs,
pickOneNodeForPreemption criteria, synchronous preparation and exact messages.

Scenarios run a real Framework (PrioritySort, NodeResourcesFit, DefaultPreemption, DefaultBinder)
over a snapshot built from an embedded MemoryCluster; node statuses come from the real
filtering (``Placement.schedule_pod`` raising ``FitError``). Expected values are derived by hand.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.api.timestamps import rfc3339
from kubesched.clock import VirtualClock
from kubesched.config.args import decode_args
from kubesched.config.types import KubeSchedulerProfile, Plugin, PluginConfig, Plugins, PluginSet
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ConfigError, NotFoundError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.options import FrameworkOptions
from kubesched.framework.preemption import Candidate
from kubesched.framework.recorder import CycleRecorder
from kubesched.framework.results import NominatingInfo, NominatingMode, PostFilterResult
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.plugins import in_tree_registry
from kubesched.plugins.defaultpreemption.default_preemption import DefaultPreemption, DefaultPreemptionArgs
from kubesched.plugins.defaultpreemption.victims import (
    compile_pdbs,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
    select_victims_on_node,
)
from kubesched.scheduler.placement import Placement
from kubesched.testing import make_node, make_pod, node_info, pod_manifest, snapshot_of

T0 = 1_700_000_000.0  # virtual clock origin (epoch seconds)


# --- fakes -----------------------------------------------------------------------------------


class Objects:
    """ObjectLister over a MemoryCluster (what the informers give the plugins)."""

    def __init__(self, mc: MemoryCluster) -> None:
        self.mc = mc

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return list(self.mc.list(kind, namespace).items)

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return self.mc.get(kind, namespace, name)
        except NotFoundError:
            return None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return {}


class RecordingClient:
    """Delegates to a MemoryCluster and records the write calls."""

    def __init__(self, mc: MemoryCluster) -> None:
        self.mc = mc
        self.calls: list[tuple[Any, ...]] = []

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: dict[str, Any]) -> Any:
        self.calls.append(("patch_status", kind, namespace, name, patch))
        return self.mc.patch_status(kind, namespace, name, patch)

    def delete(self, kind: str, namespace: str | None, name: str, *, grace: bool = False) -> None:
        self.calls.append(("delete", kind, namespace, name))
        self.mc.delete(kind, namespace, name, grace=grace)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, str, str, str, str]] = []

    def eventf(
        self, regarding: Pod, related: Pod | None, eventtype: str, reason: str, action: str, note: str
    ) -> None:
        self.events.append((regarding.key, related.key if related else None, eventtype, reason, action, note))


class Nominator:
    def __init__(self, by_node: dict[str, list[Pod]] | None = None) -> None:
        self.by_node = by_node or {}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.by_node.get(node_name, [])]

    def nominated_node_names(self) -> list[str]:
        return [n for n, pods in self.by_node.items() if pods]


def profile(args: dict[str, Any] | None = None) -> KubeSchedulerProfile:
    names = ["PrioritySort", "NodeResourcesFit", "DefaultPreemption", "DefaultBinder"]
    cfg = [PluginConfig(name="DefaultPreemption", args=args)] if args is not None else []
    return KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(multi_point=PluginSet(enabled=[Plugin(name=n) for n in names])),
        plugin_config=cfg,
    )


class Env:
    """A cluster (nodes + bound pods + PDBs), its snapshot and a Framework over it."""

    def __init__(
        self,
        nodes: Sequence[dict[str, Any]],
        pods: Sequence[dict[str, Any]] = (),
        pdbs: Sequence[dict[str, Any]] = (),
        args: dict[str, Any] | None = None,
        nominated: dict[str, list[Pod]] | None = None,
        seed: int = 0,
    ) -> None:
        self.clock = VirtualClock(T0)
        self.mc = MemoryCluster(self.clock)
        for o in [*nodes, *pods, *pdbs]:
            self.mc.create(o)
        self.client = RecordingClient(self.mc)
        self.recorder = Recorder()
        infos = {
            n["metadata"]["name"]: node_info(make_node_from(self.mc, n["metadata"]["name"])) for n in nodes
        }
        for p in pods:
            pod = self.pod(p["metadata"]["name"], p["metadata"].get("namespace", "default"))
            infos[pod.node_name].add_pod(pod)
        self.snapshot = snapshot_of(list(infos.values()))
        self.fwk = Framework(
            profile(args),
            in_tree_registry(),
            FrameworkOptions(
                snapshot_provider=lambda: self.snapshot,
                clock=self.clock,
                rng=random.Random(seed),
                client=self.client,
                objects=Objects(self.mc),
                event_recorder=self.recorder,
                nominator=Nominator(nominated),
            ),
        )
        self.plugin: DefaultPreemption = self.fwk.plugins["DefaultPreemption"]  # type: ignore[assignment]

    def pod(self, name: str, namespace: str = "default") -> Pod:
        return Pod.from_manifest(self.mc.get("Pod", namespace, name))

    def add_pending(self, manifest: dict[str, Any]) -> Pod:
        return Pod.from_manifest(self.mc.create(manifest))

    def filter(self, pod: Pod) -> tuple[CycleState, FitError]:
        """Run PreFilter + Filter over every node; returns the state and the FitError."""
        state = CycleState()
        with pytest.raises(FitError) as exc:
            Placement(random.Random(0)).schedule_pod(self.fwk, state, pod, self.snapshot)
        return state, exc.value

    def preempt(
        self, pod: Pod, recorder: CycleRecorder | None = None
    ) -> tuple[PostFilterResult | None, Status, FitError]:
        state, fe = self.filter(pod)
        state.recorder = recorder
        r, s = self.fwk.run_post_filter_plugins(state, pod, fe.diagnosis.node_to_status)
        fe.diagnosis.post_filter_msg = s.message()
        return r, s, fe

    def exists(self, name: str) -> bool:
        try:
            self.mc.get("Pod", "default", name)
            return True
        except NotFoundError:
            return False


def make_node_from(mc: MemoryCluster, name: str) -> Any:
    from kubesched.api.node import Node

    return Node.from_manifest(mc.get("Node", None, name))


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    from kubesched.testing import node_manifest

    return node_manifest(name, cpu=cpu, memory="32Gi")


def bound(
    name: str,
    node_name: str,
    cpu: str,
    priority: int,
    labels: dict[str, str] | None = None,
    start: str | None = "2024-01-01T00:00:00Z",
    status: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    st: dict[str, Any] = {"phase": "Running"}
    if start:
        st["startTime"] = start
    st.update(status or {})
    m = pod_manifest(name, cpu=cpu, priority=priority, node_name=node_name, labels=labels, status=st)
    m["metadata"].update(meta or {})
    return m


def pending(
    name: str,
    cpu: str,
    priority: int,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return pod_manifest(name, cpu=cpu, priority=priority, spec=spec, status=status)


def pdb(
    name: str,
    match: dict[str, str] | None,
    allowed: int,
    disrupted: Sequence[str] = (),
    namespace: str = "default",
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if match is not None:
        spec["selector"] = {"matchLabels": match}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {
            "disruptionsAllowed": allowed,
            "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted},
        },
    }


# --- identity, args, events -----------------------------------------------------------------


def test_identity_and_events() -> None:
    pl = DefaultPreemption()
    assert pl.name() == "DefaultPreemption"
    assert DefaultPreemption.Args is DefaultPreemptionArgs
    [ev] = pl.events_to_register()
    assert ev.event == ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
    assert ev.event.label == "AssignedPodDelete"
    assert ev.queueing_hint_fn is not None
    assert ev.queueing_hint_fn(make_pod("p"), make_pod("old"), None) == QueueingHint.QueueSkip


def test_args_defaults_and_decoding() -> None:
    a = decode_args(DefaultPreemptionArgs, None, "args")
    assert (a.min_candidate_nodes_percentage, a.min_candidate_nodes_absolute) == (10, 100)
    b = decode_args(
        DefaultPreemptionArgs, {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 50}, "args"
    )
    assert (b.min_candidate_nodes_percentage, b.min_candidate_nodes_absolute) == (20, 50)
    c = decode_args(
        DefaultPreemptionArgs, {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, "args"
    )
    assert c.min_candidate_nodes_percentage == 0


@pytest.mark.parametrize(
    ("raw", "path", "msg"),
    [
        (
            {"minCandidateNodesPercentage": 101},
            "args.minCandidateNodesPercentage",
            "not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesPercentage": -1},
            "args.minCandidateNodesPercentage",
            "not in valid range [0, 100]",
        ),
        ({"minCandidateNodesAbsolute": -1}, "args.minCandidateNodesAbsolute", "not in valid range [0, inf)"),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "args.minCandidateNodesAbsolute",
            "cannot be zero at the same time as minCandidateNodesPercentage",
        ),
        ({"minCandidates": 1}, "args.minCandidates", 'unknown field "minCandidates"'),
    ],
)
def test_args_validation(raw: dict[str, Any], path: str, msg: str) -> None:
    with pytest.raises(ConfigError) as exc:
        decode_args(DefaultPreemptionArgs, raw, "args")
    assert (exc.value.path, exc.value.message) == (path, msg)


def test_framework_reports_bad_args_with_path() -> None:
    with pytest.raises(ConfigError) as exc:
        Framework(profile({"minCandidateNodesPercentage": 120}), in_tree_registry())
    assert exc.value.path == "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"


@pytest.mark.parametrize(
    ("pct", "absolute", "n", "want"),
    [
        (10, 100, 5000, 500),
        (10, 100, 500, 100),
        (10, 100, 50, 50),
        (0, 1, 7, 1),
        (50, 0, 7, 3),
        (100, 0, 7, 7),
    ],
)
def test_calculate_num_candidates(pct: int, absolute: int, n: int, want: int) -> None:
    pl = DefaultPreemption(
        DefaultPreemptionArgs(min_candidate_nodes_percentage=pct, min_candidate_nodes_absolute=absolute)
    )
    assert pl.calculate_num_candidates(n) == want


# --- end-to-end PostFilter ------------------------------------------------------------------


def basic_env() -> Env:
    # n1: two low pods (prio 1 and 2, 2 cpu each); n2: prio 5 (3 cpu) + prio 0 (1 cpu); n3: prio 200 (4 cpu)
    return Env(
        [node("n1"), node("n2"), node("n3")],
        [
            bound("p1", "n1", "2", 1),
            bound("p2", "n1", "2", 2),
            bound("q1", "n2", "3", 5),
            bound("q2", "n2", "1", 0),
            bound("r1", "n3", "4", 200),
        ],
    )


def test_preempts_lowest_priority_pod_on_best_node() -> None:
    env = basic_env()
    pod = env.add_pending(pending("hi", "2", 100))
    rec = CycleRecorder()
    r, s, fe = env.preempt(pod, rec)
    # n1: reprieve p2 (prio 2) first, p1 must go; n2: q1 (prio 5) must go, q2 reprieved;
    # n3: r1 outranks the pod. Criterion 2 (lowest highest-victim priority): n1 (1) beats n2 (5).
    assert s == Status(Code.Success)
    assert s.plugin == "DefaultPreemption"
    assert r == PostFilterResult(NominatingInfo("n1", NominatingMode.Override))
    cond = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
        "lastProbeTime": None,
        "lastTransitionTime": "2023-11-14T22:13:20Z",
    }
    assert env.client.calls == [
        ("patch_status", "Pod", "default", "p1", {"conditions": [cond]}),
        ("delete", "Pod", "default", "p1"),
    ]
    assert not env.exists("p1") and env.exists("p2") and env.exists("q1")
    assert env.recorder.events == [
        (
            "default/p1",
            "default/hi",
            "Normal",
            "Preempted",
            "Preempting",
            f"Preempted by pod {pod.uid} on node n1",
        )
    ]
    assert rec.post_filter["DefaultPreemption"] == {
        "code": "Success",
        "reasons": [],
        "nominatedNode": "n1",
        "victims": ["default/p1"],
    }
    assert fe.message() == "0/3 nodes are available: 3 Insufficient cpu."


def test_reprieve_keeps_most_important_pods() -> None:
    env = Env(
        [node("n1")],
        [
            bound("low1", "n1", "1", 1),
            bound("low2", "n1", "1", 2),
            bound("low3", "n1", "1", 3),
            bound("top", "n1", "1", 1000),
        ],
    )
    pod = env.add_pending(pending("hi", "2", 10))
    state, _ = env.filter(pod)
    ni = env.snapshot.get("n1")
    assert ni is not None
    copy = ni.snapshot()
    victims, n_viol, s = select_victims_on_node(
        env.fwk, state.clone(), pod, copy, [], env.plugin.is_preemption_allowed, T0
    )
    # all three removed -> 1 cpu used; low3 reprieved (2 used), low2 and low1 would leave only 1 free
    assert s is None
    assert [v.name for v in victims] == ["low2", "low1"]
    assert n_viol == 0
    assert sorted(pi.pod.name for pi in copy.pods) == ["low3", "top"]
    assert len(ni.pods) == 4  # the snapshot's NodeInfo is untouched


def test_pdb_violations_decide_the_node() -> None:
    env = Env(
        [node("n1"), node("n2")],
        [
            bound("db", "n1", "4", 1, labels={"app": "db"}),
            bound("web", "n2", "4", 5, labels={"app": "web"}),
        ],
        pdbs=[pdb("db-pdb", {"app": "db"}, 0)],
    )
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    # n1 victim violates its PDB; n2's victim has a higher priority but no PDB: fewest violations first
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n2", NominatingMode.Override))
    assert env.exists("db") and not env.exists("web")


def test_pdb_split_and_reprieve_order() -> None:
    pods = [make_pod(n, labels={"app": "db"}, priority=1, node_name="n1") for n in ("a", "b", "c")]
    pods.append(make_pod("d", labels={"app": "web"}, priority=1, node_name="n1"))
    pods.append(make_pod("e", priority=1, node_name="n1"))
    pdbs = compile_pdbs(
        [
            pdb("db", {"app": "db"}, 1, disrupted=["b"]),
            pdb("other-ns", {"app": "web"}, 0, namespace="x"),
            pdb("empty", {}, 0),
            pdb("nil", None, 0),
        ]
    )
    viol, ok = filter_pods_with_pdb_violation([PodInfo(p) for p in pods], pdbs)
    # a uses the only disruption allowed, b is already disrupted, c drives the budget below 0
    assert [pi.pod.name for pi in viol] == ["c"]
    assert [pi.pod.name for pi in ok] == ["a", "b", "d", "e"]


def test_pdb_violating_victims_counted_and_resorted() -> None:
    env = Env(
        [node("n1")],
        [
            bound("guarded", "n1", "2", 1, labels={"app": "db"}),
            bound("free", "n1", "2", 3),
        ],
        pdbs=[pdb("db", {"app": "db"}, 0)],
    )
    pod = env.add_pending(pending("hi", "4", 10))
    state, _ = env.filter(pod)
    ni = env.snapshot.get("n1")
    assert ni is not None
    pdbs = compile_pdbs(env.fwk.objects.list("PodDisruptionBudget"))
    victims, n_viol, s = select_victims_on_node(
        env.fwk, state.clone(), pod, ni.snapshot(), pdbs, env.plugin.is_preemption_allowed, T0
    )
    assert s is None
    assert [v.name for v in victims] == ["free", "guarded"]  # re-sorted by importance
    assert n_viol == 1


def test_preemption_policy_never() -> None:
    env = basic_env()
    pod = env.add_pending(pending("hi", "2", 100, spec={"preemptionPolicy": "Never"}))
    r, s, fe = env.preempt(pod)
    assert r is None
    assert s == Status(Code.Unschedulable, "preemption: not eligible due to preemptionPolicy=Never.")
    assert s.plugin == "DefaultPreemption"
    assert fe.message() == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    assert env.client.calls == []


def test_all_unresolvable_is_not_helpful_and_clears_nomination() -> None:
    env = Env([node("n1", cpu="2"), node("n2", cpu="2")], [bound("p1", "n1", "1", 1)])
    pod = env.add_pending(pending("huge", "3", 100, status={"nominatedNodeName": "n1"}))
    r, s, fe = env.preempt(pod)
    # 3 cpu exceeds every node's allocatable: UnschedulableAndUnresolvable everywhere
    assert fe.diagnosis.node_to_status.get("n1").code == Code.UnschedulableAndUnresolvable
    assert r == PostFilterResult(NominatingInfo("", NominatingMode.Override))
    assert s == Status(
        Code.Unschedulable, "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert env.client.calls == [("patch_status", "Pod", "default", "huge", {"nominatedNodeName": None})]
    assert fe.message() == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


def test_not_helpful_with_dry_run_statuses() -> None:
    env = Env([node("n1"), node("n2", cpu="1"), node("n3", cpu="1")], [bound("big", "n1", "4", 500)])
    pod = env.add_pending(pending("hi", "2", 100))
    r, s, _ = env.preempt(pod)
    assert r == PostFilterResult(NominatingInfo("", NominatingMode.Override))
    assert s == Status(
        Code.Unschedulable,
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.",
    )


def test_filter_failure_after_removing_all_victims_is_recorded() -> None:
    env = Env([node("n1")], [bound("low", "n1", "1", 1), bound("high", "n1", "3", 500)])
    pod = env.add_pending(pending("hi", "2", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Unschedulable, "preemption: 0/1 nodes are available: 1 Insufficient cpu.")
    assert r == PostFilterResult(NominatingInfo("", NominatingMode.Override))


def test_random_offset_and_early_stop() -> None:
    # every node is an equal candidate; with minCandidateNodesAbsolute=1 only the node at the
    # random offset is dry-run: random.Random(0).randrange(4) == 3 -> n4
    nodes = [node(f"n{i}") for i in range(1, 5)]
    pods = [bound(f"v{i}", f"n{i}", "4", 1) for i in range(1, 5)]
    env = Env(nodes, pods, args={"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1})
    assert random.Random(0).randrange(4) == 3
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n4", NominatingMode.Override))
    assert [n for n in ("v1", "v2", "v3", "v4") if not env.exists(n)] == ["v4"]


def test_dry_run_candidates_non_violating_first() -> None:
    env = Env(
        [node("n1"), node("n2")],
        [
            bound("db", "n1", "4", 1, labels={"app": "db"}),
            bound("web", "n2", "4", 1),
        ],
        pdbs=[pdb("db", {"app": "db"}, 0)],
    )
    pod = env.add_pending(pending("hi", "4", 100))
    state, _ = env.filter(pod)
    pdbs = compile_pdbs(env.fwk.objects.list("PodDisruptionBudget"))
    cands, statuses, errs = env.plugin.dry_run_preemption(state, pod, env.snapshot.list(), pdbs, 0, 2, T0)
    assert [(c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in cands] == [
        ("n2", ["web"], 0),
        ("n1", ["db"], 1),
    ]
    assert len(statuses) == 0 and errs == []


def test_terminating_victim_on_nominated_node_blocks_preemption() -> None:
    term = {"deletionTimestamp": "2024-01-01T00:01:00Z"}
    cond = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    env = Env([node("n1")], [bound("dying", "n1", "4", 1, status={"conditions": cond}, meta=term)])
    pod = env.add_pending(pending("hi", "2", 100, status={"nominatedNodeName": "n1"}))
    r, s, _ = env.preempt(pod)
    assert r is None
    assert s == Status(
        Code.Unschedulable, "preemption: not eligible due to a terminating pod on the nominated node."
    )


def test_terminating_pod_ignored_when_nominated_node_unresolvable() -> None:
    term = {"deletionTimestamp": "2024-01-01T00:01:00Z"}
    cond = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    env = Env([node("n1")], [bound("dying", "n1", "4", 1, status={"conditions": cond}, meta=term)])
    pl = env.plugin
    pod = env.add_pending(pending("hi", "2", 100, status={"nominatedNodeName": "n1"}))
    assert pl.pod_eligible_to_preempt_others(pod, Status(Code.UnschedulableAndUnresolvable)) == (True, "")
    assert pl.pod_eligible_to_preempt_others(pod, Status(Code.Unschedulable)) == (
        False,
        "not eligible due to a terminating pod on the nominated node.",
    )


def test_terminating_victim_is_not_deleted_again() -> None:
    term = {"deletionTimestamp": "2024-01-01T00:01:00Z"}
    env = Env([node("n1")], [bound("dying", "n1", "2", 1, meta=term), bound("low", "n1", "2", 2)])
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n1", NominatingMode.Override))
    assert [c[0:4] for c in env.client.calls] == [
        ("patch_status", "Pod", "default", "low"),
        ("delete", "Pod", "default", "low"),
    ]
    assert [e[0] for e in env.recorder.events] == ["default/low"]


def test_waiting_victim_is_rejected_not_deleted() -> None:
    env = Env([node("n1")], [bound("waiter", "n1", "4", 1)])
    victim = env.pod("waiter")
    wp = WaitingPod(victim, {"SomePermit": 30.0}, env.clock)
    env.fwk.waiting_pods.add(wp)
    got: list[Status | None] = []
    wp.on_done(got.append)
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n1", NominatingMode.Override))
    assert env.client.calls == []
    assert got == [Status(Code.Unschedulable, "preempted")]
    assert got[0] is not None and got[0].plugin == "DefaultPreemption"
    assert env.recorder.events == [
        (
            "default/waiter",
            "default/hi",
            "Normal",
            "Preempted",
            "Preempting",
            f"Preempted by pod {pod.uid} on node n1",
        )
    ]


def test_lower_priority_nominated_pods_are_cleared() -> None:
    low = make_pod("nom-low", priority=5, status={"nominatedNodeName": "n1"})
    high = make_pod("nom-high", priority=500, status={"nominatedNodeName": "n1"})
    unpatched = make_pod("nom-none", priority=5)
    # nominated pods are unbound; only nom-low exists in the cluster with a nominatedNodeName
    env = Env([node("n1")], [bound("v", "n1", "4", 1)], nominated={"n1": [low, high, unpatched]})
    env.mc.create(pending("nom-low", "1", 5, status={"nominatedNodeName": "n1"}))
    pod = env.add_pending(pending("hi", "2", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n1", NominatingMode.Override))
    assert env.client.calls[-1] == ("patch_status", "Pod", "default", "nom-low", {"nominatedNodeName": None})
    assert [c[3] for c in env.client.calls] == ["v", "v", "nom-low"]


def test_victim_already_gone_is_skipped() -> None:
    env = Env([node("n1")], [bound("v", "n1", "4", 1)])
    env.mc.delete("Pod", "default", "v")
    pod = env.add_pending(pending("hi", "4", 100))
    # the snapshot still holds v (stale cache): the patch gets NotFound, no event, still Success
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n1", NominatingMode.Override))
    assert env.recorder.events == []


def test_api_error_is_an_error_status() -> None:
    env = Env([node("n1")], [bound("v", "n1", "4", 1)])

    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("etcd is down")

    env.client.delete = boom  # type: ignore[method-assign]
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    assert r is None
    assert s.code == Code.Error
    assert s.message() == "preemption: etcd is down"


def test_preemptor_gone_from_informer_is_an_error() -> None:
    env = basic_env()
    pod = env.add_pending(pending("hi", "2", 100))
    state, fe = env.filter(pod)
    env.mc.delete("Pod", "default", "hi")
    r, s = env.fwk.run_post_filter_plugins(state, pod, fe.diagnosis.node_to_status)
    assert r is None
    assert (s.code, s.message()) == (Code.Error, 'preemption: pod "hi" not found')


def test_existing_disruption_condition_is_not_patched_again() -> None:
    cond = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
        "lastProbeTime": None,
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    env = Env([node("n1")], [bound("v", "n1", "4", 1, status={"conditions": [cond]})])
    pod = env.add_pending(pending("hi", "4", 100))
    _, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert env.client.calls == [("delete", "Pod", "default", "v")]


def test_no_nodes_message_when_unresolvable_manual_statuses() -> None:
    env = basic_env()
    pod = env.add_pending(pending("hi", "2", 100))
    m = NodeToStatus({"n1": Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")})
    r, s = env.plugin.post_filter(CycleState(), pod, m)
    assert r == PostFilterResult(NominatingInfo("", NominatingMode.Override))
    assert s == Status(
        Code.Unschedulable, "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_fit_error_example_of_the_spec() -> None:
    # the ``FitError.Error`` tail, reproduced from a diagnosis with one Unschedulable node
    env = Env([node("n1"), node("n2", cpu="1"), node("n3", cpu="1")], [bound("big", "n1", "4", 500)])
    pod = env.add_pending(pending("hi", "2", 100))
    m = NodeToStatus(
        {
            "n1": Status(Code.Unschedulable, "Insufficient cpu"),
            "n2": Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
            "n3": Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
        }
    )
    state, _ = env.filter(pod)
    _, s = env.fwk.run_post_filter_plugins(state, pod, m)
    d = Diagnosis(node_to_status=m, post_filter_msg=s.message())
    assert FitError("default/hi", 3, d).message() == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: 0/3 nodes "
        "are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )


# --- pickOneNodeForPreemption ----------------------------------------------------------------


def vp(name: str, prio: int, start: str | None = "2024-01-01T00:00:00Z") -> Pod:
    return make_pod(name, priority=prio, status={"startTime": start} if start else None)


LATER = 1_900_000_000.0  # 2030: "now" for the pick tests, after every start time used


def pick(*cands: Candidate) -> str:
    return pick_one_node_for_preemption(list(cands), LATER)


def test_pick_fewest_pdb_violations() -> None:
    assert pick(Candidate("a", [vp("x", 1)], 1), Candidate("b", [vp("y", 50), vp("z", 40)], 0)) == "b"


def test_pick_lowest_highest_priority() -> None:
    assert pick(Candidate("a", [vp("x", 3)]), Candidate("b", [vp("y", 1), vp("z", 1)])) == "b"


def test_pick_smallest_priority_sum() -> None:
    assert pick(Candidate("a", [vp("x", 5), vp("y", 2)]), Candidate("b", [vp("z", 5), vp("w", 1)])) == "b"


def test_pick_fewest_victims_when_sums_tie() -> None:
    # priority -2^31 adds 0 to the sum: both sums are 5 + 2^31, so the victim count decides
    a = Candidate("a", [vp("x", 5), vp("y", -(2**31))])
    b = Candidate("b", [vp("z", 5)])
    assert pick(a, b) == "b"


def test_pick_latest_start_time_of_highest_priority_victims() -> None:
    a = Candidate("a", [vp("x", 5, "2024-01-01T00:00:00Z"), vp("x2", 1, "2025-01-01T00:00:00Z")])
    b = Candidate("b", [vp("y", 5, "2024-06-01T00:00:00Z"), vp("y2", 1, "2020-01-01T00:00:00Z")])
    assert pick(a, b) == "b"
    # a victim without a start time counts as started "now" (the latest possible)
    c = Candidate("c", [vp("z", 5, None), vp("z2", 1)])
    assert pick(a, b, c) == "c"


def test_pick_first_when_all_tie() -> None:
    assert pick(Candidate("b", [vp("x", 1)]), Candidate("a", [vp("y", 1)])) == "b"
    assert pick() == ""


def test_pick_through_post_filter_latest_start() -> None:
    env = Env(
        [node("n1"), node("n2")],
        [
            bound("old", "n1", "4", 1, start="2024-01-01T00:00:00Z"),
            bound("young", "n2", "4", 1, start="2024-03-01T00:00:00Z"),
        ],
    )
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    assert s == Status(Code.Success)
    assert r == PostFilterResult(NominatingInfo("n2", NominatingMode.Override))
    assert env.exists("old") and not env.exists("young")


def test_pick_through_post_filter_fewest_victims() -> None:
    env = Env(
        [node("n1"), node("n2")],
        [
            bound("a1", "n1", "2", 1),
            bound("a2", "n1", "2", 1),
            bound("b1", "n2", "4", 1),
        ],
    )
    pod = env.add_pending(pending("hi", "4", 100))
    r, s, _ = env.preempt(pod)
    # same highest priority; sum: n1 2*(1+2^31) > n2 1+2^31 -> n2
    assert r == PostFilterResult(NominatingInfo("n2", NominatingMode.Override))
    assert s == Status(Code.Success)


def test_is_eligible_pod_hook_restricts_victims() -> None:
    class OnlyBatch(DefaultPreemption):
        def is_eligible_pod(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
            return victim.pod.labels.get("tier") == "batch"

    ni = node_info(
        make_node("n1"),
        [
            make_pod("svc", priority=1, cpu="2", node_name="n1"),
            make_pod("job", priority=1, cpu="2", node_name="n1", labels={"tier": "batch"}),
        ],
    )
    pl = OnlyBatch()
    pod = make_pod("hi", priority=10)
    assert [pi.pod.name for pi in ni.pods if pl.is_preemption_allowed(ni, pi, pod)] == ["job"]


# --- through the scheduler -------------------------------------------------------------------


def test_scheduler_preempts_then_binds_the_preemptor() -> None:
    from kubesched.config.types import KubeSchedulerConfiguration
    from kubesched.scheduler.factory import new_scheduler
    from kubesched.testing import node_manifest

    clock = VirtualClock(T0)
    mc = MemoryCluster(clock)
    mc.create(node_manifest("n1", cpu="4"))
    mc.create(node_manifest("n2", cpu="4"))
    mc.create(bound("low", "n1", "3", 1))
    mc.create(bound("mid", "n2", "3", 50))
    names = ["PrioritySort", "NodeResourcesFit", "DefaultPreemption", "DefaultBinder"]
    prof = KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            multi_point=PluginSet(enabled=[Plugin(name=n) for n in names], disabled=[Plugin(name="*")])
        ),
    )
    sched = new_scheduler(mc, KubeSchedulerConfiguration(profiles=[prof]), clock=clock, seed=0, record=True)
    sched.start()
    hi = Pod.from_manifest(mc.create(pending("hi", "2", 100)))
    for _ in range(5):
        while sched.schedule_next():
            pass
        clock.advance_to(clock.now() + 2)
    pods = {o["metadata"]["name"]: o for o in mc.list("Pod").items}
    assert sorted(pods) == ["hi", "mid"]
    assert pods["hi"]["spec"]["nodeName"] == "n1"
    notes = [(e["reason"], e["regarding"]["name"], e["note"]) for e in mc.events()]
    assert notes == [
        ("Preempted", "low", f"Preempted by pod {hi.uid} on node n1"),
        ("FailedScheduling", "hi", "0/2 nodes are available: 2 Insufficient cpu."),
        ("Scheduled", "hi", "Successfully assigned default/hi to n1"),
    ]
    first = sched.records["default/hi"][0].to_dict()["postFilter"]
    assert first == {
        "DefaultPreemption": {
            "code": "Success",
            "reasons": [],
            "nominatedNode": "n1",
            "victims": ["default/low"],
        }
    }


# --- property: victims are lower priority, sufficient and each one necessary ----------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(0, 20)), min_size=0, max_size=6),
    st.integers(1, 8),
    st.integers(0, 20),
)
def test_victims_sufficient_and_necessary(existing: list[tuple[int, int]], want: int, prio: int) -> None:
    pods = [
        make_pod(f"e{i}", cpu=str(c), priority=p, node_name="n1", uid=f"u{i}")
        for i, (c, p) in enumerate(existing)
    ]
    ni = node_info(make_node("n1", cpu="8"), pods)
    snap = snapshot_of([ni])
    fwk = Framework(profile(), in_tree_registry(), FrameworkOptions(snapshot_provider=lambda: snap))
    pod = make_pod("hi", cpu=str(want), priority=prio)
    state = CycleState()
    _, s = fwk.run_pre_filter_plugins(state, pod, snap.list())[:2]
    assert s is None
    copy = ni.snapshot()
    victims, n_viol, vs = select_victims_on_node(
        fwk,
        state.clone(),
        pod,
        copy,
        [],
        fwk.plugins["DefaultPreemption"].is_preemption_allowed,  # type: ignore[attr-defined]
        T0,
    )
    lower = [p for p in pods if p.priority < prio]
    if not lower:
        assert vs == Status(Code.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod")
        return
    free_without_lower = 8000 - sum(p.requests.get("cpu", 0) for p in pods if p.priority >= prio)
    if free_without_lower < want * 1000:
        assert vs is not None and vs.code == Code.Unschedulable and victims == []
        return
    assert vs is None and n_viol == 0
    assert all(v.priority < prio for v in victims)
    keys = [(-v.priority, v.start_time or T0) for v in victims]
    assert keys == sorted(keys)
    used = sum(pi.pod.requests.get("cpu", 0) for pi in copy.pods)
    assert used + want * 1000 <= 8000  # the pod fits without the victims
    for v in victims:  # and giving back any single victim breaks the fit
        assert used + v.requests.get("cpu", 0) + want * 1000 > 8000


# --- property: the dry run's shortcuts choose what the plain calls choose --------------------


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(0, 12), st.sampled_from([None, 0, 60, 3600]), st.booleans()),
        min_size=0,
        max_size=7,
    ),
    st.integers(1, 8),
    st.integers(0, 12),
    st.integers(0, 2),
)
def test_select_victims_shortcuts_are_exact(
    existing: list[tuple[int, int, int | None, bool]], want: int, prio: int, allowed: int
) -> None:
    """Default hooks tested inline (``is_eligible=None``), AddPod/RemovePod left out (no plugin
    has extensions here) and ``filter_runner``: the same victims, violation count and status as
    the hooks, extension runs and ``run_filter_plugins_with_nominated_pods`` called per pod."""
    pods = [
        make_pod(
            f"e{i}",
            cpu=str(c),
            priority=p,
            node_name="n1",
            uid=f"u{i}",
            labels={"app": "a"} if labelled else None,
            status=None if start is None else {"startTime": rfc3339(T0 - start)},
        )
        for i, (c, p, start, labelled) in enumerate(existing)
    ]
    ni = node_info(make_node("n1", cpu="8"), pods)
    snap = snapshot_of([ni])
    fwk = Framework(profile(), in_tree_registry(), FrameworkOptions(snapshot_provider=lambda: snap))
    plugin: DefaultPreemption = fwk.plugins["DefaultPreemption"]  # type: ignore[assignment]
    pod = make_pod("hi", cpu=str(want), priority=prio)
    state = CycleState()
    assert fwk.run_pre_filter_plugins(state, pod, snap.list())[1] is None
    pdbs = compile_pdbs([pdb("b", {"app": "a"}, allowed)])

    def view(r: tuple[list[Pod], int, Status | None]) -> tuple[Any, ...]:
        victims, n, s = r
        return [v.key for v in victims], n, None if s is None else (s.code, s.reasons, s.plugin)

    plain = select_victims_on_node(
        fwk, state.clone(), pod, ni.snapshot(), pdbs, plugin.is_preemption_allowed, T0, True,
        fwk.run_filter_plugins_with_nominated_pods,
    )  # fmt: skip
    fast = select_victims_on_node(
        fwk, state.clone(), pod, ni.snapshot(), pdbs, None, T0, fwk.has_pre_filter_extensions(state),
        fwk.filter_runner(state),
    )  # fmt: skip
    assert view(fast) == view(plain)
