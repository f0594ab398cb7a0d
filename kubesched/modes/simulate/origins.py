"""Where each pod of a simulation came from: the file, document and object it was read from, or,
for a pod a workload controller created, its workload's (followed through the controller
references: a Deployment's pod via its ReplicaSet).

An error that only a plugin finds (``running PreFilter plugin "X": ...``, the PodScheduled
condition's message with reason ``SchedulerError``) is reported with this prefix, as the loader's
own errors are: ``cluster.yaml doc 3 (Pod shop/web): running PreFilter plugin ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.api import kinds
from kubesched.embedded.controllers.controller_utils import controller_ref
from kubesched.embedded.manifests import Manifest
from kubesched.errors import NotFoundError

__all__ = ["pod_origins"]

#: controller references followed at most (Pod -> ReplicaSet -> Deployment, Pod -> Job -> CronJob)
MAX_OWNER_DEPTH = 4

ObjectGetter = Callable[[str, "str | None", str], Mapping[str, Any]]


def pod_origins(manifests: Iterable[Manifest], get: ObjectGetter) -> Callable[[str], str]:
    """A function from a pod key (``ns/name``) to its location prefix (``""`` when unknown).

    ``get(kind, namespace, name)``: the cluster's current object (raises
    :class:`~kubesched.errors.NotFoundError`), to follow a created pod's controller references to
    an object that was read from a file (:meth:`Manifest.where_of`)."""
    by_ident: dict[tuple[str, str, str], Manifest] = {}
    for m in manifests:
        by_ident.setdefault((m.kind, m.namespace or "", m.name), m)

    def where(key: str) -> str:
        ns, _, name = key.partition("/")
        own = by_ident.get(("Pod", ns, name))
        if own is not None:
            return own.where
        kind, obj_ns, obj_name = "Pod", ns, name
        for _ in range(MAX_OWNER_DEPTH):
            try:
                obj = get(kind, None if kinds.is_cluster_scoped(kind) else obj_ns, obj_name)
            except (NotFoundError, KeyError, ValueError):
                return ""
            ref = controller_ref(obj)
            if ref is None:
                return ""
            kind, obj_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            if kinds.is_cluster_scoped(kind):
                obj_ns = ""
            owner = by_ident.get((kind, obj_ns, obj_name))
            if owner is not None:
                return owner.where_of(f"Pod {key}")
        return ""

    return where
