"""The DaemonSet controller: one pod per eligible node, pinned to it for the scheduler, as
``pkg/controller/daemon/daemon_controller.go`` does (``manage``, ``podsShouldBeOnNode``,
``NodeShouldRunDaemonPod``, ``updateDaemonSetStatus``) with ``util/daemonset_util.go``.

* A node is eligible when the template's ``nodeName`` (if any), ``nodeSelector`` and required node
  affinity match it and its ``NoSchedule``/``NoExecute`` taints are tolerated by the template's
  tolerations plus the ones every daemon pod gets (``AddOrUpdateDaemonPodTolerations``):
  ``node.kubernetes.io/not-ready`` and ``unreachable`` (``NoExecute``), ``disk-pressure``,
  ``memory-pressure``, ``pid-pressure`` and ``unschedulable`` (``NoSchedule``), and
  ``network-unavailable`` (``NoSchedule``) for ``hostNetwork`` pods. A running pod stays on a node
  whose new taints are only untolerated ``NoSchedule`` ones (``shouldContinueRunning``).
* Each eligible node without a daemon pod gets one: ``generateName: <ds>-``, the template, those
  tolerations, and the required node affinity replaced by ``matchFields metadata.name In [<node>]``
  (``ReplaceDaemonSetPodNodeNameNodeAffinity``), so the scheduler places it as upstream does;
  labels ``controller-revision-hash`` (the current revision's hash) and ``pod-template-generation``.
  New nodes get their pod as they appear.
* Pods on nodes that should not run one, extra pods on a node (the oldest is kept) and Failed
  pods are deleted.
* ``RollingUpdate`` (default; ``maxUnavailable`` 1, ``maxSurge`` 0): pods of an older template
  are deleted while fewer than ``maxUnavailable`` eligible nodes lack an available pod; their
  replacements come from the next sync. ``OnDelete`` replaces only deleted pods.
* Revisions (``constructHistory``, ``snapshot``, ``cleanupHistory``): the template is kept as a
  ``ControllerRevision`` ``<ds>-<hash>`` (``hash``: ``compute_hash`` of the template and
  ``status.collisionCount``; :mod:`~kubesched.embedded.controllers.history`) with the template's
  labels plus ``controller-revision-hash``, the DaemonSet's annotations and ``revision`` one above
  the old ones'; a template that returns to an earlier revision's reuses it with a raised number.
  Old revisions no pod uses are deleted beyond ``revisionHistoryLimit`` (default 10), lowest
  first.
* ``status``: ``desiredNumberScheduled``, ``currentNumberScheduled``, ``numberMisscheduled``,
  ``numberReady``, ``updatedNumberScheduled``, ``numberAvailable``, ``numberUnavailable``,
  ``observedGeneration``, ``collisionCount``.

Not modelled: ``maxSurge``, ``minReadySeconds``, adoption of orphan revisions.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.node_selector import parse_node_selector
from kubesched.api.required_node_affinity import RequiredNodeAffinity
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated, parse_taints, parse_tolerations
from kubesched.api.timestamps import parse_rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.embedded.controllers.controller_utils import (
    compute_hash,
    is_pod_available,
    is_pod_ready,
    mapping_field,
    new_controller_ref,
    pod_from_template,
)
from kubesched.embedded.controllers.deployment_util import resolve_fenceposts
from kubesched.embedded.controllers.history import (
    REVISION_HASH,
    controlled_revisions,
    go_json,
    next_revision,
    revision_patch,
    sort_revisions,
)
from kubesched.embedded.controllers.pod_owner import PodOwnerController
from kubesched.errors import AlreadyExistsError, ManifestError, NotFoundError

__all__ = ["DAEMON_TOLERATIONS", "DaemonSetController", "new_daemon_pod", "node_should_run"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: ``(key, effect)`` of the tolerations every daemon pod gets (``Exists``, no tolerationSeconds)
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")
TEMPLATE_GENERATION = "pod-template-generation"


def _daemon_tolerations(pod_spec: Mapping[str, Any]) -> list[Obj]:
    """``AddOrUpdateDaemonPodTolerations``: the spec's tolerations plus the daemon ones (an
    existing toleration of the same key and effect is replaced)."""
    wanted = list(DAEMON_TOLERATIONS) + ([_NETWORK_UNAVAILABLE] if pod_spec.get("hostNetwork") else [])
    out = [
        dict(t)
        for t in pod_spec.get("tolerations") or []
        if isinstance(t, Mapping) and (t.get("key"), t.get("effect")) not in wanted
    ]
    out += [{"key": key, "operator": "Exists", "effect": effect} for key, effect in wanted]
    return out


def new_daemon_pod(ds: Mapping[str, Any], node_name: str, revision_hash: str | None = None) -> Obj:
    """The pod ``ds`` runs on ``node_name`` (``NewPod`` + ``ReplaceDaemonSetPodNodeNameNodeAffinity``
    + the revision labels: ``revision_hash``, by default the template's hash), before the API
    server's admission."""
    spec = ds.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    pod = pod_from_template(template, ds)
    pspec = pod["spec"]
    pspec["tolerations"] = _daemon_tolerations(pspec)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = dict(pspec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    pspec["affinity"] = affinity
    meta = pod["metadata"]
    meta["labels"] = {
        **meta.get("labels", {}),
        REVISION_HASH: revision_hash or compute_hash(spec.get("template")),
        TEMPLATE_GENERATION: str((ds.get("metadata") or {}).get("generation", 1)),
    }
    return pod


def node_should_run(ds: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: ``(shouldRun, shouldContinueRunning)`` of ``ds`` on ``node``."""
    nmeta = node.get("metadata") or {}
    name = str(nmeta.get("name"))
    pspec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    if pspec.get("nodeName") and pspec["nodeName"] != name:
        return False, False
    try:
        required = ((pspec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        affinity = RequiredNodeAffinity(
            pspec.get("nodeSelector") or None, parse_node_selector(required, "spec.template.spec.affinity")
        )
        if not affinity.matches_labels(nmeta.get("labels") or {}, name):
            return False, False
        taints = parse_taints((node.get("spec") or {}).get("taints"), "spec.taints")
        tolerations = parse_tolerations(_daemon_tolerations(pspec), "spec.template.spec.tolerations")
    except ManifestError:
        return False, False
    if find_untolerated(taints, tolerations, (NO_EXECUTE,)) is not None:
        return False, False
    if find_untolerated(taints, tolerations, (NO_SCHEDULE,)) is not None:
        return False, True
    return True, True


def _created(pod: Mapping[str, Any]) -> tuple[float, str]:
    meta = pod.get("metadata") or {}
    try:
        return parse_rfc3339(str(meta.get("creationTimestamp"))), str(meta.get("name"))
    except ValueError:
        return 0.0, str(meta.get("name"))


def _pod_node(pod: Mapping[str, Any]) -> str | None:
    """The node a daemon pod is for: its ``nodeName``, else its ``matchFields metadata.name``."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    terms = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return None


class DaemonSetController(PodOwnerController):
    """Runs DaemonSets of ``cluster`` on ``clock`` (module docstring); ``admit`` is applied to every
    pod it creates. :meth:`start` watches DaemonSets, nodes and pods; :meth:`stop` ends it."""

    kind = "DaemonSet"
    queue_name = "daemonset"

    def extra_watches(self) -> list[Subscription]:
        return [self.cluster.watch("Node", self.cluster.resource_version, self._on_node)]

    def _on_node(self, ev: WatchEvent) -> None:
        if ev.type == "MODIFIED" and ev.old_object is not None:
            old, new = ev.old_object, ev.object
            if (old.get("metadata") or {}).get("labels") == (new.get("metadata") or {}).get("labels") and (
                old.get("spec") or {}
            ).get("taints") == (new.get("spec") or {}).get("taints"):
                return  # status-only changes do not move daemon pods
        for ds in self.cluster.list("DaemonSet").items:
            self.queue.add(f"{ds['metadata'].get('namespace')}/{ds['metadata']['name']}")

    def sync(self, key: str) -> None:
        """``syncDaemonSet`` of ``namespace/name``."""
        namespace, _, name = key.partition("/")
        try:
            ds = self.cluster.get("DaemonSet", namespace, name)
        except NotFoundError:
            return
        uid = ds["metadata"].get("uid")
        by_node: dict[str, list[Obj]] = {}
        for pod in self.pods.owned(namespace, str(uid)):
            if pod["metadata"].get("deletionTimestamp"):
                continue
            node = _pod_node(pod)
            if node is not None:
                by_node.setdefault(node, []).append(pod)
        nodes = self.cluster.list("Node").items
        cur, old = self._construct_history(ds)
        cur_hash = str((cur["metadata"].get("labels") or {}).get(REVISION_HASH))
        if not ds["metadata"].get("deletionTimestamp"):
            self._manage(ds, nodes, by_node, cur_hash)
            self._cleanup_history(ds, old)
        self._update_status(ds, nodes, cur_hash)

    def _construct_history(self, ds: Obj) -> tuple[Obj, list[Obj]]:
        """``constructHistory``: the current revision (created, or renumbered when an older
        template came back) and the old ones."""
        patch = go_json(revision_patch(ds))
        current: list[Obj] = []
        old: list[Obj] = []
        for history in controlled_revisions(self.cluster, ds):
            labels = history["metadata"].get("labels") or {}
            if REVISION_HASH not in labels:
                labels = {**labels, REVISION_HASH: history["metadata"]["name"]}
                history = self.cluster.update(
                    {**history, "metadata": {**history["metadata"], "labels": labels}}
                )
            (current if go_json(history.get("data")) == patch else old).append(history)
        revision = next_revision(old)
        if not current:
            return self._snapshot(ds, revision), old
        cur = self._dedup(ds, current)
        if int(cur.get("revision") or 0) < revision:
            cur = self.cluster.update({**cur, "revision": revision})
        return cur, old

    def _dedup(self, ds: Obj, current: list[Obj]) -> Obj:
        """``dedupCurHistories``: keep the highest revision of the current template, relabel the
        pods of the others with its hash and delete them."""
        if len(current) == 1:
            return current[0]
        keep = sort_revisions(current)[-1]
        keep_hash = (keep["metadata"].get("labels") or {}).get(REVISION_HASH)
        namespace = ds["metadata"].get("namespace") or "default"
        for dup in current:
            if dup is keep:
                continue
            dup_hash = (dup["metadata"].get("labels") or {}).get(REVISION_HASH)
            for pod in self.pods.owned(namespace, str(ds["metadata"].get("uid"))):
                labels = pod["metadata"].get("labels") or {}
                if labels.get(REVISION_HASH) == dup_hash:
                    relabelled = {**labels, REVISION_HASH: keep_hash}
                    self.cluster.update({**pod, "metadata": {**pod["metadata"], "labels": relabelled}})
            try:
                self.cluster.delete("ControllerRevision", namespace, dup["metadata"]["name"])
            except NotFoundError:
                pass
        return keep

    def _snapshot(self, ds: Obj, revision: int) -> Obj:
        """``snapshot``: create the revision of ``ds``'s template; a name taken by another
        template raises ``status.collisionCount`` (the next sync hashes again)."""
        spec = ds.get("spec") or {}
        meta = ds["metadata"]
        collision_count = (ds.get("status") or {}).get("collisionCount")
        h = compute_hash(spec.get("template"), collision_count)
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        history: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "namespace": meta.get("namespace") or "default",
                "labels": {**labels, REVISION_HASH: h},
                "ownerReferences": [new_controller_ref(ds)],
            },
            "data": revision_patch(ds),
            "revision": revision,
        }
        if meta.get("annotations"):
            history["metadata"]["annotations"] = dict(meta["annotations"])
        try:
            return self.cluster.create(history)
        except AlreadyExistsError:
            existing = self.cluster.get(
                "ControllerRevision", history["metadata"]["namespace"], history["metadata"]["name"]
            )
            if go_json(existing.get("data")) == go_json(history["data"]):
                return existing
            self.cluster.patch_status(
                "DaemonSet",
                meta.get("namespace"),
                meta["name"],
                {"collisionCount": int(collision_count or 0) + 1},
            )
            raise

    def _cleanup_history(self, ds: Obj, old: list[Obj]) -> None:
        """``cleanupHistory``: delete the lowest old revisions no pod uses beyond
        ``revisionHistoryLimit``."""
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        to_kill = len(old) - (10 if limit is None else int(limit))
        if to_kill <= 0:
            return
        namespace = ds["metadata"].get("namespace") or "default"
        live = {
            (p["metadata"].get("labels") or {}).get(REVISION_HASH)
            for p in self.pods.owned(namespace, str(ds["metadata"].get("uid")))
        }
        for history in sort_revisions(old):
            if to_kill <= 0:
                break
            if (history["metadata"].get("labels") or {}).get(REVISION_HASH) in live:
                continue
            try:
                self.cluster.delete("ControllerRevision", namespace, history["metadata"]["name"])
            except NotFoundError:
                pass
            to_kill -= 1

    def _manage(self, ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], current_hash: str) -> None:
        """``manage`` + ``rollingUpdate`` with the current revision's hash."""
        spec = ds.get("spec") or {}
        strategy = mapping_field(spec, "updateStrategy")
        eligible = 0
        unavailable = 0
        outdated: list[Obj] = []
        for node in nodes:
            name = node["metadata"]["name"]
            pods = sorted(by_node.get(name, []), key=_created)
            should_run, should_continue = node_should_run(ds, node)
            for pod in [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]:
                self.delete_pod(pod)
                pods.remove(pod)
            if should_run:
                eligible += 1
                if not pods:
                    self.cluster.create(self.admit(new_daemon_pod(ds, name, current_hash)))
                    unavailable += 1
                    continue
                for extra in pods[1:]:
                    self.delete_pod(extra)
                pod = pods[0]
                if not is_pod_available(pod, 0, self.clock.now()):
                    unavailable += 1
                if (pod["metadata"].get("labels") or {}).get(REVISION_HASH) != current_hash:
                    outdated.append(pod)
            elif not should_continue:
                for pod in pods:
                    self.delete_pod(pod)
        if strategy.get("type") == "OnDelete":
            return
        rolling = mapping_field(strategy, "rollingUpdate")
        _, max_unavailable = resolve_fenceposts(
            {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": rolling.get("maxUnavailable", 1)}}, eligible
        )
        # old pods that are not available go first, then available ones within the budget
        outdated.sort(key=lambda p: is_pod_available(p, 0, self.clock.now()))
        for pod in outdated:
            if is_pod_available(pod, 0, self.clock.now()):
                if unavailable >= max_unavailable:
                    break
                unavailable += 1
            self.delete_pod(pod)

    def _update_status(self, ds: Obj, nodes: list[Obj], current_hash: str) -> None:
        namespace, name = ds["metadata"].get("namespace") or "default", ds["metadata"]["name"]
        uid = ds["metadata"].get("uid")
        by_node: dict[str, list[Obj]] = {}
        for pod in self.pods.owned(namespace, str(uid)):
            if not pod["metadata"].get("deletionTimestamp"):
                pod_node = _pod_node(pod)
                if pod_node is not None:
                    by_node.setdefault(pod_node, []).append(pod)
        desired = current = mis = ready = updated = available = 0
        now = self.clock.now()
        for node in nodes:
            should_run, _ = node_should_run(ds, node)
            pods = by_node.get(node["metadata"]["name"], [])
            if should_run:
                desired += 1
                if pods:
                    current += 1
                    pod = sorted(pods, key=_created)[0]
                    if is_pod_ready(pod):
                        ready += 1
                        if is_pod_available(pod, 0, now):
                            available += 1
                    if (pod["metadata"].get("labels") or {}).get(REVISION_HASH) == current_hash:
                        updated += 1
            elif pods:
                mis += 1
        status = {
            "currentNumberScheduled": current,
            "numberMisscheduled": mis,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        for key in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
            if not status[key]:
                del status[key]
        before = ds.get("status") or {}
        if before.get("collisionCount") is not None:
            status["collisionCount"] = before["collisionCount"]
        if status != before:
            self.cluster.patch_status(
                "DaemonSet", namespace, name, {k: status.get(k) for k in {*status, *before}}
            )
