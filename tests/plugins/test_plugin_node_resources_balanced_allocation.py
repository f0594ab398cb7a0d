"""NodeResourcesBalancedAllocation (``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``,
v1.35 formula): actual requests, fractions capped at 1, ``int((1 - std) * 100)``; best-effort pods are skipped at PreScore."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
    balanced_resource_score,
)
from kubesched.testing import make_node, make_pod, node_info


def plugin(raw: dict[str, Any] | None = None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(decode_args(NodeResourcesBalancedAllocationArgs, raw, "args"))


def run_score(pl: NodeResourcesBalancedAllocation, pod: Any, ni: NodeInfo) -> int:
    state = CycleState()
    assert pl.pre_score(state, pod, [ni]) is None
    score, s = pl.score(state, pod, ni)
    assert s is None
    return score


def test_two_resources() -> None:
    ni = node_info(make_node("n1", cpu="4", memory="8Gi"))
    # fractions 0.25 and 0.125 -> std 0.0625 -> int(93.75) = 93
    assert run_score(plugin(), make_pod("p", cpu="1", memory="1Gi"), ni) == 93


def test_perfectly_balanced_is_100() -> None:
    ni = node_info(
        make_node("n1", cpu="4", memory="8Gi"), [make_pod("old", cpu="1", memory="2Gi", node_name="n1")]
    )
    assert run_score(plugin(), make_pod("p", cpu="1", memory="2Gi"), ni) == 100


def test_uses_actual_requests_not_non_zero_defaults() -> None:
    # the existing best-effort pod adds nothing (the non-zero defaults would add 100m / 200Mi)
    ni = node_info(make_node("n1", cpu="4", memory="8Gi"), [make_pod("old", node_name="n1")])
    assert run_score(plugin(), make_pod("p", cpu="1", memory="1Gi"), ni) == 93
    # a pod requesting only cpu: fractions 0.5 and 0 -> std 0.25 -> 75
    assert run_score(plugin(), make_pod("q", cpu="2"), ni) == 75


def test_fraction_capped_at_one() -> None:
    ni = node_info(make_node("n1", cpu="1", memory="8Gi"))
    # cpu 3/1 -> 1.0, memory 4/8 = 0.5 -> std 0.25 -> 75
    assert run_score(plugin(), make_pod("p", cpu="3", memory="4Gi"), ni) == 75


def test_three_resources() -> None:
    pl = plugin({"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]})
    ni = node_info(make_node("n1", cpu="4", memory="8Gi", allocatable={"ephemeral-storage": "100Gi"}))
    pod = make_pod("p", cpu="1", memory="1Gi", requests={"ephemeral-storage": "50Gi"})
    # fractions 0.25, 0.125, 0.5: mean 0.29167, population std 0.15590 -> int(84.41) = 84
    assert run_score(pl, pod, ni) == 84


def test_extended_resource_not_requested_is_skipped() -> None:
    pl = plugin(
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu", "weight": 1}]}
    )
    ni = node_info(make_node("n1", cpu="4", memory="8Gi", allocatable={"example.com/gpu": "4"}))
    assert run_score(pl, make_pod("p", cpu="1", memory="1Gi"), ni) == 93
    # requested: fractions 0.25, 0.125, 0.75 -> mean 0.375, std sqrt((0.015625+0.0625+0.140625)/3) = 0.2700 -> 72
    assert run_score(pl, make_pod("q", cpu="1", memory="1Gi", requests={"example.com/gpu": "3"}), ni) == 72


def test_best_effort_pod_is_skipped() -> None:
    state = CycleState()
    s = plugin().pre_score(state, make_pod("p"), [])
    assert s is not None and s.code == Code.Skip
    # Score without PreScore state falls back and returns 0 for a best-effort pod
    assert plugin().score(CycleState(), make_pod("p"), node_info(make_node("n1"))) == (0, None)


def test_single_resource_std_zero() -> None:
    assert balanced_resource_score([1, 0], [4, 0]) == 100
    assert balanced_resource_score([0, 0], [0, 0]) == 100


def test_defaults_and_validation() -> None:
    a = NodeResourcesBalancedAllocationArgs()
    assert [(r.name, r.weight) for r in a.resources] == [("cpu", 1), ("memory", 1)]
    b = decode_args(NodeResourcesBalancedAllocationArgs, {"resources": []}, "args")
    assert [(r.name, r.weight) for r in b.resources] == [("cpu", 1), ("memory", 1)]
    with pytest.raises(ConfigError) as ei:
        decode_args(
            NodeResourcesBalancedAllocationArgs, {"resources": [{"name": "cpu", "weight": 2}]}, "args"
        )
    assert (ei.value.path, ei.value.message) == ("args.resources[0]", "must be 1")
    with pytest.raises(ConfigError) as ei:
        decode_args(
            NodeResourcesBalancedAllocationArgs, {"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "args"
        )
    assert (ei.value.path, ei.value.message) == ("args.resources", 'Duplicate value: "cpu"')
    with pytest.raises(ValidationError):
        NodeResourcesBalancedAllocationArgs(resources=[{"name": "cpu", "weight": 5}])  # type: ignore[list-item]
