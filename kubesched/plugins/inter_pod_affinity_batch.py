"""InterPodAffinity over the node table (kubesched's speed path; no upstream counterpart).

The per-node code in :mod:`kubesched.plugins.inter_pod_affinity` and
:mod:`kubesched.plugins.inter_pod_affinity_scoring` stays the definition. PreFilter's three count
maps and PreScore's ``topology_score`` are sums over nodes of per-node contributions, so they are
kept as cached :meth:`~kubesched.cache.node_table.NodeTable.aggregate` entries: only the nodes that
changed since the last cycle are re-walked. The cache key holds everything a contribution reads
besides the NodeInfo (the incoming pod's namespace, labels and namespace labels, its merged terms,
the weights). Filter and Score read the maps through label-code lookup arrays. Results are
identical to the walk (``tests/test_vectorised_equivalence.py``); map iteration order may differ,
which nothing reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.pod import Pod
from kubesched.cache.node_table import NodeTable
from kubesched.framework.affinity_term import AffinityTerm
from kubesched.framework.batch import BoolArray, IntArray, label_lookup
from kubesched.framework.node_info import NodeInfo

#: up to this many nodes with pods having required anti-affinity, they are walked (no cache entry)
WALK_MAX_NODES = 16

TopologyPair = tuple[str, str]
Contrib = Callable[[NodeInfo], dict[Any, int]]


def _pod_key(pod: Pod, ns_labels: Mapping[str, str] | None) -> tuple[Any, ...]:
    """What term matching reads of the incoming pod."""
    return (pod.namespace, frozenset(pod.labels.items()),
            frozenset(ns_labels.items()) if ns_labels is not None else None)


def existing_anti_affinity_counts(table: NodeTable, pod: Pod, ns_labels: Mapping[str, str],
                                  nodes_with_anti: Sequence[NodeInfo], contrib: Contrib) -> dict[TopologyPair, int]:
    """PreFilter's ``existing_anti_affinity_counts`` (a fresh dict); ``contrib(ni)`` is the walk's
    contribution of one node, ``nodes_with_anti`` the only nodes that can contribute."""
    if len(nodes_with_anti) <= WALK_MAX_NODES:
        out: dict[TopologyPair, int] = {}
        for ni in nodes_with_anti:
            for k, v in contrib(ni).items():
                out[k] = out.get(k, 0) + v
        return out
    rows = table.rows
    initial = [rows[ni.name] for ni in nodes_with_anti if ni.name in rows]
    return dict(table.aggregate(("InterPodAffinity.existingAnti", *_pod_key(pod, ns_labels)), contrib, initial))


def incoming_term_counts(table: NodeTable, kind: str, terms: tuple[AffinityTerm, ...],
                         contrib: Contrib) -> dict[TopologyPair, int]:
    """PreFilter's ``affinity_counts`` (``kind="affinity"``) or ``anti_affinity_counts``
    (``kind="anti"``) for the incoming pod's merged ``terms`` (a fresh dict)."""
    if not terms:
        return {}
    return dict(table.aggregate(("InterPodAffinity." + kind, terms), contrib))


def topology_score(table: NodeTable, key: tuple[Any, ...], contrib: Contrib,
                   initial: Sequence[NodeInfo] | None) -> dict[str, dict[str, int]]:
    """PreScore's ``topology_score`` from per-node ``{(topologyKey, value): score}`` contributions
    (``initial``: the only nodes that can contribute, or None for all)."""
    rows = table.rows
    init = None if initial is None else [rows[ni.name] for ni in initial if ni.name in rows]
    flat = table.aggregate(("InterPodAffinity.score", *key), contrib, init)
    out: dict[str, dict[str, int]] = {}
    for (k, v), n in flat.items():
        out.setdefault(k, {})[v] = n
    return out


def _by_key(m: Mapping[TopologyPair, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (k, v), n in m.items():
        out.setdefault(k, {})[v] = n
    return out


def filter_mask(s: Any, table: NodeTable, rows: IntArray, self_affine: bool) -> BoolArray:
    """``InterPodAffinity.filter`` verdicts over ``rows`` for PreFilter state ``s``;
    ``self_affine``: the pod matches all its own affinity terms."""
    mask = np.ones(len(rows), dtype=np.bool_)
    if s.affinity_terms:
        has_all = np.ones(len(rows), dtype=np.bool_)
        exists = np.ones(len(rows), dtype=np.bool_)
        by_key = _by_key(s.affinity_counts)
        for t in s.affinity_terms:
            codes, lookup = label_lookup(table, t.topology_key, by_key.get(t.topology_key, {}))
            cr = codes[rows]
            has_all &= cr > 0
            exists &= lookup[cr] > 0
        if not s.affinity_counts and self_affine:
            mask &= has_all
        else:
            mask &= has_all & exists
    if s.anti_affinity_counts:
        by_key = _by_key(s.anti_affinity_counts)
        for t in s.anti_affinity_terms:
            codes, lookup = label_lookup(table, t.topology_key, by_key.get(t.topology_key, {}))
            mask &= lookup[codes[rows]] <= 0
    if s.existing_anti_affinity_counts:
        for key, values in _by_key(s.existing_anti_affinity_counts).items():
            codes, lookup = label_lookup(table, key, values)
            mask &= lookup[codes[rows]] <= 0
    return mask


def score_array(topology_score: Mapping[str, Mapping[str, int]], table: NodeTable, rows: IntArray) -> IntArray:
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
