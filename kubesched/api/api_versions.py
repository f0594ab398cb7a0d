"""The ``apiVersion`` of each kind kubesched reads or writes, and the check every decoder applies
(an object whose ``apiVersion`` does not belong to its kind is refused, as kube-apiserver's
decoder refuses ``the API version in the data (apps/v1) does not match the expected API version
(v1)``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.errors import ManifestError

__all__ = ["KIND_API_VERSION", "check_api_version"]

#: apiVersion of each kind kubesched reads or writes.
KIND_API_VERSION: Mapping[str, str] = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "Service": "v1",
    "ReplicationController": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "CSIStorageCapacity": "storage.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Event": "events.k8s.io/v1",
    "Lease": "coordination.k8s.io/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
}

#: other apiVersions a kind is served at (core/v1 Events are the same objects)
_ALSO: Mapping[str, frozenset[str]] = {"Event": frozenset({"v1"})}


def check_api_version(obj: Any, kind: str) -> None:
    """Raise :class:`ManifestError` on ``apiVersion`` (``must be "v1" for kind Node, got
    "apps/v1"``) when ``obj`` names an apiVersion that ``kind`` is not served at. A missing or
    empty ``apiVersion`` passes (list items and watch events omit it), as does a kind kubesched
    does not know."""
    if not isinstance(obj, Mapping):
        return
    got = obj.get("apiVersion")
    want = KIND_API_VERSION.get(kind)
    if got in (None, "") or want is None or got == want or got in _ALSO.get(kind, ()):
        return
    shown = got if isinstance(got, str) else repr(got)
    raise ManifestError("apiVersion", f'must be "{want}" for kind {kind}, got "{shown}"')
