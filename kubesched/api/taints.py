"""Taints and tolerations (``k8s.io/api/core/v1/toleration.go``, ``taint.go``).

Matching rules (``k8s.io/api/core/v1/toleration.go`` ``ToleratesTaint``): the effect must match unless the
toleration's effect is
empty; the key must match unless the toleration's key is empty (which requires
operator ``Exists``); ``Equal`` (or empty) compares values, ``Exists`` matches any value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.errors import ManifestError

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint (``key=value:effect``)."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; ``toleration_seconds`` is in seconds or ``None``."""

    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerates(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """True if any toleration tolerates ``taint``."""
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated(
    taints: Iterable[Taint],
    tolerations: tuple[Toleration, ...],
    effects: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE),
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint (node order) with one of ``effects``
    that no toleration tolerates, or ``None``."""
    for taint in taints:
        if taint.effect in effects and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


def parse_taints(raw: Any, path: str) -> tuple[Taint, ...]:
    """Parse ``node.spec.taints``; raises :class:`ManifestError` naming the field."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or not t.get("key"):
            raise ManifestError(f"{path}[{i}].key", "required")
        eff = t.get("effect", "")
        if eff not in _EFFECTS:
            raise ManifestError(f"{path}[{i}].effect", f'unsupported value "{eff}"')
        out.append(Taint(str(t["key"]), str(t.get("value") or ""), eff))
    return tuple(out)


def parse_tolerations(raw: Any, path: str) -> tuple[Toleration, ...]:
    """Parse ``pod.spec.tolerations``; raises :class:`ManifestError` naming the field."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping):
            raise ManifestError(f"{path}[{i}]", "must be an object")
        op = t.get("operator") or ""
        if op not in ("", "Equal", "Exists"):
            raise ManifestError(f"{path}[{i}].operator", f'unsupported value "{op}"')
        key = str(t.get("key") or "")
        if not key and op != "Exists":
            raise ManifestError(f"{path}[{i}].operator", "must be Exists when `key` is empty")
        eff = t.get("effect") or ""
        if eff and eff not in _EFFECTS:
            raise ManifestError(f"{path}[{i}].effect", f'unsupported value "{eff}"')
        secs = t.get("tolerationSeconds")
        out.append(
            Toleration(key, op, str(t.get("value") or ""), eff, int(secs) if secs is not None else None)
        )
    return tuple(out)
