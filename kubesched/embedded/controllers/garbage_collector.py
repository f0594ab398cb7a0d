"""The embedded cluster's garbage collector for objects owned by pods: what kube-controller-manager's
garbage collector (``pkg/controller/garbagecollector/garbagecollector.go: attemptToDeleteItem``)
does with background cascading deletion, for the dependent kinds the embedded cluster generates
(ResourceClaims made from templates, see :mod:`kubesched.embedded.controllers.resourceclaim`).

A dependent is deleted once none of its ``metadata.ownerReferences`` resolves to an existing
object: an owner is absent when no object of its kind and name exists in the dependent's
namespace (cluster-scoped owners: by name) or the one that exists has another uid
(``isDangling``). Dependents without owner references are never touched. The check runs when a
watched owner kind reports a deletion, and once for every dependent when :meth:`start` is called
(a loaded snapshot may hold orphans). Not modelled: foreground deletion and ``orphan``
propagation (the store has no finalizers), owners of kinds the store does not hold.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.kinds import is_cluster_scoped
from kubesched.client.client import ClusterClient, Subscription, WatchEvent
from kubesched.errors import KubeschedError, NotFoundError

__all__ = ["GarbageCollector"]

log = logging.getLogger(__name__)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _owner_refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    refs = _meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, Mapping)] if isinstance(refs, list) else []


class GarbageCollector:
    """Deletes ``dependent_kinds`` objects of ``cluster`` whose owners (of ``owner_kinds``) are all
    gone (module docstring). :meth:`start` watches the owner and dependent kinds; :meth:`stop`
    ends it."""

    def __init__(
        self,
        cluster: ClusterClient,
        *,
        owner_kinds: Iterable[str] = ("Pod",),
        dependent_kinds: Iterable[str] = ("ResourceClaim",),
    ) -> None:
        self.cluster = cluster
        self.owner_kinds = tuple(owner_kinds)
        self.dependent_kinds = tuple(dependent_kinds)
        # owner uid -> (kind, namespace, name) of dependents that name it (``uidToNode`` edges)
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._subs: list[Subscription] = []

    def start(self) -> GarbageCollector:
        for kind in self.dependent_kinds:
            self._subs.append(self.cluster.watch(kind, None, self._on_dependent))
        for kind in self.owner_kinds:
            self._subs.append(self.cluster.watch(kind, None, self._on_owner))
        for kind in self.dependent_kinds:
            for obj in self.cluster.list(kind).items:
                self.attempt_to_delete(kind, obj)
        return self

    def stop(self) -> None:
        for s in self._subs:
            s.stop()
        self._subs = []

    def _on_dependent(self, ev: WatchEvent) -> None:
        meta = _meta(ev.object)
        key = (ev.kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if ev.old_object is not None:
            for ref in _owner_refs(ev.old_object):
                deps = self._dependents.get(str(ref.get("uid")))
                if deps is not None:
                    deps.discard(key)
                    if not deps:
                        del self._dependents[str(ref.get("uid"))]
        if ev.type == "DELETED":
            return
        for ref in _owner_refs(ev.object):
            if ref.get("kind") in self.owner_kinds:
                self._dependents.setdefault(str(ref.get("uid")), set()).add(key)

    def _on_owner(self, ev: WatchEvent) -> None:
        if ev.type != "DELETED":
            return
        uid = str(_meta(ev.object).get("uid"))
        for kind, namespace, name in sorted(self._dependents.get(uid, ())):
            try:
                self.attempt_to_delete(kind, self.cluster.get(kind, namespace or None, name))
            except NotFoundError:
                continue
            except (KubeschedError, ValueError) as e:
                log.warning("garbage collector: %s %s/%s: %s", kind, namespace, name, e)

    def _owner_exists(self, namespace: str, ref: Mapping[str, Any]) -> bool:
        kind = str(ref.get("kind") or "")
        if kind not in self.owner_kinds:
            return True  # not watched here: never treated as gone
        try:
            owner = self.cluster.get(
                kind, None if is_cluster_scoped(kind) else namespace, str(ref.get("name"))
            )
        except NotFoundError:
            return False
        return _meta(owner).get("uid") == ref.get("uid")

    def attempt_to_delete(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """Delete ``obj`` when it has owner references and all of them are absent; True if deleted."""
        refs = _owner_refs(obj)
        meta = _meta(obj)
        namespace = str(meta.get("namespace") or "")
        if not refs or any(self._owner_exists(namespace, r) for r in refs):
            return False
        try:
            self.cluster.delete(kind, namespace or None, str(meta.get("name")))
        except NotFoundError:
            return False
        return True
