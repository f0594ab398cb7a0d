"""The Deployment controller: one ReplicaSet per pod template, rolled out by the Deployment's
strategy, as ``pkg/controller/deployment`` does (``deployment_controller.go: syncDeployment``,
``sync.go: getNewReplicaSet``, ``rolling.go``, ``recreate.go``, ``progress.go`` and
``util/deployment_util.go``).

* ReplicaSets it controls (controller reference to the Deployment's uid; matching orphans
  adopted) are split into the *new* one -- whose template equals the Deployment's, ignoring the
  ``pod-template-hash`` label -- and the old ones. A template with no ReplicaSet yet gets one:
  ``<deployment>-<hash>``, the template's labels, selector and pod labels plus
  ``pod-template-hash: <hash>``, annotations ``deployment.kubernetes.io/revision`` (one more than
  the old ones'), ``desired-replicas`` and ``max-replicas``. The hash is ``fnv32a`` of the
  template's canonical JSON (and ``status.collisionCount``), encoded as upstream's
  ``rand.SafeEncodeString``; its value differs from upstream's, which hashes Go's printing of the
  template struct.
* ``RollingUpdate`` (``maxSurge``/``maxUnavailable``, default 25 % each, surge rounded up,
  unavailability down; both 0 means 1 unavailable): the new ReplicaSet grows while the total stays
  within ``replicas + maxSurge`` (``NewRSNewReplicas``), old ones shrink -- unhealthy replicas
  first (``cleanupUnhealthyReplicas``), then while more than ``replicas - maxUnavailable`` pods
  are available (``scaleDownOldReplicaSetsForRollingUpdate``), availability counted on pod
  readiness as the kubelets report it (and ``minReadySeconds``).
* ``Recreate``: old ReplicaSets go to 0 first; the new one is scaled up once no old pod is left
  (terminating ones included).
* ``status``: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
  ``unavailableReplicas``, ``observedGeneration``, and the ``Available`` and ``Progressing``
  conditions with upstream's reasons and messages, so ``kubectl rollout status`` follows it.
* Old ReplicaSets with no replicas beyond ``revisionHistoryLimit`` (10) are deleted.

Not modelled: proportional scaling of several live ReplicaSets (a scaling during a rollout is
converged by the rolling update itself), ``paused`` (a paused Deployment only reports status),
``progressDeadlineSeconds``, rollbacks.
"""

from __future__ import annotations

import copy
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    WorkQueue,
    controller_ref,
    label_selector_matcher,
    mapping_field,
    new_controller_ref,
    owner_refs,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["DeploymentController", "POD_TEMPLATE_HASH", "REVISION", "resolve_fenceposts", "template_hash"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def template_hash(template: Any, collision_count: int | None = None) -> str:
    """``pod-template-hash`` of a pod template: fnv32a of its canonical JSON (plus the collision
    count), as decimal text encoded by ``rand.SafeEncodeString``."""
    h = 0x811C9DC5
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += str(collision_count).encode()
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, str) and value.endswith("%"):
        pct = float(value[:-1]) * total / 100
        return math.ceil(pct) if round_up else math.floor(pct)
    return int(value)


def resolve_fenceposts(strategy: Mapping[str, Any], replicas: int) -> tuple[int, int]:
    """``ResolveFenceposts``: ``(maxSurge, maxUnavailable)`` in pods for ``replicas``."""
    rolling = mapping_field(strategy, "rollingUpdate")
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _without_hash(template: Any) -> Any:
    t: dict[str, Any] = copy.deepcopy(dict(template)) if isinstance(template, Mapping) else {}
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
        if not labels:
            t["metadata"].pop("labels")
    if isinstance(t.get("metadata"), dict) and not t["metadata"]:
        t.pop("metadata")
    return t


def _replicas(obj: Mapping[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _status(obj: Mapping[str, Any], key: str) -> int:
    return int((obj.get("status") or {}).get(key) or 0)


def _revision(rs: Mapping[str, Any]) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, 0))
    except ValueError:
        return 0


def _created(obj: Mapping[str, Any]) -> tuple[float, str]:
    meta = obj.get("metadata") or {}
    try:
        t = parse_rfc3339(str(meta.get("creationTimestamp")))
    except ValueError:
        t = 0.0
    return t, str(meta.get("name"))


class DeploymentController:
    """Runs Deployments of ``cluster`` on ``clock`` (module docstring). :meth:`start` watches
    Deployments, ReplicaSets and pod deletions; :meth:`stop` ends it."""

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self.queue = WorkQueue(clock, self.sync, "deployment")
        self._subs: list[Subscription] = []

    def start(self) -> DeploymentController:
        self._subs = [
            self.cluster.watch("Deployment", None, self._on_deployment),
            self.cluster.watch("ReplicaSet", None, self._on_replica_set),
            self.cluster.watch("Pod", self.cluster.resource_version, self._on_pod),
        ]
        return self

    def stop(self) -> None:
        self.queue.closed = True
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def _on_deployment(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        if ev.type != "DELETED":
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(self, ev: WatchEvent) -> None:
        """A deleted pod may let a ``Recreate`` rollout go on (``deletePod``)."""
        if ev.type != "DELETED":
            return
        ref = controller_ref(ev.object)
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
        if (d.get("metadata") or {}).get("deletionTimestamp"):
            return
        all_rs = self._claim(d)
        template = (d.get("spec") or {}).get("template")
        wanted = _without_hash(template)
        new_rs = next(
            (
                rs
                for rs in sorted(all_rs, key=_created)
                if _without_hash((rs.get("spec") or {}).get("template")) == wanted
            ),
            None,
        )
        old = [rs for rs in all_rs if rs is not new_rs]
        spec = d.get("spec") or {}
        if not spec.get("paused"):
            strategy = mapping_field(spec, "strategy")
            if strategy.get("type") == "Recreate":
                new_rs = self._recreate(d, new_rs, old)
            else:
                new_rs = self._rolling(d, new_rs, old)
            self._cleanup(d, [rs for rs in old if rs is not new_rs])
        self._update_status(d, new_rs, old)

    def _scale(self, rs: Obj, replicas: int, d: Obj) -> Obj:
        """``scaleReplicaSet``: ``spec.replicas`` and the desired/max annotations."""
        surge, _ = resolve_fenceposts((d.get("spec") or {}).get("strategy") or {}, _replicas(d))
        annotations = {
            **(rs["metadata"].get("annotations") or {}),
            DESIRED_REPLICAS: str(_replicas(d)),
            MAX_REPLICAS: str(_replicas(d) + surge),
        }
        if _replicas(rs) == replicas and annotations == rs["metadata"].get("annotations"):
            return rs
        return self.cluster.update(
            {
                **rs,
                "metadata": {**rs["metadata"], "annotations": annotations},
                "spec": {**(rs.get("spec") or {}), "replicas": replicas},
            }
        )

    def _new_replica_set(self, d: Obj, old: list[Obj], replicas: int) -> Obj:
        """``getNewReplicaSet`` with ``createIfNotExisted``."""
        meta = d["metadata"]
        spec = d.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        h = template_hash(template, (d.get("status") or {}).get("collisionCount"))
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH: h}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: h}
        revision = max((_revision(rs) for rs in old), default=0) + 1
        surge, _ = resolve_fenceposts(spec.get("strategy") or {}, _replicas(d))
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "namespace": meta.get("namespace") or "default",
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [new_controller_ref(d)],
                "annotations": {
                    **(meta.get("annotations") or {}),
                    REVISION: str(revision),
                    DESIRED_REPLICAS: str(_replicas(d)),
                    MAX_REPLICAS: str(_replicas(d) + surge),
                },
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        rs["metadata"]["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration", None)
        created = self.cluster.create(rs)
        annotations = {**(meta.get("annotations") or {}), REVISION: str(revision)}
        if annotations != meta.get("annotations"):
            self.cluster.update({**d, "metadata": {**meta, "annotations": annotations}})
        return created

    def _rolling(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> Obj:
        """``rolloutRolling``: one step of scaling up the new ReplicaSet and down the old ones."""
        replicas = _replicas(d)
        surge, max_unavailable = resolve_fenceposts((d.get("spec") or {}).get("strategy") or {}, replicas)
        if new_rs is None:
            current = sum(_replicas(rs) for rs in old)
            start = min(replicas, max(0, replicas + surge - current)) if old else replicas
            new_rs = self._new_replica_set(d, old, start)
        # reconcileNewReplicaSet
        new_count = _replicas(new_rs)
        if new_count > replicas:
            new_rs = self._scale(new_rs, replicas, d)
        elif new_count < replicas:
            total = sum(_replicas(rs) for rs in old) + new_count
            scale_up = min(replicas + surge - total, replicas - new_count)
            if scale_up > 0:
                new_rs = self._scale(new_rs, new_count + scale_up, d)
        # reconcileOldReplicaSets
        old_count = sum(_replicas(rs) for rs in old)
        if old_count == 0:
            return new_rs
        all_count = old_count + _replicas(new_rs)
        min_available = replicas - max_unavailable
        new_unavailable = _replicas(new_rs) - _status(new_rs, "availableReplicas")
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return new_rs
        old = sorted(old, key=_created)
        cleaned = 0
        for i, rs in enumerate(old):  # cleanupUnhealthyReplicas
            if cleaned >= max_scaled_down or _replicas(rs) == 0:
                continue
            unhealthy = _replicas(rs) - _status(rs, "availableReplicas")
            down = min(max_scaled_down - cleaned, unhealthy)
            if down > 0:
                old[i] = self._scale(rs, _replicas(rs) - down, d)
                cleaned += down
        available = sum(_status(rs, "availableReplicas") for rs in [*old, new_rs])
        total_down = min(available - min_available, max_scaled_down - cleaned)
        done = 0
        for i, rs in enumerate(old):  # scaleDownOldReplicaSetsForRollingUpdate
            if done >= total_down:
                break
            if _replicas(rs) == 0:
                continue
            down = min(_replicas(rs), total_down - done)
            old[i] = self._scale(rs, _replicas(rs) - down, d)
            done += down
        return new_rs

    def _recreate(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> Obj | None:
        """``rolloutRecreate``: old ReplicaSets to 0, then the new one up once their pods are gone."""
        for rs in old:
            if _replicas(rs) != 0:
                self._scale(rs, 0, d)
        old_uids = {rs["metadata"].get("uid") for rs in old}
        for pod in self.cluster.list("Pod", d["metadata"].get("namespace") or "default").items:
            ref = controller_ref(pod)
            if (
                ref is not None
                and ref.get("uid") in old_uids
                and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ):
                return new_rs  # oldPodsRunning: terminating pods count until they are gone
        if new_rs is None:
            return self._new_replica_set(d, old, _replicas(d))
        return self._scale(new_rs, _replicas(d), d)

    def _cleanup(self, d: Obj, old: list[Obj]) -> None:
        """``cleanupDeployment``: delete the oldest empty ReplicaSets beyond ``revisionHistoryLimit``."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        empty = sorted(
            (
                rs
                for rs in old
                if _replicas(rs) == 0
                and _status(rs, "replicas") == 0
                and not rs["metadata"].get("deletionTimestamp")
            ),
            key=_revision,
        )
        for rs in empty[: max(0, len(empty) - limit)]:
            try:
                self.cluster.delete("ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"])
            except NotFoundError:
                pass

    def _update_status(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
        """``syncRolloutStatus`` / ``calculateStatus`` with the ``Available`` and ``Progressing``
        conditions."""
        namespace = d["metadata"].get("namespace") or "default"
        fresh: list[Obj] = []
        for rs in ([new_rs] if new_rs is not None else []) + old:
            try:
                fresh.append(self.cluster.get("ReplicaSet", namespace, rs["metadata"]["name"]))
            except NotFoundError:
                continue
        new_now = fresh[0] if new_rs is not None and fresh else None
        replicas = _replicas(d)
        _, max_unavailable = resolve_fenceposts((d.get("spec") or {}).get("strategy") or {}, replicas)
        total = sum(_status(rs, "replicas") for rs in fresh)
        available = sum(_status(rs, "availableReplicas") for rs in fresh)
        updated = _status(new_now, "replicas") if new_now is not None else 0
        status_before = d.get("status") or {}
        now = rfc3339(self.clock.now())
        conditions = {
            c.get("type"): c for c in status_before.get("conditions") or [] if isinstance(c, Mapping)
        }
        if available >= replicas - max_unavailable:
            avail = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        else:
            avail = ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
        new_name = new_now["metadata"]["name"] if new_now is not None else ""
        complete = (
            new_now is not None
            and updated == replicas
            and _replicas(new_now) == replicas
            and _status(new_now, "availableReplicas") == replicas
            and total == replicas
        )
        if complete:
            prog = ("True", "NewReplicaSetAvailable", f'ReplicaSet "{new_name}" has successfully progressed.')
        elif new_now is not None:
            prog = ("True", "ReplicaSetUpdated", f'ReplicaSet "{new_name}" is progressing.')
        else:
            prog = ("True", "ReplicaSetUpdated", "Deployment is progressing.")
        out_conds = []
        for ctype, (value, reason, message) in (("Available", avail), ("Progressing", prog)):
            before = conditions.get(ctype) or {}
            if (before.get("status"), before.get("reason"), before.get("message")) == (
                value,
                reason,
                message,
            ):
                out_conds.append(before)
                continue
            transition = before.get("lastTransitionTime") if before.get("status") == value else None
            out_conds.append(
                {
                    "type": ctype,
                    "status": value,
                    "lastUpdateTime": now,
                    "lastTransitionTime": transition or now,
                    "reason": reason,
                    "message": message,
                }
            )
        new_status = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in fresh),
            "availableReplicas": available,
            "unavailableReplicas": max(replicas - available, 0),
            "conditions": out_conds,
        }
        if "collisionCount" in status_before:
            new_status["collisionCount"] = status_before["collisionCount"]
        for key in (
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "updatedReplicas",
            "replicas",
        ):
            if new_status[key] == 0:
                del new_status[key]
        if new_status != status_before:
            patch = {k: new_status.get(k) for k in {*new_status, *status_before}}
            self.cluster.patch_status("Deployment", namespace, d["metadata"]["name"], patch)
