"""``PodOwnerController``: the skeleton every controller of pods from a template shares -- the
ReplicaSet, DaemonSet and StatefulSet controllers -- as upstream's controllers share it by
convention (``pkg/controller/replicaset/replica_set.go: NewBaseController``, ``addPod``,
``updatePod``, ``deletePod``, ``enqueueRS``; the same handlers in ``daemon_controller.go`` and
``stateful_set.go``).

* ``__init__(cluster, clock, admit)``: the store, the clock the syncs run on, the API server's pod
  admission (identity by default), a :class:`WorkQueue` named :attr:`queue_name` synced by
  :meth:`sync`, and a :class:`PodIndex` of the pods by controller.
* :meth:`start` indexes pods (their later events go to :meth:`_on_pod`), watches the owner kind
  :attr:`kind` from the start (every existing owner is synced once) and whatever
  :meth:`extra_watches` adds (the DaemonSet controller's nodes); :meth:`stop` ends them all and
  closes the queue.
* The owner handler queues ``namespace/name`` of every owner that is added or changed.
* The pod handler queues the pod's controller of kind :attr:`kind`, and the previous controller
  when the reference changed (``updatePod``'s ``controllerRefChanged``). With
  :attr:`skip_created_pods` a pod's ADDED event queues nothing (the sync that created it counted it
  already; upstream's expectations). With :attr:`adopts_orphans` a pod without a controller queues
  every owner of its namespace whose selector matches its labels (``getPodReplicaSets``), and
  :meth:`claim_pods` adopts and releases pods as ``ClaimPods`` does.

Subclasses set :attr:`kind` and :attr:`queue_name` and implement :meth:`sync`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    PodAdmission,
    PodIndex,
    WorkQueue,
    controller_ref,
    label_selector_matcher,
    new_controller_ref,
    owner_refs,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["PodOwnerController"]

Obj = dict[str, Any]


class PodOwnerController:
    """Base of a controller that owns pods (module docstring)."""

    #: the owner kind (``ReplicaSet``): watched, and matched against pods' controller references
    kind: ClassVar[str] = ""
    #: the work queue's name in log lines (``replicaset``)
    queue_name: ClassVar[str] = ""
    #: a pod's ADDED event does not queue its controller
    skip_created_pods: ClassVar[bool] = False
    #: orphan pods are adopted by owners whose selector matches them
    adopts_orphans: ClassVar[bool] = False

    def __init__(self, cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.admit: PodAdmission = admit or (lambda pod: pod)
        self.queue = WorkQueue(clock, self.sync, self.queue_name)
        self._subs: list[Subscription] = []
        self.pods = PodIndex(cluster)

    def start(self) -> Self:
        self.pods.start(self._on_pod)  # existing pods are indexed; their events queue their owners
        self._subs = [self.cluster.watch(self.kind, None, self._on_owner), *self.extra_watches()]
        return self

    def extra_watches(self) -> list[Subscription]:
        """Further subscriptions :meth:`start` opens (none by default)."""
        return []

    def stop(self) -> None:
        self.queue.closed = True
        self.pods.stop()
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def sync(self, key: str) -> None:
        """Reconcile the owner ``namespace/name``."""
        raise NotImplementedError

    def _on_owner(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        if ev.type != "DELETED":
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(self, ev: WatchEvent) -> None:
        """Queue the pod's controller (and its previous one; for an adoptable orphan, every owner
        of its namespace that selects it)."""
        pod = ev.object
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        ref = controller_ref(pod)
        old_ref = controller_ref(ev.old_object) if ev.old_object else None
        if not (self.skip_created_pods and ev.type == "ADDED"):
            for r in (ref, old_ref):
                if r is not None and r.get("kind") == self.kind:
                    self.queue.add(f"{namespace}/{r.get('name')}")
        if self.adopts_orphans and ref is None and ev.type != "DELETED":
            for owner in self.cluster.list(self.kind, namespace).items:
                matches = label_selector_matcher((owner.get("spec") or {}).get("selector"))
                if matches(meta.get("labels") or {}):
                    self.queue.add(f"{namespace}/{owner['metadata']['name']}")

    def claim_pods(self, owner: Obj) -> list[Obj]:
        """``ClaimPods``: the pods ``owner`` controls after adopting matching orphans and releasing
        controlled pods that no longer match (a deleted owner adopts nothing and keeps its pods)."""
        meta = owner["metadata"]
        namespace, uid = meta.get("namespace") or "default", str(meta.get("uid"))
        matches = label_selector_matcher((owner.get("spec") or {}).get("selector"))
        deleting = bool(meta.get("deletionTimestamp"))
        owned: list[Obj] = []
        release: list[Obj] = []
        for pod in self.pods.owned(namespace, uid):
            pmeta = pod.get("metadata") or {}
            if matches(pmeta.get("labels") or {}) or deleting:
                owned.append(pod)
            elif not pmeta.get("deletionTimestamp"):
                release.append(pod)
        adopt = (
            []
            if deleting
            else [
                p
                for p in self.pods.orphans(namespace)
                if matches((p.get("metadata") or {}).get("labels") or {})
            ]
        )
        for pod in release:
            refs = [r for r in owner_refs(pod) if r.get("uid") != uid]
            self._set_owner_refs(pod, refs)
        for pod in adopt:
            refs = [*owner_refs(pod), new_controller_ref(owner)]
            owned.append(self._set_owner_refs(pod, refs))
        return owned

    def _set_owner_refs(self, pod: Obj, refs: list[Any]) -> Obj:
        return self.cluster.update({**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}})

    def delete_pod(self, pod: Obj) -> None:
        """Delete ``pod`` gracefully; one already gone is fine."""
        try:
            self.cluster.delete("Pod", pod["metadata"].get("namespace"), pod["metadata"]["name"], grace=True)
        except NotFoundError:
            pass
