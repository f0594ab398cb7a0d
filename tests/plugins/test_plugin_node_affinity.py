"""NodeAffinity (``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``), its args, the
required-node-affinity matcher and the
default NormalizeScore (``pkg/scheduler/framework/plugins/helper/normalize_score.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.required_node_affinity import get_required_node_affinity
from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.results import NodeScore, PreFilterResult
from kubesched.framework.status import Code
from kubesched.plugins.helper.normalize_score import default_normalize_score
from kubesched.plugins.nodeaffinity.node_affinity import NodeAffinity, NodeAffinityArgs
from kubesched.testing import make_node, make_pod, node_info

ARGS_PATH = "profiles[0].pluginConfig[0].args"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def apod(
    node_selector: dict[str, str] | None = None,
    required: list[dict[str, Any]] | None = None,
    preferred: list[dict[str, Any]] | None = None,
    name: str = "p",
) -> Any:
    spec: dict[str, Any] = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    na: dict[str, Any] = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return make_pod(name, spec=spec)


def plugin(added: dict[str, Any] | None = None) -> NodeAffinity:
    args = decode_args(NodeAffinityArgs, {"addedAffinity": added} if added is not None else None, ARGS_PATH)
    return NodeAffinity(args)


def run_filter(pl: NodeAffinity, p: Any, n: Any) -> Any:
    state = CycleState()
    _, s = pl.pre_filter(state, p, [])
    if s is not None and s.code == Code.Skip:
        return None
    assert s is None
    return pl.filter(state, p, node_info(n))


# --- identity / args -------------------------------------------------------------------------


def test_identity() -> None:
    assert NodeAffinity().name() == "NodeAffinity"
    assert NodeAffinity.Args is NodeAffinityArgs
    assert NodeAffinity().args == NodeAffinityArgs()


def test_args_decode_camel_case() -> None:
    pl = plugin(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "a")]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchFields": [name_in("n1")]}}
            ],
        }
    )
    assert pl.added_node_selector is not None
    assert pl.added_pref_sched_terms is not None and pl.added_pref_sched_terms[0].weight == 5


@pytest.mark.parametrize(
    ("added", "path", "msg"),
    [
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "Foo", "a")]}]
                }
            },
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
            'Unsupported value: "Foo"',
        ),
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In")]}]
                }
            },
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
            "Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expr("n", "Gt", "x")]}]
                }
            },
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
            "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["a"]}]
                        },
                    }
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].key",
            'Invalid value: "metadata.labels": not a valid field selector key',
        ),
        (
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchFields": [name_in("a", "b")]}}
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].values",
            'Invalid value: []string{"a", "b"}: must have one element',
        ),
        (
            {"requiredDuringSchedulingIgnoredDuringExecution": {"terms": []}},
            "requiredDuringSchedulingIgnoredDuringExecution.terms",
            'unknown field "terms"',
        ),
    ],
)
def test_args_validation(added: dict[str, Any], path: str, msg: str) -> None:
    with pytest.raises(ConfigError) as ei:
        plugin(added)
    assert ei.value.path == f"{ARGS_PATH}.addedAffinity.{path}"
    assert ei.value.message == msg


# --- PreFilter -------------------------------------------------------------------------------


def test_prefilter_skip_without_any_constraint() -> None:
    state = CycleState()
    res, s = NodeAffinity().pre_filter(state, apod(), [])
    assert res is None and s is not None and s.code == Code.Skip
    assert state.get("PreFilterNodeAffinity") is None


def test_prefilter_skip_with_only_preferred() -> None:
    p = apod(preferred=[{"weight": 1, "preference": {"matchExpressions": [expr("a", "Exists")]}}])
    pl = plugin(
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [expr("a", "Exists")]}}
            ]
        }
    )
    _, s = pl.pre_filter(CycleState(), p, [])
    assert s is not None and s.code == Code.Skip


def test_prefilter_no_skip_with_added_required() -> None:
    pl = plugin(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("a", "Exists")]}]
            }
        }
    )
    state = CycleState()
    assert pl.pre_filter(state, apod(), []) == (None, None)
    assert state.get("PreFilterNodeAffinity") is not None


def test_prefilter_node_selector_only() -> None:
    assert NodeAffinity().pre_filter(CycleState(), apod({"zone": "a"}), []) == (None, None)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ([{"matchExpressions": [expr("zone", "In", "a")]}], None),
        ([{"matchFields": [name_in("n1")]}], {"n1"}),
        ([{"matchFields": [name_in("n1")]}, {"matchFields": [name_in("n2")]}], {"n1", "n2"}),
        ([{"matchFields": [name_in("n1", "n2"), name_in("n2", "n3")]}], {"n2"}),
        ([{"matchFields": [name_in("n1")], "matchExpressions": [expr("zone", "In", "a")]}], {"n1"}),
        # one term without a name pin -> every node is possible (terms are ORed)
        ([{"matchFields": [name_in("n1")]}, {"matchExpressions": [expr("zone", "In", "a")]}], None),
        # NotIn does not pin
        ([{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}], None),
    ],
)
def test_prefilter_result(terms: list[dict[str, Any]], expected: set[str] | None) -> None:
    res, s = NodeAffinity().pre_filter(CycleState(), apod(required=terms), [])
    assert s is None
    if expected is None:
        assert res is None
    else:
        assert res == PreFilterResult(expected)


def test_prefilter_conflict() -> None:
    terms = [{"matchFields": [name_in("n1"), name_in("n2")]}]
    res, s = NodeAffinity().pre_filter(CycleState(), apod(required=terms), [])
    assert res is None
    assert s is not None and s.code == Code.UnschedulableAndUnresolvable
    assert s.reasons == ["pod affinity terms conflict"]


def test_prefilter_union_with_one_empty_term_is_not_conflict() -> None:
    terms = [{"matchFields": [name_in("n1"), name_in("n2")]}, {"matchFields": [name_in("n3")]}]
    assert NodeAffinity().pre_filter(CycleState(), apod(required=terms), []) == (
        PreFilterResult({"n3"}),
        None,
    )


# --- Filter ----------------------------------------------------------------------------------


def test_filter_node_selector() -> None:
    pl = NodeAffinity()
    p = apod({"zone": "a", "disk": "ssd"})
    assert run_filter(pl, p, make_node("n", labels={"zone": "a", "disk": "ssd", "x": "y"})) is None
    s = run_filter(pl, p, make_node("n", labels={"zone": "a"}))
    assert s is not None and s.code == Code.UnschedulableAndUnresolvable
    assert s.reasons == ["node(s) didn't match Pod's node affinity/selector"]


def test_filter_node_selector_and_affinity_are_anded() -> None:
    p = apod({"zone": "a"}, required=[{"matchExpressions": [expr("gpu", "Exists")]}])
    pl = NodeAffinity()
    assert run_filter(pl, p, make_node("n", labels={"zone": "a", "gpu": "1"})) is None
    for labels in ({"zone": "a"}, {"gpu": "1"}):
        s = run_filter(pl, p, make_node("n", labels=labels))
        assert s is not None and s.message() == "node(s) didn't match Pod's node affinity/selector"


@pytest.mark.parametrize(
    ("e", "labels", "ok"),
    [
        (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
        (expr("zone", "NotIn", "a"), {}, True),
        (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
        (expr("zone", "DoesNotExist"), {"zone": "a"}, False),
        (expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (expr("cores", "Gt", "4"), {"cores": "4"}, False),
        (expr("cores", "Lt", "4"), {"cores": "3"}, True),
        (expr("cores", "Lt", "4"), {"cores": "x"}, False),
    ],
)
def test_filter_operators(e: dict[str, Any], labels: dict[str, str], ok: bool) -> None:
    s = run_filter(NodeAffinity(), apod(required=[{"matchExpressions": [e]}]), make_node("n", labels=labels))
    assert (s is None) == ok


def test_filter_terms_ored_and_match_fields() -> None:
    p = apod(required=[{"matchExpressions": [expr("zone", "In", "a")]}, {"matchFields": [name_in("n2")]}])
    pl = NodeAffinity()
    assert run_filter(pl, p, make_node("n1", labels={"zone": "a"})) is None
    assert run_filter(pl, p, make_node("n2")) is None
    assert run_filter(pl, p, make_node("n3")) is not None


def test_filter_empty_term_matches_nothing() -> None:
    s = run_filter(NodeAffinity(), apod(required=[{}]), make_node("n", labels={"a": "b"}))
    assert s is not None and s.code == Code.UnschedulableAndUnresolvable


def test_filter_added_affinity_checked_first() -> None:
    pl = plugin(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "batch")]}]
            }
        }
    )
    p = apod({"zone": "a"})
    s = run_filter(pl, p, make_node("n", labels={"zone": "b"}))
    assert s is not None and s.code == Code.UnschedulableAndUnresolvable
    assert s.reasons == ["node(s) didn't match scheduler-enforced node affinity"]
    s = run_filter(pl, p, make_node("n", labels={"pool": "batch", "zone": "b"}))
    assert s is not None and s.reasons == ["node(s) didn't match Pod's node affinity/selector"]
    assert run_filter(pl, p, make_node("n", labels={"pool": "batch", "zone": "a"})) is None
    assert run_filter(pl, apod(), make_node("n", labels={"pool": "batch"})) is None


def test_filter_without_prefilter_falls_back() -> None:
    s = NodeAffinity().filter(CycleState(), apod({"zone": "a"}), node_info(make_node("n")))
    assert s is not None and s.message() == "node(s) didn't match Pod's node affinity/selector"
    assert NodeAffinity().filter(CycleState(), apod(), node_info(make_node("n"))) is None


# --- Score -----------------------------------------------------------------------------------


def scores_for(pl: NodeAffinity, p: Any, nodes: list[Any]) -> tuple[list[int], list[int]]:
    state = CycleState()
    nis = [node_info(n) for n in nodes]
    assert pl.pre_score(state, p, nis) is None
    raw = []
    for ni in nis:
        v, s = pl.score(state, p, ni)
        assert s is None
        raw.append(v)
    ns = [NodeScore(ni.name, v) for ni, v in zip(nis, raw, strict=True)]
    ext = pl.score_extensions()
    assert ext is not None and ext.normalize_score(state, p, ns) is None
    return raw, [x.score for x in ns]


def test_prescore_skip_without_preferred() -> None:
    s = NodeAffinity().pre_score(CycleState(), apod({"zone": "a"}), [])
    assert s is not None and s.code == Code.Skip


def test_score_pod_preferred() -> None:
    p = apod(
        preferred=[
            {"weight": 30, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
            {"weight": 50, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}},
            {"weight": 0, "preference": {"matchExpressions": [expr("zone", "Exists")]}},
            {"weight": 7, "preference": {}},
        ]
    )
    nodes = [
        make_node("n0"),
        make_node("n1", labels={"zone": "a"}),
        make_node("n2", labels={"zone": "a", "disk": "ssd"}),
        make_node("n3", labels={"disk": "ssd"}),
    ]
    raw, norm = scores_for(NodeAffinity(), p, nodes)
    assert raw == [0, 30, 80, 50]
    assert norm == [0, 37, 100, 62]


def test_score_added_preferred_adds_to_pod_preferred() -> None:
    pl = plugin(
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchFields": [name_in("n1")]}}
            ]
        }
    )
    p = apod(preferred=[{"weight": 20, "preference": {"matchExpressions": [expr("zone", "In", "a")]}}])
    raw, norm = scores_for(
        pl,
        p,
        [
            make_node("n0"),
            make_node("n1"),
            make_node("n2", labels={"zone": "a"}),
            make_node("n1", labels={"zone": "a"}),
        ],
    )
    assert raw == [0, 10, 20, 30]
    assert norm == [0, 33, 66, 100]
    # added terms alone still score (no Skip)
    raw, norm = scores_for(pl, apod(), [make_node("n0"), make_node("n1")])
    assert raw == [0, 10] and norm == [0, 100]


def test_score_all_zero_stays_zero() -> None:
    p = apod(preferred=[{"weight": 5, "preference": {"matchExpressions": [expr("zone", "In", "z")]}}])
    raw, norm = scores_for(NodeAffinity(), p, [make_node("a"), make_node("b")])
    assert raw == [0, 0] and norm == [0, 0]


# --- Events ----------------------------------------------------------------------------------


def test_events() -> None:
    evs = NodeAffinity().events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
    ]
    assert evs[0].queueing_hint_fn is not None


def test_node_hint() -> None:
    pl = NodeAffinity()
    p = apod({"zone": "a"})
    a, b = make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "b"})
    assert pl.is_schedulable_after_node_change(p, None, a) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, None, b) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, b, a) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, a, a) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, a, b) == QueueingHint.QueueSkip


def test_node_hint_added_affinity() -> None:
    pl = plugin(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "x")]}]
            }
        }
    )
    assert pl.is_schedulable_after_node_change(apod(), None, make_node("n")) == QueueingHint.QueueSkip
    assert (
        pl.is_schedulable_after_node_change(apod(), None, make_node("n", labels={"pool": "x"}))
        == QueueingHint.Queue
    )


# --- RequiredNodeAffinity --------------------------------------------------------------------


def test_required_node_affinity_matcher() -> None:
    r = get_required_node_affinity(apod({"zone": ""}))
    assert not r.matches(make_node("n"))  # missing label never matches
    assert r.matches(make_node("n", labels={"zone": ""}))
    assert get_required_node_affinity(apod()).matches(make_node("n"))
    r = get_required_node_affinity(apod(required=[{"matchFields": [name_in("n1")]}]))
    assert r.matches(make_node("n1")) and not r.matches(make_node("n2"))
    assert r.matches_labels({}, "n1")


# --- default normalize -----------------------------------------------------------------------


def norm(values: list[int], reverse: bool, max_priority: int = 100) -> list[int]:
    ns = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
    assert default_normalize_score(max_priority, reverse, ns) is None
    return [x.score for x in ns]


def test_default_normalize_examples() -> None:
    assert norm([2, 1, 0], True) == [0, 50, 100]
    assert norm([3, 1, 0], False) == [100, 33, 0]
    assert norm([0, 0], False) == [0, 0]
    assert norm([0, 0], True) == [100, 100]
    assert norm([], True) == []
    assert norm([5, 10], False, max_priority=10) == [5, 10]
    # negative raw scores: max is clamped at 0 and Go division truncates toward zero
    assert norm([-3, -1], False) == [-3, -1]
    assert norm([-1, 3], False) == [-33, 100]


@given(st.lists(st.integers(0, 10_000), max_size=20), st.booleans())
def test_default_normalize_range(values: list[int], reverse: bool) -> None:
    out = norm(values, reverse)
    assert all(0 <= v <= 100 for v in out)
    if values and max(values) > 0:
        top = [i for i, v in enumerate(values) if v == max(values)]
        assert all(out[i] == (0 if reverse else 100) for i in top)
