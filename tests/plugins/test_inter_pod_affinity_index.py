"""InterPodAffinity's counts from the pod-match index equal the walk, on random clusters under pod
churn: pods bound, assumed, forgotten, confirmed, relabelled, turning terminating (they still
count: upstream walks ``nodeInfo.Pods``) and removed, with incoming pods whose required and
preferred (anti-)affinity terms name one namespace, several, or all of them (an empty
``namespaceSelector``), and with nominated pods added to the PreFilter state afterwards (AddPod).
PreFilter's three maps and PreScore's ``topology_score`` are compared, as are the raw index
columns for every namespace (and all namespaces), terminating pods included or not."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pod_churn_support import PodChurn, churn_ops, churn_pod, labels, raw_selector, requirements

from kubesched.api.labels import LabelSelector
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.framework import batch as batch_mod
from kubesched.framework import node_table as node_table_mod
from kubesched.framework import pod_match_index as index_mod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import PodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.interpodaffinity import batch as ipa_batch
from kubesched.plugins.interpodaffinity.plugin import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    InterPodAffinity,
)
from kubesched.testing import node_manifest, pod_manifest

NAMESPACES = ("default", "other", "third")
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

selectors = st.lists(requirements, min_size=0, max_size=2).map(lambda rs: LabelSelector(tuple(rs)))


@st.composite
def terms(draw: Any) -> dict[str, Any]:
    t: dict[str, Any] = {
        "labelSelector": raw_selector(draw(selectors)),
        "topologyKey": draw(st.sampled_from((ZONE, HOST, "rack"))),
    }
    scope = draw(st.sampled_from(("own", "listed", "all")))
    if scope == "listed":
        t["namespaces"] = sorted(draw(st.sets(st.sampled_from(NAMESPACES), min_size=1, max_size=2)))
    elif scope == "all":
        t["namespaceSelector"] = {}
    return t


@st.composite
def affinities(draw: Any) -> dict[str, Any]:
    def weighted() -> list[dict[str, Any]]:
        return [
            {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(terms())}
            for _ in range(draw(st.integers(0, 2)))
        ]

    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        req = [draw(terms()) for _ in range(draw(st.integers(0, 2)))]
        pref = weighted()
        if req or pref:
            out[kind] = {
                "requiredDuringSchedulingIgnoredDuringExecution": req,
                "preferredDuringSchedulingIgnoredDuringExecution": pref,
            }
    return out


add_op = st.tuples(
    st.just("add"), st.integers(0, 7), st.sampled_from(NAMESPACES), labels, st.booleans(), st.booleans()
)
op = churn_ops(
    NAMESPACES,
    add_op,
    st.tuples(st.just("check"), st.integers(0, 3)),
)


class _Handle:
    """What the plugin reads of a framework handle here: the snapshot (no API objects)."""

    objects = None

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap

    def snapshot(self) -> Snapshot:
        return self._snap


def _node(i: int) -> Node:
    lab = {ZONE: "z" + "abc"[i % 3], HOST: f"n{i}"}
    if i % 4:
        lab["rack"] = f"r{i % 2}"
    return Node.from_manifest(node_manifest(f"n{i}", labels=lab))


def _states(plugin: InterPodAffinity, snap: Snapshot, pod: Pod, nominated: list[Pod]) -> Any:
    state = CycleState()
    nodes = snap.list()
    _, pf = plugin.pre_filter(state, pod, nodes)
    out: list[Any] = [None if pf is None else (pf.code, pf.message())]
    s = state.get(PRE_FILTER_STATE_KEY)
    if s is not None:
        out.append((s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts))
        for p in nominated:
            ni = snap.get(p.node_name or "")
            plugin.add_pod(state, pod, PodInfo(p), ni)
        out.append((s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts))
        out.append([plugin.filter(state, pod, ni) for ni in nodes])
    ps = plugin.pre_score(state, pod, nodes)
    out.append(None if ps is None else (ps.code, ps.message()))
    sc = state.get(PRE_SCORE_STATE_KEY)
    out.append(None if sc is None else sc.topology_score)
    return out


def _check_columns(snap: Snapshot, sel: LabelSelector) -> None:
    table = snap.node_table
    assert table is not None
    for ns in (*NAMESPACES, None):
        for terminating in (False, True):
            col = table.match_counts(ns, sel, terminating)
            for ni in snap.list():
                want = sum(
                    1
                    for pi in ni.pods
                    if (ns is None or pi.pod.namespace == ns)
                    and (terminating or pi.pod.deletion_timestamp is None)
                    and sel.matches(pi.pod.labels)
                )
                assert int(col[table.rows[ni.name]]) == want, (ni.name, ns, terminating, sel)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=st.lists(op, min_size=10, max_size=60),
    incoming=st.lists(st.tuples(st.sampled_from(NAMESPACES), labels, affinities()), min_size=4, max_size=4),
    existing_affinity=affinities(),
    nominated=st.lists(st.tuples(st.integers(0, 5), st.sampled_from(NAMESPACES), labels), max_size=3),
    sel=selectors,
    small=st.booleans(),
)
def test_indexed_inter_pod_affinity_equals_the_walk_under_churn(
    ops: list[tuple[Any, ...]],
    incoming: list[tuple[str, dict[str, str], dict[str, Any]]],
    existing_affinity: dict[str, Any],
    nominated: list[tuple[int, str, dict[str, str]]],
    sel: LabelSelector,
    small: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if small:  # evict index columns and trim the change log often
        monkeypatch.setattr(index_mod, "MAX_SELECTORS", 2)
        monkeypatch.setattr(node_table_mod, "CHANGE_LOG_MIN", 4)
    monkeypatch.setattr(ipa_batch, "WALK_MAX_NODES", 0)  # always the cached aggregate
    cache = Cache()
    churn = PodChurn(cache, _node, present=6, slots=6, existing_affinity=existing_affinity)
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = InterPodAffinity(handle=_Handle(snap))  # type: ignore[arg-type]

    def compare(which: list[int]) -> None:
        cache.update_snapshot(snap)
        noms = [churn_pod(500 + i, ns, f"n{node}", lab) for i, (node, ns, lab) in enumerate(nominated)]
        for i in which:
            ns, lab, aff = incoming[i]
            pod = Pod.from_manifest(pod_manifest("incoming", ns, labels=lab, spec={"affinity": aff}))
            fast = _states(plugin, snap, pod, noms)
            with monkeypatch.context() as mp:
                mp.setattr(batch_mod, "TABLE_PRECOMPUTE", False)
                walk = _states(plugin, snap, pod, noms)
            assert fast == walk
        _check_columns(snap, sel)

    for o in ops:
        if o[0] == "check":
            compare([o[1]])
        else:
            churn.apply(o)
    compare([0, 1, 2, 3])
