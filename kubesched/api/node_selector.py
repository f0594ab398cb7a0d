"""Node selectors and node affinity (``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``).

Terms are ORed, requirements within a term ANDed; ``matchFields`` supports only
``metadata.name``; an empty term list or a term with no requirements matches nothing.
Operators: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt`` (integers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kubesched.api.label_validation import go_quote, label_value_errors
from kubesched.api.labels import label_key_error
from kubesched.errors import ManifestError

T = TypeVar("T")

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
    """One ``nodeSelectorTerms[]`` entry. ``parse_error`` is set (and both requirement lists are
    empty, so the term matches nothing) when upstream cannot convert the term to a selector: a
    value that is not a valid label value, or a ``Gt``/``Lt`` value that is not an integer
    (``nodeaffinity.go: newNodeSelectorTerm``), e.g.
    ``matchExpressions[0].values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer``."""

    match_expressions: tuple[NodeSelectorRequirement, ...]
    match_fields: tuple[NodeSelectorRequirement, ...]
    parse_error: str | None = None

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


def _is_int(v: str) -> bool:
    """``strconv.ParseInt(v, 10, 64)`` succeeds."""
    if not v or not (v.isascii() and (v.isdigit() or (v[0] in "+-" and v[1:].isdigit()))):
        return False
    return -(2**63) <= int(v) < 2**63


def _parse_reqs(
    raw: Any, path: str, fields: bool, rel: str, problems: list[str]
) -> tuple[NodeSelectorRequirement, ...]:
    """Requirements; what the API server refuses raises ManifestError (``ValidateNodeSelectorRequirement``),
    what only upstream's selector conversion refuses is appended to ``problems`` (paths relative to
    the term, ``rel`` being ``matchExpressions``/``matchFields``)."""
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
        key = str(e["key"])
        if op in ("Gt", "Lt") and len(vals) != 1:
            raise ManifestError(
                f"{p}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
        if fields:
            if key != "metadata.name":
                raise ManifestError(
                    f"{p}.key", 'not a valid field selector key; only "metadata.name" is supported'
                )
        else:
            bad = label_key_error(key)
            if bad is not None:
                raise ManifestError(f"{p}.key", bad)
            for j, v in enumerate(vals):
                if op in ("Gt", "Lt") and not _is_int(v):
                    problems.append(
                        f"{rel}[{i}].values[{j}]: Invalid value: {go_quote(v)}: "
                        "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                errs = label_value_errors(v)
                if errs:
                    problems.append(
                        f"{rel}[{i}].values[{j}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(errs)}"
                    )
        out.append(NodeSelectorRequirement(key, op, vals))
    return tuple(out)


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    """Parse one ``NodeSelectorTerm``; raises :class:`ManifestError` naming the field for what the
    API server refuses (a bad operator, an invalid label key, ...). A term upstream cannot convert
    (see :class:`NodeSelectorTerm`) comes back empty with ``parse_error`` set."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    problems: list[str] = []
    exprs = _parse_reqs(
        raw.get("matchExpressions"), f"{path}.matchExpressions", False, "matchExpressions", problems
    )
    fields = _parse_reqs(raw.get("matchFields"), f"{path}.matchFields", True, "matchFields", problems)
    if problems:
        return NodeSelectorTerm(
            (), (), problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        )
    return NodeSelectorTerm(exprs, fields)


def parse_node_selector(raw: Any, path: str) -> NodeSelector | None:
    """Parse a ``NodeSelector`` (``requiredDuringSchedulingIgnoredDuringExecution``); ``None`` stays ``None``."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    terms = raw.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        raise ManifestError(f"{path}.nodeSelectorTerms", "must be a list")
    return NodeSelector(
        tuple(parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))
    )


def parse_weighted_terms(
    raw: Any, path: str, term_field: str, parse_term: Callable[[Any, str], T]
) -> list[tuple[int, T]]:
    """The ``(weight, term)`` pairs of a ``preferredDuringSchedulingIgnoredDuringExecution`` list,
    the shape node affinity (terms under ``preference``) and pod (anti-)affinity (under
    ``podAffinityTerm``) share; ``parse_term(value, path)`` parses each item's ``term_field``. An
    absent or empty list gives ``[]``; a missing ``weight`` is 0 (validation bounds it).

    Raises ManifestError naming the field when the list, an item or a ``weight`` has the wrong type,
    and whatever ``parse_term`` raises."""
    if not raw:
        return []
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping):
            raise ManifestError(f"{path}[{i}]", "must be an object")
        w = t.get("weight", 0)
        if not isinstance(w, int) or isinstance(w, bool):
            raise ManifestError(f"{path}[{i}].weight", "must be an integer")
        out.append((w, parse_term(t.get(term_field), f"{path}[{i}].{term_field}")))
    return out


def parse_preferred_terms(raw: Any, path: str) -> tuple[PreferredSchedulingTerm, ...]:
    """Parse ``preferredDuringSchedulingIgnoredDuringExecution`` (:func:`parse_weighted_terms`)."""
    return tuple(
        PreferredSchedulingTerm(w, term)
        for w, term in parse_weighted_terms(raw, path, "preference", parse_node_selector_term)
    )
