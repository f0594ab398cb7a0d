"""PodTopologySpread's PreScore over the node table (``podtopologyspread/batch.py``:
``init_pre_score_state`` and ``add_all_node_counts``, whose per-domain counts come from the table's
per-domain sums of the pod-match index when every node with the key counts) equals the per-node
pass (``scoring.init_pre_score_state`` + ``count_all_nodes``) on random clusters under pod churn:
bound, assumed, forgotten and confirmed pods, label updates, terminating pods, nodes leaving and
joining; nodes without the zone label or with an empty zone value; the pod's own constraints
(every key required) or default-like ones (nodes without a key counted under ""); node affinity
and taint policies Honor and Ignore; one or two topology keys."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pod_churn_support import PodChurn, churn_ops, labels, requirements

from kubesched.api.labels import LabelSelector
from kubesched.api.node import HOSTNAME_LABEL, Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.framework import node_table as node_table_mod
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.podtopologyspread import batch
from kubesched.plugins.podtopologyspread.common import SpreadConstraint
from kubesched.plugins.podtopologyspread.scoring import count_all_nodes, init_pre_score_state
from kubesched.testing import node_manifest, pod_manifest

NAMESPACES = ("default", "other")
ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"
#: per node slot: its zone label (None: absent; "": an empty value) and rack
ZONES = ("za", "zb", None, "za", "", "zc", "zb", "za")
RACKS = ("r1", "r2", "r1", None, "r2", "r1", "r2", "r1")

selectors = st.lists(requirements, min_size=0, max_size=2).map(lambda rs: LabelSelector(tuple(rs)))
policies = st.sampled_from(("Honor", "Ignore"))
constraint = st.builds(
    lambda key, sel, na, nt: SpreadConstraint(1, key, sel, 1, na, nt),
    st.sampled_from((ZONE, ZONE, RACK, HOSTNAME_LABEL)),
    selectors,
    policies,
    st.sampled_from(("Ignore", "Ignore", "Honor")),
)
add_op = st.tuples(st.just("add"), st.integers(0, 7), st.sampled_from(NAMESPACES), labels, st.booleans())
op = churn_ops(
    NAMESPACES,
    add_op,
    st.tuples(st.just("node_out"), st.integers(0, 7)),
    st.tuples(st.just("node_in"), st.integers(0, 7)),
    st.tuples(
        st.just("check"),
        st.lists(constraint, min_size=1, max_size=2),
        st.booleans(),
        st.sampled_from(NAMESPACES),
        st.booleans(),
    ),
)


def _node(i: int) -> Node:
    lab: dict[str, str] = {}
    if ZONES[i] is not None:
        lab[ZONE] = ZONES[i]
    if RACKS[i] is not None:
        lab[RACK] = RACKS[i]
    taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if i % 4 == 1 else None
    return Node.from_manifest(node_manifest(f"n{i}", labels=lab, taints=taints))


def _pod(namespace: str, with_affinity: bool) -> Pod:
    spec: dict[str, Any] = {}
    if with_affinity:
        spec["nodeSelector"] = {RACK: "r1"}
    return Pod.from_manifest(pod_manifest("incoming", namespace, labels={"app": "a"}, spec=spec))


def _check(snap: Snapshot, constraints: list[SpreadConstraint], require_all: bool, pod: Pod) -> None:
    table = snap.node_table
    assert table is not None
    all_nodes = snap.list()
    filtered = all_nodes[::2] or all_nodes  # the feasible nodes: some of them
    want = init_pre_score_state(constraints, filtered, require_all)
    count_all_nodes(want, pod, all_nodes, require_all)
    got = batch.init_pre_score_state(constraints, filtered, require_all, table)
    assert got is not None
    assert batch.add_all_node_counts(got, pod, table, require_all)
    assert got.ignored_nodes == want.ignored_nodes
    assert [list(m.items()) for m in got.topology_value_to_pod_counts] == [
        list(m.items()) for m in want.topology_value_to_pod_counts
    ]
    assert np.allclose(got.topology_normalizing_weight, want.topology_normalizing_weight)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, min_size=20, max_size=80), small=st.booleans())
def test_batch_pre_score_counts_equal_the_per_node_pass(
    ops: list[tuple[Any, ...]], small: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if small:  # trim the change log and drop cached sums often
        monkeypatch.setattr(node_table_mod, "CHANGE_LOG_MIN", 4)
        monkeypatch.setattr(node_table_mod, "DERIVED_CACHE_SIZE", 2)
    cache = Cache()
    churn = PodChurn(cache, _node, present=6, slots=8)
    snap = Snapshot()
    cache.update_snapshot(snap)
    for o in ops:
        if o[0] == "check":
            cache.update_snapshot(snap)
            _check(snap, o[1], o[2], _pod(o[3], o[4]))
        else:
            churn.apply(o)
