"""InterPodAffinity over the node table (kubesched's speed path; no upstream counterpart).

The per-node code in :mod:`kubesched.plugins.interpodaffinity.plugin` and
:mod:`kubesched.plugins.interpodaffinity.scoring` stays the definition. PreFilter's three count
maps and PreScore's ``topology_score`` are sums over nodes of per-node contributions, so they are
kept as cached :meth:`~kubesched.framework.node_table.NodeTable.aggregate` entries: only the nodes that
changed since the last cycle are re-walked. The cache key holds everything a contribution reads
besides the NodeInfo (the incoming pod's namespace, labels and namespace labels, its merged terms,
the weights). Filter and Score read the maps through label-code lookup arrays. Results are
identical to the walk (``tests/plugins/test_vectorised_equivalence.py``); map iteration order may differ,
which nothing reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.api.pod import Pod
from kubesched.framework.affinity_term import AffinityTerm
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


def incoming_term_counts(
    table: NodeTable, kind: str, terms: tuple[AffinityTerm, ...], contrib: Contrib
) -> dict[TopologyPair, int]:
    """PreFilter's ``affinity_counts`` (``kind="affinity"``) or ``anti_affinity_counts``
    (``kind="anti"``) for the incoming pod's merged ``terms`` (a fresh dict)."""
    if not terms:
        return {}
    return dict(table.aggregate(("InterPodAffinity." + kind, terms), contrib))


def topology_score(
    table: NodeTable, key: tuple[Any, ...], contrib: Contrib, initial: Sequence[NodeInfo] | None
) -> dict[str, dict[str, int]]:
    """PreScore's ``topology_score`` from per-node ``{(topologyKey, value): score}`` contributions
    (``initial``: the only nodes that can contribute, or None for all)."""
    flat = table.aggregate(
        ("InterPodAffinity.score", *key),
        contrib,
        None if initial is None else lambda: _rows_of(table, initial),
    )
    out: dict[str, dict[str, int]] = {}
    for (k, v), n in flat.items():
        out.setdefault(k, {})[v] = n
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
