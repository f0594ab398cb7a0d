"""A snapshot of a live cluster: every kind ``simulate`` loads, read (never written) through a
:class:`~kubesched.client.client.ClusterClient`, with the noise of live objects stripped, so that
``simulate`` and ``serve`` load it unchanged.

What is read: the kinds of :data:`~kubesched.embedded.manifests.LOADABLE_KINDS` (nodes, pods,
namespaces, PVs, PVCs, storage classes, CSI objects, PDBs, services, replica sets, stateful sets,
replication controllers, priority classes) and nothing else: never Secrets or ConfigMaps. With a
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

from kubesched.client.client import CLUSTER_SCOPED_KINDS, ClusterClient

__all__ = ["SNAPSHOT_KINDS", "clean_object", "read_snapshot"]

#: Kinds read, in an order that loads cleanly (namespaces and nodes before what refers to them).
SNAPSHOT_KINDS: tuple[str, ...] = (
    "Namespace", "Node", "PriorityClass", "StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity",
    "PersistentVolume", "PersistentVolumeClaim", "Service", "ReplicationController", "ReplicaSet",
    "StatefulSet", "PodDisruptionBudget", "Pod",
)

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


def read_snapshot(client: ClusterClient, namespace: str | None = None,
                  kinds: Iterable[str] = SNAPSHOT_KINDS) -> list[dict[str, Any]]:
    """Every object of ``kinds`` (cleaned, see :func:`clean_object`), in :data:`SNAPSHOT_KINDS`
    order; ``namespace`` limits namespaced kinds (bound pods excepted) and namespaces to it.
    Raises the client's errors (e.g. a forbidden list)."""
    wanted = set(kinds)
    objects: list[dict[str, Any]] = []
    for kind in SNAPSHOT_KINDS:
        if kind not in wanted:
            continue
        if kind == "Namespace" and namespace:
            items = [o for o in client.list(kind).items if (o.get("metadata") or {}).get("name") == namespace]
        elif kind == "Pod" and namespace:
            items = [o for o in client.list(kind).items
                     if (o.get("metadata") or {}).get("namespace") == namespace
                     or (o.get("spec") or {}).get("nodeName")]
        elif kind in CLUSTER_SCOPED_KINDS or not namespace:
            items = client.list(kind).items
        else:
            items = client.list(kind, namespace).items
        objects.extend(clean_object(o) for o in items)
    return objects
