"""``PodOwnerController``: the skeleton every controller of pods from a template shares -- the
ReplicaSet, DaemonSet, StatefulSet and Job controllers -- as upstream's controllers share it by
convention (``pkg/controller/replicaset/replica_set.go: NewBaseController``, ``addPod``,
``updatePod``, ``deletePod``, ``enqueueRS``; the same handlers in ``daemon_controller.go``,
``stateful_set.go`` and ``job_controller.go``).

* ``__init__(cluster, clock, admit)``: the store, the clock the syncs run on, the API server's pod
  admission (identity by default), a :class:`WorkQueue` named :attr:`queue_name` synced by
  :meth:`sync`, and the store's :class:`~kubesched.embedded.controllers.informer.SharedPodInformer`
  (:attr:`pods`: the pods by controller, one index for every controller of the store).
* :meth:`start` adds :meth:`_on_pod` to the shared pod informer (later pod events), watches the owner kind
  :attr:`kind` from the start (every existing owner is synced once) and whatever
  :meth:`extra_watches` adds (the DaemonSet controller's nodes); :meth:`stop` ends them all and
  closes the queue.
* The owner handler queues ``namespace/name`` of every owner that is added or changed.
* The pod handler queues the pod's controller of kind :attr:`kind`, and the previous controller
  when the reference changed (``updatePod``'s ``controllerRefChanged``); the check is one look at
  the reference the shared informer read. With
  :attr:`skip_created_pods` a pod's ADDED event queues nothing (the sync that created it counted it
  already; upstream's expectations). With :attr:`adopts_orphans` a pod without a controller queues
  every owner of its namespace whose selector matches its labels (``getPodReplicaSets``) when it is
  added or its labels or controller reference changed (not on a status update or a binding).
* :meth:`claim_pods` adopts and releases pods as ``ClaimPods`` does
  (``pkg/controller/controller_ref_manager.go: PodControllerRefManager.ClaimPods``): orphans
  matching the selector are adopted while :meth:`can_adopt` says so (the manager's ``CanAdopt``
  function; the Job controller's stops once its Job has finished); controlled pods that no longer
  match are released unless :attr:`releases_pods` is off (the Job controller keeps them).

Subclasses set :attr:`kind` and :attr:`queue_name` and implement :meth:`sync`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    PodAdmission,
    WorkQueue,
    label_selector_matcher,
    new_controller_ref,
    owner_refs,
)
from kubesched.embedded.controllers.informer import PodHandlerRegistration, shared_pod_informer
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
    #: an orphan pod's events queue the owners whose selector matches it
    adopts_orphans: ClassVar[bool] = False
    #: :meth:`claim_pods` releases controlled pods that no longer match the selector
    releases_pods: ClassVar[bool] = True

    def __init__(self, cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.admit: PodAdmission = admit or (lambda pod: pod)
        self.queue = WorkQueue(clock, self.sync, self.queue_name)
        self._subs: list[Subscription] = []
        self.pods = shared_pod_informer(cluster)
        self._pod_handler: PodHandlerRegistration | None = None

    def start(self) -> Self:
        self._pod_handler = self.pods.add_event_handler(self._on_pod)  # later events queue owners
        self._subs = [self.cluster.watch(self.kind, None, self._on_owner), *self.extra_watches()]
        return self

    def extra_watches(self) -> list[Subscription]:
        """Further subscriptions :meth:`start` opens (none by default)."""
        return []

    def stop(self) -> None:
        self.queue.closed = True
        if self._pod_handler is not None:
            self._pod_handler.stop()
            self._pod_handler = None
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

    def _on_pod(
        self, ev: WatchEvent, ref: Mapping[str, Any] | None, old_ref: Mapping[str, Any] | None
    ) -> None:
        """Queue the pod's controller ``ref`` (and its previous one ``old_ref``; for an adoptable
        orphan, every owner of its namespace that selects it)."""
        kind = self.kind
        if ref is not None and ref.get("kind") != kind and (old_ref is None or old_ref.get("kind") != kind):
            return  # another controller's pod (the common case: one look at the reference)
        meta = ev.object.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        if not (self.skip_created_pods and ev.type == "ADDED"):
            for r in (ref, old_ref):
                if r is not None and r.get("kind") == kind:
                    self.queue.add(f"{namespace}/{r.get('name')}")
        if self.adopts_orphans and ref is None and self._may_be_adopted(ev, old_ref):
            for owner in self.cluster.list(self.kind, namespace).items:
                matches = label_selector_matcher((owner.get("spec") or {}).get("selector"))
                if matches(meta.get("labels") or {}):
                    self.queue.add(f"{namespace}/{owner['metadata']['name']}")

    @staticmethod
    def _may_be_adopted(ev: WatchEvent, old_ref: Mapping[str, Any] | None) -> bool:
        """Whether an event of an orphan pod asks the owners that select it to look: its
        ADDED event, and a change of its labels or its (former) controller reference
        (``addPod``; ``updatePod``'s ``labelChanged || controllerRefChanged``), not its status or
        binding."""
        if ev.type == "ADDED":
            return True
        if ev.type != "MODIFIED" or ev.old_object is None:
            return False
        labels = (ev.object.get("metadata") or {}).get("labels")
        return old_ref is not None or labels != (ev.old_object.get("metadata") or {}).get("labels")

    def can_adopt(self, owner: Obj) -> bool:
        """Whether :meth:`claim_pods` may adopt orphans for ``owner`` (the ``CanAdopt`` function
        of ``NewPodControllerRefManager``); always, by default."""
        return True

    def claim_pods(self, owner: Obj) -> list[Obj]:
        """``ClaimPods``: the pods ``owner`` controls after adopting matching orphans (when
        :meth:`can_adopt`) and releasing controlled pods that no longer match (with
        :attr:`releases_pods`); a deleted owner adopts nothing and keeps its pods."""
        meta = owner["metadata"]
        namespace, uid = meta.get("namespace") or "default", str(meta.get("uid"))
        matches = label_selector_matcher((owner.get("spec") or {}).get("selector"))
        deleting = bool(meta.get("deletionTimestamp"))
        keep_all = deleting or not self.releases_pods
        owned: list[Obj] = []
        release: list[Obj] = []
        for pod in self.pods.owned(namespace, uid):
            pmeta = pod.get("metadata") or {}
            if keep_all or matches(pmeta.get("labels") or {}):
                owned.append(pod)
            elif not pmeta.get("deletionTimestamp"):
                release.append(pod)
        adopt = (
            []
            if deleting or not self.can_adopt(owner)
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
