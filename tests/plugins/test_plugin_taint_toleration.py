"""TaintToleration (``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code
from kubesched.plugins.tainttoleration.taint_toleration import TaintToleration
from kubesched.testing import make_node, make_pod, node_info


def pod(*tols: dict[str, Any], name: str = "p") -> Any:
    return make_pod(name, spec={"tolerations": list(tols)} if tols else None)


def node(name: str, *taints: tuple[str, str, str]) -> Any:
    return make_node(name, taints=[{"key": k, "value": v, "effect": e} for k, v, e in taints])


def run_scores(p: Any, nodes: list[Any]) -> tuple[list[int], list[int]]:
    pl = TaintToleration()
    state = CycleState()
    nis = [node_info(n) for n in nodes]
    assert pl.pre_score(state, p, nis) is None
    raw = []
    for ni in nis:
        s, st = pl.score(state, p, ni)
        assert st is None
        raw.append(s)
    scores = [NodeScore(ni.name, s) for ni, s in zip(nis, raw, strict=True)]
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, p, scores) is None
    return raw, [s.score for s in scores]


def test_identity() -> None:
    assert TaintToleration().name() == "TaintToleration"
    assert TaintToleration.Args is None


# Filter


def test_no_taints_passes() -> None:
    assert TaintToleration().filter(CycleState(), pod(), node_info(node("n"))) is None


@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_untolerated_hard_taint_rejects_with_v135_text(effect: str) -> None:
    st = TaintToleration().filter(CycleState(), pod(), node_info(node("n", ("dedicated", "gpu", effect))))
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["node(s) had untolerated taint(s)"]


def test_prefer_no_schedule_does_not_filter() -> None:
    assert (
        TaintToleration().filter(CycleState(), pod(), node_info(node("n", ("a", "b", "PreferNoSchedule"))))
        is None
    )


def test_tolerated_taint_passes() -> None:
    p = pod({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"})
    assert (
        TaintToleration().filter(CycleState(), p, node_info(node("n", ("dedicated", "gpu", "NoSchedule"))))
        is None
    )


def test_toleration_with_wrong_value_or_effect() -> None:
    n = node_info(node("n", ("dedicated", "gpu", "NoSchedule")))
    for t in (
        {"key": "dedicated", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
    ):
        st = TaintToleration().filter(CycleState(), pod(t), n)
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable


def test_empty_effect_and_empty_key_exists_tolerate_everything() -> None:
    n = node_info(node("n", ("a", "1", "NoSchedule"), ("b", "2", "NoExecute")))
    assert TaintToleration().filter(CycleState(), pod({"operator": "Exists"}), n) is None
    assert (
        TaintToleration().filter(
            CycleState(), pod({"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}), n
        )
        is None
    )


def test_one_of_several_taints_untolerated() -> None:
    n = node_info(node("n", ("a", "1", "NoSchedule"), ("b", "2", "NoExecute")))
    st = TaintToleration().filter(CycleState(), pod({"key": "a", "operator": "Exists"}), n)
    assert st is not None and st.message() == "node(s) had untolerated taint(s)"


# Score


def test_score_counts_untolerated_prefer_no_schedule_and_reverses() -> None:
    nodes = [
        node("n0"),
        node("n1", ("a", "1", "PreferNoSchedule")),
        node("n2", ("a", "1", "PreferNoSchedule"), ("b", "2", "PreferNoSchedule"), ("c", "3", "NoSchedule")),
        node(
            "n3",
            ("a", "1", "PreferNoSchedule"),
            ("b", "2", "PreferNoSchedule"),
            ("d", "", "PreferNoSchedule"),
        ),
    ]
    raw, norm = run_scores(pod(), nodes)
    assert raw == [0, 1, 2, 3]
    # 100 - 100*s//3
    assert norm == [100, 67, 34, 0]


def test_prescore_keeps_only_empty_effect_or_prefer_no_schedule() -> None:
    nodes = [
        node(
            "n0",
            ("a", "1", "PreferNoSchedule"),
            ("b", "2", "PreferNoSchedule"),
            ("c", "3", "PreferNoSchedule"),
        )
    ]
    # NoSchedule toleration for "a" is dropped; empty-effect toleration for "b" and PNS for "c" count.
    p = pod(
        {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "b", "operator": "Exists"},
        {"key": "c", "operator": "Equal", "value": "3", "effect": "PreferNoSchedule"},
    )
    raw, norm = run_scores(p, nodes + [node("n1")])
    assert raw == [1, 0]
    assert norm == [0, 100]


def test_all_zero_reverse_gives_100() -> None:
    raw, norm = run_scores(pod(), [node("a"), node("b", ("x", "", "NoSchedule"))])
    assert raw == [0, 0]
    assert norm == [100, 100]


def test_score_without_prescore_is_error() -> None:
    s, st = TaintToleration().score(CycleState(), pod(), node_info(node("n")))
    assert s == 0
    assert st is not None and st.code == Code.Error
    assert st.message() == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


# Events


def test_events() -> None:
    evs = TaintToleration().events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert all(e.queueing_hint_fn is not None for e in evs)


def test_node_hint() -> None:
    pl = TaintToleration()
    p = pod({"key": "ok", "operator": "Exists"})
    clean = node("n")
    bad = node("n", ("bad", "", "NoSchedule"))
    tolerated = node("n", ("ok", "", "NoSchedule"))
    soft = node("n", ("bad", "", "PreferNoSchedule"))
    assert pl.is_schedulable_after_node_change(p, None, clean) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, None, tolerated) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, None, soft) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, None, bad) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, bad, clean) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, bad, tolerated) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, clean, tolerated) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, clean, bad) == QueueingHint.QueueSkip


def test_pod_toleration_hint() -> None:
    pl = TaintToleration()
    p = pod(name="p")
    assert (
        pl.is_schedulable_after_pod_toleration_change(p, p, pod({"operator": "Exists"}, name="p"))
        == QueueingHint.Queue
    )
    assert pl.is_schedulable_after_pod_toleration_change(p, None, pod(name="q")) == QueueingHint.QueueSkip
