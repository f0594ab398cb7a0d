"""``NodeTable.match_counts`` (the pod-delta index of :mod:`kubesched.framework.pod_match_index`)
equals ``countPodsMatchSelector`` over every node's pods, on random clusters and selectors under
pod churn: bound, assumed, forgotten and confirmed pods, label updates, pods turning terminating,
removals, nodes leaving and joining, selector eviction and change-log trimming. PodTopologySpread's
PreFilter counts through the index equal the walk, also after nominated pods are added to both
states (nominated pods never enter a NodeInfo; AddPod counts them on the cycle's state)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pod_churn_support import PodChurn, churn_ops, churn_pod, labels, raw_selector, requirements

from kubesched.api.labels import LabelSelector
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.framework import node_table as node_table_mod
from kubesched.framework import pod_match_index as index_mod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.podtopologyspread import batch
from kubesched.plugins.podtopologyspread.common import count_pods_match_selector
from kubesched.plugins.podtopologyspread.plugin import PRE_FILTER_STATE_KEY, PodTopologySpread, PreFilterState
from kubesched.testing import node_manifest, pod_manifest

NAMESPACES = ("default", "other")
ZONE = "topology.kubernetes.io/zone"

selectors = st.lists(requirements, min_size=1, max_size=2).map(lambda rs: LabelSelector(tuple(rs)))

add_op = st.tuples(st.just("add"), st.integers(0, 7), st.sampled_from(NAMESPACES), labels, st.booleans())
op = churn_ops(
    NAMESPACES,
    add_op,
    st.tuples(st.just("node_out"), st.integers(0, 7)),
    st.tuples(st.just("node_in"), st.integers(0, 7)),
    st.tuples(
        st.just("check"), st.lists(st.integers(0, 3), min_size=1, max_size=3), st.sampled_from(NAMESPACES)
    ),
)


def _node(i: int) -> Node:
    return Node.from_manifest(node_manifest(f"n{i}", labels={ZONE: "z" + "abc"[i % 3]}))


def _check(snap: Snapshot, sels: list[LabelSelector], ns: str) -> None:
    table = snap.node_table
    assert table is not None
    for sel in sels:
        col = table.match_counts(ns, sel)
        for ni in snap.list():
            assert int(col[table.rows[ni.name]]) == count_pods_match_selector(ni.pods, sel, ns), (
                ni.name,
                sel,
            )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(op, min_size=20, max_size=80),
    pool=st.lists(selectors, min_size=4, max_size=4),
    small=st.booleans(),
)
def test_indexed_counts_equal_the_scan(
    ops: list[tuple[Any, ...]], pool: list[LabelSelector], small: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if small:  # evict selectors and trim the change log often
        monkeypatch.setattr(index_mod, "MAX_SELECTORS", 2)
        monkeypatch.setattr(node_table_mod, "CHANGE_LOG_MIN", 4)
    cache = Cache()
    churn = PodChurn(cache, _node, present=6, slots=8)
    snap = Snapshot()
    cache.update_snapshot(snap)
    for o in ops:
        if o[0] == "check":
            cache.update_snapshot(snap)
            _check(snap, [pool[i] for i in o[1]], o[2])
        else:
            churn.apply(o)
    cache.update_snapshot(snap)
    for ns in NAMESPACES:
        _check(snap, pool, ns)


@settings(max_examples=40, deadline=None)
@given(
    placed=st.lists(st.tuples(st.integers(0, 5), labels, st.booleans()), max_size=25),
    nominated=st.lists(st.tuples(st.integers(0, 5), labels), max_size=4),
    own=labels,
    sel=selectors,
    min_domains=st.integers(1, 4),
)
def test_pre_filter_counts_with_nominated_pods_equal_the_walk(
    placed: list[tuple[int, dict[str, str], bool]],
    nominated: list[tuple[int, dict[str, str]]],
    own: dict[str, str],
    sel: LabelSelector,
    min_domains: int,
) -> None:
    cache = Cache()
    for i in range(6):
        cache.add_node(_node(i))
    for n, (node, lab, assume) in enumerate(placed):
        p = churn_pod(n, "default", f"n{node}", lab)
        cache.assume_pod(p) if assume else cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    table = snap.node_table
    assert table is not None
    pod = Pod.from_manifest(
        pod_manifest(
            "incoming",
            labels=own,
            spec={
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": ZONE,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": raw_selector(sel),
                        "minDomains": min_domains,
                    }
                ]
            },
        )
    )
    plugin = PodTopologySpread()
    constraints = plugin.get_constraints(pod)
    walked = PreFilterState(constraints)
    plugin._count_walk(walked, pod, snap.list())
    counts = batch.pre_filter_counts(table, pod, constraints)
    assert counts == walked.tp_value_to_match_num
    states = []
    for m in (walked.tp_value_to_match_num, counts):
        st_ = CycleState()
        s = PreFilterState(constraints)
        s.tp_value_to_match_num = [dict(x) for x in m]
        st_.write(PRE_FILTER_STATE_KEY, s)
        for n, (node, lab) in enumerate(nominated):
            ni = snap.get(f"n{node}")
            plugin.add_pod(st_, pod, PodInfo(churn_pod(100 + n, "default", "", lab)), ni)
        states.append(s.tp_value_to_match_num)
    assert states[0] == states[1]


def test_rows_of_noted_and_looked_up() -> None:
    cache = Cache()
    for i in range(4):
        cache.add_node(_node(i))
    snap = Snapshot()
    cache.update_snapshot(snap)
    table = snap.node_table
    assert table is not None
    nodes = [snap.get("n2"), snap.get("n0")]
    want = [table.rows["n2"], table.rows["n0"]]
    noted = np.array(want, dtype=np.int64)
    table.note_rows(nodes, noted)
    assert table.rows_of(nodes) is noted
    assert table.rows_of(list(nodes)).tolist() == want  # another list: looked up
    cache.add_pod(churn_pod(1, "default", "n1", {}))
    cache.update_snapshot(snap)
    assert table.rows_of(nodes) is not noted and table.rows_of(nodes).tolist() == want
    assert table.rows_of([NodeInfo(_node(9))]) is None
