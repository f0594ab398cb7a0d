"""The garbage collector: deletes or orphans the dependents of deleted owners by
``metadata.ownerReferences``, as ``pkg/controller/garbagecollector/garbagecollector.go`` does
(``attemptToDeleteItem``, ``processDeletingDependentsItem``, ``orphanDependents``).

* **Background** (the default; an owner deleted outright): a dependent whose owner references
  all name owners that are gone is deleted (pods gracefully); one that still has a live owner
  only loses the reference to the deleted one.
* **Foreground** (``propagationPolicy: Foreground``: the API server gives the owner the
  ``foregroundDeletion`` finalizer and its ``deletionTimestamp``): its dependents are deleted,
  in foreground themselves when they have dependents; once no dependent with
  ``blockOwnerDeletion: true`` is left, the finalizer is removed and the owner goes.
* **Orphan** (``propagationPolicy: Orphan``, finalizer ``orphan``): the owner's references are
  removed from its dependents, then the finalizer, and the owner goes; the dependents stay.

Differences from upstream: the store's watch events drive it (no dependency graph is kept: the
dependents of an owner are found by scanning the namespace's objects, or every object for a
cluster-scoped owner); owners of kinds the embedded store does not hold are taken as absent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.kinds import is_cluster_scoped
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import WorkQueue
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["DEPENDENT_KINDS", "FOREGROUND", "GarbageCollector", "ORPHAN", "OWNER_KINDS"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
#: Kinds whose objects own others in the embedded cluster (watched for deletions)
OWNER_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Node", "ReplicationController")
#: Kinds watched only as dependents (their deletion may let an owner in foreground deletion go)
DEPENDENT_KINDS = ("Pod", "PersistentVolumeClaim", "Lease")


def _refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if isinstance(r, Mapping)]


class GarbageCollector:
    """Collects dependents in ``cluster`` on ``clock`` (module docstring). :meth:`start` watches
    the owner kinds; :meth:`stop` ends it."""

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.queue = WorkQueue(clock, self._sync, "garbagecollector")
        self._subs: list[Subscription] = []

    def start(self) -> GarbageCollector:
        self._subs = [self.cluster.watch(kind, None, self._on_event) for kind in OWNER_KINDS]
        self._subs += [self.cluster.watch(kind, None, self._on_dependent) for kind in DEPENDENT_KINDS]
        return self

    def stop(self) -> None:
        self.queue.closed = True
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def _on_event(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        key = f"{ev.kind}|{meta.get('namespace') or ''}|{meta.get('name')}|{meta.get('uid')}"
        if ev.type == "DELETED" or meta.get("deletionTimestamp"):
            self.queue.add(key)
        if ev.type == "DELETED":
            self._requeue_owners(ev.object)

    def _on_dependent(self, ev: WatchEvent) -> None:
        if ev.type == "DELETED":
            self._requeue_owners(ev.object)

    def _requeue_owners(self, obj: Mapping[str, Any]) -> None:
        """Queue the owners of a deleted object: one in foreground deletion may now go."""
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        for ref in _refs(obj):
            owner_ns = "" if is_cluster_scoped(str(ref.get("kind"))) else namespace
            self.queue.add(f"{ref.get('kind')}|{owner_ns}|{ref.get('name')}|{ref.get('uid')}")

    def _dependents(self, namespace: str, uid: str) -> list[Obj]:
        out = []
        for kind in sorted(self.cluster.counts()):
            if namespace and is_cluster_scoped(str(kind)):
                continue
            for obj in self.cluster.list(kind, namespace or None).items:
                if any(r.get("uid") == uid for r in _refs(obj)):
                    out.append({"kind": kind, **obj} if "kind" not in obj else obj)
        return out

    def _current(self, kind: str, namespace: str, name: str, uid: str) -> Obj | None:
        try:
            obj = self.cluster.get(kind, namespace or None, name)
        except NotFoundError:
            return None
        return obj if (obj.get("metadata") or {}).get("uid") == uid else None

    def _owner_exists(self, ref: Mapping[str, Any], namespace: str) -> bool:
        kind = str(ref.get("kind"))
        ns = "" if is_cluster_scoped(str(kind)) else namespace
        return self._current(kind, ns, str(ref.get("name")), str(ref.get("uid"))) is not None

    def _sync(self, key: str) -> None:
        kind, namespace, name, uid = key.split("|", 3)
        owner = self._current(kind, namespace, name, uid)
        dependents = self._dependents(namespace, uid)
        if owner is None:
            for dep in dependents:
                self._release_or_delete(dep, uid)
            return
        finalizers = list((owner.get("metadata") or {}).get("finalizers") or [])
        if ORPHAN in finalizers:
            for dep in dependents:
                self._drop_ref(dep, uid)
            self._remove_finalizer(owner, ORPHAN)
        elif FOREGROUND in finalizers:
            blocking = False
            for dep in dependents:
                meta = dep.get("metadata") or {}
                if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in _refs(dep)):
                    blocking = True
                if not meta.get("deletionTimestamp"):
                    self._delete(
                        dep,
                        foreground=bool(self._dependents(meta.get("namespace") or "", str(meta.get("uid")))),
                    )
            if not blocking:
                self._remove_finalizer(owner, FOREGROUND)

    def _release_or_delete(self, dep: Obj, uid: str) -> None:
        """A dependent of a deleted owner: deleted when no other owner is left, else released."""
        meta = dep.get("metadata") or {}
        others = [r for r in _refs(dep) if r.get("uid") != uid]
        if any(self._owner_exists(r, meta.get("namespace") or "") for r in others):
            self._drop_ref(dep, uid)
        elif not meta.get("deletionTimestamp"):
            self._delete(dep, foreground=False)

    def _drop_ref(self, dep: Obj, uid: str) -> None:
        meta = dep.get("metadata") or {}
        refs = [r for r in _refs(dep) if r.get("uid") != uid]
        try:
            self.cluster.update({**dep, "metadata": {**meta, "ownerReferences": refs}})
        except NotFoundError:
            pass

    def _remove_finalizer(self, obj: Obj, finalizer: str) -> None:
        meta = obj.get("metadata") or {}
        kept = [f for f in meta.get("finalizers") or [] if f != finalizer]
        try:
            self.cluster.update({**obj, "metadata": {**meta, "finalizers": kept}})
        except NotFoundError:
            pass

    def _delete(self, dep: Obj, *, foreground: bool) -> None:
        meta = dep.get("metadata") or {}
        kind = str(dep.get("kind"))
        namespace = None if is_cluster_scoped(str(kind)) else meta.get("namespace")
        try:
            if foreground:
                finalizers = [*(meta.get("finalizers") or []), FOREGROUND]
                dep = self.cluster.update({**dep, "metadata": {**meta, "finalizers": finalizers}})
            self.cluster.delete(kind, namespace, str(meta.get("name")), grace=True)
        except NotFoundError:
            pass
