"""Informers: list, then watch, keeping a local store per kind and calling handlers
(``k8s.io/client-go/tools/cache`` shared informers, much simplified).

Objects are Kubernetes JSON dicts owned by the store (handlers must not mutate them).
On a watch that reports ``410 Gone`` (``GoneError``) the informer re-lists and reconciles
its store, emitting add/update/delete for what changed, so no object is lost.

Asynchronous backends (a client with ``watch_resumable(kind, rv, handler, on_gone)``, e.g.
:class:`kubesched.cluster.kube.KubeClusterClient`) resume dropped watches themselves from the last
resourceVersion seen and report ``410 Gone`` later, from their watch thread, through ``on_gone``:
the informer then re-lists (retrying failed lists with backoff 0.8 s doubling to 30 s, as
client-go's reflector does) and watches again from the new list's resourceVersion. Such a client's
``dispatch_lock`` is held while the informer delivers re-list results, so handlers never run
concurrently with the client's watch handlers.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.cluster.client import ClusterClient, Subscription, WatchEvent
from kubesched.errors import GoneError

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]


def object_key(obj: Mapping[str, Any]) -> Key:
    """``(namespace, name)``; namespace is ``""`` for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


@dataclass
class EventHandlers:
    """Callbacks of one informer: ``on_add(obj)``, ``on_update(old, new)``, ``on_delete(obj)``."""

    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


@dataclass
class Informer:
    """One kind's local store and its handlers."""

    client: ClusterClient
    kind: str
    store: dict[Key, Obj] = field(default_factory=dict)
    handlers: list[EventHandlers] = field(default_factory=list)
    resource_version: str = ""
    synced: bool = False
    _subscription: Subscription | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def add_handlers(self, h: EventHandlers) -> None:
        """Register handlers (before :meth:`start`)."""
        self.handlers.append(h)

    _stopped: bool = False
    #: re-lists done after the first list (410 Gone recoveries)
    relists: int = 0

    def start(self) -> None:
        """List, deliver an add for every object, then watch from the list's resourceVersion."""
        self._stopped = False
        self._relist(initial=True)
        self._watch()

    def stop(self) -> None:
        """Stop watching."""
        self._stopped = True
        if self._subscription is not None:
            self._subscription.stop()
            self._subscription = None

    def _is_async(self) -> bool:
        return getattr(self.client, "watch_resumable", None) is not None

    def _subscribe(self) -> Subscription:
        resumable = getattr(self.client, "watch_resumable", None)
        if resumable is not None:
            sub: Subscription = resumable(self.kind, self.resource_version, self._on_event, self._on_gone)
            return sub
        return self.client.watch(self.kind, self.resource_version, self._on_event)

    def _watch(self) -> None:
        try:
            self._subscription = self._subscribe()
        except GoneError:
            self._relist(initial=False)
            self._subscription = self._subscribe()

    def _on_gone(self) -> None:
        """Called by an asynchronous backend's watch thread after its watch ended with 410 Gone."""
        if self._stopped:
            return
        log.info("informer %s: watch expired (410 Gone), re-listing", self.kind)
        self._relist(initial=False)
        if not self._stopped:
            self._subscription = self._subscribe()

    def _list(self) -> Any:
        if not self._is_async():
            return self.client.list(self.kind)
        backoff = 0.8
        while True:
            try:
                return self.client.list(self.kind)
            except Exception as e:  # noqa: BLE001 - the API server may be failing for a while
                if self._stopped:
                    raise
                log.warning("informer %s: list failed: %s; retrying in %.1fs", self.kind, e, backoff)
                threading.Event().wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _relist(self, initial: bool) -> None:
        res = self._list()
        if not initial:
            self.relists += 1
        lock = getattr(self.client, "dispatch_lock", None)
        with lock if lock is not None else contextlib.nullcontext():
            self._reconcile(res, initial)

    def _reconcile(self, res: Any, initial: bool) -> None:
        with self._lock:
            fresh = {object_key(o): o for o in res.items}
            old = self.store
            self.store = fresh
            self.resource_version = res.resource_version
        if not initial:
            for k, o in old.items():
                if k not in fresh:
                    self._dispatch_delete(o)
        for k, o in fresh.items():
            prev = old.get(k) if not initial else None
            if prev is None:
                self._dispatch_add(o)
            elif (prev.get("metadata") or {}).get("resourceVersion") != (o.get("metadata") or {}).get("resourceVersion"):
                self._dispatch_update(prev, o)
        self.synced = True

    def resync_after_gone(self) -> None:
        """Re-list and reconcile after a ``410 Gone``, then resume watching."""
        self.stop()
        self._stopped = False
        self._relist(initial=False)
        self._subscription = self._subscribe()

    def _on_event(self, ev: WatchEvent) -> None:
        obj = ev.object
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if ev.type == "BOOKMARK":
            self.resource_version = rv or self.resource_version
            return
        k = object_key(obj)
        with self._lock:
            old = self.store.get(k)
            if ev.type == "DELETED":
                self.store.pop(k, None)
            else:
                self.store[k] = obj
            if rv:
                self.resource_version = rv
        if ev.type == "DELETED":
            self._dispatch_delete(old if old is not None else obj)
        elif old is None:
            self._dispatch_add(obj)
        else:
            self._dispatch_update(old, obj)

    def _dispatch_add(self, o: Obj) -> None:
        for h in self.handlers:
            if h.on_add is not None:
                h.on_add(o)

    def _dispatch_update(self, old: Obj, new: Obj) -> None:
        for h in self.handlers:
            if h.on_update is not None:
                h.on_update(old, new)

    def _dispatch_delete(self, o: Obj) -> None:
        for h in self.handlers:
            if h.on_delete is not None:
                h.on_delete(o)

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Stored objects (optionally of one namespace)."""
        with self._lock:
            if namespace is None:
                return list(self.store.values())
            return [o for (ns, _), o in self.store.items() if ns == namespace]

    def get(self, namespace: str, name: str) -> Obj | None:
        """The stored object or None."""
        return self.store.get((namespace or "", name))


class InformerSet:
    """Informers for the kinds the scheduler reads; also the plugins' ``ObjectLister``."""

    def __init__(self, client: ClusterClient, kinds: Iterable[str]) -> None:
        self.client = client
        self.informers: dict[str, Informer] = {k: Informer(client, k) for k in kinds}

    def informer(self, kind: str) -> Informer:
        """The informer of ``kind`` (created on first use)."""
        inf = self.informers.get(kind)
        if inf is None:
            inf = self.informers[kind] = Informer(self.client, kind)
        return inf

    def start(self, order: Iterable[str] | None = None) -> None:
        """Start every informer (``order`` first: e.g. Nodes before Pods so bound pods find their node)."""
        first = list(order or [])
        for k in first + [k for k in self.informers if k not in first]:
            if k in self.informers:
                self.informers[k].start()

    def stop(self) -> None:
        """Stop every informer."""
        for inf in self.informers.values():
            inf.stop()

    def has_synced(self) -> bool:
        """True once every informer has listed."""
        return all(inf.synced for inf in self.informers.values())

    # ObjectLister
    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Objects of ``kind`` (dicts; do not mutate)."""
        inf = self.informers.get(kind)
        return list(inf.list(namespace)) if inf is not None else []

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """One object of ``kind`` or None."""
        inf = self.informers.get(kind)
        return inf.get(namespace, name) if inf is not None else None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """Labels of a Namespace (empty when unknown)."""
        ns = self.get("Namespace", "", namespace)
        if ns is None:
            return {}
        return (ns.get("metadata") or {}).get("labels") or {}
