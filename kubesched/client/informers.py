"""Informers: list, then watch, keeping a local store per kind and calling handlers
(``k8s.io/client-go/tools/cache`` shared informers, much simplified).

Objects are Kubernetes JSON dicts owned by the store (handlers must not mutate them).
On a watch that reports ``410 Gone`` (``GoneError``) the informer re-lists and reconciles
its store, emitting add/update/delete for what changed, so no object is lost.

Asynchronous backends (a client with ``watch_resumable(kind, rv, handler, on_gone)``, e.g.
:class:`kubesched.client.kube.KubeClusterClient`) resume dropped watches themselves from the last
resourceVersion seen and report, from their watch thread through ``on_gone``, that the informer
must list again: after ``410 Gone``/``Expired``, ``504 Too large resource version`` (the server's
resourceVersions went backwards: etcd restore, restarted ``kubesched serve``), any other watch
error or repeated connection failures. The informer then lists with resourceVersion "" (the
server's current state), reconciles its store -- an object whose uid changed is delivered as a
delete plus an add, one whose content changed as an update, so nothing depends on resourceVersions
being comparable across the two histories -- and watches again from the new list's
resourceVersion (client-go's reflector, ``tools/cache/reflector.go``). Failed lists are retried with
backoff 0.8 s doubling to 30 s; re-lists that follow each other within
:data:`RELIST_BACKOFF_RESET` seconds wait with the same backoff, so a server that keeps failing
watches is not hammered. Retry warnings are rate-limited (the client's ``retry_log``). While a
re-list is pending or the watch keeps failing, :attr:`Informer.healthy` is False (``kubesched
run``'s ``/readyz`` reports it). Such a client's ``dispatch_lock`` is held while the informer
delivers re-list results, so handlers never run concurrently with the client's watch handlers.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.client.client import (
    ClusterClient,
    ResumableSubscription,
    ResumableWatchClient,
    Subscription,
    WatchEvent,
)
from kubesched.client.throttled_log import ThrottledLog
from kubesched.errors import GoneError

log = logging.getLogger(__name__)

#: Backoff of failed lists and of back-to-back re-lists, seconds: first wait and cap.
RELIST_BACKOFF_INITIAL = 0.8
RELIST_BACKOFF_MAX = 30.0
#: A re-list this many seconds after the previous one starts again without waiting.
RELIST_BACKOFF_RESET = 60.0

_fallback_retry_log = ThrottledLog(log, 30.0)

Obj = dict[str, Any]
Key = tuple[str, str]


def object_key(obj: Mapping[str, Any]) -> Key:
    """``(namespace, name)``; namespace is ``""`` for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _replaced(prev: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a re-list found another object under the same key: a different uid, or a pod whose
    node changed (a pod is never moved nor unbound; after a server restart or an etcd restore the
    same name can be a new, unbound pod). Delivered as a delete plus an add, never as an update."""
    if (prev.get("metadata") or {}).get("uid") != (new.get("metadata") or {}).get("uid"):
        return True
    before = (prev.get("spec") or {}).get("nodeName")
    after = (new.get("spec") or {}).get("nodeName")
    return bool(before) and before != after


@dataclass
class ResourceEventHandlerFuncs:
    """Callbacks of one informer (client-go ``cache.ResourceEventHandlerFuncs``): ``on_add(obj)``,
    ``on_update(old, new)``, ``on_delete(obj)``."""

    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


@dataclass
class Informer:
    """One kind's local store and its handlers."""

    client: ClusterClient
    kind: str
    store: dict[Key, Obj] = field(default_factory=dict)
    handlers: list[ResourceEventHandlerFuncs] = field(default_factory=list)
    resource_version: str = ""
    synced: bool = False
    #: bumped whenever the store changes (an event or a re-list): a cache of anything derived
    #: from this kind's objects is valid while it stays the same
    generation: int = 0
    _subscription: Subscription | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def add_handlers(self, h: ResourceEventHandlerFuncs) -> None:
        """Register handlers (before :meth:`start`)."""
        self.handlers.append(h)

    _stopped: bool = False
    #: re-lists done after the first list (410 Gone and other watch-error recoveries)
    relists: int = 0
    _recovering: bool = False
    _wake: threading.Event = field(default_factory=threading.Event)
    _last_recovery: float = -1e18
    _recovery_backoff: float = RELIST_BACKOFF_INITIAL
    #: the InformerSet this informer belongs to (coordinates re-lists), if any
    group: InformerSet | None = None

    def start(self) -> None:
        """List, deliver an add for every object, then watch from the list's resourceVersion."""
        self._stopped = False
        self._wake.clear()
        self._relist(initial=True)
        self._watch()

    def stop(self) -> None:
        """Stop watching (also interrupts a pending re-list backoff)."""
        self._stopped = True
        self._wake.set()
        if self._subscription is not None:
            self._subscription.stop()
            self._subscription = None

    @property
    def healthy(self) -> bool:
        """Synced, no re-list pending, and the watch is not failing (for readiness)."""
        if not self.synced or self._recovering:
            return False
        sub = self._subscription
        return not (isinstance(sub, ResumableSubscription) and sub.failing)

    def _is_async(self) -> bool:
        return isinstance(self.client, ResumableWatchClient)

    def _subscribe(self) -> Subscription:
        if isinstance(self.client, ResumableWatchClient):
            return self.client.watch_resumable(
                self.kind, self.resource_version, self._on_event, self._on_gone
            )
        return self.client.watch(self.kind, self.resource_version, self._on_event)

    def _watch(self) -> None:
        try:
            self._subscription = self._subscribe()
        except GoneError:
            self._relist(initial=False)
            self._subscription = self._subscribe()

    def _on_gone(self) -> None:
        """Called by an asynchronous backend's watch thread once its watch ended and the store must
        be re-listed (410 Gone, too large resourceVersion, watch errors): re-list (after the
        re-list backoff when the previous re-list was recent), reconcile, watch again."""
        if self._stopped:
            return
        sub = self._subscription
        if self.group is not None:
            self.group._recover(self, sub)
        else:
            self._recover_alone()

    def _recover_alone(self) -> None:
        """Re-list this informer (after the backoff when the previous re-list was recent), watch again."""
        self._recovering = True
        now = time.monotonic()
        if now - self._last_recovery < RELIST_BACKOFF_RESET:
            delay = self._recovery_backoff
            self._recovery_backoff = min(delay * 2, RELIST_BACKOFF_MAX)
            if self._wake.wait(delay) or self._stopped:
                return
        else:
            self._recovery_backoff = RELIST_BACKOFF_INITIAL
        self._last_recovery = time.monotonic()
        try:
            self._relist(initial=False)
        except Exception:  # noqa: BLE001 - only when stopped while listing
            if self._stopped:
                return
            raise
        if self._stopped:
            return
        sub = self._subscribe()
        self._subscription = sub
        if self._stopped:  # stop() ran while subscribing
            sub.stop()
            return
        self._recovering = False

    def _retry_log(self) -> ThrottledLog:
        return self.client.retry_log if isinstance(self.client, ResumableWatchClient) else _fallback_retry_log

    def _list(self) -> Any:
        if not self._is_async():
            return self.client.list(self.kind)
        backoff = RELIST_BACKOFF_INITIAL
        key = "list"  # one line per 30 s for all the kinds (they fail together)
        while True:
            try:
                res = self.client.list(self.kind)
            except Exception as e:  # noqa: BLE001 - the API server may be failing for a while
                if self._stopped:
                    raise
                self._retry_log().log(
                    key,
                    logging.WARNING,
                    "informer %s: list failed: %s; retrying in %.1fs",
                    self.kind,
                    e,
                    backoff,
                )
                if self._wake.wait(backoff) and self._stopped:
                    raise
                backoff = min(backoff * 2, RELIST_BACKOFF_MAX)
                continue
            return res

    def _relist(self, initial: bool) -> None:
        res = self._list()
        if not initial:
            self.relists += 1
        client = self.client
        with client.dispatch_lock if isinstance(client, ResumableWatchClient) else contextlib.nullcontext():
            self._reconcile(res, initial)

    def _reconcile(self, res: Any, initial: bool) -> None:
        with self._lock:
            fresh = {object_key(o): o for o in res.items}
            old = self.store
            self.store = fresh
            self.resource_version = res.resource_version
            self.generation += 1
        if initial:
            for o in fresh.values():
                self._dispatch_add(o)
            self.synced = True
            return
        for k, o in old.items():
            if k not in fresh:
                self._guarded(self._dispatch_delete, o)
        for k, o in fresh.items():
            prev = old.get(k)
            if prev is None:
                self._guarded(self._dispatch_add, o)
            elif _replaced(prev, o):
                self._guarded(self._dispatch_delete, prev)
                self._guarded(self._dispatch_add, o)
            elif prev != o:  # resourceVersions of two server histories are not comparable
                self._guarded(self._dispatch_update, prev, o)
        self.synced = True

    def _guarded(self, dispatch: Callable[..., None], *objs: Obj) -> None:
        """A re-list delivery: a failing handler is logged and the reconciliation goes on."""
        try:
            dispatch(*objs)
        except Exception:  # noqa: BLE001 - one handler failure must not leave the store half-delivered
            log.exception(
                "informer %s: handler failed while reconciling %s/%s", self.kind, *object_key(objs[-1])
            )

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
            self.generation += 1
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
    """Informers for the kinds the scheduler reads; also the plugins' ``ObjectLister``.

    Re-lists are coordinated: one informer at a time; and when a watch ended because the server
    seems to have changed under it (``504 Too large resource version``, repeated connection
    failures: a restarted server, an etcd restore) every informer re-lists, in the start order
    (Nodes before Pods), so the scheduler never sees the new server's pods next to the old
    server's nodes."""

    def __init__(self, client: ClusterClient, kinds: Iterable[str]) -> None:
        self.client = client
        self.informers: dict[str, Informer] = {}
        self._order: list[str] = []
        self._recover_lock = threading.Lock()
        for k in kinds:
            self.informer(k)

    def informer(self, kind: str) -> Informer:
        """The informer of ``kind`` (created on first use)."""
        inf = self.informers.get(kind)
        if inf is None:
            inf = self.informers[kind] = Informer(self.client, kind, group=self)
        return inf

    def start(self, order: Iterable[str] | None = None) -> None:
        """Start every informer (``order`` first: e.g. Nodes before Pods so bound pods find their node)."""
        first = list(order or [])
        self._order = [k for k in first if k in self.informers]
        for k in first + [k for k in self.informers if k not in first]:
            if k in self.informers:
                self.informers[k].start()

    def _recover(self, trigger: Informer, sub: Subscription | None) -> None:
        """Re-list ``trigger`` whose watch ``sub`` ended, or every informer when the server changed."""
        with self._recover_lock:
            if trigger._stopped or trigger._subscription is not sub:
                return  # stopped, or already re-listed by a server-wide recovery
            if not (isinstance(sub, ResumableSubscription) and sub.server_changed):
                trigger._recover_alone()
                return
            ordered = self._order + [k for k in self.informers if k not in self._order]
            informers = [self.informers[k] for k in ordered]
            log.info("API server changed under the watches (restarted or restored): re-listing every kind")
            for inf in informers:
                inf._recovering = True
                other = inf._subscription
                if other is not None and other is not sub:
                    other.stop()  # its own re-list request (if any) is now moot
            for inf in informers:
                if inf._stopped:
                    continue
                try:
                    inf._relist(initial=False)
                except Exception:  # noqa: BLE001 - only when stopped while listing
                    if inf._stopped:
                        continue
                    raise
                new = inf._subscribe()
                inf._subscription = new
                if inf._stopped:
                    new.stop()
                    continue
                inf._recovering = False

    def stop(self) -> None:
        """Stop every informer."""
        for inf in self.informers.values():
            inf.stop()

    def has_synced(self) -> bool:
        """True once every informer has listed."""
        return all(inf.synced for inf in self.informers.values())

    def unhealthy(self) -> list[str]:
        """Kinds whose informer is not synced, is re-listing or whose watch keeps failing."""
        return [k for k, inf in self.informers.items() if not inf.healthy]

    # ObjectLister
    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Objects of ``kind`` (dicts; do not mutate)."""
        inf = self.informers.get(kind)
        return list(inf.list(namespace)) if inf is not None else []

    def kind_version(self, kind: str) -> int:
        """A number that changes whenever the objects of ``kind`` change (0 for a kind not
        watched, whose list is always empty)."""
        inf = self.informers.get(kind)
        return inf.generation if inf is not None else 0

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
