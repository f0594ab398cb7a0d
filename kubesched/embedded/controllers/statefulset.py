"""The StatefulSet controller: pods with stable ordinal names and claims, as
``pkg/controller/statefulset`` does (``stateful_set_control.go: updateStatefulSet``,
``stateful_set_utils.go: newStatefulSetPod``, ``getPersistentVolumeClaims``).

* Pod ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` .. ``start + replicas - 1``, with
  the template, ``hostname`` = the pod name, ``subdomain`` = ``spec.serviceName``, labels
  ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
  ``controller-revision-hash: <revision name>``.
* Revisions (``getStatefulSetRevisions``, ``truncateHistory``): the set's template is kept as a
  ``ControllerRevision`` ``<set>-<hash>`` (:mod:`~kubesched.embedded.controllers.history`) with
  the template's labels, the set's annotations and ``revision`` one above the highest; a template
  that returns to an earlier revision's reuses that revision with a raised number. The update
  revision is the set's template, the current one ``status.currentRevision`` (until a rolling
  update completes). Revisions no pod, current or update revision uses are deleted beyond
  ``revisionHistoryLimit`` (default 10), lowest first.
* Each ``volumeClaimTemplates`` entry gives the pod a claim ``<template>-<pod>`` (created when
  missing, labelled with the set's ``matchLabels``; the default ``Retain`` retention policy: the
  claims outlive the pods) mounted as the volume of the template's name; the claims then bind
  through the scheduler's VolumeBinding and the PV controller as any other.
* ``podManagementPolicy: OrderedReady`` (default): a pod is created only when every lower ordinal
  is Running and Ready; scaling down removes the highest ordinal first, one at a time, once the
  others are ready. ``Parallel``: all at once.
* ``RollingUpdate`` (default): once every pod is Running and Ready, the highest-ordinal pod of
  another revision at or above ``rollingUpdate.partition`` (ordinals counted from
  ``spec.ordinals.start``) is deleted, one at a time, and recreated from the update revision;
  pods below the partition are (re)created from the current revision
  (``newVersionedStatefulSetPod``). The rollout completes -- ``currentRevision`` becomes the update
  revision -- when every pod is updated and ready. ``OnDelete``: only deleted pods get the update
  revision, and ``currentRevision`` stays (as upstream). Failed pods are deleted and recreated.
* ``status``: ``replicas``, ``readyReplicas``, ``currentReplicas``, ``updatedReplicas``,
  ``availableReplicas``, ``currentRevision``, ``updateRevision``, ``collisionCount``,
  ``observedGeneration``.

Not modelled: ``maxUnavailable``, ``minReadySeconds``, adoption of orphan revisions, claim
deletion by ``persistentVolumeClaimRetentionPolicy: Delete``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.embedded.controllers.controller_utils import (
    is_pod_ready,
    mapping_field,
    pod_from_template,
)
from kubesched.embedded.controllers.history import (
    REVISION_HASH,
    controlled_revisions,
    create_controller_revision,
    equal_revision,
    new_controller_revision,
    next_revision,
    revision_patch,
    revision_template,
    sort_revisions,
)
from kubesched.embedded.controllers.pod_owner import PodOwnerController
from kubesched.errors import AlreadyExistsError, NotFoundError

__all__ = ["StatefulSetController", "new_stateful_pod", "stateful_claims"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def stateful_claims(sts: Mapping[str, Any], pod_name: str) -> list[Obj]:
    """``getPersistentVolumeClaims``: the claims of pod ``pod_name`` (``<template>-<pod>``)."""
    meta = sts.get("metadata") or {}
    spec = sts.get("spec") or {}
    match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    out = []
    for template in spec.get("volumeClaimTemplates") or []:
        tmeta = template.get("metadata") or {}
        claim_meta: Obj = {
            "name": f"{tmeta.get('name')}-{pod_name}",
            "namespace": meta.get("namespace") or "default",
            "labels": {**(tmeta.get("labels") or {}), **match_labels},
        }
        if tmeta.get("annotations"):
            claim_meta["annotations"] = dict(tmeta["annotations"])
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": claim_meta,
                "spec": copy.deepcopy(template.get("spec") or {}),
            }
        )
    return out


def new_stateful_pod(sts: Mapping[str, Any], ordinal: int, template: Any, revision: str) -> Obj:
    """``newStatefulSetPod`` + ``setPodRevision``: pod ``<set>-<ordinal>`` of ``template`` with its
    identity, claims and the revision name ``revision``."""
    meta = sts.get("metadata") or {}
    spec = sts.get("spec") or {}
    name = f"{meta.get('name')}-{ordinal}"
    pod = pod_from_template(copy.deepcopy(template or {}), sts, name=name)
    pod["metadata"]["labels"] = {
        **pod["metadata"].get("labels", {}),
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        REVISION_HASH: revision,
    }
    pspec = pod["spec"]
    pspec["hostname"] = name
    if spec.get("serviceName"):
        pspec["subdomain"] = spec["serviceName"]
    claims = {
        t.get("metadata", {}).get("name"): c["metadata"]["name"]
        for t, c in zip(spec.get("volumeClaimTemplates") or [], stateful_claims(sts, name), strict=True)
    }
    if claims:
        volumes = [v for v in pspec.get("volumes") or [] if v.get("name") not in claims]
        volumes += [
            {"name": vol, "persistentVolumeClaim": {"claimName": claim}} for vol, claim in claims.items()
        ]
        pspec["volumes"] = volumes
    return pod


def _ordinal(pod: Mapping[str, Any], set_name: str) -> int | None:
    name = str((pod.get("metadata") or {}).get("name"))
    prefix, _, tail = name.rpartition("-")
    if prefix != set_name or not tail.isdigit():
        return None
    return int(tail)


def _running_ready(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


class StatefulSetController(PodOwnerController):
    """Runs StatefulSets of ``cluster`` on ``clock`` (module docstring); ``admit`` is applied to
    every pod it creates. :meth:`start` watches StatefulSets and pods; :meth:`stop` ends it."""

    kind = "StatefulSet"
    queue_name = "statefulset"

    def sync(self, key: str) -> None:
        """``syncStatefulSet`` / ``performUpdate`` of ``namespace/name``."""
        namespace, _, name = key.partition("/")
        try:
            sts = self.cluster.get("StatefulSet", namespace, name)
        except NotFoundError:
            return
        uid = sts["metadata"].get("uid")
        pods: dict[int, Obj] = {}
        for pod in self.pods.owned(namespace, str(uid)):
            ordinal = _ordinal(pod, name)
            if ordinal is not None:
                pods[ordinal] = pod
        revisions = sort_revisions(controlled_revisions(self.cluster, sts))
        current, update, collision_count = self._get_revisions(sts, revisions)
        if not sts["metadata"].get("deletionTimestamp"):
            self._manage(sts, pods, current, update)
        self._update_status(sts, current, update, collision_count)
        self._truncate_history(sts, revisions, current, update)

    def _get_revisions(self, sts: Obj, revisions: list[Obj]) -> tuple[Obj, Obj, int]:
        """``getStatefulSetRevisions``: ``(current, update, collisionCount)``."""
        collision_count = int((sts.get("status") or {}).get("collisionCount") or 0)
        labels = ((sts.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
        update = new_controller_revision(
            sts, labels, revision_patch(sts), next_revision(revisions), collision_count
        )
        annotations = sts["metadata"].get("annotations")
        if annotations:
            update["metadata"]["annotations"] = dict(annotations)
        equal = [r for r in revisions if equal_revision(r, update)]
        if equal and equal_revision(revisions[-1], equal[-1]):
            update = revisions[-1]  # unchanged template
        elif equal:  # back to an earlier template: that revision, renumbered
            update = self.cluster.update({**equal[-1], "revision": update["revision"]})
        else:
            update, collision_count = create_controller_revision(self.cluster, update, collision_count)
        name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == name), update)
        return current, update, collision_count

    def _truncate_history(self, sts: Obj, revisions: list[Obj], current: Obj, update: Obj) -> None:
        """``truncateHistory``: delete the oldest revisions no pod uses beyond
        ``revisionHistoryLimit``."""
        namespace = sts["metadata"].get("namespace") or "default"
        live = {current["metadata"]["name"], update["metadata"]["name"]}
        for pod in self.pods.owned(namespace, str(sts["metadata"].get("uid"))):
            live.add(str((pod["metadata"].get("labels") or {}).get(REVISION_HASH)))
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        for r in history[: max(0, len(history) - limit)]:
            try:
                self.cluster.delete("ControllerRevision", namespace, r["metadata"]["name"])
            except NotFoundError:
                pass

    def _new_pod(self, sts: Obj, ordinal: int, current: Obj, update: Obj) -> Obj:
        """``newVersionedStatefulSetPod``: below the partition (or, without ``rollingUpdate``, among
        the first ``status.currentReplicas``) from the current revision, else the update one."""
        spec = sts.get("spec") or {}
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        strategy = mapping_field(spec, "updateStrategy")
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if isinstance(rolling, Mapping):
                below = ordinal < start + int(rolling.get("partition") or 0)
            else:
                below = ordinal < start + int((sts.get("status") or {}).get("currentReplicas") or 0)
            if below:
                return new_stateful_pod(sts, ordinal, revision_template(current), current["metadata"]["name"])
        return new_stateful_pod(sts, ordinal, revision_template(update), update["metadata"]["name"])

    def _manage(self, sts: Obj, pods: dict[int, Obj], current: Obj, update: Obj) -> None:
        spec = sts.get("spec") or {}
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        wanted = range(start, start + replicas)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        revision = update["metadata"]["name"]
        for ordinal in sorted(pods):
            pod = pods[ordinal]
            if (pod.get("status") or {}).get("phase") == "Failed" and not pod["metadata"].get(
                "deletionTimestamp"
            ):
                self.delete_pod(pod)
                del pods[ordinal]
        for ordinal in wanted:
            existing = pods.get(ordinal)
            if existing is None:
                fresh = self._new_pod(sts, ordinal, current, update)
                for claim in stateful_claims(sts, fresh["metadata"]["name"]):
                    try:
                        self.cluster.create(claim)
                    except AlreadyExistsError:
                        pass
                pods[ordinal] = self.cluster.create(self.admit(fresh))
                if not parallel:
                    return
            elif not parallel and (
                existing["metadata"].get("deletionTimestamp") or not _running_ready(existing)
            ):
                return  # OrderedReady: wait for this ordinal before the next
        surplus = sorted((o for o in pods if o not in wanted), reverse=True)
        if surplus:
            if parallel:
                for ordinal in surplus:
                    if not pods[ordinal]["metadata"].get("deletionTimestamp"):
                        self.delete_pod(pods[ordinal])
            elif all(_running_ready(p) for o, p in pods.items() if o in wanted) and not any(
                pods[o]["metadata"].get("deletionTimestamp") for o in surplus
            ):
                self.delete_pod(pods[surplus[0]])
            return
        strategy = mapping_field(spec, "updateStrategy")
        if strategy.get("type") == "OnDelete":
            return
        if not all(
            _running_ready(pods[o]) and not pods[o]["metadata"].get("deletionTimestamp")
            for o in wanted
            if o in pods
        ):
            return
        partition = int(mapping_field(strategy, "rollingUpdate").get("partition") or 0)
        for ordinal in sorted(wanted, reverse=True):
            if ordinal < start + partition:
                break
            target = pods.get(ordinal)
            if target is None:
                continue
            if (target["metadata"].get("labels") or {}).get(REVISION_HASH) != revision and not target[
                "metadata"
            ].get("deletionTimestamp"):
                self.delete_pod(target)
                return
            if not _running_ready(target):
                return  # wait for unhealthy pods on update

    def _update_status(self, sts: Obj, current_rev: Obj, update_rev: Obj, collision_count: int) -> None:
        """``updateStatus`` + ``completeRollingUpdate`` + ``updateStatefulSetStatus``."""
        namespace, name = sts["metadata"].get("namespace") or "default", sts["metadata"]["name"]
        uid = sts["metadata"].get("uid")
        current_name, update_name = current_rev["metadata"]["name"], update_rev["metadata"]["name"]
        pods = [p for p in self.pods.owned(namespace, str(uid)) if not p["metadata"].get("deletionTimestamp")]

        def revision_of(p: Obj) -> Any:
            return (p["metadata"].get("labels") or {}).get(REVISION_HASH)

        ready = sum(1 for p in pods if is_pod_ready(p))
        updated = sum(1 for p in pods if revision_of(p) == update_name)
        current = sum(1 for p in pods if revision_of(p) == current_name)
        strategy = mapping_field(sts.get("spec") or {}, "updateStrategy")
        if strategy.get("type", "RollingUpdate") == "RollingUpdate" and updated == len(pods) == ready:
            current, current_name = updated, update_name
        before = sts.get("status") or {}
        status = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": collision_count,
            "availableReplicas": ready,
        }
        for key in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not status[key]:
                del status[key]
        if status != before:
            self.cluster.patch_status(
                "StatefulSet", namespace, name, {k: status.get(k) for k in {*status, *before}}
            )
