"""Node selectors and node affinity (``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``).

Terms are ORed, requirements within a term ANDed; ``matchFields`` supports only
``metadata.name``; an empty term list or a term with no requirements matches nothing.
Operators: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt`` (integers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.errors import ManifestError

_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """``key <operator> values`` over node labels (or the node name for ``matchFields``)."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches_value(self, v: str | None) -> bool:
        """Evaluate against the label value ``v`` (``None`` = label absent)."""
        op = self.operator
        if op == "In":
            return v is not None and v in self.values
        if op == "NotIn":
            return v is None or v not in self.values
        if op == "Exists":
            return v is not None
        if op == "DoesNotExist":
            return v is None
        if v is None or len(self.values) != 1:
            return False
        try:
            lhs, rhs = int(v), int(self.values[0])
        except ValueError:
            return False
        return lhs > rhs if op == "Gt" else lhs < rhs


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One ``nodeSelectorTerms[]`` entry."""

    match_expressions: tuple[NodeSelectorRequirement, ...]
    match_fields: tuple[NodeSelectorRequirement, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """True if all requirements hold; a term with no requirements matches nothing."""
        if not self.match_expressions and not self.match_fields:
            return False
        for r in self.match_expressions:
            if not r.matches_value(labels.get(r.key)):
                return False
        for r in self.match_fields:
            if r.key != "metadata.name" or not r.matches_value(node_name):
                return False
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``v1.NodeSelector``: ORed terms."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """True if any term matches (an empty term list matches nothing)."""
        for t in self.terms:
            if t.matches(labels, node_name):
                return True
        return False


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """``preferredDuringSchedulingIgnoredDuringExecution[]``: a weight (1..100) and a preference term."""

    weight: int
    preference: NodeSelectorTerm


def _parse_reqs(raw: Any, path: str, fields: bool) -> tuple[NodeSelectorRequirement, ...]:
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, e in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(e, Mapping) or "key" not in e:
            raise ManifestError(f"{p}.key", "required")
        op = e.get("operator")
        if op not in _OPS:
            raise ManifestError(f"{p}.operator", f'unsupported operator "{op}"')
        vals = tuple(str(v) for v in (e.get("values") or []))
        if op in ("Gt", "Lt"):
            if len(vals) != 1:
                raise ManifestError(f"{p}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
            try:
                int(vals[0])
            except ValueError:
                raise ManifestError(f"{p}.values[0]", "must be an integer") from None
        if fields and e["key"] != "metadata.name":
            raise ManifestError(f"{p}.key", 'not a valid field selector key; only "metadata.name" is supported')
        out.append(NodeSelectorRequirement(str(e["key"]), op, vals))
    return tuple(out)


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    """Parse one ``NodeSelectorTerm``; raises :class:`ManifestError` naming the field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    return NodeSelectorTerm(_parse_reqs(raw.get("matchExpressions"), f"{path}.matchExpressions", False),
                            _parse_reqs(raw.get("matchFields"), f"{path}.matchFields", True))


def parse_node_selector(raw: Any, path: str) -> NodeSelector | None:
    """Parse a ``NodeSelector`` (``requiredDuringSchedulingIgnoredDuringExecution``); ``None`` stays ``None``."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    terms = raw.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        raise ManifestError(f"{path}.nodeSelectorTerms", "must be a list")
    return NodeSelector(tuple(parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))


def parse_preferred_terms(raw: Any, path: str) -> tuple[PreferredSchedulingTerm, ...]:
    """Parse ``preferredDuringSchedulingIgnoredDuringExecution``."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping):
            raise ManifestError(f"{path}[{i}]", "must be an object")
        w = t.get("weight", 0)
        if not isinstance(w, int) or isinstance(w, bool):
            raise ManifestError(f"{path}[{i}].weight", "must be an integer")
        out.append(PreferredSchedulingTerm(w, parse_node_selector_term(t.get("preference"), f"{path}[{i}].preference")))
    return tuple(out)
