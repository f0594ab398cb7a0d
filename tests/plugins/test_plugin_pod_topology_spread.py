"""PodTopologySpread: exact filter verdicts/reasons and scores from
``pkg/scheduler/framework/plugins/podtopologyspread``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.node import ZONE_LABEL
from kubesched.api.pod import Pod
from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins.podtopologyspread.common import default_selector
from kubesched.plugins.podtopologyspread.plugin import (
    PRE_FILTER_STATE_KEY,
    PodTopologySpread,
    PodTopologySpreadArgs,
    update_critical_paths,
)
from kubesched.plugins.podtopologyspread.scoring import PreScoreState, go_round, normalize_scores
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, pod_manifest, snapshot_of

WEB = {"app": "web"}
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]


class Objects:
    """A tiny ``handle.objects`` over lists of dicts keyed by kind."""

    def __init__(self, objs: Mapping[str, list[dict[str, Any]]]) -> None:
        self.objs = objs

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [
            o
            for o in self.objs.get(kind, [])
            if namespace is None or o["metadata"].get("namespace", "default") == namespace
        ]

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        for o in self.list(kind, namespace):
            if o["metadata"]["name"] == name:
                return o
        return None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        for o in self.objs.get("Namespace", []):
            if o["metadata"]["name"] == namespace:
                return dict(o["metadata"].get("labels") or {})
        return {}


def constraint(
    key: str = ZONE_LABEL, max_skew: int = 1, when: str = "DoNotSchedule", **extra: Any
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": WEB},
    }
    c.update(extra)
    return c


def web_pods(node: str, n: int, prefix: str | None = None) -> list[Pod]:
    return [make_pod(f"{prefix or node}-web-{i}", labels=WEB, node_name=node) for i in range(n)]


def incoming(*constraints: dict[str, Any], labels: Mapping[str, str] = WEB, **spec: Any) -> Pod:
    s: dict[str, Any] = {"topologySpreadConstraints": list(constraints)} if constraints else {}
    s.update(spec)
    return make_pod("incoming", labels=labels, spec=s)


def filter_cluster() -> list[NodeInfo]:
    """zone a: n1 (2 web pods), n2 (1); zone b: n3 (1); zone c: n4 tainted (0); n5 without zone."""
    return [
        node_info(make_node("n1", labels={ZONE_LABEL: "a"}), web_pods("n1", 2)),
        node_info(make_node("n2", labels={ZONE_LABEL: "a"}), web_pods("n2", 1)),
        node_info(make_node("n3", labels={ZONE_LABEL: "b"}), web_pods("n3", 1)),
        node_info(make_node("n4", labels={ZONE_LABEL: "c"}, taints=TAINT)),
        node_info(make_node("n5")),
    ]


def run_filter(
    pl: PodTopologySpread, pod: Pod, nodes: list[NodeInfo], state: CycleState | None = None
) -> dict[str, Status | None]:
    if state is None:
        state = CycleState()
        _, s = pl.pre_filter(state, pod, nodes)
        assert s is None
    return {ni.name: pl.filter(state, pod, ni) for ni in nodes}


def plugin(
    nodes: list[NodeInfo], objects: Any = None, args: PodTopologySpreadArgs | None = None
) -> PodTopologySpread:
    return PodTopologySpread(args, FakeHandle(snapshot_of(nodes), objects))  # type: ignore[arg-type]


def verdicts(res: dict[str, Status | None]) -> dict[str, tuple[Code, str] | None]:
    return {n: None if s is None else (s.code, s.message()) for n, s in res.items()}


# --- Filter ----------------------------------------------------------------------------------


def test_filter_taints_ignored_counts_tainted_domain() -> None:
    nodes = filter_cluster()
    res = verdicts(run_filter(plugin(nodes), incoming(constraint()), nodes))
    # counts a=3, b=1, c=0 (tainted node included), min 0
    assert res == {
        "n1": (Code.Unschedulable, NOT_MATCH),
        "n2": (Code.Unschedulable, NOT_MATCH),
        "n3": (Code.Unschedulable, NOT_MATCH),
        "n4": None,
        "n5": (Code.UnschedulableAndUnresolvable, MISSING),
    }


def test_filter_taints_honored_excludes_tainted_domain() -> None:
    nodes = filter_cluster()
    res = verdicts(run_filter(plugin(nodes), incoming(constraint(nodeTaintsPolicy="Honor")), nodes))
    # counts a=3, b=1 (zone c dropped), min 1; n4's own domain counts 0
    assert res == {
        "n1": (Code.Unschedulable, NOT_MATCH),
        "n2": (Code.Unschedulable, NOT_MATCH),
        "n3": None,
        "n4": None,
        "n5": (Code.UnschedulableAndUnresolvable, MISSING),
    }


def test_filter_min_domains_above_domain_count_makes_min_zero() -> None:
    nodes = filter_cluster()
    res = verdicts(
        run_filter(plugin(nodes), incoming(constraint(nodeTaintsPolicy="Honor", minDomains=3)), nodes)
    )
    # two eligible domains < 3 -> global minimum 0: b becomes 1 + 1 - 0 = 2 > 1
    assert res["n3"] == (Code.Unschedulable, NOT_MATCH)
    assert res["n4"] is None


def test_filter_node_affinity_policy_honor_and_ignore() -> None:
    nodes = filter_cluster()
    sel = {"nodeSelector": {ZONE_LABEL: "a"}}
    # Honor (default): only zone a nodes count -> min 3: a = 3 + 1 - 3 = 1 fits
    res = verdicts(run_filter(plugin(nodes), incoming(constraint(), **sel), nodes))
    assert res["n1"] is None and res["n2"] is None
    # Ignore: all zones count -> min 0
    res = verdicts(run_filter(plugin(nodes), incoming(constraint(nodeAffinityPolicy="Ignore"), **sel), nodes))
    assert res["n1"] == (Code.Unschedulable, NOT_MATCH)


def dying() -> Pod:
    """A terminating matching pod (not counted)."""
    m = pod_manifest("dying", labels=WEB, node_name="n1")
    m["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Pod.from_manifest(m)


def test_filter_self_match_and_other_namespace_and_terminating_pods() -> None:
    nodes = [
        node_info(
            make_node("n1", labels={ZONE_LABEL: "a"}),
            [make_pod("other-ns", "kube-system", labels=WEB, node_name="n1"), dying(), *web_pods("n1", 1)],
        ),
        node_info(make_node("n2", labels={ZONE_LABEL: "b"})),
    ]
    # the incoming pod does not match its own selector -> no self match: a = 1 + 0 - 0 = 1 fits
    res = verdicts(run_filter(plugin(nodes), incoming(constraint(), labels={"app": "x"}), nodes))
    assert res == {"n1": None, "n2": None}
    res = verdicts(run_filter(plugin(nodes), incoming(constraint()), nodes))
    assert res == {"n1": (Code.Unschedulable, NOT_MATCH), "n2": None}


def test_filter_match_label_keys_narrow_the_selector() -> None:
    nodes = [
        node_info(
            make_node("n1", labels={ZONE_LABEL: "a"}),
            [make_pod(f"v1-{i}", labels={"app": "web", "rev": "1"}, node_name="n1") for i in range(3)],
        ),
        node_info(
            make_node("n2", labels={ZONE_LABEL: "b"}),
            [make_pod("v2", labels={"app": "web", "rev": "2"}, node_name="n2")],
        ),
    ]
    pod = incoming(constraint(matchLabelKeys=["rev"]), labels={"app": "web", "rev": "2"})
    # only rev=2 pods count: a=0, b=1 -> n2: 1 + 1 - 0 = 2 > 1
    assert verdicts(run_filter(plugin(nodes), pod, nodes)) == {
        "n1": None,
        "n2": (Code.Unschedulable, NOT_MATCH),
    }


def test_pre_filter_skips_without_hard_constraints() -> None:
    nodes = filter_cluster()
    pl = plugin(nodes)
    state = CycleState()
    assert pl.pre_filter(state, incoming(constraint(when="ScheduleAnyway")), nodes) == (
        None,
        Status(Code.Skip),
    )
    assert state.get(PRE_FILTER_STATE_KEY) is None
    # no constraints and no Service/controller: system defaults have an empty selector
    assert pl.pre_filter(state, incoming(), nodes) == (None, Status(Code.Skip))


def test_add_pod_remove_pod_change_the_verdict_on_a_clone_only() -> None:
    nodes = filter_cluster()
    pl = plugin(nodes)
    pod = incoming(constraint())
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    assert pl.filter(state, pod, nodes[2]) == Status(Code.Unschedulable, NOT_MATCH)
    clone = state.clone()
    new = PodInfo(make_pod("added", labels=WEB, node_name="n4"))
    assert pl.add_pod(clone, pod, new, nodes[3]) is None
    # zone c now 1 -> min 1: n3 (b) = 1 + 1 - 1 = 1 fits in the clone
    assert pl.filter(clone, pod, nodes[2]) is None
    assert pl.filter(state, pod, nodes[2]) == Status(Code.Unschedulable, NOT_MATCH)
    assert pl.remove_pod(clone, pod, new, nodes[3]) is None
    assert pl.filter(clone, pod, nodes[2]) == Status(Code.Unschedulable, NOT_MATCH)
    # a pod in another namespace is ignored
    other = PodInfo(make_pod("x", "other", labels=WEB, node_name="n4"))
    pl.add_pod(clone, pod, other, nodes[3])
    assert pl.filter(clone, pod, nodes[2]) == Status(Code.Unschedulable, NOT_MATCH)


def test_critical_paths_track_two_smallest() -> None:
    p: list[list[Any]] = [["", 2**31 - 1], ["", 2**31 - 1]]
    for v, n in (("a", 3), ("b", 1), ("c", 0)):
        update_critical_paths(p, v, n)
    assert p == [["c", 0], ["b", 1]]
    update_critical_paths(p, "c", 2)
    assert p == [["b", 1], ["c", 2]]


def test_filter_without_pre_filter_state_is_an_error() -> None:
    nodes = filter_cluster()
    s = plugin(nodes).filter(CycleState(), incoming(constraint()), nodes[0])
    assert s is not None and s.code == Code.Error
    assert s.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# --- Score -----------------------------------------------------------------------------------


def score_cluster() -> list[NodeInfo]:
    """zone a: za-1 (2 web), za-2 (1); zone b: zb-1 (1); zone c: zc-1 (1); nz: no zone label."""
    return [
        node_info(make_node("za-1", labels={ZONE_LABEL: "a"}), web_pods("za-1", 2)),
        node_info(make_node("za-2", labels={ZONE_LABEL: "a"}), web_pods("za-2", 1)),
        node_info(make_node("zb-1", labels={ZONE_LABEL: "b"}), web_pods("zb-1", 1)),
        node_info(make_node("zc-1", labels={ZONE_LABEL: "c"}), web_pods("zc-1", 1)),
        node_info(make_node("nz")),
    ]


def run_score(
    pl: PodTopologySpread, pod: Pod, nodes: list[NodeInfo]
) -> tuple[dict[str, int], dict[str, int]]:
    state = CycleState()
    assert pl.pre_score(state, pod, nodes) is None
    raw = []
    for ni in nodes:
        sc, s = pl.score(state, pod, ni)
        assert s is None
        raw.append(NodeScore(ni.name, sc))
    before = {ns.name: ns.score for ns in raw}
    ext = pl.score_extensions()
    assert ext is not None and ext.normalize_score(state, pod, raw) is None
    return before, {ns.name: ns.score for ns in raw}


def test_scores_three_zones_raw_and_normalized() -> None:
    nodes = score_cluster()
    pod = incoming(
        constraint(when="ScheduleAnyway"), constraint("kubernetes.io/hostname", when="ScheduleAnyway")
    )
    raw, norm = run_score(plugin(nodes), pod, nodes)
    # zone weight ln(3+2), hostname weight ln(4+2) (nz is ignored: it lacks the zone key)
    # za-1: 3*ln5 + 2*ln6 = 8.41 -> 8; za-2: 3*ln5 + ln6 = 6.62 -> 7; zb-1/zc-1: ln5 + ln6 = 3.40 -> 3
    assert raw == {"za-1": 8, "za-2": 7, "zb-1": 3, "zc-1": 3, "nz": 0}
    # 100 * (8 + 3 - s) // 8; ignored -> 0
    assert norm == {"za-1": 37, "za-2": 50, "zb-1": 100, "zc-1": 100, "nz": 0}


def test_scores_use_only_feasible_nodes_for_domains_but_count_all_nodes() -> None:
    nodes = score_cluster()
    pod = incoming(constraint(when="ScheduleAnyway", max_skew=2))
    pl = plugin(nodes)
    state = CycleState()
    feasible = [nodes[2], nodes[3]]  # zones b and c only
    assert pl.pre_score(state, pod, feasible) is None
    # weight ln(2+2); counts from all nodes: b=1, c=1; + (maxSkew - 1) = 1 -> 1.386 + 1 = 2.386 -> 2
    assert [pl.score(state, pod, ni)[0] for ni in feasible] == [2, 2]


def test_pre_score_skips_without_soft_constraints_or_nodes() -> None:
    nodes = score_cluster()
    assert plugin(nodes).pre_score(CycleState(), incoming(constraint()), nodes) == Status(Code.Skip)
    assert plugin([]).pre_score(CycleState(), incoming(constraint(when="ScheduleAnyway")), []) == Status(
        Code.Skip
    )


def test_system_default_constraints_from_a_service() -> None:
    nodes = score_cluster()
    objects = Objects(
        {
            "Service": [
                {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": WEB}},
                {"metadata": {"name": "db", "namespace": "default"}, "spec": {"selector": {"app": "db"}}},
                {"metadata": {"name": "web", "namespace": "other"}, "spec": {"selector": {"tier": "x"}}},
            ]
        }
    )
    pl = plugin(nodes, objects)
    pod = incoming()  # labels app=web, no constraints
    assert pl.pre_filter(CycleState(), pod, nodes) == (None, Status(Code.Skip))
    raw, norm = run_score(pl, pod, nodes)
    # hostname maxSkew 3 (weight ln7, 5 nodes), zone maxSkew 5 (weight ln6: a, b, c and "" of nz);
    # nodes without a zone are not ignored under system defaulting
    # za-1: 2*ln7 + 2 + 3*ln6 + 4 = 15.27 -> 15; za-2: 13.32 -> 13; zb-1/zc-1: 9.74 -> 10; nz: 2
    assert raw == {"za-1": 15, "za-2": 13, "zb-1": 10, "zc-1": 10, "nz": 2}
    # 100 * (15 + 2 - s) // 15
    assert norm == {"za-1": 13, "za-2": 26, "zb-1": 46, "zc-1": 46, "nz": 100}


def test_system_defaults_skip_without_service() -> None:
    nodes = score_cluster()
    assert plugin(nodes, Objects({})).pre_score(CycleState(), incoming(), nodes) == Status(Code.Skip)


def test_default_selector_from_services_and_controllers() -> None:
    objects = Objects(
        {
            "Service": [
                {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": WEB}},
                {"metadata": {"name": "nil", "namespace": "default"}, "spec": {}},
            ],
            "ReplicaSet": [
                {
                    "metadata": {"name": "rs", "namespace": "default"},
                    "spec": {
                        "selector": {
                            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]
                        }
                    },
                }
            ],
            "ReplicationController": [
                {"metadata": {"name": "rc", "namespace": "default"}, "spec": {"selector": {"rc": "1"}}}
            ],
        }
    )
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
    pod = Pod.from_manifest(
        {
            "metadata": {
                "name": "p",
                "namespace": "default",
                "labels": {**WEB, "tier": "fe"},
                "ownerReferences": [owner],
            },
            "spec": {"containers": [{"name": "c"}]},
        }
    )
    sel = default_selector(pod, objects)
    assert sel.matches({"app": "web", "tier": "fe"}) and sel.matches({"app": "web", "tier": "be"})
    assert not sel.matches({"app": "web", "tier": "db"}) and not sel.matches({"tier": "fe"})
    pod.raw["metadata"]["ownerReferences"] = [
        {**owner, "apiVersion": "v1", "kind": "ReplicationController", "name": "rc"}
    ]
    sel = default_selector(pod, objects)
    assert sel.matches({"app": "web", "rc": "1"}) and not sel.matches({"app": "web"})
    pod.raw["metadata"]["ownerReferences"] = [{**owner, "apiVersion": "apps/v1beta2"}]
    assert default_selector(pod, objects).matches({"app": "web"})  # unsupported group/version: services only


def test_list_defaulting_uses_configured_constraints() -> None:
    nodes = filter_cluster()
    args = decode_args(
        PodTopologySpreadArgs,
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
        "args",
    )
    objects = Objects(
        {"Service": [{"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": WEB}}]}
    )
    res = verdicts(run_filter(plugin(nodes, objects, args), incoming(), nodes))
    assert res["n3"] == (Code.Unschedulable, NOT_MATCH) and res["n4"] is None


def test_go_round_half_away_from_zero() -> None:
    assert [go_round(x) for x in (0.5, 1.5, 2.5, 2.4999, -2.5, 0.0)] == [1, 2, 3, 2, -3, 0]


# --- args ------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    a = decode_args(PodTopologySpreadArgs, None, "p")
    assert a.defaulting_type == "System" and a.default_constraints == []


@pytest.mark.parametrize(
    ("raw", "path", "msg"),
    [
        (
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            "args.defaultingType",
            'Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {"defaultingType": "Foo"},
            "args.defaultingType",
            'Unsupported value: "Foo": supported values: "System", "List"',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "k",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "args.defaultConstraints[0].labelSelector",
            "Forbidden: constraint must not define a selector, as they deduced for each pod",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "args.defaultConstraints[0].maxSkew",
            "Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "Maybe"}],
            },
            "args.defaultConstraints[0].whenUnsatisfiable",
            'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            },
            "args.defaultConstraints[0].topologyKey",
            "Required value: can not be empty",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "args.defaultConstraints",
            '[1]: Duplicate value: "{k, DoNotSchedule}"',
        ),
    ],
)
def test_args_validation(raw: dict[str, Any], path: str, msg: str) -> None:
    with pytest.raises(ConfigError) as ei:
        decode_args(PodTopologySpreadArgs, raw, "args")
    assert str(ei.value) == f"{path}: {msg}"


# --- queueing hints --------------------------------------------------------------------------


def test_events_and_hints() -> None:
    pl = plugin([])
    evs = pl.events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in evs] == [
        (
            EventResource.Pod,
            ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration | ActionType.Delete,
        ),
        (
            EventResource.Node,
            ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint,
        ),
    ]
    pod = incoming(constraint())
    assigned = make_pod("a", labels=WEB, node_name="n1")
    assert pl.is_schedulable_after_pod_change(pod, None, assigned) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_change(pod, assigned, None) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_change(pod, None, make_pod("u", labels=WEB)) == QueueingHint.QueueSkip
    assert (
        pl.is_schedulable_after_pod_change(pod, None, make_pod("o", "other", labels=WEB, node_name="n1"))
        == QueueingHint.QueueSkip
    )
    assert (
        pl.is_schedulable_after_pod_change(pod, None, make_pod("x", labels={"app": "x"}, node_name="n1"))
        == QueueingHint.QueueSkip
    )
    relabelled = make_pod("a", labels={"app": "x"}, node_name="n1")
    assert pl.is_schedulable_after_pod_change(pod, assigned, relabelled) == QueueingHint.Queue
    zoned = make_node("n", labels={ZONE_LABEL: "a"})
    bare = make_node("n")
    assert pl.is_schedulable_after_node_change(pod, None, zoned) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(pod, None, bare) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(pod, bare, zoned) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(pod, zoned, zoned) == QueueingHint.QueueSkip
    tainted = make_node("n", labels={ZONE_LABEL: "a"}, taints=TAINT)
    assert pl.is_schedulable_after_node_change(pod, zoned, tainted) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(pod, zoned, None) == QueueingHint.Queue


# --- properties ------------------------------------------------------------------------------


@given(st.dictionaries(st.text(min_size=1, max_size=3), st.integers(0, 50), min_size=1))
def test_critical_paths_built_from_counts_hold_the_minimum(counts: dict[str, int]) -> None:
    p: list[list[Any]] = [["", 2**31 - 1], ["", 2**31 - 1]]
    for v, n in counts.items():
        update_critical_paths(p, v, n)
    assert p[0][1] == min(counts.values())
    if len(counts) > 1:
        assert p[1][1] == sorted(counts.values())[1]


@given(st.lists(st.integers(0, 500), min_size=1, max_size=20))
def test_normalized_scores_in_range_and_lowest_gets_100(raw: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    normalize_scores(PreScoreState([]), scores)
    assert all(0 <= ns.score <= 100 for ns in scores)
    assert scores[raw.index(min(raw))].score == 100
