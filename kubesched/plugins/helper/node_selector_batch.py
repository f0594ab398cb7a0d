"""Node selectors and required node affinity over the node table: the column forms of
``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` matching (``NodeSelector.Match``,
``RequiredNodeAffinity.Match``) that NodeAffinity and PodTopologySpread share.

Each function returns a boolean mask over ``rows`` (indices into the
:class:`~kubesched.framework.node_table.NodeTable`), or ``None`` when only the per-node path can
decide (e.g. ``Gt``/``Lt`` on a field); the per-node matchers in :mod:`kubesched.api.node_selector`
stay the definition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.node_selector import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.api.required_node_affinity import RequiredNodeAffinity

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.node_table import NodeTable

#: The only field a ``matchFields`` requirement may name.
OBJECT_NAME_FIELD = "metadata.name"


def requirement_mask_batch(
    r: NodeSelectorRequirement, table: NodeTable, rows: IntArray, field: bool
) -> BoolArray | None:
    """Rows satisfying one requirement (``field``: a ``matchFields`` one, on ``metadata.name``);
    ``None`` when only the per-node path can tell."""
    if field:
        if r.key != OBJECT_NAME_FIELD:
            return np.zeros(len(rows), dtype=np.bool_)
        if r.operator not in ("In", "NotIn"):
            return None
        wanted = np.fromiter((table.rows.get(v, -1) for v in r.values), dtype=np.int64, count=len(r.values))
        hit = np.isin(rows, wanted)
        return hit if r.operator == "In" else ~hit
    lc = table.label(r.key)
    codes = lc.codes[rows]
    op = r.operator
    if op == "Exists":
        exists: BoolArray = codes != 0
        return exists
    if op == "DoesNotExist":
        absent: BoolArray = codes == 0
        return absent
    if op in ("In", "NotIn"):
        ids = [c for v in r.values if (c := lc.vocab.get(v)) is not None]
        hit = np.isin(codes, ids) if ids else np.zeros(len(rows), dtype=np.bool_)
        return hit if op == "In" else ~hit
    lut = np.fromiter(
        (r.matches_value(v) for v in [None, *lc.values]), dtype=np.bool_, count=len(lc.values) + 1
    )
    out: BoolArray = lut[codes]
    return out


def term_mask_batch(term: NodeSelectorTerm, table: NodeTable, rows: IntArray) -> BoolArray | None:
    """Rows matching a node selector term (requirements ANDed; an empty term matches nothing)."""
    mask = np.full(len(rows), bool(term.match_expressions or term.match_fields), dtype=np.bool_)
    for r in term.match_expressions:
        m = requirement_mask_batch(r, table, rows, False)
        if m is None:
            return None
        mask &= m
    for r in term.match_fields:
        m = requirement_mask_batch(r, table, rows, True)
        if m is None:
            return None
        mask &= m
    return mask


def selector_mask_batch(selector: NodeSelector, table: NodeTable, rows: IntArray) -> BoolArray | None:
    """Rows matching a node selector (terms ORed; no term matches nothing)."""
    mask = np.zeros(len(rows), dtype=np.bool_)
    for t in selector.terms:
        m = term_mask_batch(t, table, rows)
        if m is None:
            return None
        mask |= m
    return mask


def required_mask_batch(required: RequiredNodeAffinity, table: NodeTable, rows: IntArray) -> BoolArray | None:
    """Rows matching a pod's nodeSelector AND required node affinity."""
    mask = np.ones(len(rows), dtype=np.bool_)
    if required.label_selector is not None:
        for k, v in required.label_selector.items():
            lc = table.label(k)
            c = lc.vocab.get(v)
            if c is None:
                return np.zeros(len(rows), dtype=np.bool_)
            mask &= lc.codes[rows] == c
    if required.node_selector is not None:
        m = selector_mask_batch(required.node_selector, table, rows)
        if m is None:
            return None
        mask &= m
    return mask
