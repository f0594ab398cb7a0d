"""PodTopologySpread scoring (``pkg/scheduler/framework/plugins/podtopologyspread/scoring.go``).

Raw score of a node = ``round(Σ cnt_c * ln(size_c + 2) + (maxSkew_c - 1))`` over the soft
constraints whose key the node has (Go ``math.Round``: half away from zero); NormalizeScore
maps it onto 0..100 with ``100 * (max + min - s) // max`` (fewer matching pods -> higher score).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api.node import HOSTNAME_LABEL
from kubesched.api.pod import Pod
from kubesched.api.required_node_affinity import get_required_node_affinity
from kubesched.framework.cycle_state import StateData
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.plugins.podtopologyspread.common import (
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

INVALID_SCORE: Final = -1


def go_round(x: float) -> int:
    """Go ``math.Round``: nearest integer, halves away from zero."""
    f = math.floor(abs(x))
    r = f + 1 if abs(x) - f >= 0.5 else f
    return int(r) if x >= 0 else -int(r)


def topology_normalizing_weight(size: int) -> float:
    """``topologyNormalizingWeight``: ``ln(size + 2)``."""
    return math.log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    """``scoreForCount``: ``cnt * tp_weight + (max_skew - 1)``."""
    return float(cnt) * tp_weight + float(max_skew - 1)


@dataclass(slots=True)
class PreScoreState(StateData):
    """``preScoreState``: soft constraints, nodes ignored for lacking a key, per-constraint
    ``value -> matching pod count`` (hostname constraints are counted in Score) and the
    per-constraint weights ``ln(size + 2)``. Not changed by AddPod/RemovePod: ``clone`` is self."""

    constraints: list[SpreadConstraint]
    ignored_nodes: set[str] = field(default_factory=set)
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)
    #: ignored mask of the rows last scored by ``score_batch`` (read by ``normalize_score_batch``)
    batch_ignored: Any = None

    def clone(self) -> PreScoreState:
        return self


def init_pre_score_state(
    constraints: list[SpreadConstraint], filtered_nodes: Sequence[NodeInfo], require_all_topologies: bool
) -> PreScoreState:
    """``initPreScoreState`` once the soft constraints are known: ignored nodes, the domains
    present among the filtered nodes and the normalizing weights."""
    s = PreScoreState(constraints)
    s.topology_value_to_pod_counts = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for ni in filtered_nodes:
        node = ni.node
        if node is None:
            continue
        if require_all_topologies and not node_labels_match_spread_constraints(node.labels, constraints):
            s.ignored_nodes.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME_LABEL:
                continue
            value = node.labels.get(c.topology_key, "")
            if value not in s.topology_value_to_pod_counts[i]:
                s.topology_value_to_pod_counts[i][value] = 0
                topo_size[i] += 1
    for i, c in enumerate(constraints):
        sz = topo_size[i]
        if c.topology_key == HOSTNAME_LABEL:
            sz = len(filtered_nodes) - len(s.ignored_nodes)
        s.topology_normalizing_weight.append(topology_normalizing_weight(sz))
    return s


def count_all_nodes(
    s: PreScoreState, pod: Pod, all_nodes: Sequence[NodeInfo], require_all_topologies: bool
) -> None:
    """The ``processAllNode`` pass of PreScore: add every node's matching pods to the counts of
    its domain, for nodes passing the constraint's inclusion policies (and having every key when
    ``require_all_topologies``) whose domain is one of the candidate domains."""
    required = get_required_node_affinity(pod)
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        if require_all_topologies and not node_labels_match_spread_constraints(node.labels, s.constraints):
            continue
        for i, c in enumerate(s.constraints):
            if not c.match_node_inclusion_policies(pod, node, required):
                continue
            value = node.labels.get(c.topology_key, "")
            counts = s.topology_value_to_pod_counts[i]
            if value not in counts:
                continue
            counts[value] += count_pods_match_selector(ni.pods, c.selector, pod.namespace)


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """``Score``: 0 for an ignored node, else the rounded weighted sum (module docstring)."""
    node = node_info.node
    assert node is not None
    if node.name in s.ignored_nodes:
        return 0
    score = 0.0
    for i, c in enumerate(s.constraints):
        tp_val = node.labels.get(c.topology_key)
        if tp_val is None:
            continue
        if c.topology_key == HOSTNAME_LABEL:
            cnt = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i].get(tp_val, 0)
        score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """``NormalizeScore`` in place: ignored nodes -> 0; if the maximum is 0 every other node gets
    100; else ``100 * (max + min - score) // max`` (min/max over non-ignored nodes)."""
    min_score = 2**63 - 1
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = INVALID_SCORE
            continue
        min_score = min(min_score, ns.score)
        max_score = max(max_score, ns.score)
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
