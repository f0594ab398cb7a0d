"""The namespace controller: empties a namespace being deleted, then lets it go.

Follows ``pkg/controller/namespace/namespace_controller.go`` and
``pkg/controller/namespace/deletion/namespaced_resources_deleter.go`` (``Delete``,
``deleteAllContent``, ``finalizeNamespace``): a Namespace whose ``metadata.deletionTimestamp`` is
set (the store marks it ``Terminating`` because of its ``spec.finalizers: [kubernetes]``) gets
every namespaced object in it deleted -- pods gracefully, so bound pods go once their kubelet (or
the deletion finalizer of a cluster without kubelets) has stopped them -- and, once nothing is
left, its ``kubernetes`` finalizer removed and the deletion completed.

Differences from upstream: the store's own watch events drive it synchronously (no work queue or
resync); Events in the namespace are not deleted (the embedded store keeps a bounded ring of
them).
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.api.kinds import is_cluster_scoped
from kubesched.client.client import Subscription, WatchEvent
from kubesched.embedded.controllers.controller_utils import mapping_field
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import KubeschedError, NotFoundError

__all__ = ["FINALIZER_KUBERNETES", "NamespaceController"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: ``spec.finalizers`` entry the namespace controller owns (``v1.FinalizerKubernetes``).
FINALIZER_KUBERNETES = "kubernetes"


class NamespaceController:
    """Finishes namespace deletions in ``cluster``. :meth:`start` watches namespaces and the kinds
    whose objects hold a deletion back (pods; others on demand); :meth:`stop` ends the watches."""

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self._subs: dict[str, Subscription] = {}

    def start(self) -> NamespaceController:
        self._watch("Namespace")
        self._watch("Pod")
        return self

    def stop(self) -> None:
        for sub in self._subs.values():
            sub.stop()
        self._subs = {}

    def _watch(self, kind: str) -> None:
        if kind not in self._subs:
            self._subs[kind] = self.cluster.watch(kind, None, self._on_event)

    def _on_event(self, ev: WatchEvent) -> None:
        try:
            if ev.kind == "Namespace":
                if ev.type != "DELETED" and (ev.object.get("metadata") or {}).get("deletionTimestamp"):
                    self.sync(ev.object["metadata"]["name"])
            elif ev.type == "DELETED":
                namespace = (ev.object.get("metadata") or {}).get("namespace")
                if namespace:
                    self.sync(namespace)
        except (KubeschedError, ValueError) as e:
            log.warning("namespace controller: %s: %s", ev.kind, e)

    def sync(self, name: str) -> None:
        """One pass over namespace ``name``: nothing unless it is being deleted; else delete its
        content and, when none is left, finalize and delete it."""
        try:
            ns = self.cluster.get("Namespace", None, name)
        except NotFoundError:
            return
        if not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        remaining = 0
        for kind in sorted(self.cluster.counts()):
            if is_cluster_scoped(str(kind)) or kind == "Namespace":
                continue
            for obj in self.cluster.list(kind, name).items:
                remaining += 1
                meta = obj["metadata"]
                if meta.get("deletionTimestamp"):
                    self._watch(kind)
                    continue
                try:
                    self.cluster.delete(kind, name, meta["name"], grace=True)
                except NotFoundError:
                    continue
        if remaining and any(
            self.cluster.list(k, name).items
            for k in self.cluster.counts()
            if not is_cluster_scoped(k) and k != "Namespace"
        ):
            return
        self._finalize(name)

    def _finalize(self, name: str) -> None:
        """Remove ``kubernetes`` from ``spec.finalizers`` and complete the deletion."""
        try:
            ns = self.cluster.get("Namespace", None, name)
        except NotFoundError:
            return
        spec = mapping_field(ns, "spec")
        finalizers = [f for f in spec.get("finalizers") or [] if f != FINALIZER_KUBERNETES]
        if finalizers != list(spec.get("finalizers") or []):
            ns = self.cluster.update({**ns, "spec": {**spec, "finalizers": finalizers}})
        if not finalizers:
            try:
                self.cluster.delete("Namespace", None, name)
            except NotFoundError:
                pass
