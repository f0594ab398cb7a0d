"""A pod's required node affinity: ``spec.nodeSelector`` AND
``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``
(``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` ``GetRequiredNodeAffinity`` /
``RequiredNodeAffinity.Match``).

Used by NodeAffinity (Filter, queueing hint) and by PodTopologySpread (node inclusion with
``nodeAffinityPolicy: Honor``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.node import Node
from kubesched.api.node_selector import NodeSelector
from kubesched.api.pod import Pod


class RequiredNodeAffinity:
    """``label_selector``: the pod's ``nodeSelector`` (``None`` when empty: no constraint; otherwise
    every ``key: value`` must be a node label with exactly that value). ``node_selector``: the
    required node affinity (``None`` when unset: no constraint; ORed terms, an empty term list
    matches nothing)."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, label_selector: Mapping[str, str] | None, node_selector: NodeSelector | None) -> None:
        self.label_selector = dict(label_selector) if label_selector else None
        self.node_selector = node_selector

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Evaluate against node ``labels`` and ``node_name`` (the ``metadata.name`` field)."""
        if self.label_selector is not None:
            for k, v in self.label_selector.items():
                got = labels.get(k)
                if got is None or got != v:
                    return False
        if self.node_selector is not None:
            return self.node_selector.matches(labels, node_name)
        return True

    def matches(self, node: Node) -> bool:
        """``RequiredNodeAffinity.Match(node)``: True if the node satisfies both parts."""
        return self.matches_labels(node.labels, node.name)

    def __repr__(self) -> str:
        return f"RequiredNodeAffinity(selector={self.label_selector!r}, affinity={self.node_selector!r})"


def get_required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """``GetRequiredNodeAffinity(pod)``: the matcher of ``pod``'s nodeSelector AND required node affinity."""
    return RequiredNodeAffinity(pod.node_selector, pod.required_node_affinity)


def pod_matches_node_selector_and_affinity_terms(pod: Pod, node: Node) -> bool:
    """Convenience: ``get_required_node_affinity(pod).matches(node)``."""
    return get_required_node_affinity(pod).matches(node)
