"""The Deployment controller: one ReplicaSet per pod template, rolled out by the Deployment's
strategy, as ``pkg/controller/deployment`` does (``deployment_controller.go: syncDeployment``,
``sync.go``, ``rolling.go``, ``recreate.go``, ``progress.go``; the arithmetic is in
:mod:`~kubesched.embedded.controllers.deployment_util`).

* ReplicaSets it controls (controller reference to the Deployment's uid; matching orphans
  adopted) are split into the *new* one -- the oldest whose template equals the Deployment's,
  ignoring the ``pod-template-hash`` label -- and the old ones. A template with no ReplicaSet yet
  gets one (``getNewReplicaSet``): ``<deployment>-<hash>``, the template's labels, selector and pod
  labels plus ``pod-template-hash: <hash>`` (``compute_hash`` of the template and
  ``status.collisionCount``; a name taken by a ReplicaSet of another template raises
  ``collisionCount``), the Deployment's annotations and ``deployment.kubernetes.io/revision``,
  ``desired-replicas`` and ``max-replicas``.
* Revisions: the new ReplicaSet's revision is one more than the highest of the old ones. A
  rollback (``kubectl rollout undo`` writes an old ReplicaSet's template back into the Deployment)
  makes that ReplicaSet the new one again: its revision is raised and the one it had is kept in
  ``deployment.kubernetes.io/revision-history``. The Deployment's ``revision`` annotation follows
  its new ReplicaSet. ``kubectl rollout history`` lists them.
* ``RollingUpdate`` (``rolloutRolling``; ``maxSurge``/``maxUnavailable``, default 25 % each): the
  new ReplicaSet grows while the total stays within ``replicas + maxSurge``
  (``reconcileNewReplicaSet``); otherwise old ones shrink -- unhealthy replicas first
  (``cleanupUnhealthyReplicas``), then while more than ``replicas - maxUnavailable`` pods are
  available (``scaleDownOldReplicaSetsForRollingUpdate``), availability counted on pod readiness
  as the kubelets report it (and ``minReadySeconds``).
* ``Recreate`` (``rolloutRecreate``): old ReplicaSets go to 0 first; the new one is created and
  scaled up once no old pod is left (terminating ones included).
* Proportional scaling (``sync.go: scale``): when ``spec.replicas`` changes while several
  ReplicaSets have replicas (a ``desired-replicas`` annotation differs from ``spec.replicas``:
  ``isScalingEvent``), the difference to ``replicas + maxSurge`` is shared among them in
  proportion to their size against the ``max-replicas`` they were sized for (``GetProportion``),
  the largest first (newer first on scale-up, older first on scale-down), the rounding leftover
  going to the first; a single active ReplicaSet simply gets ``spec.replicas``.
* ``paused``: only scaling and the history clean-up run; the ``Progressing`` condition turns
  ``Unknown`` with ``DeploymentPaused`` (``DeploymentResumed`` on resume), so a paused Deployment
  never times out.
* ``progressDeadlineSeconds`` (default 600; 2147483647 turns it off): ``Progressing`` is ``True``
  with ``NewReplicaSetCreated``, ``FoundNewReplicaSet``, ``ReplicaSetUpdated`` (each sign of
  progress renews its ``lastUpdateTime``) and finally ``NewReplicaSetAvailable``; a rollout that
  shows no progress for ``progressDeadlineSeconds`` after the last one gets ``False``
  ``ProgressDeadlineExceeded`` (``ReplicaSet "<rs>" has timed out progressing.``), which
  ``kubectl rollout status`` reports as a failure. The Deployment is requeued for the deadline.
* ``status``: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
  ``unavailableReplicas``, ``observedGeneration``, ``collisionCount``, and the ``Available``
  (``MinimumReplicasAvailable``/``MinimumReplicasUnavailable``) and ``Progressing`` conditions
  with upstream's reasons and messages, in upstream's order (a changed condition moves last).
* Once a rollout is complete (or while paused), old ReplicaSets beyond ``revisionHistoryLimit``
  (default 10), lowest revision first, are deleted when they have no replicas.

Each resize is a Normal ``ScalingReplicaSet`` Event on the Deployment (``Scaled up replica set
web-5d4f8 from 0 to 3``), as ``kubectl describe deployment`` shows them.

Not modelled: the ``ReplicaFailure`` condition, ``status.terminatingReplicas``, the
deprecated ``rollbackTo`` annotation of extensions/v1beta1.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    WorkQueue,
    compute_hash,
    controller_ref,
    label_selector_matcher,
    new_controller_ref,
    owner_refs,
)
from kubesched.embedded.controllers.deployment_util import (
    DESIRED_REPLICAS,
    POD_TEMPLATE_HASH,
    REVISION,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    equal_ignore_hash,
    find_active_or_latest,
    find_new_replica_set,
    get_condition,
    has_progress_deadline,
    is_rolling_update,
    is_saturated,
    max_revision,
    max_surge,
    max_unavailable,
    new_condition,
    new_rs_new_replicas,
    progress_deadline,
    proportional_sizes,
    remove_condition,
    replicas,
    replicas_annotations_need_update,
    set_condition,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    sort_by_creation,
    sort_by_revision,
    status_count,
)
from kubesched.embedded.controllers.events import record_event
from kubesched.embedded.controllers.informer import PodHandlerRegistration, shared_pod_informer
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import AlreadyExistsError, NotFoundError

__all__ = ["DeploymentController"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: ``status`` fields written only when non-zero (``omitempty``)
_OMIT_ZERO = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")


def _active(rs_list: Sequence[Obj | None]) -> list[Obj]:
    """``FilterActiveReplicaSets``: those with replicas."""
    return [rs for rs in rs_list if rs is not None and replicas(rs) > 0]


def _omit_zero(status: Obj) -> Obj:
    return {k: v for k, v in status.items() if not (k in _OMIT_ZERO and not v)}


class DeploymentController:
    """Runs Deployments of ``cluster`` on ``clock`` (module docstring). :meth:`start` watches
    Deployments, ReplicaSets and pod deletions; :meth:`stop` ends it."""

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self.queue = WorkQueue(clock, self.sync, "deployment")
        self._subs: list[Subscription] = []
        self._pod_handler: PodHandlerRegistration | None = None

    def start(self) -> DeploymentController:
        self._subs = [
            self.cluster.watch("Deployment", None, self._on_deployment),
            self.cluster.watch("ReplicaSet", None, self._on_replica_set),
        ]
        self._pod_handler = shared_pod_informer(self.cluster).add_event_handler(self._on_pod)
        return self

    def stop(self) -> None:
        self.queue.closed = True
        if self._pod_handler is not None:
            self._pod_handler.stop()
            self._pod_handler = None
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def _on_deployment(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        if ev.type != "DELETED":
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(
        self, ev: WatchEvent, ref: Mapping[str, Any] | None, old_ref: Mapping[str, Any] | None
    ) -> None:
        """A deleted pod (controlled by ``ref``) may let a ``Recreate`` rollout go on (``deletePod``)."""
        if ev.type != "DELETED":
            return
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        namespace = (ev.object.get("metadata") or {}).get("namespace") or "default"
        try:
            rs = self.cluster.get("ReplicaSet", namespace, str(ref.get("name")))
        except NotFoundError:
            return
        owner = controller_ref(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            self.queue.add(f"{namespace}/{owner.get('name')}")

    def _on_replica_set(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        ref = controller_ref(ev.object)
        if ref is not None:
            if ref.get("kind") == "Deployment":
                self.queue.add(f"{namespace}/{ref.get('name')}")
            return
        if ev.type == "DELETED":
            return
        for d in self.cluster.list("Deployment", namespace).items:
            if label_selector_matcher((d.get("spec") or {}).get("selector"))(meta.get("labels") or {}):
                self.queue.add(f"{namespace}/{d['metadata']['name']}")

    # ------------------------------------------------------------------ sync

    def _claim(self, d: Obj) -> list[Obj]:
        meta = d["metadata"]
        namespace, uid = meta.get("namespace") or "default", meta.get("uid")
        matches = label_selector_matcher((d.get("spec") or {}).get("selector"))
        out = []
        for rs in self.cluster.list("ReplicaSet", namespace).items:
            ref = controller_ref(rs)
            if ref is not None:
                if ref.get("uid") == uid:
                    out.append(rs)
                continue
            labels = (rs.get("metadata") or {}).get("labels") or {}
            if matches(labels) and not meta.get("deletionTimestamp"):
                refs = [*owner_refs(rs), new_controller_ref(d)]
                out.append(
                    self.cluster.update({**rs, "metadata": {**rs["metadata"], "ownerReferences": refs}})
                )
        return out

    def sync(self, key: str) -> None:
        """``syncDeployment`` of ``namespace/name``."""
        namespace, _, name = key.partition("/")
        try:
            d = self.cluster.get("Deployment", namespace, name)
        except NotFoundError:
            return
        spec = d.get("spec") or {}
        if spec.get("selector") == {}:  # selects everything: nothing is done
            if status_count(d, "observedGeneration") < int(d["metadata"].get("generation") or 1):
                self._write_status(
                    d, {**(d.get("status") or {}), "observedGeneration": d["metadata"].get("generation", 1)}
                )
            return
        rs_list = self._claim(d)
        if d["metadata"].get("deletionTimestamp"):
            d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=False)
            self._sync_deployment_status(d, [*old, new_rs], new_rs)
            return
        d = self._check_paused_conditions(d)
        if spec.get("paused") or self._is_scaling_event(d, rs_list):
            self._sync(d, rs_list)
        elif is_rolling_update(d):
            self._rollout_rolling(d, rs_list)
        else:
            self._rollout_recreate(d, rs_list)

    # ------------------------------------------------------------------ status writes

    def _write_status(self, d: Obj, status: Obj) -> Obj:
        """``UpdateStatus``: replace ``d``'s status by ``status`` (zero counts left out); returns
        the stored Deployment."""
        status = _omit_zero(status)
        before = d.get("status") or {}
        if status == before:
            return d
        patch: Obj = {k: status.get(k) for k in {*status, *before} if k != "conditions"}
        if status.get("conditions") != before.get("conditions"):
            drop = [{"type": c.get("type"), "$patch": "delete"} for c in before.get("conditions") or []]
            patch["conditions"] = [*drop, *status.get("conditions", [])]
        meta = d["metadata"]
        return self.cluster.patch_status("Deployment", meta.get("namespace"), meta["name"], patch)

    def _set_revision(self, d: Obj, value: str) -> tuple[Obj, bool]:
        """``SetDeploymentRevision``: ``d`` with its ``revision`` annotation at ``value`` (written)."""
        annotations = d["metadata"].get("annotations") or {}
        if annotations.get(REVISION) == value:
            return d, False
        updated = self.cluster.update(
            {**d, "metadata": {**d["metadata"], "annotations": {**annotations, REVISION: value}}}
        )
        return updated, True

    def _check_paused_conditions(self, d: Obj) -> Obj:
        """``checkPausedConditions``: ``Progressing`` turns ``Unknown`` on pause and resume."""
        if not has_progress_deadline(d):
            return d
        status = copy.deepcopy(d.get("status") or {})
        cond = get_condition(status, "Progressing")
        if cond is not None and cond.get("reason") == "ProgressDeadlineExceeded":
            return d
        paused_cond = cond is not None and cond.get("reason") == "DeploymentPaused"
        paused = bool((d.get("spec") or {}).get("paused"))
        now = self.clock.now()
        if paused and not paused_cond:
            set_condition(
                status,
                new_condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now),
            )
        elif not paused and paused_cond:
            set_condition(
                status,
                new_condition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now),
            )
        else:
            return d
        return self._write_status(d, status)

    # ------------------------------------------------------------------ ReplicaSets

    def _scale_replica_set(self, rs: Obj, new_scale: int, d: Obj) -> tuple[bool, Obj]:
        """``scaleReplicaSet``: ``spec.replicas`` and the desired/max annotations; ``(scaled, rs)``."""
        desired, most = replicas(d), replicas(d) + max_surge(d)
        size_changes = replicas(rs) != new_scale
        if not size_changes and not replicas_annotations_need_update(rs, desired, most):
            return False, rs
        updated = copy.deepcopy(rs)
        updated.setdefault("spec", {})["replicas"] = new_scale
        set_replicas_annotations(updated, desired, most)
        stored = self.cluster.update(updated)
        if size_changes:
            operation = "up" if replicas(rs) < new_scale else "down"
            self._event(
                d,
                f"Scaled {operation} replica set {rs['metadata']['name']} from {replicas(rs)} to {new_scale}",
            )
        return size_changes, stored

    def _event(self, d: Obj, message: str) -> None:
        """A Normal ``ScalingReplicaSet`` Event about ``d`` from ``deployment-controller`` (what
        ``kubectl describe deployment`` lists)."""
        record_event(
            self.cluster,
            d,
            "Deployment",
            "apps/v1",
            "Normal",
            "ScalingReplicaSet",
            message,
            "deployment-controller",
            rfc3339(self.clock.now()),
        )

    def _scale_and_record(self, rs: Obj, new_scale: int, d: Obj) -> tuple[bool, Obj]:
        """``scaleReplicaSetAndRecordEvent``: nothing when ``rs`` already has ``new_scale``."""
        if replicas(rs) == new_scale:
            return False, rs
        return self._scale_replica_set(rs, new_scale, d)

    def _get_all_replica_sets(
        self, d: Obj, rs_list: list[Obj], create: bool
    ) -> tuple[Obj, Obj | None, list[Obj]]:
        """``getAllReplicaSetsAndSyncRevision``: ``(d, new ReplicaSet or None, old ones)``."""
        found = find_new_replica_set(d, rs_list)
        old = [rs for rs in rs_list if rs is not found]
        d, new_rs = self._get_new_replica_set(d, rs_list, old, found, create)
        return d, new_rs, old

    def _get_new_replica_set(
        self, d: Obj, rs_list: list[Obj], old: list[Obj], existing: Obj | None, create: bool
    ) -> tuple[Obj, Obj | None]:
        """``getNewReplicaSet``: sync the existing new ReplicaSet's annotations and the
        Deployment's revision, or create the new ReplicaSet when ``create``."""
        new_revision = max_revision(old) + 1
        spec = d.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        if existing is not None:
            synced = copy.deepcopy(existing)
            changed = set_new_replica_set_annotations(d, synced, new_revision, exists=True)
            if changed or int((synced.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                synced.setdefault("spec", {})["minReadySeconds"] = min_ready
                return d, self.cluster.update(synced)
            d, needs_update = self._set_revision(
                d, (synced["metadata"].get("annotations") or {}).get(REVISION, "")
            )
            status = copy.deepcopy(d.get("status") or {})
            if has_progress_deadline(d) and get_condition(status, "Progressing") is None:
                message = f'Found new replica set "{synced["metadata"]["name"]}"'
                set_condition(
                    status, new_condition("Progressing", "True", "FoundNewReplicaSet", message, now)
                )
                needs_update = True
            if needs_update:
                d = self._write_status(d, status)
            return d, synced
        if not create:
            return d, None
        meta = d["metadata"]
        template = copy.deepcopy(spec.get("template") or {})
        collision_count = (d.get("status") or {}).get("collisionCount")
        h = compute_hash(template, collision_count)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH: h}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: h}
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "namespace": meta.get("namespace") or "default",
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [new_controller_ref(d)],
            },
            "spec": {"replicas": 0, "minReadySeconds": min_ready, "selector": selector, "template": template},
        }
        rs["spec"]["replicas"] = new_rs_new_replicas(d, [*old, rs], rs)
        set_new_replica_set_annotations(d, rs, new_revision, exists=False)
        already_exists = False
        try:
            created = self.cluster.create(rs)
        except AlreadyExistsError:
            taken = self.cluster.get("ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"])
            ref = controller_ref(taken)
            if (
                ref is not None
                and ref.get("uid") == meta.get("uid")
                and equal_ignore_hash((taken.get("spec") or {}).get("template"), spec.get("template"))
            ):
                created, already_exists = taken, True
            else:  # a hash collision: the next sync hashes with a higher collisionCount
                status = dict(d.get("status") or {})
                status["collisionCount"] = int(collision_count or 0) + 1
                self._write_status(d, status)
                self.queue.add(f"{meta.get('namespace')}/{meta['name']}")
                raise
        if not already_exists and replicas(created) > 0:
            self._event(
                d, f"Scaled up replica set {created['metadata']['name']} from 0 to {replicas(created)}"
            )
        d, needs_update = self._set_revision(d, str(new_revision))
        status = copy.deepcopy(d.get("status") or {})
        if not already_exists and has_progress_deadline(d):
            message = f'Created new replica set "{created["metadata"]["name"]}"'
            set_condition(status, new_condition("Progressing", "True", "NewReplicaSetCreated", message, now))
            needs_update = True
        if needs_update:
            d = self._write_status(d, status)
        return d, created

    def _is_scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        """``isScalingEvent``: an active ReplicaSet was sized for another ``spec.replicas``."""
        d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=False)
        for rs in _active([*old, new_rs]):
            raw = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS)
            try:
                desired = int(raw) if raw is not None else None
            except ValueError:
                continue
            if desired is not None and desired != replicas(d):
                return True
        return False

    # ------------------------------------------------------------------ sync.go

    def _sync(self, d: Obj, rs_list: list[Obj]) -> None:
        """``sync``: scale the ReplicaSets to a new ``spec.replicas`` (and, when paused, clean up
        the history), then the status, without a rollout step."""
        d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=False)
        self._scale(d, new_rs, old)
        if (d.get("spec") or {}).get("paused"):
            self._cleanup(d, old)
        self._sync_deployment_status(d, [*old, new_rs], new_rs)

    def _scale(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
        """``scale``: bring the active ReplicaSets to ``spec.replicas`` (+ surge), proportionally."""
        target = find_active_or_latest(new_rs, old)
        if target is not None:
            if replicas(target) != replicas(d):
                self._scale_and_record(target, replicas(d), d)
            return
        if is_saturated(d, new_rs):
            for rs in _active(old):
                self._scale_and_record(rs, 0, d)
            return
        if not is_rolling_update(d):
            return
        for rs, size in proportional_sizes(d, _active([*old, new_rs])):
            self._scale_replica_set(rs, size, d)

    def _sync_deployment_status(self, d: Obj, all_rs: list[Obj | None], new_rs: Obj | None) -> None:
        """``syncDeploymentStatus``: the counts and the ``Available`` condition."""
        self._write_status(d, self._calculate_status(d, all_rs, new_rs))

    def _calculate_status(self, d: Obj, all_rs: list[Obj | None], new_rs: Obj | None) -> Obj:
        """``calculateStatus``."""
        rs_list = [rs for rs in all_rs if rs is not None]
        available = sum(status_count(rs, "availableReplicas") for rs in rs_list)
        total = sum(replicas(rs) for rs in rs_list)
        before = d.get("status") or {}
        status: Obj = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": sum(status_count(rs, "replicas") for rs in rs_list),
            "updatedReplicas": status_count(new_rs, "replicas"),
            "readyReplicas": sum(status_count(rs, "readyReplicas") for rs in rs_list),
            "availableReplicas": available,
            "unavailableReplicas": max(total - available, 0),
        }
        if before.get("collisionCount") is not None:
            status["collisionCount"] = before["collisionCount"]
        status["conditions"] = [dict(c) for c in before.get("conditions") or [] if isinstance(c, Mapping)]
        now = self.clock.now()
        if available >= replicas(d) - max_unavailable(d):
            cond = new_condition(
                "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now
            )
        else:
            cond = new_condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                now,
            )
        set_condition(status, cond)
        return status

    def _cleanup(self, d: Obj, old: list[Obj]) -> None:
        """``cleanupDeployment``: delete the lowest revisions beyond ``revisionHistoryLimit`` among
        the old ReplicaSets (only those with no replicas, observed, not being deleted)."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        alive = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        diff = len(alive) - limit
        if diff <= 0:
            return
        for rs in sort_by_revision(alive)[:diff]:
            if (
                status_count(rs, "replicas") != 0
                or replicas(rs) != 0
                or int(rs["metadata"].get("generation") or 1) > status_count(rs, "observedGeneration")
            ):
                continue
            try:
                self.cluster.delete("ReplicaSet", rs["metadata"].get("namespace"), rs["metadata"]["name"])
            except NotFoundError:
                pass

    # ------------------------------------------------------------------ rolling.go, recreate.go

    def _rollout_rolling(self, d: Obj, rs_list: list[Obj]) -> None:
        """``rolloutRolling``: one step of scaling up the new ReplicaSet or down the old ones."""
        d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=True)
        assert new_rs is not None
        all_rs: list[Obj | None] = [*old, new_rs]
        if self._reconcile_new_replica_set(d, [*old, new_rs], new_rs) or self._reconcile_old_replica_sets(
            d, [*old, new_rs], _active(old), new_rs
        ):
            self._sync_rollout_status(d, all_rs, new_rs)
            return
        if deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_rs, new_rs)

    def _reconcile_new_replica_set(self, d: Obj, all_rs: list[Obj], new_rs: Obj) -> bool:
        """``reconcileNewReplicaSet``: grow (or shrink) the new ReplicaSet within the surge."""
        if replicas(new_rs) == replicas(d):
            return False
        if replicas(new_rs) > replicas(d):
            return self._scale_and_record(new_rs, replicas(d), d)[0]
        count = new_rs_new_replicas(d, all_rs, new_rs)
        return self._scale_and_record(new_rs, count, d)[0]

    def _reconcile_old_replica_sets(self, d: Obj, all_rs: list[Obj], old: list[Obj], new_rs: Obj) -> bool:
        """``reconcileOldReplicaSets``: shrink the old ReplicaSets as far as availability allows."""
        old_count = sum(replicas(rs) for rs in old)
        if old_count == 0:
            return False
        all_count = sum(replicas(rs) for rs in all_rs)
        min_available = replicas(d) - max_unavailable(d)
        new_unavailable = replicas(new_rs) - status_count(new_rs, "availableReplicas")
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old = sort_by_creation(old)
        cleaned = 0
        for i, rs in enumerate(old):  # cleanupUnhealthyReplicas
            if cleaned >= max_scaled_down:
                break
            if replicas(rs) == 0 or replicas(rs) == status_count(rs, "availableReplicas"):
                continue
            down = min(max_scaled_down - cleaned, replicas(rs) - status_count(rs, "availableReplicas"))
            _, old[i] = self._scale_and_record(rs, replicas(rs) - down, d)
            cleaned += down
        available = sum(status_count(rs, "availableReplicas") for rs in [*old, new_rs])
        scaled_down = 0
        if available > min_available:  # scaleDownOldReplicaSetsForRollingUpdate
            total_down = available - min_available
            for rs in sort_by_creation(old):
                if scaled_down >= total_down:
                    break
                if replicas(rs) == 0:
                    continue
                down = min(replicas(rs), total_down - scaled_down)
                self._scale_and_record(rs, replicas(rs) - down, d)
                scaled_down += down
        return cleaned + scaled_down > 0

    def _rollout_recreate(self, d: Obj, rs_list: list[Obj]) -> None:
        """``rolloutRecreate``: old ReplicaSets to 0, then the new one up once their pods are gone."""
        d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=False)
        all_rs: list[Obj | None] = [*old, new_rs]
        scaled_down = False
        for rs in _active(old):
            scaled, _ = self._scale_and_record(rs, 0, d)
            scaled_down = scaled_down or scaled
        if scaled_down or self._old_pods_running(d, new_rs, old):
            self._sync_rollout_status(d, all_rs, new_rs)
            return
        if new_rs is None:
            d, new_rs, old = self._get_all_replica_sets(d, rs_list, create=True)
            all_rs = [*old, new_rs]
        assert new_rs is not None
        self._scale_and_record(new_rs, replicas(d), d)
        if deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_rs, new_rs)

    def _old_pods_running(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> bool:
        """``oldPodsRunning``: an old ReplicaSet reports pods, or one of its pods has not ended
        (terminating pods count until they are gone)."""
        if sum(status_count(rs, "replicas") for rs in old) > 0:
            return True
        old_uids = {rs["metadata"].get("uid") for rs in old}
        for pod in self.cluster.list("Pod", d["metadata"].get("namespace") or "default").items:
            ref = controller_ref(pod)
            if (
                ref is not None
                and ref.get("uid") in old_uids
                and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ):
                return True
        return False

    # ------------------------------------------------------------------ progress.go

    def _sync_rollout_status(self, d: Obj, all_rs: list[Obj | None], new_rs: Obj | None) -> None:
        """``syncRolloutStatus``: the status with the ``Progressing`` condition; requeues a
        Deployment without progress for its deadline (``requeueStuckDeployment``)."""
        status = self._calculate_status(d, all_rs, new_rs)
        if not has_progress_deadline(d):
            remove_condition(status, "Progressing")
        current = get_condition(d.get("status") or {}, "Progressing")
        complete_before = (
            int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
            and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"
        )
        now = self.clock.now()
        subject = (
            f'ReplicaSet "{new_rs["metadata"]["name"]}"'
            if new_rs is not None
            else f'Deployment "{d["metadata"]["name"]}"'
        )
        if has_progress_deadline(d) and not complete_before:
            if deployment_complete(d, status):
                cond = new_condition(
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    f"{subject} has successfully progressed.",
                    now,
                )
                set_condition(status, cond)
            elif deployment_progressing(d, status):
                cond = new_condition(
                    "Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing.", now
                )
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    remove_condition(status, "Progressing")
                set_condition(status, cond)
            elif deployment_timed_out(d, status, now):
                cond = new_condition(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f"{subject} has timed out progressing.",
                    now,
                )
                set_condition(status, cond)
        if _omit_zero(status) == (d.get("status") or {}):
            self._requeue_stuck(d, status)
            return
        self._write_status(d, status)

    def _requeue_stuck(self, d: Obj, status: Obj) -> None:
        """``requeueStuckDeployment``: sync again when the progress deadline passes."""
        current = get_condition(d.get("status") or {}, "Progressing")
        if not has_progress_deadline(d) or current is None:
            return
        if deployment_complete(d, status) or current.get("reason") == "ProgressDeadlineExceeded":
            return
        try:
            since = parse_rfc3339(str(current.get("lastUpdateTime")))
        except ValueError:
            return
        after = since + progress_deadline(d) - self.clock.now()
        meta = d["metadata"]
        # within a second: again a second later (the rate limiter's retry)
        self.queue.add_after(f"{meta.get('namespace')}/{meta['name']}", max(after, 1.0))
