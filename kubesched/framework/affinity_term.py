"""Pre-processed pod (anti-)affinity terms (``pkg/scheduler/framework/types.go``
``AffinityTerm``/``newAffinityTerm``).

``matchLabelKeys``/``mismatchLabelKeys`` are folded into the selector using the owning
pod's labels (key In [value] / key NotIn [value]), as the API server does since v1.31.
A term with no namespaces and a nil namespaceSelector applies to the owning pod's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.labels import LabelSelector, Requirement
from kubesched.api.pod import Pod, PodAffinityTerm, WeightedPodAffinityTerm


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """``namespaces`` (set), ``selector`` (``None`` = nil, matches nothing), ``topology_key``,
    ``namespace_selector`` (``None`` matches nothing, empty matches everything)."""

    namespaces: frozenset[str]
    selector: LabelSelector | None
    topology_key: str
    namespace_selector: LabelSelector | None

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """``(pod.ns in namespaces or ns_selector matches ns_labels) and selector matches pod.labels``."""
        if pod.namespace in self.namespaces or (
            self.namespace_selector is not None and self.namespace_selector.matches(ns_labels or {})
        ):
            return self.selector is not None and self.selector.matches(pod.labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    """An :class:`AffinityTerm` with its weight."""

    term: AffinityTerm
    weight: int


def new_affinity_term(pod: Pod, t: PodAffinityTerm) -> AffinityTerm:
    """Build the term for ``pod`` (namespace defaulting, label-key merging)."""
    namespaces = frozenset(t.namespaces)
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    selector = t.label_selector
    extra: list[Requirement] = []
    for k in t.match_label_keys:
        if k in pod.labels:
            extra.append(Requirement(k, "In", frozenset((pod.labels[k],))))
    for k in t.mismatch_label_keys:
        if k in pod.labels:
            extra.append(Requirement(k, "NotIn", frozenset((pod.labels[k],))))
    if extra and selector is not None:
        selector = LabelSelector(selector.requirements + tuple(extra))
    return AffinityTerm(namespaces, selector, t.topology_key, t.namespace_selector)


def affinity_terms(pod: Pod, terms: tuple[PodAffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
    """Build every required term."""
    return tuple(new_affinity_term(pod, t) for t in terms)


def weighted_affinity_terms(
    pod: Pod, terms: tuple[WeightedPodAffinityTerm, ...]
) -> tuple[WeightedAffinityTerm, ...]:
    """Build every preferred term."""
    return tuple(WeightedAffinityTerm(new_affinity_term(pod, w.term), w.weight) for w in terms)
