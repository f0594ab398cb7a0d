"""InterPodAffinity scoring (``pkg/scheduler/framework/plugins/interpodaffinity/scoring.go``).

``topology_score[key][value]`` accumulates, for every existing pod on a labelled node, the
weights of: the incoming pod's preferred affinity (+w) / anti-affinity (-w) terms the existing
pod matches, the existing pod's required affinity terms the incoming pod matches
(+hardPodAffinityWeight) and its preferred affinity (+w) / anti-affinity (-w) terms the
incoming pod matches, at ``(term.topologyKey, existing pod's node value)``. A node's raw score
is the sum over the keys it has; NormalizeScore maps ``[min, max]`` onto ``[0, 100]`` with
float arithmetic truncated toward zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.framework.affinity_term import AffinityTerm, WeightedAffinityTerm
from kubesched.framework.cycle_state import StateData
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore

ScoreMap = dict[str, dict[str, int]]
"""``topologyKey -> topology value -> score``."""


@dataclass(slots=True)
class PreScoreState(StateData):
    """``preScoreState``: the accumulated ``topology_score``, the incoming pod's preferred terms
    (namespaceSelector resolved to namespaces) and its namespace labels. Not changed by
    AddPod/RemovePod: ``clone`` is self."""

    preferred_affinity_terms: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...]
    namespace_labels: Mapping[str, str]
    topology_score: ScoreMap = field(default_factory=dict)

    def clone(self) -> PreScoreState:
        return self


def process_term(
    m: ScoreMap,
    term: AffinityTerm,
    weight: int,
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    multiplier: int,
) -> None:
    """``scoreMap.processTerm``: add ``weight * multiplier`` at ``(term.key, node value)`` when
    ``pod`` matches ``term`` and the node has the key."""
    if term.matches(pod, ns_labels):
        tp_value = node.labels.get(term.topology_key)
        if tp_value is not None:
            scores = m.setdefault(term.topology_key, {})
            scores[tp_value] = scores.get(tp_value, 0) + weight * multiplier


def process_terms(
    m: ScoreMap,
    terms: Iterable[WeightedAffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    multiplier: int,
) -> None:
    """``scoreMap.processTerms``."""
    for t in terms:
        process_term(m, t.term, t.weight, pod, ns_labels, node, multiplier)


def process_existing_pod(
    s: PreScoreState,
    existing: PodInfo,
    node: Node,
    incoming: Pod,
    hard_pod_affinity_weight: int,
    m: ScoreMap,
    incoming_terms: bool = True,
) -> None:
    """``processExistingPod``: the five contributions of the module docstring (nothing for a
    node without labels); ``incoming_terms=False`` leaves out the first two (the incoming pod's
    preferred terms matched by ``existing``), which the node-table path counts by index."""
    if not node.labels:
        return
    if incoming_terms:
        process_terms(m, s.preferred_affinity_terms, existing.pod, None, node, 1)
        process_terms(m, s.preferred_anti_affinity_terms, existing.pod, None, node, -1)
    if hard_pod_affinity_weight > 0:
        for t in existing.required_affinity_terms:
            process_term(m, t, hard_pod_affinity_weight, incoming, s.namespace_labels, node, 1)
    process_terms(m, existing.preferred_affinity_terms, incoming, s.namespace_labels, node, 1)
    process_terms(m, existing.preferred_anti_affinity_terms, incoming, s.namespace_labels, node, -1)


def accumulate(
    s: PreScoreState, nodes: Iterable[NodeInfo], incoming: Pod, all_pods: bool, hard_pod_affinity_weight: int
) -> None:
    """Fill ``s.topology_score`` from ``nodes``: every pod when ``all_pods`` (the incoming pod has
    preferred terms), else only the pods with affinity."""
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        for existing in ni.pods if all_pods else ni.pods_with_affinity:
            process_existing_pod(s, existing, node, incoming, hard_pod_affinity_weight, s.topology_score)


def score_node(s: PreScoreState, node: Node) -> int:
    """``Score``: sum of ``topology_score[key][node value]`` over the keys the node has."""
    score = 0
    for key, values in s.topology_score.items():
        v = node.labels.get(key)
        if v is not None:
            score += values.get(v, 0)
    return score


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """``NormalizeScore`` in place (only when ``topology_score`` is non-empty):
    ``int(100.0 * ((score - min) / (max - min)))`` when ``max > min``, else 0. The division is
    done before the multiplication, as upstream (``29/100*100`` gives 28)."""
    if not s.topology_score or not scores:
        return
    mn = min(ns.score for ns in scores)
    mx = max(ns.score for ns in scores)
    diff = mx - mn
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(ns.score - mn) / float(diff))
        ns.score = int(f)
