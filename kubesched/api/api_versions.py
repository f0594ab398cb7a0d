"""The ``apiVersion`` check every decoder applies: an object whose ``apiVersion`` does not belong
to its kind is refused, as kube-apiserver's decoder refuses ``the API version in the data
(apps/v1) does not match the expected API version (v1)``. The versions a kind is served at come
from the Kind registry (:mod:`kubesched.api.kinds`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api import kinds
from kubesched.errors import ManifestError

__all__ = ["check_api_version"]

#: kind -> the group/versions it is served at, in registry order (cleared when the registry changes)
_served: dict[str, list[str]] = {}
kinds.on_change(_served.clear)


def _served_at(kind: str) -> list[str]:
    served = _served.get(kind)
    if served is None:
        served = _served[kind] = [k.group_version for k in kinds.all_kinds() if k.kind == kind]
    return served


def check_api_version(obj: Any, kind: str) -> None:
    """Raise :class:`ManifestError` on ``apiVersion`` (``must be "v1" for kind Node, got
    "apps/v1"``) when ``obj`` names an apiVersion that ``kind`` is not served at (a kind served
    at several, such as ``Event`` at ``events.k8s.io/v1`` and ``v1``, accepts each). A missing or
    empty ``apiVersion`` passes (list items and watch events omit it), as does a kind the
    registry does not know."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return
    got = obj.get("apiVersion")
    if got in (None, ""):
        return
    served = _served_at(kind)
    if not served or got in served:
        return
    shown = got if isinstance(got, str) else repr(got)
    raise ManifestError("apiVersion", f'must be "{served[0]}" for kind {kind}, got "{shown}"')
