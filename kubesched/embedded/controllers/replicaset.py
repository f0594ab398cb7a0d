"""The ReplicaSet controller: keeps ``spec.replicas`` pods of a ReplicaSet's template, as
``pkg/controller/replicaset/replica_set.go`` does (``syncReplicaSet``, ``manageReplicas``,
``getPodsToDelete``) with ``replica_set_utils.go`` (``calculateStatus``).

* Pods it controls are those whose controller reference names the ReplicaSet's uid; orphan pods
  (no controller) of its namespace matching its selector are adopted, controlled pods that no
  longer match are released (``ClaimPods``).
* Active pods (not Succeeded/Failed, not being deleted) are counted against ``spec.replicas``
  (default 1): missing ones are created from ``spec.template`` (``generateName: <rs>-``, a
  controller reference to the ReplicaSet, through the API server's pod admission), surplus ones
  deleted gracefully, the least valuable first: unscheduled before scheduled, Pending before
  Unknown before Running, not ready before ready, lower ``controller.kubernetes.io/pod-deletion-cost``
  first, newer before older (``ActivePodsWithRanks``, without the co-location and restart ranks).
* ``status``: ``replicas`` (active pods), ``fullyLabeledReplicas``, ``readyReplicas``,
  ``availableReplicas`` (ready for ``spec.minReadySeconds``), ``observedGeneration``; a pod that
  becomes ready is re-checked after ``minReadySeconds``.

Not modelled: expectations (the embedded store is read-your-writes), burst limits and slow start,
the ``ReplicaFailure`` condition.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.labels import parse_label_selector
from kubesched.api.timestamps import parse_rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    PodAdmission,
    PodIndex,
    WorkQueue,
    controller_ref,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    mapping_field,
    new_controller_ref,
    owner_refs,
    pod_from_template,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ManifestError, NotFoundError

__all__ = ["POD_DELETION_COST", "ReplicaSetController", "label_selector_matcher"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: pod annotation ranking pods for scale-down (lower goes first)
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def label_selector_matcher(selector: Any) -> Callable[[Mapping[str, str]], bool]:
    """A predicate over label dicts for a workload's ``spec.selector`` (a missing, empty or
    malformed selector matches nothing: workloads require one)."""
    try:
        parsed = parse_label_selector(selector, "spec.selector")
    except ManifestError:
        return lambda labels: False
    if parsed is None or parsed.empty:
        return lambda labels: False
    return parsed.matches


def _deletion_rank(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    try:
        cost = int((meta.get("annotations") or {}).get(POD_DELETION_COST, 0))
    except (TypeError, ValueError):
        cost = 0
    created = meta.get("creationTimestamp")
    try:
        age = -parse_rfc3339(str(created)) if created else float("-inf")
    except ValueError:
        age = float("-inf")
    return (
        bool((pod.get("spec") or {}).get("nodeName")),
        _PHASE_RANK.get(str(status.get("phase")), 1),
        is_pod_ready(pod),
        cost,
        age,
        meta.get("name"),
    )


class ReplicaSetController:
    """Runs ReplicaSets of ``cluster`` on ``clock`` (module docstring). ``admit`` is applied to
    every pod it creates. :meth:`start` watches ReplicaSets and pods; :meth:`stop` ends it."""

    kind = "ReplicaSet"

    def __init__(self, cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.admit: PodAdmission = admit or (lambda pod: pod)
        self.queue = WorkQueue(clock, self.sync, "replicaset")
        self._subs: list[Subscription] = []
        self.pods = PodIndex(cluster)

    def start(self) -> ReplicaSetController:
        self.pods.start(self._on_pod)  # existing pods are indexed; their events queue their owners
        self._subs = [self.cluster.watch(self.kind, None, self._on_owner)]
        return self

    def stop(self) -> None:
        self.queue.closed = True
        self.pods.stop()
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def _on_owner(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        if ev.type != "DELETED":
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(self, ev: WatchEvent) -> None:
        """Queue the pod's controller (and, for an orphan, every owner of its namespace that
        might adopt it)."""
        pod = ev.object
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        ref = controller_ref(pod)
        old_ref = controller_ref(ev.old_object) if ev.old_object else None
        for r in (ref, old_ref):
            # a pod this controller just created (ADDED) needs no new sync: the sync that created it
            # counted it already
            if r is not None and r.get("kind") == self.kind and ev.type != "ADDED":
                self.queue.add(f"{namespace}/{r.get('name')}")
        if ref is None and ev.type != "DELETED":
            for owner in self.cluster.list(self.kind, namespace).items:
                matches = label_selector_matcher((owner.get("spec") or {}).get("selector"))
                if matches(meta.get("labels") or {}):
                    self.queue.add(f"{namespace}/{owner['metadata']['name']}")

    # ------------------------------------------------------------------ sync

    def claim_pods(self, owner: Obj) -> list[Obj]:
        """``ClaimPods``: the pods ``owner`` controls after adopting matching orphans and releasing
        controlled pods that no longer match."""
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

    def sync(self, key: str) -> None:
        """``syncReplicaSet`` of ``namespace/name``."""
        namespace, _, name = key.partition("/")
        try:
            rs = self.cluster.get(self.kind, namespace, name)
        except NotFoundError:
            return
        pods = self.claim_pods(rs)
        active = [p for p in pods if is_pod_active(p)]
        if not (rs.get("metadata") or {}).get("deletionTimestamp"):
            active = self.manage_replicas(rs, active)
        self.update_status(rs, active)

    def manage_replicas(self, rs: Obj, active: list[Obj]) -> list[Obj]:
        """``manageReplicas``: create or delete pods so that ``len(active) == spec.replicas``;
        returns the active pods after it."""
        spec = rs.get("spec") or {}
        replicas = spec.get("replicas")
        want = 1 if replicas is None else int(replicas)
        diff = len(active) - want
        if diff < 0:
            template = mapping_field(spec, "template")
            for _ in range(-diff):
                pod = self.admit(pod_from_template(template, rs))
                active.append(self.cluster.create(pod))
        elif diff > 0:
            victims = sorted(active, key=_deletion_rank)[:diff]
            gone = {v["metadata"]["uid"] for v in victims}
            for pod in victims:
                try:
                    self.cluster.delete(
                        "Pod", pod["metadata"].get("namespace"), pod["metadata"]["name"], grace=True
                    )
                except NotFoundError:
                    pass
            active = [p for p in active if p["metadata"]["uid"] not in gone]
        return active

    def update_status(self, rs: Obj, active: list[Obj]) -> None:
        """``calculateStatus`` + ``updateReplicaSetStatus``."""
        spec = rs.get("spec") or {}
        min_ready = float(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        fresh = []
        for p in active:  # the store's current state (creates above may already have moved on)
            try:
                fresh.append(self.cluster.get("Pod", p["metadata"].get("namespace"), p["metadata"]["name"]))
            except NotFoundError:
                continue
        active = [p for p in fresh if is_pod_active(p)]
        ready = [p for p in active if is_pod_ready(p)]
        available = [p for p in ready if is_pod_available(p, min_ready, now)]
        if min_ready > 0 and len(available) < len(ready):
            self.queue.add_after(f"{rs['metadata'].get('namespace')}/{rs['metadata']['name']}", min_ready)
        labeled = [
            p
            for p in active
            if all(
                ((p.get("metadata") or {}).get("labels") or {}).get(k) == v
                for k, v in template_labels.items()
            )
        ]
        status = dict(rs.get("status") or {})
        new = {
            **status,
            "replicas": len(active),
            "fullyLabeledReplicas": len(labeled),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": (rs.get("metadata") or {}).get("generation", 1),
        }
        if new != status:
            self.cluster.patch_status(self.kind, rs["metadata"].get("namespace"), rs["metadata"]["name"], new)
