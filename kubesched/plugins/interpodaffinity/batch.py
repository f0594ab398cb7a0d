"""InterPodAffinity over the node table (kubesched's speed path; no upstream counterpart).

The per-node code in :mod:`kubesched.plugins.interpodaffinity.plugin` and
:mod:`kubesched.plugins.interpodaffinity.scoring` stays the definition. Where the incoming pod's
own terms count existing pods (PreFilter's affinity and anti-affinity counts, PreScore's preferred
terms), the per-node counts come from the pod-match index
(:meth:`~kubesched.framework.node_table.NodeTable.match_counts`, one column per namespace and
selector, terminating pods included; a term of several namespaces sums their columns, "all terms"
conjoins the selectors) and are summed per topology domain with ``bincount`` over the label codes.
Where existing pods' own terms are evaluated against the incoming pod (existing anti-affinity, the
existing pods' required and preferred terms in PreScore), the maps are sums of per-node
contributions over the nodes with such pods, kept as cached
:meth:`~kubesched.framework.node_table.NodeTable.aggregate` entries: only the nodes that changed
since the last cycle are re-walked. The cache key holds everything a contribution reads besides
the NodeInfo (the incoming pod's namespace, labels and namespace labels, the weight). Filter and Score read the maps through label-code lookup arrays. Results are
identical to the walk (``tests/plugins/test_vectorised_equivalence.py``); map iteration order may differ,
which nothing reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.api.labels import LabelSelector, Requirement
from kubesched.api.pod import Pod
from kubesched.framework.affinity_term import AffinityTerm, WeightedAffinityTerm
from kubesched.framework.batch import BoolArray, IntArray, label_lookup
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable

#: up to this many nodes with pods having required anti-affinity, they are walked (no cache entry)
WALK_MAX_NODES = 16

TopologyPair = tuple[str, str]
Contrib = Callable[[NodeInfo], dict[Any, int]]


def _pod_key(pod: Pod, ns_labels: Mapping[str, str] | None) -> tuple[Any, ...]:
    """What term matching reads of the incoming pod."""
    return (
        pod.namespace,
        frozenset(pod.labels.items()),
        frozenset(ns_labels.items()) if ns_labels is not None else None,
    )


def existing_anti_affinity_counts(
    table: NodeTable,
    pod: Pod,
    ns_labels: Mapping[str, str],
    nodes_with_anti: Sequence[NodeInfo],
    contrib: Contrib,
) -> dict[TopologyPair, int]:
    """PreFilter's ``existing_anti_affinity_counts`` (a fresh dict); ``contrib(ni)`` is the walk's
    contribution of one node, ``nodes_with_anti`` the only nodes that can contribute."""
    if len(nodes_with_anti) <= WALK_MAX_NODES:
        out: dict[TopologyPair, int] = {}
        for ni in nodes_with_anti:
            for k, v in contrib(ni).items():
                out[k] = out.get(k, 0) + v
        return out
    return dict(
        table.aggregate(
            ("InterPodAffinity.existingAnti", *_pod_key(pod, ns_labels)),
            contrib,
            lambda: _rows_of(table, nodes_with_anti),
        )
    )


def term_counts(table: NodeTable, term: AffinityTerm) -> tuple[Any, IntArray] | None:
    """``(key, counts)``: per row, the pods of the row's NodeInfo (terminating ones included) that
    match the incoming pod's merged ``term`` with no namespace labels (``AffinityTerm.matches(pod,
    None)``), from the pod-match index, and a key identifying that column; ``None`` when no pod
    can match (nil selector, no namespace)."""
    if term.selector is None:
        return None
    if term.namespace_selector is not None and term.namespace_selector.matches({}):
        return (None, term.selector), table.match_counts(None, term.selector, terminating=True)
    namespaces = sorted(term.namespaces)
    cols = [table.match_counts(ns, term.selector, terminating=True) for ns in namespaces]
    if not cols:
        return None
    key = (tuple(namespaces), term.selector)
    if len(cols) == 1:
        return key, cols[0]
    out = cols[0].copy()
    for c in cols[1:]:
        out += c
    return key, out


def all_terms_counts(table: NodeTable, terms: Sequence[AffinityTerm]) -> tuple[Any, IntArray] | None:
    """:func:`term_counts` of the pods matching *every* one of ``terms``
    (``podMatchesAllAffinityTerms``, no namespace labels): the namespaces every term admits, and
    the conjunction of the selectors."""
    if not terms:
        return None
    namespaces: frozenset[str] | None = None  # None: every namespace
    requirements: list[Requirement] = []
    for t in terms:
        if t.selector is None:
            return None
        requirements.extend(t.selector.requirements)
        if t.namespace_selector is not None and t.namespace_selector.matches({}):
            continue
        namespaces = t.namespaces if namespaces is None else namespaces & t.namespaces
    merged = AffinityTerm(
        namespaces if namespaces is not None else frozenset(),
        LabelSelector(tuple(requirements)),
        "",
        LabelSelector(()) if namespaces is None else None,
    )
    return term_counts(table, merged)


def add_domain_counts(
    out: dict[TopologyPair, int], table: NodeTable, key: str, column: tuple[Any, IntArray], weight: int
) -> None:
    """Add ``weight * Σ counts`` per value of label ``key`` over the snapshot's rows to ``out`` at
    ``(key, value)``, for every value some node with a positive count has (entries created even
    where the weighted sums of several terms cancel, as the walk's ``+=`` does). ``column``: a
    :func:`term_counts` result; the sums are kept per column and label key by
    :meth:`~kubesched.framework.node_table.NodeTable.domain_sums`."""
    sums = table.domain_sums(("InterPodAffinity", column[0]), column[1], key)
    if not sums:
        return
    if not out:
        out.update(sums if weight == 1 else {k: weight * v for k, v in sums.items()})
        return
    for k, v in sums.items():
        out[k] = out.get(k, 0) + weight * v


def incoming_affinity_counts(table: NodeTable, terms: Sequence[AffinityTerm]) -> dict[TopologyPair, int]:
    """PreFilter's ``affinity_counts``: per ``(term.topologyKey, value)`` of each term, the pods
    matching all of the incoming pod's merged required affinity ``terms`` on nodes with that
    value (``interpodaffinity/filtering.go: getIncomingAffinityAntiAffinityCounts``)."""
    out: dict[TopologyPair, int] = {}
    column = all_terms_counts(table, terms)
    if column is None:
        return out
    for t in terms:
        add_domain_counts(out, table, t.topology_key, column, 1)
    return out


def incoming_anti_affinity_counts(table: NodeTable, terms: Sequence[AffinityTerm]) -> dict[TopologyPair, int]:
    """PreFilter's ``anti_affinity_counts``: per term, the pods matching it, by the term's topology
    domain."""
    out: dict[TopologyPair, int] = {}
    for t in terms:
        column = term_counts(table, t)
        if column is not None:
            add_domain_counts(out, table, t.topology_key, column, 1)
    return out


def preferred_term_scores(
    table: NodeTable, affinity: Sequence[WeightedAffinityTerm], anti: Sequence[WeightedAffinityTerm]
) -> dict[TopologyPair, int]:
    """The part of PreScore's ``topology_score`` that the incoming pod's own preferred terms give:
    ``+weight`` (affinity) or ``-weight`` (anti-affinity) per existing pod matching the term, at
    the term's topology domain of the pod's node (``scoring.go: processExistingPod``, first two
    ``processTerms``)."""
    out: dict[TopologyPair, int] = {}
    for terms, sign in ((affinity, 1), (anti, -1)):
        for w in terms:
            column = term_counts(table, w.term)
            if column is not None:
                add_domain_counts(out, table, w.term.topology_key, column, sign * w.weight)
    return out


def topology_score(
    table: NodeTable,
    key: tuple[Any, ...],
    contrib: Contrib,
    initial: Sequence[NodeInfo],
    preferred: Mapping[TopologyPair, int],
) -> dict[str, dict[str, int]]:
    """PreScore's ``topology_score``: the existing pods' own terms as per-node
    ``{(topologyKey, value): score}`` contributions (``initial``: the nodes with pods with
    affinity, the only ones that can contribute) plus ``preferred``
    (:func:`preferred_term_scores`)."""
    flat = table.aggregate(("InterPodAffinity.score", *key), contrib, lambda: _rows_of(table, initial))
    out: dict[str, dict[str, int]] = {}
    for (k, v), n in flat.items():
        out.setdefault(k, {})[v] = n
    for (k, v), n in preferred.items():
        scores = out.setdefault(k, {})
        scores[v] = scores.get(v, 0) + n
    return out


def _rows_of(table: NodeTable, nodes: Sequence[NodeInfo]) -> list[int]:
    rows = table.rows
    return [rows[ni.name] for ni in nodes if ni.name in rows]


def _by_key(m: Mapping[TopologyPair, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (k, v), n in m.items():
        out.setdefault(k, {})[v] = n
    return out


CodeLookup = tuple[npt.NDArray[np.int32], IntArray]
Lookups = tuple[list[CodeLookup], list[CodeLookup], list[CodeLookup]]


def filter_lookups(s: Any, table: NodeTable) -> Lookups:
    """``(codes, lookup)`` pairs of the affinity terms, the anti-affinity terms and the existing
    pods' anti-affinity keys of PreFilter state ``s`` (built once per state and table version)."""
    aff = _by_key(s.affinity_counts)
    anti = _by_key(s.anti_affinity_counts) if s.anti_affinity_counts else {}
    return (
        [label_lookup(table, t.topology_key, aff.get(t.topology_key, {})) for t in s.affinity_terms],
        [label_lookup(table, t.topology_key, anti.get(t.topology_key, {})) for t in s.anti_affinity_terms]
        if s.anti_affinity_counts
        else [],
        [label_lookup(table, k, v) for k, v in _by_key(s.existing_anti_affinity_counts).items()],
    )


def filter_mask(s: Any, lookups: Lookups, rows: IntArray, self_affine: bool) -> BoolArray:
    """``InterPodAffinity.filter`` verdicts over ``rows`` for PreFilter state ``s`` and its
    :func:`filter_lookups`; ``self_affine``: the pod matches all its own affinity terms."""
    mask = np.ones(len(rows), dtype=np.bool_)
    aff, anti, existing = lookups
    if aff:
        has_all = np.ones(len(rows), dtype=np.bool_)
        exists = np.ones(len(rows), dtype=np.bool_)
        for codes, lookup in aff:
            cr = codes[rows]
            has_all &= cr > 0
            exists &= lookup[cr] > 0
        if not s.affinity_counts and self_affine:
            mask &= has_all
        else:
            mask &= has_all & exists
    for codes, lookup in anti:
        mask &= lookup[codes[rows]] <= 0
    for codes, lookup in existing:
        mask &= lookup[codes[rows]] <= 0
    return mask


def score_array(
    topology_score: Mapping[str, Mapping[str, int]], table: NodeTable, rows: IntArray
) -> IntArray:
    """``score_node`` over ``rows``."""
    total = np.zeros(len(rows), dtype=np.int64)
    for key, values in topology_score.items():
        codes, lookup = label_lookup(table, key, dict(values))
        total += lookup[codes[rows]]
    return total


def normalize_array(scores: IntArray, max_node_score: int) -> IntArray:
    """``normalize_scores`` on an array (the caller checks ``topology_score`` is non-empty)."""
    if len(scores) == 0:
        return scores
    mn = int(scores.min())
    diff = int(scores.max()) - mn
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    f = float(max_node_score) * ((scores - mn).astype(np.float64) / float(diff))
    return f.astype(np.int64)
