"""Host placement on its own (``pkg/scheduler/schedule_one.go``): ``numFeasibleNodesToFind``, the
rotating start index of ``findNodesThatPassFilters`` and ``selectHost``'s uniform choice among
equal top totals."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.manifests import Manifest
from kubesched.framework.results import NodePluginScores
from kubesched.modes.simulate.run import run_simulation
from kubesched.scheduler.placement import Placement, num_feasible_nodes_to_find
from kubesched.testing import node_manifest, pod_manifest


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (None, 0, 0),
        (None, 50, 50),
        (None, 99, 99),  # below minFeasibleNodesToFind (100): all
        (None, 100, 100),
        (None, 500, 230),  # adaptive: 50 - 500/125 = 46 %
        (None, 1523, 578),  # 50 - 12 = 38 % of 1,523
        (None, 5000, 500),
        (None, 6000, 300),  # 50 - 40 = 10 %; 50 - 48 = 2 %, raised to the 5 % floor
        (0, 5000, 500),
        (None, 20000, 1000),  # floor of 5 %: 1,000 of 20,000
        (10, 200, 100),
        (10, 5000, 500),
        (100, 5000, 5000),  # explicit percentages, at least 100
        (1, 1000, 100),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


@given(
    st.integers(min_value=0, max_value=200_000), st.one_of(st.none(), st.integers(min_value=0, max_value=100))
)
def test_num_feasible_nodes_is_bounded(nodes: int, percentage: int | None) -> None:
    n = num_feasible_nodes_to_find(percentage, nodes)
    assert n == nodes if nodes < 100 else 100 <= n <= max(100, nodes)


def _scores(totals: list[int]) -> list[NodePluginScores]:
    return [NodePluginScores(f"n{i}", [], t) for i, t in enumerate(totals)]


def test_select_host_picks_the_top_total() -> None:
    assert Placement(random.Random(1)).select_host(_scores([3, 9, 4])) == "n1"


def test_select_host_is_uniform_among_ties() -> None:
    p = Placement(random.Random(42))
    picks = Counter(p.select_host(_scores([5, 9, 1, 9, 9])) for _ in range(3000))
    assert set(picks) == {"n1", "n3", "n4"}
    assert all(900 <= c <= 1100 for c in picks.values()), picks


def test_select_host_same_seed_same_choice() -> None:
    a = [Placement(random.Random(7)).select_host(_scores([2, 2, 2, 2])) for _ in range(5)]
    assert len(set(a)) == 1


def test_rotating_start_index_spreads_the_search() -> None:
    """200 identical nodes: 100 of them are enough (numFeasibleNodesToFind), so the second pod's
    search starts where the first one stopped (nextStartNodeIndex), and with equal scores each pod
    lands in the half it searched."""
    nodes = [node_manifest(f"node-{i:03d}") for i in range(200)]
    pods = [pod_manifest("a", cpu="100m"), pod_manifest("b", cpu="100m")]
    manifests = [Manifest(o, "t.yaml", i + 1) for i, o in enumerate(nodes + pods)]
    res = run_simulation(manifests, None, seed=3, record=True)
    placed = {p.name: p.node for p in res.pods}
    a_rec, b_rec = (next(p for p in res.pods if p.name == n).results[0].to_dict() for n in ("a", "b"))
    assert len(a_rec["score"]) == 100 and len(b_rec["score"]) == 100
    assert set(a_rec["score"]).isdisjoint(b_rec["score"])  # two disjoint windows of the node list
    assert placed["a"] in a_rec["score"] and placed["b"] in b_rec["score"]
    assert res.scheduler.placement.next_start_node_index == 0  # 100 + 100 processed, modulo 200
