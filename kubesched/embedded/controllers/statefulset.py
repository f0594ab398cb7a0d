"""The StatefulSet controller: pods with stable ordinal names and claims, as
``pkg/controller/statefulset`` does (``stateful_set_control.go: updateStatefulSet``,
``stateful_set_utils.go: newStatefulSetPod``, ``getPersistentVolumeClaims``).

* Pod ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` .. ``start + replicas - 1``, with
  the template, ``hostname`` = the pod name, ``subdomain`` = ``spec.serviceName``, labels
  ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
  ``controller-revision-hash: <set>-<hash>``.
* Each ``volumeClaimTemplates`` entry gives the pod a claim ``<template>-<pod>`` (created when
  missing, labelled with the set's ``matchLabels``; the default ``Retain`` retention policy: the
  claims outlive the pods) mounted as the volume of the template's name; the claims then bind
  through the scheduler's VolumeBinding and the PV controller as any other.
* ``podManagementPolicy: OrderedReady`` (default): a pod is created only when every lower ordinal
  is Running and Ready; scaling down removes the highest ordinal first, one at a time, once the
  others are ready. ``Parallel``: all at once.
* ``RollingUpdate`` (default): once every pod is Running and Ready, the highest-ordinal pod of an
  older revision is deleted (and recreated from the new template by the next sync). ``OnDelete``:
  only deleted pods get the new template. Failed pods are deleted and recreated.
* ``status``: ``replicas``, ``readyReplicas``, ``currentReplicas``, ``updatedReplicas``,
  ``availableReplicas``, ``currentRevision``, ``updateRevision``, ``observedGeneration``.

Not modelled: ControllerRevision objects, ``partition``, ``maxUnavailable``, ``minReadySeconds``,
claim deletion by ``persistentVolumeClaimRetentionPolicy: Delete``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.embedded.controllers.controller_utils import (
    compute_hash,
    is_pod_ready,
    mapping_field,
    pod_from_template,
)
from kubesched.embedded.controllers.pod_owner import PodOwnerController
from kubesched.errors import AlreadyExistsError, NotFoundError

__all__ = ["StatefulSetController", "new_stateful_pod", "stateful_claims"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_HASH = "controller-revision-hash"


def _revision(sts: Mapping[str, Any]) -> str:
    return (
        f"{(sts.get('metadata') or {}).get('name')}-{compute_hash((sts.get('spec') or {}).get('template'))}"
    )


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


def new_stateful_pod(sts: Mapping[str, Any], ordinal: int) -> Obj:
    """``newVersionedStatefulSetPod``: pod ``<set>-<ordinal>`` with its identity and claims."""
    meta = sts.get("metadata") or {}
    spec = sts.get("spec") or {}
    name = f"{meta.get('name')}-{ordinal}"
    pod = pod_from_template(copy.deepcopy(spec.get("template") or {}), sts, name=name)
    pod["metadata"]["labels"] = {
        **pod["metadata"].get("labels", {}),
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        REVISION_HASH: _revision(sts),
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
        """``updateStatefulSet`` of ``namespace/name``."""
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
        if not sts["metadata"].get("deletionTimestamp"):
            self._manage(sts, pods)
        self._update_status(sts)

    def _manage(self, sts: Obj, pods: dict[int, Obj]) -> None:
        spec = sts.get("spec") or {}
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        wanted = range(start, start + replicas)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        revision = _revision(sts)
        for ordinal in sorted(pods):
            pod = pods[ordinal]
            if (pod.get("status") or {}).get("phase") == "Failed" and not pod["metadata"].get(
                "deletionTimestamp"
            ):
                self.delete_pod(pod)
                del pods[ordinal]
        for ordinal in wanted:
            current = pods.get(ordinal)
            if current is None:
                fresh = new_stateful_pod(sts, ordinal)
                for claim in stateful_claims(sts, fresh["metadata"]["name"]):
                    try:
                        self.cluster.create(claim)
                    except AlreadyExistsError:
                        pass
                pods[ordinal] = self.cluster.create(self.admit(fresh))
                if not parallel:
                    return
            elif not parallel and (
                current["metadata"].get("deletionTimestamp") or not _running_ready(current)
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
        for ordinal in sorted(wanted, reverse=True):
            outdated = pods.get(ordinal)
            if (
                outdated is not None
                and (outdated["metadata"].get("labels") or {}).get(REVISION_HASH) != revision
            ):
                self.delete_pod(outdated)
                return

    def _update_status(self, sts: Obj) -> None:
        namespace, name = sts["metadata"].get("namespace") or "default", sts["metadata"]["name"]
        uid = sts["metadata"].get("uid")
        revision = _revision(sts)
        pods = [p for p in self.pods.owned(namespace, str(uid)) if not p["metadata"].get("deletionTimestamp")]
        ready = sum(1 for p in pods if is_pod_ready(p))
        updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_HASH) == revision)
        before = sts.get("status") or {}
        current_revision = before.get("currentRevision") or revision
        if updated == len(pods) and len(pods) == (
            1 if (sts.get("spec") or {}).get("replicas") is None else int(sts["spec"]["replicas"])
        ):
            current_revision = revision
        current = sum(
            1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_HASH) == current_revision
        )
        status = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_revision,
            "updateRevision": revision,
            "collisionCount": 0,
            "availableReplicas": ready,
        }
        for key in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not status[key]:
                del status[key]
        if status != before:
            self.cluster.patch_status(
                "StatefulSet", namespace, name, {k: status.get(k) for k in {*status, *before}}
            )
