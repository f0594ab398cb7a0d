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
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.embedded.controllers.controller_utils import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    label_selector_matcher,
    mapping_field,
    pod_from_template,
)
from kubesched.embedded.controllers.pod_owner import PodOwnerController
from kubesched.errors import NotFoundError

__all__ = ["POD_DELETION_COST", "ReplicaSetController", "label_selector_matcher"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: pod annotation ranking pods for scale-down (lower goes first)
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


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


class ReplicaSetController(PodOwnerController):
    """Runs ReplicaSets of ``cluster`` on ``clock`` (module docstring). ``admit`` is applied to
    every pod it creates. :meth:`start` watches ReplicaSets and pods; :meth:`stop` ends it."""

    kind = "ReplicaSet"
    queue_name = "replicaset"
    skip_created_pods = True
    adopts_orphans = True

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
                self.delete_pod(pod)
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
