"""PodTopologySpread over the node table (kubesched's speed path; no upstream counterpart).

The per-node code in :mod:`kubesched.plugins.podtopologyspread.plugin` and
:mod:`kubesched.plugins.podtopologyspread.scoring` stays the definition; the functions here
give exactly the same states, verdicts and scores (``tests/plugins/test_vectorised_equivalence.py``):

* the per-node count of pods matching a constraint's selector in the pod's namespace is
  :meth:`~kubesched.framework.node_table.NodeTable.match_counts` (kept by pod deltas), so
  PreFilter/PreScore cost O(nodes) NumPy work plus O(pods on changed nodes) instead of walking
  every pod of every node;
* domain sums are ``bincount`` over the topology key's label codes, domains listed in the order
  of their first node in the snapshot list (the order the walk inserts them, which the critical
  paths depend on);
* Filter and Score read per-domain counts through label-code lookup arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.api.labels import LabelSelector
from kubesched.api.node import HOSTNAME_LABEL
from kubesched.api.pod import Pod
from kubesched.api.required_node_affinity import RequiredNodeAffinity, get_required_node_affinity
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated
from kubesched.framework.batch import BoolArray, IntArray, label_lookup
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins.helper.node_selector_batch import required_mask_batch
from kubesched.plugins.podtopologyspread.common import HONOR, SpreadConstraint
from kubesched.plugins.podtopologyspread.scoring import PreScoreState, topology_normalizing_weight

_DO_NOT_SCHEDULE_TAINTS = (NO_SCHEDULE, NO_EXECUTE)


def match_count_column(table: NodeTable, selector: LabelSelector | None, namespace: str) -> IntArray | None:
    """Per-row ``count_pods_match_selector(pods, selector, namespace)``; ``None`` when it is 0
    everywhere (nil or empty selector)."""
    if selector is None or selector.empty:
        return None
    return table.match_counts(namespace, selector)


def inclusion_mask(
    c: SpreadConstraint, pod: Pod, required: RequiredNodeAffinity, table: NodeTable, rows: IntArray
) -> BoolArray | None:
    """``c.match_node_inclusion_policies`` over ``rows``; ``None`` if a node-affinity form has no batch form."""
    mask = np.ones(len(rows), dtype=np.bool_)
    if c.node_affinity_policy == HONOR and (
        required.label_selector is not None or required.node_selector is not None
    ):
        m = required_mask_batch(required, table, rows)
        if m is None:
            return None
        mask &= m
    if c.node_taints_policy == HONOR:
        ok = np.array(
            [
                find_untolerated(ts, pod.tolerations, _DO_NOT_SCHEDULE_TAINTS) is None
                for ts in table.taint_sets
            ],
            dtype=np.bool_,
        )
        mask &= ok[table.taint_sig[rows]]
    return mask


def _sums(codes: IntArray, counts: IntArray | None, size: int) -> IntArray:
    if counts is None or len(codes) == 0:
        return np.zeros(size, dtype=np.int64)
    return np.bincount(codes, weights=counts, minlength=size).astype(np.int64)


def pre_filter_counts(
    table: NodeTable, pod: Pod, constraints: list[SpreadConstraint]
) -> list[dict[str, int]] | None:
    """``tp_value_to_match_num`` of PreFilter over every node of the table (snapshot order), or
    ``None`` when some part has no batch form."""
    rows = table.order
    required = get_required_node_affinity(pod)
    cols = [table.label(c.topology_key) for c in constraints]
    eligible = np.ones(len(rows), dtype=np.bool_)
    for lc in cols:
        eligible &= lc.codes[rows] > 0
    out: list[dict[str, int]] = []
    for c, lc in zip(constraints, cols, strict=True):
        inc = inclusion_mask(c, pod, required, table, rows)
        if inc is None:
            return None
        inc &= eligible
        sel_rows = rows[inc]
        codes = lc.codes[sel_rows].astype(np.int64)
        col = match_count_column(table, c.selector, pod.namespace)
        sums = _sums(codes, col[sel_rows] if col is not None else None, len(lc.values) + 1)
        uniq, first = np.unique(codes, return_index=True)
        values = lc.values
        out.append({values[k - 1]: int(sums[k]) for k in uniq[np.argsort(first, kind="stable")].tolist()})
    return out


def filter_mask(s: Any, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray:
    """``PodTopologySpread.filter`` verdicts over ``rows`` for PreFilter state ``s``."""
    mask = np.ones(len(rows), dtype=np.bool_)
    for i, c in enumerate(s.constraints):
        codes, lookup = label_lookup(table, c.topology_key, s.tp_value_to_match_num[i])
        cr = codes[rows]
        self_match = 1 if c.selector_matches(pod.labels) else 0
        skew = lookup[cr] + (self_match - s.min_match_num(i, c.min_domains))
        mask &= (cr > 0) & (skew <= c.max_skew)
    return mask


def init_pre_score_state(
    constraints: list[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all: bool,
    table: NodeTable,
) -> PreScoreState | None:
    """``scoring.init_pre_score_state`` over the table's label columns (same ignored nodes, the
    same domains in the same insertion order, the same weights); ``None`` when a filtered node is
    not in the table."""
    found = table.rows_of(filtered_nodes)
    if found is None:
        return None
    rows = found
    s = PreScoreState(constraints)
    s.topology_value_to_pod_counts = [{} for _ in constraints]
    if require_all:
        eligible = np.ones(len(rows), dtype=np.bool_)
        for c in constraints:
            eligible &= table.label(c.topology_key).codes[rows] > 0
        if not eligible.all():
            infos = table.infos
            s.ignored_nodes = {infos[r].name for r in rows[~eligible].tolist()}  # type: ignore[union-attr]
            rows = rows[eligible]
    for i, c in enumerate(constraints):
        if c.topology_key == HOSTNAME_LABEL:
            size = len(filtered_nodes) - len(s.ignored_nodes)
        else:
            lc = table.label(c.topology_key)
            codes = lc.codes[rows]
            uniq, first = np.unique(codes, return_index=True)
            values = lc.values
            s.topology_value_to_pod_counts[i] = {
                values[k - 1] if k else "": 0 for k in uniq[np.argsort(first, kind="stable")].tolist()
            }
            # distinct values, not codes: a node without the key and one with an empty value
            # are both in domain "" (upstream reads the missing label as "")
            size = len(s.topology_value_to_pod_counts[i])
        s.topology_normalizing_weight.append(topology_normalizing_weight(size))
    return s


def add_all_node_counts(s: Any, pod: Pod, table: NodeTable, require_all: bool) -> bool:
    """The ``processAllNode`` pass of PreScore (``count_all_nodes``) over every table row; False
    (nothing changed) when some part has no batch form."""
    rows = table.order
    required = get_required_node_affinity(pod)
    eligible = np.ones(len(rows), dtype=np.bool_)
    if require_all:
        for c in s.constraints:
            eligible &= table.label(c.topology_key).codes[rows] > 0
    adds: list[tuple[dict[str, int], list[tuple[str, int]]]] = []
    one_key = len({c.topology_key for c in s.constraints}) == 1
    for i, c in enumerate(s.constraints):
        counts = s.topology_value_to_pod_counts[i]
        if not counts:
            continue
        if (one_key if require_all else "" not in counts) and _includes_every_node(c, required):
            # every node with the key counts (a node without it is either not eligible or only
            # counted under "", which is not asked for): the table's per-domain sums of the column
            adds.append((counts, _domain_counts(table, c, pod.namespace, counts)))
            continue
        inc = inclusion_mask(c, pod, required, table, rows)
        if inc is None:
            return False
        inc &= eligible
        sel_rows = rows[inc]
        lc = table.label(c.topology_key)
        col = match_count_column(table, c.selector, pod.namespace)
        sums = _sums(
            lc.codes[sel_rows].astype(np.int64),
            col[sel_rows] if col is not None else None,
            len(lc.values) + 1,
        )
        vocab = lc.vocab
        add: list[tuple[str, int]] = []
        for value in counts:
            code = vocab.get(value)
            n = int(sums[code]) if code is not None else 0
            if value == "":
                n += int(sums[0])  # nodes without the key count under ""
            add.append((value, n))
        adds.append((counts, add))
    for counts, add in adds:
        for value, n in add:
            counts[value] += n
    return True


def _includes_every_node(c: SpreadConstraint, required: RequiredNodeAffinity) -> bool:
    """True when :func:`inclusion_mask` is all True whatever the node: neither policy filters."""
    if c.node_taints_policy == HONOR:
        return False
    return c.node_affinity_policy != HONOR or (
        required.label_selector is None and required.node_selector is None
    )


def _domain_counts(
    table: NodeTable, c: SpreadConstraint, namespace: str, counts: dict[str, int]
) -> list[tuple[str, int]]:
    """Per value of ``counts`` (none of them ""), the matching pods on the nodes whose
    ``c.topology_key`` label has that value (:meth:`NodeTable.domain_sums` of the
    :func:`match_count_column`, kept per selector and key)."""
    col = match_count_column(table, c.selector, namespace)
    if col is None:
        return [(value, 0) for value in counts]
    key = c.topology_key
    sums = table.domain_sums(("PodTopologySpread", namespace, c.selector), col, key)
    return [(value, sums.get((key, value), 0)) for value in counts]


def score_array(s: Any, pod: Pod, table: NodeTable, rows: IntArray) -> tuple[IntArray, BoolArray | None]:
    """Raw ``score_node`` over ``rows`` and the mask of ignored rows (``None``: none ignored)."""
    total = np.zeros(len(rows), dtype=np.float64)
    codes: npt.NDArray[np.int32]
    for i, c in enumerate(s.constraints):
        if c.topology_key == HOSTNAME_LABEL:
            codes = table.label(c.topology_key).codes[rows]
            col = match_count_column(table, c.selector, pod.namespace)
            cnt = col[rows] if col is not None else np.zeros(len(rows), dtype=np.int64)
        else:
            all_codes, lookup = label_lookup(table, c.topology_key, s.topology_value_to_pod_counts[i])
            codes = all_codes[rows]
            cnt = lookup[codes]
        per = cnt.astype(np.float64) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
        total += np.where(codes > 0, per, 0.0)
    a = np.abs(total)
    f = np.floor(a)
    r = np.where(a - f >= 0.5, f + 1.0, f)
    out = np.where(total >= 0, r, -r).astype(np.int64)
    ignored: BoolArray | None = None
    if s.ignored_nodes:
        infos = table.infos
        ign = s.ignored_nodes
        ignored = np.fromiter((infos[r].name in ign for r in rows.tolist()), dtype=np.bool_, count=len(rows))
        out[ignored] = 0
    return out, ignored


def normalize_array(scores: IntArray, ignored: BoolArray | None, max_node_score: int) -> IntArray:
    """``normalize_scores`` on an array (``ignored`` rows -> 0)."""
    ok = np.ones(len(scores), dtype=np.bool_) if ignored is None else ~ignored
    if not ok.any():
        return np.zeros(len(scores), dtype=np.int64)
    kept = scores[ok]
    mn = int(kept.min())
    mx = max(0, int(kept.max()))
    if mx == 0:
        out = np.full(len(scores), max_node_score, dtype=np.int64)
    else:
        out = (max_node_score * (mx + mn - scores)) // mx
    out[~ok] = 0
    return out
