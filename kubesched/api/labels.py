"""Label selectors (``metav1.LabelSelector``) compiled for fast matching.

Follows ``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`` ``LabelSelectorAsSelector``:
an *empty* selector (``{}``) matches everything; a *nil* selector is represented by
``None`` at call sites and matches nothing (callers decide). Operators: ``In``,
``NotIn``, ``Exists``, ``DoesNotExist``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubesched.api.label_validation import go_quote, label_value_errors, qualified_name_errors
from kubesched.errors import ManifestError

_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key <operator> values`` requirement of a label selector."""

    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True if ``labels`` satisfy this requirement (``NotIn`` matches a missing key)."""
        op = self.operator
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        return self.key not in labels


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled ``metav1.LabelSelector``: all requirements ANDed; empty matches everything."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True if every requirement holds for ``labels``."""
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True for ``{}`` (matches everything)."""
        return not self.requirements

    def keys(self) -> set[str]:
        """The label keys this selector mentions."""
        return {r.key for r in self.requirements}

    def and_(self, other: LabelSelector) -> LabelSelector:
        """The conjunction of two selectors."""
        return LabelSelector(self.requirements + other.requirements)

    @staticmethod
    def from_labels(labels: Mapping[str, str]) -> LabelSelector:
        """A selector requiring exactly these key=value pairs (``matchLabels`` form)."""
        return LabelSelector(tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(labels.items())))


EVERYTHING = LabelSelector(())


@lru_cache(maxsize=8192)
def label_key_error(key: str) -> str | None:
    """The API server's complaint about label key ``key`` (``ValidateLabelName``), or None."""
    errs = qualified_name_errors(key)
    return f"Invalid value: {go_quote(key)}: {'; '.join(errs)}" if errs else None


def _aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``."""
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def selector_value_error(raw: Any) -> str | None:
    """What ``metav1.LabelSelectorAsSelector`` refuses in an already parsed selector dict: a value
    that is not a valid label value, as ``labels.NewRequirement`` words it, e.g.
    ``values[0][app]: Invalid value: "{{.bad}}": a valid label must be ...``; None when it converts.
    (The API server keeps such values in pod (anti-)affinity selectors of pods created before it
    validated them, so the scheduler meets them; upstream then fails to parse the pod's terms.)"""
    if not isinstance(raw, Mapping):
        return None
    for k, v in sorted((raw.get("matchLabels") or {}).items()):
        errs = label_value_errors(str(v))
        if errs:
            return f"values[0][{k}]: Invalid value: {go_quote(str(v))}: {'; '.join(errs)}"
    for e in raw.get("matchExpressions") or []:
        key = str(e.get("key"))
        found = [
            f"values[{i}][{key}]: Invalid value: {go_quote(str(v))}: {'; '.join(errs)}"
            for i, v in enumerate(e.get("values") or [])
            if (errs := label_value_errors(str(v)))
        ]
        if found:
            return _aggregate(found)
    return None


def parse_label_selector(raw: Any, path: str) -> LabelSelector | None:
    """Parse a ``LabelSelector`` dict; ``None`` stays ``None`` (the nil selector).

    Raises :class:`ManifestError` naming ``path`` for a malformed selector, including a label key
    the API server refuses (``ValidateLabelSelector``: ``matchLabels`` keys, ``matchExpressions[].key``).
    Values are not checked here (see :func:`selector_value_error`).
    """
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    reqs: list[Requirement] = []
    ml = raw.get("matchLabels") or {}
    if not isinstance(ml, Mapping):
        raise ManifestError(f"{path}.matchLabels", "must be an object")
    for k, v in sorted(ml.items()):
        bad = label_key_error(str(k))
        if bad is not None:
            raise ManifestError(f"{path}.matchLabels", bad)
        reqs.append(Requirement(str(k), "In", frozenset((str(v),))))
    for i, e in enumerate(raw.get("matchExpressions") or []):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(e, Mapping) or "key" not in e:
            raise ManifestError(f"{p}.key", "required")
        op = e.get("operator")
        if op not in _OPS:
            raise ManifestError(f"{p}.operator", f'unsupported operator "{op}"')
        values = e.get("values") or []
        if op in ("In", "NotIn") and not values:
            raise ManifestError(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        if op in ("Exists", "DoesNotExist") and values:
            raise ManifestError(
                f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )
        bad = label_key_error(str(e["key"]))
        if bad is not None:
            raise ManifestError(f"{p}.key", bad)
        reqs.append(Requirement(str(e["key"]), op, frozenset(str(v) for v in values)))
    return LabelSelector(tuple(reqs))


def selector_from_match_labels(raw: Any, path: str) -> LabelSelector | None:
    """Parse a plain ``map[string]string`` selector (Service/ReplicationController ``spec.selector``).

    An empty or missing map gives ``None`` (selects nothing, as upstream treats it for spreading).
    """
    if not raw:
        return None
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    return LabelSelector.from_labels({str(k): str(v) for k, v in raw.items()})
