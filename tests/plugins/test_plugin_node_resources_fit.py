"""NodeResourcesFit (``pkg/scheduler/framework/plugins/noderesources/fit.go``): Filter reasons/codes, the
three scoring strategies, args
validation and queueing hints. Expected values are computed by hand from the spec formulas."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from kubesched.api.resources import CPU, MEMORY
from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.fit import (
    NodeResourcesFit,
    NodeResourcesFitArgs,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
)
from kubesched.plugins.noderesources.scoring import (
    FunctionShapePoint,
    ResourceSpec,
    broken_linear,
    go_div,
    least_allocated_scorer,
)
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

GI = 1024**3


def fit(raw: dict[str, Any] | None = None) -> NodeResourcesFit:
    return NodeResourcesFit(decode_args(NodeResourcesFitArgs, raw, "args"))


def run_filter(pl: NodeResourcesFit, pod: Any, ni: NodeInfo) -> Status | None:
    state = CycleState()
    _, s = pl.pre_filter(state, pod, [ni])
    assert s is None
    return pl.filter(state, pod, ni)


def run_score(pl: NodeResourcesFit, pod: Any, ni: NodeInfo) -> int:
    state = CycleState()
    assert pl.pre_score(state, pod, [ni]) is None
    score, s = pl.score(state, pod, ni)
    assert s is None
    return score


# --- Filter --------------------------------------------------------------------------------


def test_filter_fits() -> None:
    ni = node_info(
        make_node("n1", cpu="4", memory="8Gi"), [make_pod("old", cpu="1", memory="1Gi", node_name="n1")]
    )
    assert run_filter(fit(), make_pod("p", cpu="3", memory="7Gi"), ni) is None


def test_filter_too_many_pods_is_unschedulable() -> None:
    ni = node_info(make_node("n1", pods=1), [make_pod("old", node_name="n1")])
    s = run_filter(fit(), make_pod("p"), ni)
    assert s == Status(Code.Unschedulable, "Too many pods")


def test_filter_best_effort_pod_only_checks_pod_count() -> None:
    full = node_info(
        make_node("n1", cpu="1", memory="1Gi"), [make_pod("old", cpu="1", memory="1Gi", node_name="n1")]
    )
    assert run_filter(fit(), make_pod("p"), full) is None


def test_filter_all_reasons_in_order_resolvable() -> None:
    ni = node_info(
        make_node("n1", cpu="2", memory="4Gi", pods=1, allocatable={"ephemeral-storage": "10Gi"}),
        [make_pod("old", cpu="1500m", memory="3Gi", requests={"ephemeral-storage": "8Gi"}, node_name="n1")],
    )
    pod = make_pod("p", cpu="1", memory="2Gi", requests={"ephemeral-storage": "5Gi"})
    s = run_filter(fit(), pod, ni)
    assert s is not None
    assert s.code == Code.Unschedulable
    assert s.reasons == [
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
    ]


def test_filter_unresolvable_when_request_exceeds_allocatable() -> None:
    ni = node_info(make_node("n1", cpu="2", memory="4Gi"))
    s = run_filter(fit(), make_pod("p", cpu="3"), ni)
    assert s == Status(Code.UnschedulableAndUnresolvable, "Insufficient cpu")


def test_filter_one_unresolvable_reason_makes_the_whole_status_unresolvable() -> None:
    ni = node_info(make_node("n1", cpu="2", memory="4Gi"), [make_pod("old", memory="3Gi", node_name="n1")])
    s = run_filter(fit(), make_pod("p", cpu="3", memory="2Gi"), ni)
    assert s is not None
    assert s.code == Code.UnschedulableAndUnresolvable
    assert s.reasons == ["Insufficient cpu", "Insufficient memory"]


def test_filter_resolvable_when_only_used_capacity_blocks() -> None:
    ni = node_info(make_node("n1", cpu="2"), [make_pod("old", cpu="1", node_name="n1")])
    assert run_filter(fit(), make_pod("p", cpu="2"), ni) == Status(Code.Unschedulable, "Insufficient cpu")


def test_filter_extended_resource_missing_on_node() -> None:
    ni = node_info(make_node("n1"))
    pod = make_pod("p", requests={"example.com/gpu": "1"}, limits={"example.com/gpu": "1"})
    assert run_filter(fit(), pod, ni) == Status(
        Code.UnschedulableAndUnresolvable, "Insufficient example.com/gpu"
    )


def test_filter_extended_resource_used_up() -> None:
    node = make_node("n1", allocatable={"example.com/gpu": "2"})
    ni = node_info(node, [make_pod("old", requests={"example.com/gpu": "2"}, node_name="n1")])
    pod = make_pod("p", requests={"example.com/gpu": "1"})
    assert run_filter(fit(), pod, ni) == Status(Code.Unschedulable, "Insufficient example.com/gpu")


def test_filter_ignored_resources_and_groups() -> None:
    ni = node_info(make_node("n1"))
    pod = make_pod("p", requests={"example.com/gpu": "1", "other.io/fpga": "1"})
    assert run_filter(fit(), pod, ni) == Status(
        Code.UnschedulableAndUnresolvable, "Insufficient example.com/gpu", "Insufficient other.io/fpga"
    )
    assert run_filter(fit({"ignoredResources": ["example.com/gpu"]}), pod, ni) == Status(
        Code.UnschedulableAndUnresolvable, "Insufficient other.io/fpga"
    )
    assert run_filter(fit({"ignoredResourceGroups": ["other.io"]}), pod, ni) == Status(
        Code.UnschedulableAndUnresolvable, "Insufficient example.com/gpu"
    )
    both = fit({"ignoredResources": ["example.com/gpu"], "ignoredResourceGroups": ["other.io"]})
    assert run_filter(both, pod, ni) is None


def test_filter_ignoring_applies_to_extended_resources_only() -> None:
    ni = node_info(make_node("n1"))
    pod = make_pod("p", requests={"hugepages-2Mi": "4Mi"})
    s = run_filter(fit({"ignoredResources": ["hugepages-2Mi"]}), pod, ni)
    assert s == Status(Code.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi")


def test_filter_without_prefilter_state_is_error() -> None:
    s = fit().filter(CycleState(), make_pod("p"), node_info(make_node("n1")))
    assert s is not None and s.code == Code.Error
    assert s.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


# --- scoring -------------------------------------------------------------------------------


def test_least_allocated_default_weights() -> None:
    ni = node_info(make_node("n1", cpu="4", memory="10Gi"))
    # cpu (4000-1000)*100/4000 = 75, memory (10-2)*100/10 = 80 -> 155 // 2 = 77
    assert run_score(fit(), make_pod("p", cpu="1", memory="2Gi"), ni) == 77


def test_least_allocated_counts_existing_pods_and_weights() -> None:
    ni = node_info(
        make_node("n1", cpu="4", memory="10Gi"), [make_pod("old", cpu="1", memory="1Gi", node_name="n1")]
    )
    pod = make_pod("p", cpu="1", memory="2Gi")
    # cpu (4000-2000)*100/4000 = 50, memory (10-3)*100/10 = 70
    assert run_score(fit(), pod, ni) == 60
    weighted = fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
            }
        }
    )
    assert run_score(weighted, pod, ni) == (50 * 3 + 70) // 4 == 55


def test_least_allocated_uses_non_zero_defaults() -> None:
    ni = node_info(make_node("n1", cpu="4", memory="10Gi"), [make_pod("old", node_name="n1")])
    # node non-zero requested: 100m + 200Mi; pod: 100m + 200Mi
    # cpu (4000-200)*100//4000 = 95; memory (10240-400)*100//10240 = 96 -> 191 // 2 = 95
    assert run_score(fit(), make_pod("p"), ni) == 95


def test_least_allocated_over_capacity_scores_zero() -> None:
    ni = node_info(make_node("n1", cpu="1", memory="10Gi"))
    # cpu over capacity -> 0, memory (10-5)*100/10 = 50 -> 25
    assert run_score(fit(), make_pod("p", cpu="2", memory="5Gi"), ni) == 25


def test_most_allocated_with_weights() -> None:
    ni = node_info(make_node("n1", cpu="4", memory="10Gi"))
    pl = fit(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}],
            }
        }
    )
    # cpu 1000*100/4000 = 25, memory 2*100/10 = 20 -> (25 + 60) // 4 = 21
    assert run_score(pl, make_pod("p", cpu="1", memory="2Gi"), ni) == 21


def test_most_allocated_caps_at_capacity() -> None:
    ni = node_info(make_node("n1", cpu="1", memory="10Gi"))
    pl = fit({"scoringStrategy": {"type": "MostAllocated"}})
    # cpu capped 100, memory 50 -> 75
    assert run_score(pl, make_pod("p", cpu="2", memory="5Gi"), ni) == 75


def test_extended_resource_scoring() -> None:
    node = make_node("n1", cpu="4", memory="10Gi", allocatable={"example.com/gpu": "4"})
    ni = node_info(node)
    pl = fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "example.com/gpu", "weight": 2},
                ],
            }
        }
    )
    # cpu 75, memory 80, gpu (4-1)*100/4 = 75 -> (75 + 80 + 150) // 4 = 76
    assert run_score(pl, make_pod("p", cpu="1", memory="2Gi", requests={"example.com/gpu": "1"}), ni) == 76
    # a pod not requesting the gpu skips it: (75 + 80) // 2 = 77
    assert run_score(pl, make_pod("q", cpu="1", memory="2Gi"), ni) == 77
    # a node without the resource skips it too
    assert (
        run_score(
            pl,
            make_pod("p", cpu="1", memory="2Gi", requests={"example.com/gpu": "1"}),
            node_info(make_node("n2", cpu="4", memory="10Gi")),
        )
        == 77
    )


def rtcr(shape: list[tuple[int, int]], resources: list[tuple[str, int]]) -> NodeResourcesFit:
    return fit(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": n, "weight": w} for n, w in resources],
                "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]},
            }
        }
    )


def test_rtcr_falling_shape_truncates_toward_zero() -> None:
    pl = rtcr([(0, 10), (30, 0)], [(CPU, 1)])
    ni = node_info(make_node("n1", cpu="1"))
    # p = 10*100/1000 = 1 -> 100 + trunc(-100*1/30) = 100 - 3 = 97 (Python // would give 96)
    assert run_score(pl, make_pod("p", cpu="10m"), ni) == 97


def test_broken_linear_function() -> None:
    f = broken_linear([FunctionShapePoint(10, 20), FunctionShapePoint(30, 0), FunctionShapePoint(50, 100)])
    assert [f(p) for p in (0, 10, 11, 29, 30, 40, 49, 100)] == [20, 20, 19, 1, 0, 50, 95, 100]
    assert go_div(-7, 2) == -3 and go_div(7, 2) == 3 and go_div(7, -2) == -3


def test_rtcr_rounds_half_away_from_zero() -> None:
    pl = rtcr([(0, 0), (100, 10)], [(CPU, 1), (MEMORY, 1)])
    ni = node_info(make_node("n1", cpu="1", memory="100Gi"))
    # cpu p=2 -> 2, memory p=3 -> 3: round(5 / 2) = 3 (banker's rounding would give 2)
    assert run_score(pl, make_pod("p", cpu="20m", memory="3Gi"), ni) == 3


def test_rtcr_only_positive_resource_scores_count() -> None:
    pl = rtcr([(0, 0), (100, 10)], [(CPU, 1), (MEMORY, 1)])
    ni = node_info(make_node("n1", cpu="1", memory="100Gi"))
    # memory p = 200Mi*100/100Gi = 0 -> f = 0, excluded: only cpu (50) counts
    assert run_score(pl, make_pod("p", cpu="500m"), ni) == 50


def test_rtcr_over_capacity_uses_max_utilization() -> None:
    pl = rtcr([(0, 10), (100, 0)], [(CPU, 1)])
    assert run_score(pl, make_pod("p", cpu="2"), node_info(make_node("n1", cpu="1"))) == 0
    pl2 = rtcr([(0, 0), (100, 7)], [(CPU, 1)])
    assert run_score(pl2, make_pod("p", cpu="2"), node_info(make_node("n1", cpu="1"))) == 70


def test_score_without_prescore_state_computes_requests() -> None:
    ni = node_info(make_node("n1", cpu="4", memory="10Gi"))
    score, s = fit().score(CycleState(), make_pod("p", cpu="1", memory="2Gi"), ni)
    assert (score, s) == (77, None)


@given(
    alloc=st.lists(st.integers(0, 2**40), min_size=1, max_size=4),
    req=st.lists(st.integers(0, 2**41), min_size=4, max_size=4),
    weights=st.lists(st.integers(1, 100), min_size=4, max_size=4),
)
def test_least_allocated_score_in_range(alloc: list[int], req: list[int], weights: list[int]) -> None:
    resources = [ResourceSpec(f"r{i}", weights[i]) for i in range(len(alloc))]
    score = least_allocated_scorer(resources)(req[: len(alloc)], alloc)
    assert 0 <= score <= 100


@given(
    cpu=st.integers(1, 256_000),
    mem=st.integers(1, 2**40),
    pod_cpu=st.integers(0, 300_000),
    pod_mem=st.integers(0, 2**41),
)
def test_least_allocated_plugin_score_in_range(cpu: int, mem: int, pod_cpu: int, pod_mem: int) -> None:
    ni = node_info(make_node("n1", cpu=f"{cpu}m", memory=str(mem)))
    assert 0 <= run_score(fit(), make_pod("p", cpu=f"{pod_cpu}m", memory=str(pod_mem)), ni) <= 100


# --- args ----------------------------------------------------------------------------------


def test_default_args() -> None:
    a = NodeResourcesFitArgs()
    assert a.ignored_resources == [] and a.ignored_resource_groups == []
    assert a.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in a.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    d = decode_args(NodeResourcesFitArgs, None, "args")
    assert d.scoring_strategy.type == "LeastAllocated"


def test_weight_zero_defaults_to_one_and_empty_resources_default() -> None:
    a = decode_args(
        NodeResourcesFitArgs,
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}],
            }
        },
        "args",
    )
    assert [(r.name, r.weight) for r in a.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    b = decode_args(
        NodeResourcesFitArgs, {"scoringStrategy": {"type": "MostAllocated", "resources": []}}, "args"
    )
    assert [(r.name, r.weight) for r in b.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        (
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
            "args.scoringStrategy.resources[0]",
            "resource weight of cpu not in valid range (0, 100]",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu"}, {"name": "memory", "weight": -1}],
                }
            },
            "args.scoringStrategy.resources[1]",
            "resource weight of memory not in valid range (0, 100]",
        ),
        (
            {"scoringStrategy": {"type": "Balanced"}},
            "args.scoringStrategy.type",
            'Unsupported value: "Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            "args.scoringStrategy.type",
            'Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "args.scoringStrategy",
            "requestedToCapacityRatio is required for type RequestedToCapacityRatio",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape",
            "at least one point must be specified",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 10, "score": 1}, {"utilization": 10, "score": 2}]
                    },
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape",
            "utilization values must be sorted in increasing order (shape[1].utilization = 10)",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
            "not in valid range [0, 100]",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 11}]},
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape[0].score",
            "not in valid range [0, 10]",
        ),
        (
            {"ignoredResourceGroups": ["example.com/gpu"]},
            "args.ignoredResourceGroups[0]",
            "resource group name can't contain '/'",
        ),
        ({"ignoredResources": ["-bad"]}, "args.ignoredResources[0]", None),
        ({"ignoredResource": ["x"]}, "args.ignoredResource", 'unknown field "ignoredResource"'),
    ],
)
def test_args_validation(raw: dict[str, Any], path: str, message: str | None) -> None:
    with pytest.raises(ConfigError) as ei:
        decode_args(NodeResourcesFitArgs, raw, "args")
    assert ei.value.path == path
    if message is not None:
        assert ei.value.message == message


def test_args_validation_from_python_raises_validation_error() -> None:
    with pytest.raises(ValidationError):
        NodeResourcesFitArgs(ignored_resource_groups=["a/b"])


# --- events and hints ----------------------------------------------------------------------


def test_events_to_register() -> None:
    events = [e.event for e in fit().events_to_register()]
    assert events == [
        ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
    ]
    assert events[0].match(ClusterEvent(EventResource.AssignedPod, ActionType.Delete))
    assert events[1].match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeAllocatable))
    assert not events[1].match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel))


def test_pod_delete_hint() -> None:
    target = make_pod("p", cpu="1")
    assert is_schedulable_after_pod_event(target, make_pod("a", node_name="n1"), None) == QueueingHint.Queue
    nominated = make_pod("b", status={"nominatedNodeName": "n1"})
    assert is_schedulable_after_pod_event(target, nominated, None) == QueueingHint.Queue
    assert is_schedulable_after_pod_event(target, make_pod("c"), None) == QueueingHint.QueueSkip


def test_pod_delete_hint_checks_the_freed_node() -> None:
    """The plugin's hint queues a deleted bound pod's event only when the target fits that node
    now (the cache's NodeInfo, which no longer holds the deleted pod)."""
    big = make_node("big", cpu="8", memory="64Gi")
    small = make_node("small", cpu="2", memory="64Gi")
    left = make_pod("left", cpu="4", node_name="big")
    snap = Snapshot([node_info(big, [left]), node_info(small)])
    pl = NodeResourcesFit(NodeResourcesFitArgs(), FakeHandle(snap))
    target = make_pod("p", cpu="5")
    # a pod deleted from "big" left 4 of 8 cpus in use: 5 do not fit -> QueueSkip
    assert (
        pl.is_schedulable_after_pod_event(target, make_pod("gone", cpu="3", node_name="big"), None)
        == QueueingHint.QueueSkip
    )
    # "small" can never hold 5 cpus
    assert (
        pl.is_schedulable_after_pod_event(target, make_pod("gone", cpu="1", node_name="small"), None)
        == QueueingHint.QueueSkip
    )
    # 4 free cpus fit a 4-cpu pod
    assert (
        pl.is_schedulable_after_pod_event(make_pod("q", cpu="4"), make_pod("gone", node_name="big"), None)
        == QueueingHint.Queue
    )
    # a node the cache does not know, a nominated-only pod, an unscheduled pod: upstream's answer
    assert (
        pl.is_schedulable_after_pod_event(target, make_pod("gone", node_name="n9"), None)
        == QueueingHint.Queue
    )
    nominated = make_pod("b", status={"nominatedNodeName": "small"})
    assert pl.is_schedulable_after_pod_event(target, nominated, None) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_event(target, make_pod("c"), None) == QueueingHint.QueueSkip
    # the registered hint is this method
    assert pl.events_to_register()[0].queueing_hint_fn == pl.is_schedulable_after_pod_event


def test_pod_scale_down_hint() -> None:
    target = make_pod("p", cpu="1")
    old = make_pod("a", cpu="2", memory="2Gi", node_name="n1")
    assert (
        is_schedulable_after_pod_event(target, old, make_pod("a", cpu="1", memory="2Gi", node_name="n1"))
        == QueueingHint.Queue
    )
    # memory shrank but the target requests no memory
    assert (
        is_schedulable_after_pod_event(target, old, make_pod("a", cpu="2", memory="1Gi", node_name="n1"))
        == QueueingHint.QueueSkip
    )
    # another unscheduled pod shrinking does not help
    assert (
        is_schedulable_after_pod_event(target, make_pod("u", cpu="2"), make_pod("u", cpu="1"))
        == QueueingHint.QueueSkip
    )
    # the target itself shrinking does
    assert (
        is_schedulable_after_pod_event(target, make_pod("p", cpu="2"), make_pod("p", cpu="1"))
        == QueueingHint.Queue
    )


def test_node_hints() -> None:
    pod = make_pod("p", cpu="2", memory="1Gi")
    assert is_schedulable_after_node_change(pod, None, make_node("n", cpu="4")) == QueueingHint.Queue
    assert is_schedulable_after_node_change(pod, None, make_node("n", cpu="1")) == QueueingHint.QueueSkip
    old = make_node("n", cpu="2", memory="1Gi", pods=10)
    assert (
        is_schedulable_after_node_change(pod, old, make_node("n", cpu="2", memory="1Gi", pods=10))
        == QueueingHint.QueueSkip
    )
    assert (
        is_schedulable_after_node_change(pod, old, make_node("n", cpu="3", memory="1Gi", pods=10))
        == QueueingHint.Queue
    )
    assert (
        is_schedulable_after_node_change(pod, old, make_node("n", cpu="2", memory="1Gi", pods=11))
        == QueueingHint.Queue
    )
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(pod, None, {"kind": "Node"})
