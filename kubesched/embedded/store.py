"""``MemoryCluster``: the embedded, in-process :class:`~kubesched.client.client.ClusterClient`.

It stands in for kube-apiserver + etcd (``staging/src/k8s.io/apiserver/pkg/registry/generic/registry``
and ``pkg/registry/core/pod/storage``) for the simulator, the benchmark and every scheduler test:

* objects per kind, keyed like etcd (``<namespace>/<name>``, or ``<name>`` for cluster-scoped kinds);
  ``list`` returns them in that key order, as the API server does;
* one global, monotonically increasing resourceVersion (string of an int) stamped in
  ``metadata.resourceVersion`` on every write, deletions included; it starts after
  ``first_resource_version`` (0 by default), and every version up to it counts as compacted, so a
  store that starts past the versions an earlier store handed out (``kubesched serve`` starts at
  the wall clock in microseconds) answers every watch from that earlier history with 410 Gone,
  like etcd restored with ``--bump-revision --mark-compacted``;
* ``metadata.uid`` a version-4 UUID (``uuid.NewUUID`` in
  ``staging/src/k8s.io/apiserver/pkg/registry/rest/meta.go: FillObjectMetaSystemFields``): random,
  as the API server makes them, with ``uid_seed=None`` (``kubesched serve``), else drawn from an
  RNG seeded with ``uid_seed`` so that simulations are reproducible; either way never one a stored
  object holds, so a store loaded from a dump (its own or another's) hands out no loaded UID;
  ``metadata.creationTimestamp`` from the clock; ``generateName`` gets a 5-character suffix from a
  seeded RNG;
* a bounded event history per kind (default 10000) for ``watch`` from a resourceVersion; older
  versions raise :class:`~kubesched.errors.GoneError` (HTTP 410), and so does, for every kind, a
  version from before the end of the latest :meth:`MemoryCluster.load` (its objects have no
  history: a client must list them);
* Events (``create_event``) in a bounded list, see :meth:`MemoryCluster.events`.

Ownership: objects handed to ``create``/``update``/``load`` are shallow-copied at the top level and
in ``metadata`` (the store writes there); nested values (``spec``, ``status``, ...) are shared, so
callers must not mutate them afterwards. Every dict the store returns or passes to a handler is the
stored one: never mutate it. Writes replace dicts rather than editing them, so an ``old_object``
stays a faithful picture of the previous state.

Threading: one re-entrant lock guards all state, and watch handlers are called **while it is held**,
synchronously, in registration order, after the write is committed. So every handler sees events in
resourceVersion order and may read or write the store from the same thread. A write made by a
handler is queued and delivered (to all handlers, in order) after the current event has reached
every handler, before the outermost write returns. Handlers must not wait on other threads that use
the store (deadlock). A handler exception is logged, delivery continues, and the first exception is
re-raised from the write call (the write itself stays committed).

Finalizers: deleting an object with ``metadata.finalizers`` (or a Namespace with
``spec.finalizers``) only sets its ``deletionTimestamp`` (a Namespace turns ``Terminating``); an
update that removes the last finalizer of such an object deletes it (``Store.Delete`` and
``ShouldDeleteDuringUpdate`` of ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``).

Not modelled: admission (namespace existence, priority resolution, defaults other than
``status.phase: Pending`` for new Pods), field validation, BOOKMARK events.
"""

from __future__ import annotations

import bisect
import builtins
import logging
import random
import threading
import uuid
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api import kinds as kind_registry
from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.client.client import (
    GroupVersionResource,
    ListResult,
    WatchEvent,
    WatchHandler,
)
from kubesched.clock import Clock
from kubesched.embedded.patch import merge_status_patch, set_condition
from kubesched.embedded.selector import compile_selector
from kubesched.errors import AlreadyExistsError, ConflictError, GoneError, NotFoundError

__all__ = ["MemoryCluster"]

_log = logging.getLogger(__name__)

Obj = dict[str, Any]

# Kinds whose ``metadata.generation`` counts spec changes (1 on create, +1 per spec update), as
# their registry strategies do (``PrepareForCreate``/``PrepareForUpdate``); controllers report the
# generation they acted on as ``status.observedGeneration``.
_GENERATION_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})

# utilrand.String alphabet (k8s.io/apimachinery/pkg/util/rand), used by generateName.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class _Subscription:
    """A registered watch handler (implements ``Subscription``)."""

    __slots__ = ("_store", "kind", "handler", "start_rv", "active")

    def __init__(self, store: MemoryCluster, kind: str, handler: WatchHandler, start_rv: int) -> None:
        self._store = store
        self.kind = kind
        self.handler = handler
        self.start_rv = start_rv  # events with rv <= start_rv were replayed, not delivered live
        self.active = True

    def stop(self) -> None:
        self._store._unsubscribe(self)


class MemoryCluster:
    """In-process Kubernetes object store implementing ``ClusterClient`` (see module docstring).

    ``clock`` stamps ``creationTimestamp``/``deletionTimestamp``/condition times;
    ``history_limit`` is the number of watch events retained per kind (>= 0);
    ``event_limit`` the number of Events kept by :meth:`events`; ``seed`` seeds ``generateName``;
    ``uid_seed`` seeds UIDs (None: random UIDs); ``first_resource_version`` (>= 0) the version the
    store starts at (its first write gets the next one; watches from it or before get 410).
    """

    def __init__(
        self,
        clock: Clock,
        *,
        history_limit: int = 10000,
        event_limit: int = 10000,
        seed: int = 0,
        uid_seed: int | None = 0,
        first_resource_version: int = 0,
    ) -> None:
        if history_limit < 0 or event_limit < 0 or first_resource_version < 0:
            raise ValueError("history_limit, event_limit and first_resource_version must be >= 0")
        self._clock = clock
        self._lock = threading.RLock()
        self._rv = first_resource_version
        # watches from a version below this get 410 for every kind (store start, end of last load)
        self._history_floor = first_resource_version
        self._event_counter = 0
        self._rand = random.Random(seed)
        self._uid_rand = random.Random(uid_seed) if uid_seed is not None else None
        self._uids: set[str] = set()  # of stored objects (Events excluded)
        self._objects: dict[str, dict[str, Obj]] = {}
        self._sorted_keys: dict[str, list[str]] = {}
        self._history_limit = history_limit
        self._history: dict[str, deque[tuple[int, WatchEvent]]] = {}
        self._compacted: dict[str, int] = {}
        self._subs: dict[str, list[_Subscription]] = {}
        #: informers shared by the store's watchers, by name (one watch and index each for all of them)
        self.shared_informers: dict[str, Any] = {}
        self._pending: deque[tuple[int, WatchEvent]] = deque()
        self._dispatching = False
        self._events: deque[Obj] = deque(maxlen=event_limit)
        self._events_total = 0

    # ------------------------------------------------------------------ reads

    @property
    def resource_version(self) -> str:
        """Current global resourceVersion (``"0"`` before the first write). Read under the lock, so
        every watch handler call for versions up to it has returned (unless read from a handler)."""
        with self._lock:
            return str(self._rv)

    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        """Stored object (do not mutate). Raises NotFoundError ``pods "web-1" not found``.
        Upstream: ``GET .../{resource}/{name}``."""
        with self._lock:
            if kind == "Event":
                for ev in self._events:
                    if ev["metadata"]["name"] == name and ev["metadata"].get("namespace") == namespace:
                        return ev
            else:
                store = self._objects.get(kind)
                if store is not None:
                    obj = store.get(_key(kind, namespace, name))
                    if obj is not None:
                        return obj
        raise NotFoundError(f'{kind_registry.resource_name(kind)} "{name}" not found')

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> ListResult:
        """Objects of ``kind`` sorted by etcd key (``namespace/name``), optionally in one namespace
        and matching a label selector; plus the current resourceVersion. Upstream: ``GET .../{resource}``.
        Raises ValueError for a malformed selector."""
        matches = compile_selector(label_selector) if label_selector else None
        with self._lock:
            if kind == "Event":
                items = [
                    e for e in self._events if not namespace or e["metadata"].get("namespace") == namespace
                ]
            else:
                store = self._objects.get(kind)
                if not store:
                    items = []
                else:
                    keys = self._keys_sorted(kind)
                    if namespace and not kind_registry.is_cluster_scoped(kind):
                        lo = bisect.bisect_left(keys, namespace + "/")
                        hi = bisect.bisect_left(keys, namespace + "0")  # '0' follows '/'
                        keys = keys[lo:hi]
                    items = [store[k] for k in keys]
            rv = str(self._rv)
        if matches is not None:
            items = [o for o in items if matches(_labels_of(o))]
        return ListResult(items, rv)

    def counts(self) -> dict[str, int]:
        """Number of stored objects per kind (Events excluded)."""
        with self._lock:
            return {kind: len(store) for kind, store in self._objects.items() if store}

    def events(self) -> builtins.list[Obj]:
        """The retained Events (the newest ``event_limit``), oldest first."""
        with self._lock:
            return list(self._events)

    @property
    def events_total(self) -> int:
        """Number of Events ever created (including those no longer retained)."""
        return self._events_total

    def snapshot_objects(self, kinds: Iterable[str] | None = None) -> builtins.list[Obj]:
        """Every stored object (Events excluded), for ``write_manifests``: kinds in the registry's
        load order (:func:`kubesched.api.kinds.snapshot_order`: Namespace, Node, ..., Pod, then the
        kinds ``simulate`` does not load), then unregistered kinds alphabetically, each sorted by key.
        ``kinds`` restricts the result. The dicts are the stored ones (do not mutate)."""
        with self._lock:
            present = [k for k, store in self._objects.items() if store]
            known = kind_registry.snapshot_order()
            order = [k for k in known if k in present] + sorted(k for k in present if k not in known)
            if kinds is not None:
                wanted = set(kinds)
                order = [k for k in order if k in wanted]
            out: builtins.list[Obj] = []
            for kind in order:
                store = self._objects[kind]
                out.extend(store[k] for k in self._keys_sorted(kind))
            return out

    # ----------------------------------------------------------------- writes

    def create(self, obj: Obj) -> Obj:
        """Store a new object; returns the stored dict with ``metadata.resourceVersion``, a fresh
        ``uid`` and ``creationTimestamp`` (now), ``namespace`` defaulted to ``default`` and
        ``name`` generated from ``generateName`` when missing. New Pods get ``status.phase: Pending``.
        Raises AlreadyExistsError ``pods "web-1" already exists``, ValueError without kind/name.
        Upstream: ``POST .../{resource}`` (``genericregistry.Store.Create``)."""
        with self._lock:
            if obj.get("kind") == "Event":
                return self._create_event(obj)
            new, key = self._prepare_new(obj, preserve=False)
            kind = new["kind"]
            store = self._objects.setdefault(kind, {})
            if key in store:
                raise AlreadyExistsError(
                    f'{kind_registry.resource_name(kind)} "{new["metadata"]["name"]}" already exists'
                )
            store[key] = new
            self._add_uid(new)
            self._sorted_keys.pop(kind, None)
            self._emit(kind, self._rv, WatchEvent("ADDED", kind, new, None))
            return new

    def load(self, objects: Iterable[Obj]) -> int:
        """Bulk-add objects (e.g. from manifests); returns how many were added.

        Unlike ``create`` it keeps a given ``uid``, ``creationTimestamp`` and ``deletionTimestamp``.
        Each object still gets its own resourceVersion. Open watches get ADDED events; afterwards a
        new watch from any version before the end of the load raises GoneError, for every kind
        (list then watch instead). Raises AlreadyExistsError for a duplicate, ValueError without
        kind/name (objects before the bad one stay loaded)."""
        count = 0
        with self._lock:
            try:
                for obj in objects:
                    if obj.get("kind") == "Event":
                        self._create_event(obj)
                        count += 1
                        continue
                    new, key = self._prepare_new(obj, preserve=True)
                    kind = new["kind"]
                    store = self._objects.setdefault(kind, {})
                    if key in store:
                        raise AlreadyExistsError(
                            f'{kind_registry.resource_name(kind)} "{new["metadata"]["name"]}" already exists'
                        )
                    store[key] = new
                    self._add_uid(new)
                    self._sorted_keys.pop(kind, None)
                    if self._subs.get(kind):
                        self._emit(kind, self._rv, WatchEvent("ADDED", kind, new, None))
                    else:
                        self._compacted[kind] = self._rv
                    count += 1
            finally:
                self._history_floor = self._rv
        return count

    def update(self, obj: Obj) -> Obj:
        """Replace a stored object (see ``ClusterClient.update``). Keeps ``uid``,
        ``creationTimestamp``, deletion fields and, for kinds with a status subresource, ``status``.
        An update that changes nothing is not written (no new resourceVersion, no event).
        Raises NotFoundError, ConflictError. Upstream: ``PUT .../{resource}/{name}``."""
        kind = obj.get("kind")
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not kind or not name:
            raise ValueError("update: kind and metadata.name are required")
        with self._lock:
            store = self._objects.get(kind) or {}
            key = _key(kind, meta.get("namespace"), name)
            old = store.get(key)
            if old is None:
                raise NotFoundError(f'{kind_registry.resource_name(kind)} "{name}" not found')
            old_meta = old["metadata"]
            given_rv = meta.get("resourceVersion")
            if given_rv and given_rv != old_meta["resourceVersion"]:
                raise ConflictError(
                    f'Operation cannot be fulfilled on {kind_registry.resource_name(kind)} "{name}": the object has been '
                    "modified; please apply your changes to the latest version and try again"
                )
            given_uid = meta.get("uid")
            if given_uid and given_uid != old_meta.get("uid"):
                raise ConflictError(
                    f'Operation cannot be fulfilled on {kind_registry.resource_name(kind)} "{name}": Precondition failed: '
                    f"UID in precondition: {given_uid}, UID in object meta: {old_meta.get('uid')}"
                )
            new_meta = dict(meta)
            for field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if field in old_meta:
                    new_meta[field] = old_meta[field]
                else:
                    new_meta.pop(field, None)
            new_meta["resourceVersion"] = old_meta["resourceVersion"]
            if kind in _GENERATION_KINDS:
                generation = int(old_meta.get("generation") or 1)
                new_meta["generation"] = generation + 1 if obj.get("spec") != old.get("spec") else generation
            if kind_registry.is_cluster_scoped(kind):
                new_meta.pop("namespace", None)
            else:
                new_meta["namespace"] = old_meta["namespace"]
            new = {**obj, "metadata": new_meta}
            if kind_registry.has_subresource(kind, "status"):
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if new == old:
                return old
            if (
                new_meta.get("deletionTimestamp")
                and _finalizers(old)
                and not _finalizers(new)
                and (kind != "Pod" or not new_meta.get("deletionGracePeriodSeconds"))
            ):
                self._remove(kind, key, new)
                return new
            self._rv += 1
            new_meta["resourceVersion"] = str(self._rv)
            store[key] = new
            self._emit(kind, self._rv, WatchEvent("MODIFIED", kind, new, old))
            return new

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: Obj) -> Obj:
        """Merge ``patch`` into ``status`` (JSON merge patch; ``conditions`` merged by ``type``,
        an item ``{"type": T, "$patch": "delete"}`` removes condition T). A patch that changes
        nothing is not written. Raises NotFoundError. Upstream: ``PATCH .../{name}/status``."""
        with self._lock:
            store = self._objects.get(kind) or {}
            key = _key(kind, namespace, name)
            old = store.get(key)
            if old is None:
                raise NotFoundError(f'{kind_registry.resource_name(kind)} "{name}" not found')
            old_status = old.get("status")
            status = merge_status_patch(old_status if isinstance(old_status, dict) else None, patch)
            if status == old_status:
                return old
            self._rv += 1
            new = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._rv)}, "status": status}
            store[key] = new
            self._emit(kind, self._rv, WatchEvent("MODIFIED", kind, new, old))
            return new

    def delete(
        self,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        grace: bool = False,
        grace_period_seconds: int | None = None,
    ) -> None:
        """Delete an object (DELETED event whose object carries the deletion's resourceVersion).

        ``grace=True`` on a Pod bound to a node and not Succeeded/Failed only sets
        ``metadata.deletionTimestamp`` (now + the grace period) and ``deletionGracePeriodSeconds``
        (MODIFIED event) unless the period is 0; unbound pods go at once, as in
        ``podStrategy.CheckGracefulDelete``. The period is ``grace_period_seconds`` (DeleteOptions
        ``gracePeriodSeconds``) when given, else ``spec.terminationGracePeriodSeconds`` (default
        30). Deleting a pod that is already being deleted is a no-op, unless a shorter
        ``grace_period_seconds`` is given: the deletionTimestamp moves earlier (counted from the
        first deletion, as ``rest.BeforeDelete``), and a period of 0 deletes at once. Raises
        NotFoundError. Upstream: ``DELETE .../{resource}/{name}`` (``genericregistry.Store.Delete``)."""
        with self._lock:
            store = self._objects.get(kind) or {}
            key = _key(kind, namespace, name)
            old = store.get(key)
            if old is None:
                raise NotFoundError(f'{kind_registry.resource_name(kind)} "{name}" not found')
            old_meta = old["metadata"]
            if grace and kind == "Pod":
                spec = old.get("spec") or {}
                period = grace_period_seconds
                if period is None:
                    period = spec.get("terminationGracePeriodSeconds")
                    period = 30 if period is None else int(period)
                period = max(0, int(period))
                deleting = old_meta.get("deletionTimestamp")
                if deleting:
                    previous = old_meta.get("deletionGracePeriodSeconds")
                    if grace_period_seconds is None or previous is None or period >= int(previous):
                        return
                    if period > 0:
                        start = parse_rfc3339(str(deleting)) - int(previous)
                        self._set_deletion(kind, key, old, start + period, period)
                        return
                else:
                    phase = (old.get("status") or {}).get("phase")
                    if spec.get("nodeName") and phase not in ("Succeeded", "Failed") and period > 0:
                        self._set_deletion(kind, key, old, self._clock.now() + period, period)
                        return
            if _finalizers(old):
                if not old_meta.get("deletionTimestamp"):
                    self._set_deletion(kind, key, old, self._clock.now(), 0)
                return
            self._remove(kind, key, old)

    def _remove(self, kind: str, key: str, old: Obj) -> None:
        """Delete ``old`` for good (caller holds the lock)."""
        store = self._objects[kind]
        del store[key]
        self._drop_uid(old)
        self._sorted_keys.pop(kind, None)
        self._rv += 1
        final = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._rv)}}
        self._emit(kind, self._rv, WatchEvent("DELETED", kind, final, old))

    def _set_deletion(self, kind: str, key: str, old: Obj, when: float, period: int) -> None:
        """Mark ``old`` as being deleted at epoch seconds ``when`` (caller holds the lock); a
        Namespace also gets ``status.phase: Terminating``."""
        self._rv += 1
        meta = {
            **old["metadata"],
            "resourceVersion": str(self._rv),
            "deletionTimestamp": rfc3339(when),
            "deletionGracePeriodSeconds": period,
        }
        new = {**old, "metadata": meta}
        if kind == "Namespace":
            status = old.get("status")
            new["status"] = {**(status if isinstance(status, dict) else {}), "phase": "Terminating"}
        self._objects[kind][key] = new
        self._emit(kind, self._rv, WatchEvent("MODIFIED", kind, new, old))

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        """The ``pods/binding`` subresource (``BindingREST.setPodHostAndAnnotations`` in
        ``pkg/registry/core/pod/storage/storage.go``): checks, in upstream order, the UID
        precondition, deletion, an existing ``spec.nodeName`` and scheduling gates, then sets
        ``spec.nodeName`` and ``PodScheduled=True`` (``podutil.UpdatePodCondition``: replaces the
        condition, keeping ``lastTransitionTime`` if it was already True) and clears
        ``status.nominatedNodeName`` (feature gate ClearingNominatedNodeNameAfterBinding, KEP-5278,
        beta and on by default in v1.35). Errors: see ``ClusterClient.bind``; ValueError for an
        empty node name."""
        if not node_name:
            raise ValueError("Binding.target.name: Required value")
        with self._lock:
            store = self._objects.get("Pod") or {}
            key = _key("Pod", namespace, name)
            pod = store.get(key)
            if pod is None:
                raise NotFoundError(f'pods "{name}" not found')
            meta = pod["metadata"]
            if uid and meta.get("uid") != uid:
                raise ConflictError(
                    f'Operation cannot be fulfilled on pods "{name}": Precondition failed: '
                    f"UID in precondition: {uid}, UID in object meta: {meta.get('uid')}"
                )
            spec = pod.get("spec") or {}
            reason = None
            if meta.get("deletionTimestamp"):
                reason = f"pod {name} is being deleted, cannot be assigned to a host"
            elif spec.get("nodeName"):
                reason = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            elif spec.get("schedulingGates"):
                reason = f"pod {name} has non-empty .spec.schedulingGates"
            if reason is not None:
                raise ConflictError(f'Operation cannot be fulfilled on pods/binding "{name}": {reason}')
            status = pod.get("status") or {}
            conditions = set_condition(
                status.get("conditions"),
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None},
                rfc3339(self._clock.now()),
            )
            self._rv += 1
            new_status = {k: v for k, v in status.items() if k != "nominatedNodeName"}
            new = {
                **pod,
                "metadata": {**meta, "resourceVersion": str(self._rv)},
                "spec": {**spec, "nodeName": node_name},
                "status": {**new_status, "conditions": conditions},
            }
            store[key] = new
            self._emit("Pod", self._rv, WatchEvent("MODIFIED", "Pod", new, pod))

    def create_event(self, event: Obj) -> None:
        """Record an Event (kept in the bounded list behind :meth:`events`; watchers of kind
        ``Event`` get ADDED). A missing name becomes ``<regarding.name>.<counter hex>``, a missing
        namespace the regarding object's (or ``default``)."""
        with self._lock:
            self._create_event(event)

    # --------------------------------------------------------------- resources by GroupVersionResource

    def _kind_of(self, gvr: GroupVersionResource) -> str:
        row = kind_registry.find(gvr.group, gvr.version, gvr.resource)
        if row is None:
            raise NotFoundError(f"the server could not find the requested resource ({gvr})")
        return row.kind

    def serves_resource(self, gvr: GroupVersionResource) -> bool:
        """Whether the kind registry (:mod:`kubesched.api.kinds`) has a row served as ``gvr``: the
        embedded cluster serves exactly its registered kinds (no CustomResourceDefinitions)."""
        return kind_registry.find(gvr.group, gvr.version, gvr.resource) is not None

    def list_resource(
        self,
        gvr: GroupVersionResource,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> builtins.list[Obj]:
        """:meth:`list` of the registered kind served as ``gvr``. Raises NotFoundError
        (``the server could not find the requested resource (imagepulljobs.apps.kruise.io/v1alpha1)``)."""
        return builtins.list(self.list(self._kind_of(gvr), namespace, label_selector).items)

    def create_resource(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """:meth:`create` as the registered kind served as ``gvr``. Raises NotFoundError, AlreadyExistsError."""
        return self.create({**obj, "kind": self._kind_of(gvr)})

    def delete_resource(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> None:
        """:meth:`delete` of the registered kind served as ``gvr``. Raises NotFoundError."""
        self.delete(self._kind_of(gvr), namespace, name)

    # --------------------------------------------------------------- watching

    def patch_event(self, namespace: str, name: str, patch: Obj) -> Obj:
        """Merge ``patch`` (JSON merge patch semantics: nested mappings merge, ``None`` deletes)
        into a retained Event, with a new resourceVersion; watchers of ``Event`` get MODIFIED.
        Used for the event broadcaster's series updates. Raises NotFoundError."""
        with self._lock:
            for i, ev in enumerate(self._events):
                meta = ev["metadata"]
                if meta["name"] == name and meta.get("namespace") == namespace:
                    new = _merge(ev, patch)
                    new["metadata"] = {**meta, "name": meta["name"], "namespace": meta.get("namespace")}
                    self._rv += 1
                    new["metadata"]["resourceVersion"] = str(self._rv)
                    self._events[i] = new
                    self._emit("Event", self._rv, WatchEvent("MODIFIED", "Event", new, ev))
                    return new
        raise NotFoundError(f'{kind_registry.resource_name("Event")} "{name}" not found')

    def watch(self, kind: str, resource_version: str | None, handler: WatchHandler) -> _Subscription:
        """Register ``handler`` for changes of ``kind`` (see ``ClusterClient.watch``). Replayed and
        initial events are delivered before this returns. Raises GoneError
        ``too old resource version: R (C)`` (C: newest version no longer retained for the kind),
        ValueError for a malformed or future version."""
        with self._lock:
            replay, _ = self.replay(kind, resource_version)
            sub = _Subscription(self, kind, handler, self._rv)
            self._subs[kind] = [*self._subs.get(kind, ()), sub]
            outer = self._dispatching
            self._dispatching = True  # writes made by the handler during replay are queued
            try:
                for ev in replay:
                    if not sub.active:
                        break
                    handler(ev)
            except BaseException:
                self._unsubscribe(sub)
                raise
            finally:
                self._dispatching = outer
            if not outer and self._pending:
                self._drain()
            return sub

    def replay(self, kind: str, resource_version: str | None) -> tuple[builtins.list[WatchEvent], str]:
        """What a :meth:`watch` of ``kind`` from ``resource_version`` delivers before it returns
        (ADDED for every object when the version is None/""/"0", else the retained events after
        it), and the current resourceVersion, read atomically: a subscriber that takes live events
        after that version from an existing subscription misses none and sees none twice. Raises
        like :meth:`watch`."""
        with self._lock:
            if resource_version in (None, "", "0"):
                if kind == "Event":
                    return [WatchEvent("ADDED", kind, e, None) for e in self._events], str(self._rv)
                return [WatchEvent("ADDED", kind, o, None) for o in self.list(kind).items], str(self._rv)
            try:
                since = int(resource_version)
            except ValueError:
                raise ValueError(f"invalid resource version {resource_version!r}") from None
            if since > self._rv:
                raise ValueError(f"Too large resource version: {since}, current: {self._rv}")
            compacted = max(self._compacted.get(kind, 0), self._history_floor)
            if since < compacted:
                raise GoneError(f"too old resource version: {since} ({compacted})")
            return [ev for rv, ev in self._history.get(kind, ()) if rv > since], str(self._rv)

    def compact(self) -> str:
        """Forget the retained watch history of every kind (etcd compaction): a watch from any
        version older than the current one then raises GoneError. Open watches are unaffected.
        Returns the current resourceVersion (the compaction point)."""
        with self._lock:
            every = set(self._objects) | set(self._history) | set(kind_registry.snapshot_order())
            for kind in every:
                self._compacted[kind] = self._rv
            self._history.clear()
            return str(self._rv)

    def _unsubscribe(self, sub: _Subscription) -> None:
        with self._lock:
            sub.active = False
            subs = self._subs.get(sub.kind)
            if subs:
                self._subs[sub.kind] = [s for s in subs if s is not sub]

    # -------------------------------------------------------------- internals

    def _keys_sorted(self, kind: str) -> builtins.list[str]:
        keys = self._sorted_keys.get(kind)
        if keys is None:
            keys = sorted(self._objects.get(kind, ()))
            self._sorted_keys[kind] = keys
        return keys

    def _next_uid(self) -> str:
        while True:
            if self._uid_rand is None:
                uid = str(uuid.uuid4())
            else:
                uid = uuid4_string(self._uid_rand.getrandbits(128))
            if uid not in self._uids:
                return uid

    def _generate_name(self, kind: str, namespace: str, base: str) -> str:
        base = base[:58]
        store = self._objects.get(kind) or {}
        while True:
            name = base + "".join(self._rand.choice(_NAME_ALPHABET) for _ in range(5))
            if _key(kind, namespace, name) not in store:
                return name

    def _add_uid(self, obj: Obj) -> None:
        """Remember a stored object's uid; a loaded object whose ``metadata.uid`` is not a string
        is kept as it is (its parser reports the field) and takes no part in uid checks."""
        uid = obj["metadata"]["uid"]
        if isinstance(uid, str):
            self._uids.add(uid)

    def _drop_uid(self, obj: Obj) -> None:
        """Forget a removed object's uid (see :meth:`_add_uid`)."""
        uid = (obj.get("metadata") or {}).get("uid")
        if isinstance(uid, str):
            self._uids.discard(uid)

    def _prepare_new(self, obj: Obj, *, preserve: bool) -> tuple[Obj, str]:
        """New stored dict for ``obj`` (rv assigned) and its key. Caller holds the lock."""
        kind = obj.get("kind")
        if not kind or not isinstance(kind, str):
            raise ValueError("object has no kind")
        meta = dict(obj.get("metadata") or ())
        cluster_scoped = kind_registry.is_cluster_scoped(kind)
        if cluster_scoped:
            meta.pop("namespace", None)
            namespace = ""
        else:
            namespace = meta.get("namespace") or "default"
            meta["namespace"] = namespace
        name = meta.get("name")
        if not name:
            base = meta.get("generateName")
            if not base:
                raise ValueError(f"{kind}: metadata.name or metadata.generateName is required")
            name = meta["name"] = self._generate_name(kind, namespace, base)
        if not preserve or not meta.get("uid"):
            meta["uid"] = self._next_uid()
        if not preserve or not meta.get("creationTimestamp"):
            meta["creationTimestamp"] = rfc3339(self._clock.now())
        if kind in _GENERATION_KINDS and (not preserve or not meta.get("generation")):
            meta["generation"] = 1
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        api_version = None if "apiVersion" in obj else kind_registry.api_version(kind)
        if api_version is None:
            new = {**obj, "metadata": meta}
        else:
            new = {"apiVersion": api_version, **obj, "metadata": meta}
        if kind == "Pod":
            status = new.get("status")
            if not isinstance(status, dict) or not status.get("phase"):
                new["status"] = {**(status if isinstance(status, dict) else {}), "phase": "Pending"}
        key = name if cluster_scoped else f"{namespace}/{name}"
        return new, key

    def _create_event(self, event: Obj) -> Obj:
        meta = event.get("metadata") or {}
        if not meta.get("name") or not meta.get("namespace"):
            regarding = event.get("regarding") or event.get("involvedObject") or {}
            self._event_counter += 1
            meta = dict(meta)
            meta.setdefault("name", f"{regarding.get('name') or 'event'}.{self._event_counter:x}")
            if not meta.get("namespace"):
                meta["namespace"] = regarding.get("namespace") or "default"
            event = {**event, "kind": "Event", "metadata": meta}
        new, _ = self._prepare_new(event, preserve=False)
        self._events.append(new)
        self._events_total += 1
        self._emit("Event", self._rv, WatchEvent("ADDED", "Event", new, None))
        return new

    def _emit(self, kind: str, rv: int, ev: WatchEvent) -> None:
        """Record ``ev`` in the kind's history and deliver it. Caller holds the lock."""
        hist = self._history.get(kind)
        if hist is None:
            hist = self._history[kind] = deque(maxlen=self._history_limit)
        if len(hist) == self._history_limit:
            self._compacted[kind] = hist[0][0] if hist else rv
        hist.append((rv, ev))
        if self._subs.get(kind):
            self._pending.append((rv, ev))
            if not self._dispatching:
                self._drain()

    def _drain(self) -> None:
        """Deliver queued events to the current subscribers. Caller holds the lock, not dispatching."""
        self._dispatching = True
        first_error: Exception | None = None
        try:
            pending = self._pending
            while pending:
                rv, ev = pending.popleft()
                for sub in self._subs.get(ev.kind, ()):
                    if sub.active and rv > sub.start_rv:
                        try:
                            sub.handler(ev)
                        except Exception as err:  # keep delivering to the others, re-raise below
                            _log.exception("watch handler for %s failed", ev.kind)
                            if first_error is None:
                                first_error = err
        finally:
            self._dispatching = False
        if first_error is not None:
            raise first_error


#: the bits ``uuid.UUID(int=..., version=4)`` clears: variant (2 bits) and version (4 bits)
_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
#: the bits it sets: variant RFC 4122, version 4
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def uuid4_string(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` for a 128-bit ``bits``, without building the
    ``UUID`` object (one per stored object and Event: every binding writes an Event)."""
    h = f"{(bits & _UUID4_CLEAR) | _UUID4_SET:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _key(kind: str, namespace: str | None, name: str) -> str:
    """etcd-style key of an object within its kind."""
    if kind_registry.is_cluster_scoped(kind):
        return name
    return f"{namespace or 'default'}/{name}"


def _finalizers(obj: Obj) -> bool:
    """Whether ``obj`` has finalizers holding its deletion: ``metadata.finalizers``, and a
    Namespace's ``spec.finalizers`` (``kubernetes``, removed by the namespace controller)."""
    if (obj.get("metadata") or {}).get("finalizers"):
        return True
    spec = obj.get("spec")
    return obj.get("kind") == "Namespace" and isinstance(spec, dict) and bool(spec.get("finalizers"))


def _labels_of(obj: Obj) -> dict[str, Any]:
    """``metadata.labels`` of a stored object, ``{}`` when missing or not a mapping."""
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``patch`` onto ``target`` (new objects, inputs untouched)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out
