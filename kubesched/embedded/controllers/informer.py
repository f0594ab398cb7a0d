"""``SharedPodInformer``: one pod watch and one pod index per store, shared by every controller of
the embedded cluster, as kube-controller-manager's controllers share one pod informer from a
``SharedInformerFactory`` (``staging/src/k8s.io/client-go/tools/cache/shared_informer.go:
sharedIndexInformer``, ``AddEventHandler``; ``informers/factory.go: InformerFor``).

* :func:`shared_pod_informer` gives the informer of a store (created on first use, one per store). Its store watch opens with the first handler (existing pods are indexed, not handed to
  handlers: a controller's first sync of each owner reads the index anyway) and closes with the
  last, dropping the index.
* Every pod event is indexed once (by namespace and controller uid; controller-less pods by
  namespace), then passed to each handler with the pod's controller reference and the previous
  one, read once (``metav1.GetControllerOf``), so a handler's own check is a dict lookup.
* :meth:`SharedPodInformer.owned` and :meth:`SharedPodInformer.orphans` read the index
  (``cache.Indexer.ByIndex``) without a pass over every pod.

Handlers run synchronously inside the store's dispatch, in the order they were added; a handler
added while an event is being dispatched gets the events after it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.client.client import Subscription, WatchEvent
from kubesched.embedded.controllers.controller_utils import controller_ref

__all__ = ["PodEventHandler", "PodHandlerRegistration", "SharedPodInformer", "shared_pod_informer"]

Obj = dict[str, Any]
Ref = Mapping[str, Any]

#: ``handler(event, ref, old_ref)``: a pod's watch event with its controller reference (None for
#: none) and its previous object's (None for none or on ADDED)
PodEventHandler = Callable[[WatchEvent, Ref | None, Ref | None], None]


class PodHandlerRegistration:
    """What :meth:`SharedPodInformer.add_event_handler` returns (client-go's
    ``ResourceEventHandlerRegistration``): :meth:`stop` removes the handler (twice is fine)."""

    __slots__ = ("_informer", "handler")

    def __init__(self, informer: SharedPodInformer, handler: PodEventHandler) -> None:
        self._informer = informer
        self.handler = handler

    def stop(self) -> None:
        self._informer._remove_handler(self)


class SharedPodInformer:
    """The pods of ``cluster`` (anything with ``watch(kind, resource_version, handler)``), indexed
    and fanned out to handlers (module docstring)."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self._owned: dict[tuple[str, str], dict[str, Obj]] = {}
        self._orphans: dict[str, dict[str, Obj]] = {}
        self._handlers: tuple[PodHandlerRegistration, ...] = ()
        self._sub: Subscription | None = None
        self._lock = threading.RLock()

    def add_event_handler(self, handler: PodEventHandler) -> PodHandlerRegistration:
        """Pass every later pod event to ``handler`` (after indexing it); the first handler opens
        the store watch and indexes the pods that exist."""
        reg = PodHandlerRegistration(self, handler)
        with self._lock:
            if self._sub is None:
                self._sub = self.cluster.watch("Pod", None, self._on_event)
            self._handlers = (*self._handlers, reg)
        return reg

    def _remove_handler(self, reg: PodHandlerRegistration) -> None:
        with self._lock:
            if reg not in self._handlers:
                return
            self._handlers = tuple(h for h in self._handlers if h is not reg)
            if not self._handlers and self._sub is not None:
                self._sub.stop()
                self._sub = None
                self._owned.clear()
                self._orphans.clear()

    @property
    def handler_count(self) -> int:
        """How many handlers are registered."""
        return len(self._handlers)

    def _remove(self, meta: Mapping[str, Any], ref: Ref | None) -> None:
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        if ref is None:
            self._orphans.get(ns, {}).pop(name, None)
        else:
            self._owned.get((ns, str(ref.get("uid"))), {}).pop(name, None)

    def _on_event(self, ev: WatchEvent) -> None:
        pod = ev.object
        meta = pod.get("metadata") or {}
        ref = controller_ref(pod) if meta.get("ownerReferences") else None
        old = ev.old_object
        old_ref = None
        with self._lock:
            if old is not None:
                old_meta = old.get("metadata") or {}
                old_ref = controller_ref(old) if old_meta.get("ownerReferences") else None
                self._remove(old_meta, old_ref)
            if ev.type == "DELETED":
                self._remove(meta, ref)
            else:
                ns, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
                if ref is not None:
                    self._owned.setdefault((ns, str(ref.get("uid"))), {})[name] = pod
                elif not meta.get("deletionTimestamp"):
                    self._orphans.setdefault(ns, {})[name] = pod
                else:
                    self._orphans.get(ns, {}).pop(name, None)
            handlers = self._handlers
        for reg in handlers:
            reg.handler(ev, ref, old_ref)

    def owned(self, namespace: str, uid: str) -> list[Obj]:
        """Pods of ``namespace`` whose controller has ``uid``."""
        with self._lock:
            return list(self._owned.get((namespace, uid), {}).values())

    def orphans(self, namespace: str) -> list[Obj]:
        """Pods of ``namespace`` without a controller, not being deleted."""
        with self._lock:
            return list(self._orphans.get(namespace, {}).values())


def shared_pod_informer(cluster: Any) -> SharedPodInformer:
    """The :class:`SharedPodInformer` of ``cluster`` (one per store, kept in its
    ``shared_informers`` and created on first use; ``SharedInformerFactory.InformerFor``)."""
    informers: dict[str, Any] = cluster.shared_informers
    informer = informers.get("Pod")
    if informer is None:
        informer = informers.setdefault("Pod", SharedPodInformer(cluster))
    return informer  # type: ignore[no-any-return]
