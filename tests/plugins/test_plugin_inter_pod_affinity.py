"""InterPodAffinity: exact filter verdicts/reasons and scores from
``pkg/scheduler/framework/plugins/interpodaffinity``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.node import HOSTNAME_LABEL, ZONE_LABEL
from kubesched.api.pod import Pod
from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity, InterPodAffinityArgs
from kubesched.plugins.interpodaffinity.scoring import PreScoreState, normalize_scores
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, snapshot_of

WEB = {"app": "web"}
DB = {"app": "db"}
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"


class Objects:
    """``handle.objects`` with only Namespaces."""

    def __init__(self, namespaces: Mapping[str, Mapping[str, str]]) -> None:
        self.ns = namespaces

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        if kind != "Namespace":
            return []
        return [{"metadata": {"name": n, "labels": dict(lab)}} for n, lab in self.ns.items()]

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return dict(self.ns.get(namespace, {}))


def term(labels: Mapping[str, str], key: str = ZONE_LABEL, **extra: Any) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": key}
    t.update(extra)
    return t


def affinity(
    required: list[dict[str, Any]] | None = None,
    anti: list[dict[str, Any]] | None = None,
    preferred: list[tuple[int, dict[str, Any]]] | None = None,
    preferred_anti: list[tuple[int, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    a: dict[str, Any] = {"podAffinity": {}, "podAntiAffinity": {}}
    if required:
        a["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = required
    if preferred:
        a["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "podAffinityTerm": t} for w, t in preferred
        ]
    if anti:
        a["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = anti
    if preferred_anti:
        a["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "podAffinityTerm": t} for w, t in preferred_anti
        ]
    return {"affinity": a}


def incoming(labels: Mapping[str, str] = WEB, namespace: str = "default", **aff: Any) -> Pod:
    return make_pod("incoming", namespace, labels=labels, spec=affinity(**aff) if aff else None)


def cluster(pods: Mapping[str, list[Pod]]) -> list[NodeInfo]:
    """n1, n2 in zone a; n3 in zone b; n4 in zone c; n5 without zone."""
    zones = {"n1": "a", "n2": "a", "n3": "b", "n4": "c", "n5": None}
    return [
        node_info(make_node(n, labels={ZONE_LABEL: z} if z else {}), pods.get(n, []))
        for n, z in zones.items()
    ]


def plugin(nodes: list[NodeInfo], objects: Any = None, **args: Any) -> InterPodAffinity:
    return InterPodAffinity(InterPodAffinityArgs(**args), FakeHandle(snapshot_of(nodes), objects))  # type: ignore[arg-type]


def run_filter(pl: InterPodAffinity, pod: Pod, nodes: list[NodeInfo]) -> dict[str, tuple[Code, str] | None]:
    state = CycleState()
    _, s = pl.pre_filter(state, pod, nodes)
    assert s is None
    return verdicts(pl, state, pod, nodes)


def verdicts(
    pl: InterPodAffinity, state: CycleState, pod: Pod, nodes: list[NodeInfo]
) -> dict[str, tuple[Code, str] | None]:
    out: dict[str, tuple[Code, str] | None] = {}
    for ni in nodes:
        s = pl.filter(state, pod, ni)
        out[ni.name] = None if s is None else (s.code, s.message())
    return out


def p(name: str, node: str, labels: Mapping[str, str], namespace: str = "default", **aff: Any) -> Pod:
    return make_pod(name, namespace, labels=labels, node_name=node, spec=affinity(**aff) if aff else None)


U = (Code.UnschedulableAndUnresolvable, AFFINITY)


# --- Filter ----------------------------------------------------------------------------------


def test_required_affinity_only_in_the_matching_zone() -> None:
    nodes = cluster({"n3": [p("db", "n3", DB)], "n1": [p("web", "n1", WEB)]})
    res = run_filter(plugin(nodes), incoming(required=[term(DB)]), nodes)
    assert res == {"n1": U, "n2": U, "n3": None, "n4": U, "n5": U}


def test_first_pod_of_a_self_affine_group() -> None:
    nodes = cluster({"n1": [p("db", "n1", DB)]})
    # no pod matches app=web anywhere and the pod matches its own term: any node with the key
    res = run_filter(plugin(nodes), incoming(required=[term(WEB)]), nodes)
    assert res == {"n1": None, "n2": None, "n3": None, "n4": None, "n5": U}
    # the pod does not match its own term: nowhere
    res = run_filter(plugin(nodes), incoming(labels={"app": "x"}, required=[term(WEB)]), nodes)
    assert res == {"n1": U, "n2": U, "n3": U, "n4": U, "n5": U}


def test_anti_affinity_spreads_one_per_node() -> None:
    nodes = cluster({"n1": [p("w1", "n1", WEB)], "n2": [p("w2", "n2", WEB)], "n3": [p("d", "n3", DB)]})
    res = run_filter(plugin(nodes), incoming(anti=[term(WEB, HOSTNAME_LABEL)]), nodes)
    assert res == {
        "n1": (Code.Unschedulable, ANTI),
        "n2": (Code.Unschedulable, ANTI),
        "n3": None,
        "n4": None,
        "n5": None,
    }


def test_existing_pods_anti_affinity() -> None:
    guard = p("guard", "n1", DB, anti=[term(WEB)])
    nodes = cluster({"n1": [guard]})
    pl = plugin(nodes)
    res = run_filter(pl, incoming(), nodes)
    assert res == {
        "n1": (Code.Unschedulable, EXISTING),
        "n2": (Code.Unschedulable, EXISTING),
        "n3": None,
        "n4": None,
        "n5": None,
    }
    # an incoming pod the guard's term does not match: nothing to check
    assert pl.pre_filter(CycleState(), incoming(labels={"app": "x"}), nodes) == (None, Status(Code.Skip))


def test_filter_order_affinity_before_anti_affinity() -> None:
    nodes = cluster({"n3": [p("db", "n3", DB), p("w", "n3", WEB)]})
    res = run_filter(plugin(nodes), incoming(required=[term(DB)], anti=[term(WEB, HOSTNAME_LABEL)]), nodes)
    assert res == {"n1": U, "n2": U, "n3": (Code.Unschedulable, ANTI), "n4": U, "n5": U}


def test_namespace_selector_resolved_through_namespaces() -> None:
    objects = Objects({"default": {}, "blue": {"team": "blue"}, "red": {"team": "red"}})
    nodes = cluster({"n3": [p("db", "n3", DB, "blue")], "n1": [p("db", "n1", DB, "red")]})
    pl = plugin(nodes, objects)
    res = run_filter(
        pl, incoming(required=[term(DB, namespaceSelector={"matchLabels": {"team": "blue"}})]), nodes
    )
    assert res == {"n1": U, "n2": U, "n3": None, "n4": U, "n5": U}
    # empty selector: every namespace
    res = run_filter(pl, incoming(required=[term(DB, namespaceSelector={})]), nodes)
    assert res == {"n1": None, "n2": None, "n3": None, "n4": U, "n5": U}
    # no namespaces and no selector: the pod's own namespace (no db there)
    res = run_filter(pl, incoming(labels={"app": "x"}, required=[term(DB)]), nodes)
    assert res == {"n1": U, "n2": U, "n3": U, "n4": U, "n5": U}


def test_existing_anti_affinity_uses_incoming_namespace_labels() -> None:
    objects = Objects({"default": {"env": "prod"}, "other": {}})
    guard = p(
        "guard", "n1", DB, "other", anti=[term(WEB, namespaceSelector={"matchLabels": {"env": "prod"}})]
    )
    nodes = cluster({"n1": [guard]})
    res = run_filter(plugin(nodes, objects), incoming(), nodes)
    assert res["n1"] == (Code.Unschedulable, EXISTING) and res["n3"] is None


def test_add_pod_remove_pod_change_the_verdict_on_a_clone_only() -> None:
    nodes = cluster({"n1": [p("w1", "n1", WEB)]})
    pl = plugin(nodes)
    pod = incoming(anti=[term(WEB, HOSTNAME_LABEL)])
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    clone = state.clone()
    ext = pl.pre_filter_extensions()
    assert ext is not None
    assert ext.remove_pod(clone, pod, nodes[0].pods[0], nodes[0]) is None
    assert pl.filter(clone, pod, nodes[0]) is None
    assert pl.filter(state, pod, nodes[0]) == Status(Code.Unschedulable, ANTI)
    added = PodInfo(p("w3", "n3", WEB))
    assert ext.add_pod(clone, pod, added, nodes[2]) is None
    assert pl.filter(clone, pod, nodes[2]) == Status(Code.Unschedulable, ANTI)
    assert pl.filter(state, pod, nodes[2]) is None
    # adding a pod with anti-affinity against the incoming pod blocks its whole zone
    guard = PodInfo(p("guard", "n4", DB, anti=[term(WEB)]))
    ext.add_pod(clone, pod, guard, nodes[3])
    assert pl.filter(clone, pod, nodes[3]) == Status(Code.Unschedulable, EXISTING)


def test_add_pod_satisfies_required_affinity() -> None:
    nodes = cluster({"n1": [p("db", "n1", DB)]})
    pl = plugin(nodes)
    pod = incoming(labels={"app": "x"}, required=[term(DB)])
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    assert pl.filter(state, pod, nodes[2]) == Status(Code.UnschedulableAndUnresolvable, AFFINITY)
    clone = state.clone()
    pl.add_pod(clone, pod, PodInfo(p("db2", "n3", DB)), nodes[2])
    assert pl.filter(clone, pod, nodes[2]) is None
    pl.remove_pod(clone, pod, PodInfo(p("db2", "n3", DB)), nodes[2])
    assert pl.filter(clone, pod, nodes[2]) == Status(Code.UnschedulableAndUnresolvable, AFFINITY)


def test_pre_filter_skip_without_terms() -> None:
    nodes = cluster({"n1": [p("w", "n1", WEB)]})
    assert plugin(nodes).pre_filter(CycleState(), incoming(), nodes) == (None, Status(Code.Skip))


# --- Score -----------------------------------------------------------------------------------


def run_score(pl: InterPodAffinity, pod: Pod, nodes: list[NodeInfo]) -> tuple[dict[str, int], dict[str, int]]:
    state = CycleState()
    assert pl.pre_score(state, pod, nodes) is None
    scores = [NodeScore(ni.name, pl.score(state, pod, ni)[0]) for ni in nodes]
    raw = {ns.name: ns.score for ns in scores}
    assert pl.normalize_score(state, pod, scores) is None
    return raw, {ns.name: ns.score for ns in scores}


def test_preferred_terms_with_negative_scores_normalized() -> None:
    nodes = cluster({"n1": [p("db", "n1", DB)], "n2": [p("w2", "n2", WEB)], "n3": [p("w3", "n3", WEB)]})
    pod = incoming(
        labels={"app": "x"}, preferred=[(10, term(DB))], preferred_anti=[(30, term(WEB, HOSTNAME_LABEL))]
    )
    raw, norm = run_score(plugin(nodes), pod, nodes)
    # zone a +10 (db on n1); hostname n2 -30, n3 -30
    assert raw == {"n1": 10, "n2": -20, "n3": -30, "n4": 0, "n5": 0}
    # int(100 * ((s + 30) / 40))
    assert norm == {"n1": 100, "n2": 25, "n3": 0, "n4": 75, "n5": 75}


def test_existing_pods_terms_score_the_incoming_pod() -> None:
    nodes = cluster(
        {
            "n1": [p("a", "n1", DB, required=[term(WEB)])],  # hard affinity: zone a + weight
            "n3": [p("b", "n3", DB, preferred_anti=[(5, term(WEB))])],  # zone b -5
            "n4": [p("c", "n4", DB, preferred=[(7, term(WEB))])],  # zone c +7
        }
    )
    raw, norm = run_score(plugin(nodes), incoming(), nodes)
    assert raw == {"n1": 1, "n2": 1, "n3": -5, "n4": 7, "n5": 0}
    # int(100 * ((s + 5) / 12)): 6/12 -> 50, 0, 12/12 -> 100, 5/12 -> 41
    assert norm == {"n1": 50, "n2": 50, "n3": 0, "n4": 100, "n5": 41}
    raw, _ = run_score(plugin(nodes, hard_pod_affinity_weight=10), incoming(), nodes)
    assert raw == {"n1": 10, "n2": 10, "n3": -5, "n4": 7, "n5": 0}


def test_pre_score_skips() -> None:
    nodes = cluster({"n1": [p("a", "n1", DB, required=[term(WEB)])]})
    assert plugin(nodes, hard_pod_affinity_weight=0).pre_score(CycleState(), incoming(), nodes) == Status(
        Code.Skip
    )
    assert plugin(nodes, ignore_preferred_terms_of_existing_pods=True).pre_score(
        CycleState(), incoming(), nodes
    ) == Status(Code.Skip)
    assert plugin(nodes).pre_score(CycleState(), incoming(labels={"app": "x"}), nodes) == Status(Code.Skip)


def test_pre_score_of_an_unparsable_preferred_term_is_an_error() -> None:
    """A profile scoring with InterPodAffinity without its PreFilter reaches PreScore with a pod
    whose preferred term cannot be converted: Error, as ``scoring.go: PreScore`` returns it."""
    nodes = cluster({"n1": [p("a", "n1", WEB)]})
    bad = make_pod(
        "incoming",
        labels={"app": "web"},
        spec={
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 5,
                            "podAffinityTerm": {
                                "topologyKey": ZONE_LABEL,
                                "labelSelector": {"matchLabels": {"app": "{{.bad}}"}},
                            },
                        }
                    ]
                }
            }
        },
    )
    s = plugin(nodes).pre_score(CycleState(), bad, nodes)
    assert s is not None and s.code == Code.Error
    assert s.message() == (
        'failed to parse pod: preferredAntiAffinityTerms: values[0][app]: Invalid value: "{{.bad}}": a valid label '
        "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
    # with ignorePreferredTermsOfExistingPods a pod with preferred terms is still scored, and still fails
    s = plugin(nodes, ignore_preferred_terms_of_existing_pods=True).pre_score(CycleState(), bad, nodes)
    assert s is not None and s.code == Code.Error


def test_normalize_divides_before_multiplying() -> None:
    s = PreScoreState((), (), {}, {"k": {"v": 1}})
    scores = [NodeScore("a", 0), NodeScore("b", 29), NodeScore("c", 100)]
    normalize_scores(s, scores)
    # 100 * (29 / 100) = 28.999999999999996 -> 28, as upstream's float64 expression
    assert [ns.score for ns in scores] == [0, 28, 100]
    same = [NodeScore("a", 4), NodeScore("b", 4)]
    normalize_scores(s, same)
    assert [ns.score for ns in same] == [0, 0]


# --- args and hints --------------------------------------------------------------------------


def test_args() -> None:
    a = decode_args(InterPodAffinityArgs, None, "args")
    assert (a.hard_pod_affinity_weight, a.ignore_preferred_terms_of_existing_pods) == (1, False)
    assert (
        decode_args(InterPodAffinityArgs, {"hardPodAffinityWeight": 0}, "args").hard_pod_affinity_weight == 0
    )
    with pytest.raises(ConfigError) as ei:
        decode_args(InterPodAffinityArgs, {"hardPodAffinityWeight": 101}, "args")
    assert str(ei.value) == "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]"


def test_events_and_hints() -> None:
    pl = plugin([])
    assert [(e.event.resource, e.event.action_type) for e in pl.events_to_register()] == [
        (EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    ]
    pod = incoming(required=[term(DB)], anti=[term(WEB, HOSTNAME_LABEL)])
    db = p("db", "n1", DB)
    web = p("w", "n1", WEB)
    assert pl.is_schedulable_after_pod_change(pod, None, db) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_change(pod, None, web) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pod_change(pod, None, make_pod("u", labels=DB)) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pod_change(pod, web, None) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_change(pod, db, None) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pod_change(pod, web, p("w", "n1", {"app": "y"})) == QueueingHint.Queue
    guard = p("g", "n1", DB, anti=[term(WEB)])
    assert pl.is_schedulable_after_pod_change(incoming(), guard, None) == QueueingHint.Queue
    zoned = make_node("n", labels={ZONE_LABEL: "a"})
    bare = make_node("n")
    assert pl.is_schedulable_after_node_change(pod, None, zoned) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(pod, bare, zoned) == QueueingHint.Queue
    assert (
        pl.is_schedulable_after_node_change(incoming(required=[term(DB)]), zoned, zoned)
        == QueueingHint.QueueSkip
    )


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=20))
def test_normalized_scores_span_0_to_100(raw: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    normalize_scores(PreScoreState((), (), {}, {"k": {"v": 1}}), scores)
    assert all(0 <= ns.score <= 100 for ns in scores)
    assert scores[raw.index(min(raw))].score == 0
    if max(raw) > min(raw):
        assert scores[raw.index(max(raw))].score == 100
