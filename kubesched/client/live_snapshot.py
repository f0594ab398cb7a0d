"""A snapshot of a live cluster: every kind ``simulate`` loads, read (never written) through a
:class:`~kubesched.client.client.ClusterClient`, with the noise of live objects stripped, so that
``simulate`` and ``serve`` load it unchanged.

What is read: the kinds ``simulate`` loads (:func:`kubesched.api.kinds.loadable_kinds`: nodes, pods,
namespaces, PVs, PVCs, storage classes, CSI objects, PDBs, services, workload objects, priority
classes, DRA device classes, slices, claims and claim templates) and nothing else: never Secrets or
ConfigMaps. A kind the cluster does not serve (a list answered 404, e.g. ``resource.k8s.io/v1`` before
Kubernetes 1.34) is left out. With a
namespace, namespaced kinds come from that namespace only, except bound pods: those of every
namespace are read, since they hold their nodes' resources, ports and volumes (a what-if that
forgot them would find room where there is none).

What is stripped: ``metadata.managedFields``, ``resourceVersion``, ``generation``,
``selfLink``, the ``kubectl.kubernetes.io/last-applied-configuration`` annotation; pods keep only
``status.phase``, ``conditions``, ``nominatedNodeName`` and ``startTime``; nodes keep only
``status.capacity``, ``allocatable`` and ``images``; other kinds keep their status as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.api import kinds as kind_registry
from kubesched.client.client import ClusterClient
from kubesched.errors import NotFoundError

__all__ = ["clean_object", "read_snapshot", "snapshot_kinds"]


def snapshot_kinds() -> tuple[str, ...]:
    """Kinds read, in the registry's load order (namespaces and nodes before what refers to them)."""
    loadable = kind_registry.loadable_kinds()
    return tuple(k for k in kind_registry.snapshot_order() if k in loadable)


_DROP_META = ("managedFields", "resourceVersion", "generation", "selfLink")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_KEEP_STATUS = {
    "Pod": ("phase", "conditions", "nominatedNodeName", "startTime"),
    "Node": ("capacity", "allocatable", "images"),
}


def clean_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a live object without the fields listed in the module docstring."""
    out = dict(obj)
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _DROP_META}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != _LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    keep = _KEEP_STATUS.get(str(obj.get("kind")))
    if keep is not None and isinstance(obj.get("status"), dict):
        status = {k: v for k, v in obj["status"].items() if k in keep}
        if status:
            out["status"] = status
        else:
            out.pop("status", None)
    return out


def read_snapshot(
    client: ClusterClient, namespace: str | None = None, kinds: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Every object of ``kinds`` (default: :func:`snapshot_kinds`; cleaned, see
    :func:`clean_object`), in :func:`snapshot_kinds` order; ``namespace`` limits namespaced kinds
    (bound pods excepted) and namespaces to it. A kind whose list is answered 404 (not served) is
    skipped. Raises the client's other errors (e.g. a forbidden list)."""
    order = snapshot_kinds()
    wanted = set(order if kinds is None else kinds)
    objects: list[dict[str, Any]] = []
    for kind in order:
        if kind not in wanted:
            continue
        try:
            objects.extend(clean_object(o) for o in _read_kind(client, kind, namespace))
        except NotFoundError:
            continue
    return objects


def _read_kind(client: ClusterClient, kind: str, namespace: str | None) -> list[dict[str, Any]]:
    """The live objects of ``kind`` that :func:`read_snapshot` keeps (before cleaning)."""
    if kind == "Namespace" and namespace:
        return [o for o in client.list(kind).items if (o.get("metadata") or {}).get("name") == namespace]
    if kind == "Pod" and namespace:
        return [
            o
            for o in client.list(kind).items
            if (o.get("metadata") or {}).get("namespace") == namespace
            or (o.get("spec") or {}).get("nodeName")
        ]
    if kind_registry.is_cluster_scoped(kind) or not namespace:
        return client.list(kind).items
    return client.list(kind, namespace).items
