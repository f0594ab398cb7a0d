"""The garbage collector: deletes or orphans the dependents of deleted owners by
``metadata.ownerReferences``, for every kind the embedded cluster holds, as
``pkg/controller/garbagecollector/garbagecollector.go`` does (``attemptToDeleteItem``,
``processDeletingDependentsItem``, ``orphanDependents``; the dependency graph of
``graph_builder.go: processGraphChanges``). A ResourceClaim generated for a pod carries an owner
reference to it, so Pods are owners like ReplicaSets, Jobs or Nodes.

* **Graph.** Every kind of the store (Events excepted, as upstream ignores them) is watched; each
  object's owner references are kept as edges owner uid -> dependent uid (``uidToNode``).
* **Background** (the default; an owner deleted outright): its dependents are attempted: one
  whose owner references all name owners that are gone is deleted (pods gracefully, with their
  own ``orphan``/``foregroundDeletion`` finalizer's policy); one that still has a live owner only
  loses the references to the gone ones (and to owners waiting for their dependents).
* **Foreground** (``propagationPolicy: Foreground``: the API server gives the owner the
  ``foregroundDeletion`` finalizer and its ``deletionTimestamp``): its dependents are deleted, in
  foreground themselves when they have dependents; once no dependent with
  ``blockOwnerDeletion: true`` is left, the finalizer is removed and the owner goes.
* **Orphan** (``propagationPolicy: Orphan``, finalizer ``orphan``): the owner's references are
  removed from its dependents, then the finalizer, and the owner goes; the dependents stay.

An owner is *gone* when no object of its kind and name exists (in the dependent's namespace, by
name for cluster-scoped kinds) or the one that exists has another uid (``isDangling``). Upstream
also looks up owners it never observed (``virtual`` nodes) and collects their dependents when the
lookup finds none; here that holds for owners of :data:`VERIFIED_OWNER_KINDS` (Pods: a snapshot
or trace always holds its pods whole, so a claim naming a pod that is not there is orphaned), and
for every other kind only once the collector has seen the owner itself and then its deletion:
snapshots and traces cut from a real cluster hold pods whose ReplicaSets, Jobs or Nodes are left
out or re-created with new uids, and those pods stay (their owner references still feed
spreading and preemption). When :meth:`GarbageCollector.start` is called, every dependent of an
owner of those kinds that is absent is attempted once.

Syncs run from a work queue on the cluster's clock (on a virtual clock: as time is advanced).
Not modelled: the unblocking of ownership cycles in foreground deletion
(``attemptToDeleteItem``'s ``blockOwnerDeletion`` patch of dependents deleting their own).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api import kinds as kind_registry
from kubesched.client.client import ClusterClient, Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import WorkQueue, owner_refs
from kubesched.errors import NotFoundError

__all__ = ["FOREGROUND", "GarbageCollector", "ORPHAN", "VERIFIED_OWNER_KINDS"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
#: Owner kinds whose absence is checked even for owners the collector never saw (module docstring)
VERIFIED_OWNER_KINDS: tuple[str, ...] = ("Pod",)


@dataclass(frozen=True, slots=True)
class _Ref:
    """One owner reference: the owner's kind, name and uid, and ``blockOwnerDeletion``."""

    kind: str
    name: str
    uid: str
    block: bool


@dataclass(frozen=True, slots=True)
class _Node:
    """An observed object of the graph: identity and owner references (``graph.go: node``)."""

    kind: str
    namespace: str
    name: str
    uid: str
    owners: tuple[_Ref, ...]
    #: being deleted with the ``orphan`` or ``foregroundDeletion`` finalizer
    deleting: bool


def _refs_of(obj: Mapping[str, Any]) -> tuple[_Ref, ...]:
    return tuple(
        _Ref(
            str(r.get("kind") or ""),
            str(r.get("name") or ""),
            str(r.get("uid") or ""),
            bool(r.get("blockOwnerDeletion")),
        )
        for r in owner_refs(obj)
    )


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _finalizers(obj: Mapping[str, Any]) -> list[str]:
    f = _meta(obj).get("finalizers")
    return [str(x) for x in f] if isinstance(f, list) else []


def _same_graph_fields(ev: WatchEvent) -> bool:
    """A MODIFIED event that leaves what the graph keeps of the object as it was (owner references,
    deletion timestamp, finalizers)."""
    if ev.type != "MODIFIED" or ev.old_object is None:
        return False
    meta, old = _meta(ev.object), _meta(ev.old_object)
    return (
        meta.get("ownerReferences") == old.get("ownerReferences")
        and meta.get("deletionTimestamp") == old.get("deletionTimestamp")
        and meta.get("finalizers") == old.get("finalizers")
    )


class GarbageCollector:
    """Collects dependents in ``cluster`` on ``clock`` (module docstring); owners of
    ``verified_owner_kinds`` count as gone when absent even if never seen. :meth:`start` watches
    every kind; :meth:`stop` ends it."""

    def __init__(
        self,
        cluster: ClusterClient,
        clock: Clock,
        *,
        verified_owner_kinds: Collection[str] = VERIFIED_OWNER_KINDS,
    ) -> None:
        self.cluster = cluster
        self.verified_owner_kinds = frozenset(verified_owner_kinds)
        self.queue = WorkQueue(clock, self._sync, "garbagecollector")
        self._subs: list[Subscription] = []
        self._lock = threading.Lock()
        #: observed objects by uid
        self._nodes: dict[str, _Node] = {}
        #: owner uid -> uids of the objects that name it (kept while the owner is gone)
        self._dependents: dict[str, set[str]] = {}
        #: uids of owners seen and then deleted while they still had dependents
        self._gone: set[str] = set()
        self._started = False

    def start(self) -> GarbageCollector:
        kinds = [k for k in kind_registry.snapshot_order() if k != "Event"]
        self._subs = [self.cluster.watch(kind, None, self._on_event) for kind in kinds]
        with self._lock:
            self._started = True
            suspects = [n.uid for n in self._nodes.values() if self._has_suspect_owner(n)]
        for uid in suspects:
            self.queue.add(uid)
        return self

    def stop(self) -> None:
        self.queue.closed = True
        for sub in self._subs:
            sub.stop()
        self._subs = []

    # ------------------------------------------------------------------ graph

    def _has_suspect_owner(self, node: _Node) -> bool:
        """Whether an owner of ``node`` is not observed and may be gone. Caller holds the lock."""
        return any(
            r.uid not in self._nodes and (r.uid in self._gone or r.kind in self.verified_owner_kinds)
            for r in node.owners
        )

    def _deleting_owners(self, refs: tuple[_Ref, ...]) -> list[str]:
        """Uids of the owners in ``refs`` being deleted with a finalizer. Caller holds the lock."""
        return [r.uid for r in refs if (n := self._nodes.get(r.uid)) is not None and n.deleting]

    def _unlink(self, dep_uid: str, refs: tuple[_Ref, ...]) -> None:
        for ref in refs:
            deps = self._dependents.get(ref.uid)
            if deps is not None:
                deps.discard(dep_uid)
                if not deps:
                    del self._dependents[ref.uid]
                    self._gone.discard(ref.uid)

    def _on_event(self, ev: WatchEvent) -> None:
        """``processGraphChanges``: keep the graph and queue what the change may let go."""
        meta = _meta(ev.object)
        uid = str(meta.get("uid") or "")
        if not uid:
            return
        queue: list[str] = []
        with self._lock:
            old = self._nodes.get(uid)
            if old is not None and not old.deleting and _same_graph_fields(ev):
                return  # a status update or binding: the graph and what may go are unchanged
            old_refs = old.owners if old is not None else ()
            if ev.type == "DELETED":
                self._nodes.pop(uid, None)
                self._unlink(uid, old_refs)
                if uid in self._dependents:
                    self._gone.add(uid)
                    queue += sorted(self._dependents[uid])
                queue += self._deleting_owners(old_refs)  # an owner may wait for it
            else:
                refs = _refs_of(ev.object)
                namespace = (
                    "" if kind_registry.is_cluster_scoped(ev.kind) else str(meta.get("namespace") or "")
                )
                deleting = bool(meta.get("deletionTimestamp")) and bool(
                    {ORPHAN, FOREGROUND} & set(_finalizers(ev.object))
                )
                node = _Node(ev.kind, namespace, str(meta.get("name") or ""), uid, refs, deleting)
                self._nodes[uid] = node
                if refs != old_refs:
                    self._unlink(uid, tuple(r for r in old_refs if r not in refs))
                    for ref in refs:
                        self._dependents.setdefault(ref.uid, set()).add(uid)
                    queue += self._deleting_owners(tuple(r for r in old_refs if r not in refs))
                    if self._started and self._has_suspect_owner(node):
                        queue.append(uid)
                if deleting:
                    queue.append(uid)
        for key in queue:
            self.queue.add(key)

    # ------------------------------------------------------------------ syncs

    def _sync(self, uid: str) -> None:
        """``attemptToDeleteItem`` of the observed object ``uid``."""
        with self._lock:
            node = self._nodes.get(uid)
        if node is None:
            return
        obj = self._get(node.kind, node.namespace, node.name, uid)
        if obj is None:
            return
        if _meta(obj).get("deletionTimestamp"):
            finalizers = _finalizers(obj)
            if ORPHAN in finalizers:
                self._orphan_dependents(obj, uid)
            elif FOREGROUND in finalizers:
                self._process_deleting_dependents(obj, uid)
            return
        if not node.owners:
            return
        solid: list[_Ref] = []
        dangling: list[_Ref] = []
        waiting: list[_Ref] = []
        for ref in node.owners:
            {"solid": solid, "dangling": dangling, "waiting": waiting}[self._owner_state(ref, node)].append(
                ref
            )
        if solid:
            if dangling or waiting:
                self._drop_refs(obj, {r.uid for r in (*dangling, *waiting)})
            return
        if waiting and self._live_dependents(uid):
            self._delete(node, obj, FOREGROUND)
            return
        finalizers = _finalizers(obj)
        policy = ORPHAN if ORPHAN in finalizers else FOREGROUND if FOREGROUND in finalizers else None
        self._delete(node, obj, policy)

    def _owner_state(self, ref: _Ref, node: _Node) -> str:
        """``solid`` (exists), ``dangling`` (gone, module docstring) or ``waiting`` (being deleted
        in foreground: ``waitingForDependentsDeletion``)."""
        namespace = "" if kind_registry.is_cluster_scoped(ref.kind) else node.namespace
        owner = self._get(ref.kind, namespace, ref.name, ref.uid)
        if owner is None:
            with self._lock:
                gone = ref.uid in self._gone or ref.kind in self.verified_owner_kinds
            return "dangling" if gone else "solid"
        if _meta(owner).get("deletionTimestamp") and FOREGROUND in _finalizers(owner):
            return "waiting"
        return "solid"

    def _live_dependents(self, uid: str) -> list[_Node]:
        with self._lock:
            return [self._nodes[d] for d in sorted(self._dependents.get(uid, ())) if d in self._nodes]

    def _process_deleting_dependents(self, owner: Obj, uid: str) -> None:
        """``processDeletingDependentsItem``: delete the dependents; once none that blocks the
        owner's deletion is left, remove the ``foregroundDeletion`` finalizer."""
        dependents = self._live_dependents(uid)
        blocking = [d for d in dependents if any(r.uid == uid and r.block for r in d.owners)]
        if not blocking:
            self._remove_finalizer(owner, FOREGROUND)
            return
        for dep in dependents:
            self.queue.add(dep.uid)

    def _orphan_dependents(self, owner: Obj, uid: str) -> None:
        """``orphanDependents``: drop the references to ``owner``, then its ``orphan`` finalizer."""
        for dep in self._live_dependents(uid):
            obj = self._get(dep.kind, dep.namespace, dep.name, dep.uid)
            if obj is not None:
                self._drop_refs(obj, {uid})
        self._remove_finalizer(owner, ORPHAN)

    # ------------------------------------------------------------------ writes

    def _get(self, kind: str, namespace: str, name: str, uid: str) -> Obj | None:
        """The object of ``kind``/``namespace``/``name`` when it exists with ``uid``, else None."""
        try:
            obj = self.cluster.get(kind, namespace or None, name)
        except NotFoundError:
            return None
        return obj if _meta(obj).get("uid") == uid else None

    def _drop_refs(self, obj: Obj, uids: set[str]) -> None:
        meta = _meta(obj)
        refs = [r for r in owner_refs(obj) if str(r.get("uid")) not in uids]
        try:
            self.cluster.update({**obj, "metadata": {**meta, "ownerReferences": refs}})
        except NotFoundError:
            pass

    def _remove_finalizer(self, obj: Obj, finalizer: str) -> None:
        meta = _meta(obj)
        kept = [f for f in _finalizers(obj) if f != finalizer]
        try:
            self.cluster.update({**obj, "metadata": {**meta, "finalizers": kept}})
        except NotFoundError:
            pass

    def _delete(self, node: _Node, obj: Obj, policy: str | None) -> None:
        """``deleteObject`` with propagation ``policy`` (None: background): the API server adds
        the policy's finalizer before setting the deletion timestamp; pods go gracefully."""
        meta = _meta(obj)
        try:
            if policy is not None and policy not in _finalizers(obj):
                finalizers = [*_finalizers(obj), policy]
                self.cluster.update({**obj, "metadata": {**meta, "finalizers": finalizers}})
            self.cluster.delete(node.kind, node.namespace or None, node.name, grace=True)
        except NotFoundError:
            pass
