"""What the Deployment controller computes about Deployments and their ReplicaSets, after
``pkg/controller/deployment/util/deployment_util.go`` and the ReplicaSet orderings of
``pkg/controller/controller_utils.go``: fenceposts (``ResolveFenceposts``, ``MaxSurge``,
``MaxUnavailable``), revisions and the annotations a ReplicaSet carries, the new ReplicaSet of a
template (``FindNewReplicaSet``, ``EqualIgnoreHash``), replica counts, proportions
(``GetProportion``), saturation and completeness, and the ``Progressing``/``Available``
conditions (``SetDeploymentCondition``, ``DeploymentProgressing``, ``DeploymentTimedOut``).

Objects are the API's JSON dicts; replica counts are pods; times are epoch seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.embedded.controllers.controller_utils import mapping_field

__all__ = [
    "DESIRED_REPLICAS",
    "CHANGE_CAUSE",
    "MAX_REPLICAS",
    "POD_TEMPLATE_HASH",
    "REVISION",
    "REVISION_HISTORY",
    "created",
    "deployment_complete",
    "deployment_progressing",
    "deployment_timed_out",
    "equal_ignore_hash",
    "find_active_or_latest",
    "find_new_replica_set",
    "get_condition",
    "get_proportion",
    "has_progress_deadline",
    "is_rolling_update",
    "is_saturated",
    "max_revision",
    "max_surge",
    "max_unavailable",
    "new_condition",
    "new_rs_new_replicas",
    "progress_deadline",
    "proportional_sizes",
    "remove_condition",
    "replicas",
    "replicas_annotations_need_update",
    "resolve_fenceposts",
    "revision",
    "set_condition",
    "set_new_replica_set_annotations",
    "set_replicas_annotations",
    "sort_by_creation",
    "sort_by_revision",
    "sort_by_size_newer",
    "sort_by_size_older",
    "status_count",
]

Obj = dict[str, Any]

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
CHANGE_CAUSE = "kubernetes.io/change-cause"
#: annotations of a Deployment not copied to its ReplicaSets (``annotationsToSkip``)
_SKIPPED_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)
#: the longest ``revision-history`` annotation kept, in characters (``maxRevHistoryLengthInChars``)
MAX_REV_HISTORY_LENGTH = 2000
#: the default ``progressDeadlineSeconds`` of apps/v1 (``SetDefaults_Deployment``)
DEFAULT_PROGRESS_DEADLINE = 600
_MAX_INT32 = 2**31 - 1


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def replicas(obj: Mapping[str, Any] | None) -> int:
    """``*spec.replicas`` (default 1; 0 for no object)."""
    if obj is None:
        return 0
    value = mapping_field(obj, "spec").get("replicas")
    return 1 if value is None else int(value)


def status_count(obj: Mapping[str, Any] | None, key: str) -> int:
    """``status.<key>`` as an int (0 when absent or for no object)."""
    if obj is None:
        return 0
    return int(mapping_field(obj, "status").get(key) or 0)


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1]) * total / 100
        return math.ceil(pct) if round_up else math.floor(pct)
    return int(value)


def resolve_fenceposts(strategy: Mapping[str, Any], desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: ``(maxSurge, maxUnavailable)`` in pods for ``desired`` replicas
    (defaults 25 % each; both 0 means 1 unavailable)."""
    rolling = mapping_field(strategy, "rollingUpdate")
    surge = _scaled(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _strategy(d: Mapping[str, Any]) -> dict[str, Any]:
    return mapping_field(mapping_field(d, "spec"), "strategy")


def is_rolling_update(d: Mapping[str, Any]) -> bool:
    return _strategy(d).get("type", "RollingUpdate") == "RollingUpdate"


def max_surge(d: Mapping[str, Any]) -> int:
    """``MaxSurge``: pods above ``spec.replicas`` a rolling update may run (0 for Recreate)."""
    if not is_rolling_update(d):
        return 0
    return resolve_fenceposts(_strategy(d), replicas(d))[0]


def max_unavailable(d: Mapping[str, Any]) -> int:
    """``MaxUnavailable``: pods below ``spec.replicas`` a rolling update may leave unavailable
    (0 for Recreate or no replicas; at most ``spec.replicas``)."""
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(_strategy(d), replicas(d))[1], replicas(d))


def revision(obj: Mapping[str, Any]) -> int:
    """``Revision``: the ``deployment.kubernetes.io/revision`` annotation (0 when absent or
    malformed)."""
    try:
        return int((_meta(obj).get("annotations") or {}).get(REVISION, 0))
    except (TypeError, ValueError):
        return 0


def max_revision(rs_list: Sequence[Mapping[str, Any]]) -> int:
    """``MaxRevision`` of ``rs_list`` (0 for none)."""
    return max((revision(rs) for rs in rs_list), default=0)


def created(obj: Mapping[str, Any]) -> tuple[float, str]:
    """``(creationTimestamp, name)``: ``ReplicaSetsByCreationTimestamp``'s key."""
    meta = _meta(obj)
    try:
        t = parse_rfc3339(str(meta.get("creationTimestamp")))
    except ValueError:
        t = 0.0
    return t, str(meta.get("name"))


def sort_by_creation(rs_list: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsByCreationTimestamp``: oldest first, then by name."""
    return sorted(rs_list, key=created)


def sort_by_revision(rs_list: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsByRevision``: lowest revision first, then oldest."""
    return sorted(rs_list, key=lambda rs: (revision(rs), created(rs)))


def sort_by_size_newer(rs_list: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeNewer``: most replicas first, newer first among equals."""
    by_age = sorted(rs_list, key=created, reverse=True)
    return sorted(by_age, key=lambda rs: -replicas(rs))


def sort_by_size_older(rs_list: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeOlder``: most replicas first, older first among equals."""
    return sorted(sort_by_creation(rs_list), key=lambda rs: -replicas(rs))


def _without_nulls(value: Any) -> Any:
    """``value`` without ``null`` members: decoded into the typed object, a ``null`` field (the
    ``creationTimestamp: null`` clients send in templates) reads as the zero value, as when absent."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _without_hash(template: Any) -> Any:
    t: dict[str, Any] = _without_nulls(template) if isinstance(template, Mapping) else {}
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
        if not labels:
            t["metadata"].pop("labels")
    if isinstance(t.get("metadata"), dict) and not t["metadata"]:
        t.pop("metadata")
    return t


def equal_ignore_hash(a: Any, b: Any) -> bool:
    """``EqualIgnoreHash``: two pod templates are equal but for the ``pod-template-hash`` label."""
    return bool(_without_hash(a) == _without_hash(b))


def find_new_replica_set(d: Mapping[str, Any], rs_list: Sequence[Obj]) -> Obj | None:
    """``FindNewReplicaSet``: the oldest ReplicaSet whose template equals the Deployment's."""
    template = mapping_field(d, "spec").get("template")
    for rs in sort_by_creation(rs_list):
        if equal_ignore_hash(mapping_field(rs, "spec").get("template"), template):
            return rs
    return None


def find_active_or_latest(new_rs: Obj | None, old: Sequence[Obj]) -> Obj | None:
    """``FindActiveOrLatest``: the only ReplicaSet with replicas, else (none has any) the new one
    or the newest old one; None when several have replicas."""
    if new_rs is None and not old:
        return None
    old_sorted = sorted(old, key=created, reverse=True)
    active = [rs for rs in [*old_sorted, new_rs] if rs is not None and replicas(rs) > 0]
    if not active:
        return new_rs if new_rs is not None else old_sorted[0]
    if len(active) == 1:
        return active[0]
    return None


def _annotation_int(rs: Mapping[str, Any], key: str) -> int | None:
    raw = (_meta(rs).get("annotations") or {}).get(key)
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def is_saturated(d: Mapping[str, Any], rs: Mapping[str, Any] | None) -> bool:
    """``IsSaturated``: ``rs`` has, wants and annotates the Deployment's replicas, all available."""
    if rs is None:
        return False
    want = replicas(d)
    return (
        _annotation_int(rs, DESIRED_REPLICAS) == want
        and replicas(rs) == want
        and status_count(rs, "availableReplicas") == want
    )


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    """``SetReplicasAnnotations``: set ``desired-replicas`` and ``max-replicas`` on ``rs`` (in
    place); True when they changed."""
    annotations = dict(_meta(rs).get("annotations") or {})
    wanted = {DESIRED_REPLICAS: str(desired), MAX_REPLICAS: str(max_replicas)}
    if all(annotations.get(k) == v for k, v in wanted.items()):
        return False
    rs["metadata"] = {**_meta(rs), "annotations": {**annotations, **wanted}}
    return True


def replicas_annotations_need_update(rs: Mapping[str, Any], desired: int, max_replicas: int) -> bool:
    """``ReplicasAnnotationsNeedUpdate``."""
    annotations = _meta(rs).get("annotations") or {}
    return annotations.get(DESIRED_REPLICAS) != str(desired) or annotations.get(MAX_REPLICAS) != str(
        max_replicas
    )


def set_new_replica_set_annotations(d: Mapping[str, Any], rs: Obj, new_revision: int, exists: bool) -> bool:
    """``SetNewReplicaSetAnnotations`` (in place): the Deployment's annotations (but
    :data:`_SKIPPED_ANNOTATIONS`), the revision raised to ``new_revision`` -- the revision it had
    goes to ``revision-history`` (a rollback to this template) -- and, for a ReplicaSet about to
    be created, the replicas annotations. True when anything changed."""
    meta = dict(_meta(rs))
    annotations = dict(meta.get("annotations") or {})
    changed = False
    for key, value in (_meta(d).get("annotations") or {}).items():
        if key in _SKIPPED_ANNOTATIONS or annotations.get(key) == value:
            continue
        annotations[key] = value
        changed = True
    old_raw = annotations.get(REVISION)
    try:
        old_revision = int(old_raw) if old_raw is not None else 0
    except (TypeError, ValueError):
        rs["metadata"] = {**meta, "annotations": annotations}
        return changed
    if old_revision < new_revision:
        annotations[REVISION] = str(new_revision)
        changed = True
        if old_raw is not None:
            history = annotations.get(REVISION_HISTORY, "")
            if not history:
                annotations[REVISION_HISTORY] = str(old_raw)
            else:
                olds = history.split(",")
                total = len(history) + len(str(old_raw)) + 1
                start = 0
                while total > MAX_REV_HISTORY_LENGTH and start < len(olds):
                    total -= len(olds[start]) + 1
                    start += 1
                if total <= MAX_REV_HISTORY_LENGTH:
                    annotations[REVISION_HISTORY] = ",".join([*olds[start:], str(old_raw)])
    meta["annotations"] = annotations
    rs["metadata"] = meta
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def new_rs_new_replicas(d: Mapping[str, Any], all_rs: Sequence[Obj], new_rs: Obj) -> int:
    """``NewRSNewReplicas``: how many replicas the new ReplicaSet may have now -- under
    ``RollingUpdate`` as many as fit in ``replicas + maxSurge`` pods (up to ``replicas``), under
    ``Recreate`` ``replicas``."""
    if not is_rolling_update(d):
        return replicas(d)
    current = sum(replicas(rs) for rs in all_rs)
    max_total = replicas(d) + max_surge(d)
    if current >= max_total:
        return replicas(new_rs)
    return replicas(new_rs) + min(max_total - current, replicas(d) - replicas(new_rs))


def _round(x: float) -> int:
    """``integer.RoundToInt32`` (``math.Round``: halves away from zero)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _replica_set_fraction(rs: Mapping[str, Any], d: Mapping[str, Any]) -> int:
    """``getReplicaSetFraction``: ``rs``'s share of a resize of the Deployment, from the
    ``max-replicas`` it was sized for (else the Deployment's current ``status.replicas``)."""
    if replicas(d) == 0:
        return -replicas(rs)
    max_now = replicas(d) + max_surge(d)
    before = _annotation_int(rs, MAX_REPLICAS)
    if not before:
        before = status_count(d, "replicas")
        if before == 0:
            return 0
    return _round(replicas(rs) * max_now / before) - replicas(rs)


def get_proportion(rs: Mapping[str, Any] | None, d: Mapping[str, Any], to_add: int, added: int) -> int:
    """``GetProportion``: the replicas ``rs`` gains (or loses, negative) of ``to_add`` when
    ``added`` are already given out."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def proportional_sizes(d: Mapping[str, Any], active: Sequence[Obj]) -> list[tuple[Obj, int]]:
    """The proportional part of ``sync.go: scale``: the new size of each active ReplicaSet (those
    with replicas) of a rolling Deployment resized while several are active, in the order they are
    scaled. The difference to ``replicas + maxSurge`` (0 for no replicas) is shared by
    :func:`get_proportion`, largest first (newer first when growing, older first when shrinking);
    the rounding leftover goes to the first, which stays at least 0."""
    current = sum(replicas(rs) for rs in active)
    allowed = replicas(d) + max_surge(d) if replicas(d) > 0 else 0
    to_add = allowed - current
    if to_add > 0:
        ordered = sort_by_size_newer(active)
    elif to_add < 0:
        ordered = sort_by_size_older(active)
    else:
        ordered = list(active)
    added = 0
    sizes: list[int] = []
    for rs in ordered:
        proportion = get_proportion(rs, d, to_add, added)
        sizes.append(replicas(rs) + proportion)
        added += proportion
    if ordered and to_add != 0:
        sizes[0] = max(0, sizes[0] + to_add - added)
    return list(zip(ordered, sizes, strict=True))


def has_progress_deadline(d: Mapping[str, Any]) -> bool:
    """``HasProgressDeadline``: ``progressDeadlineSeconds`` is not MaxInt32 (unset reads as
    apps/v1's default of 600 s)."""
    return _progress_deadline(d) != _MAX_INT32


def _progress_deadline(d: Mapping[str, Any]) -> int:
    value = mapping_field(d, "spec").get("progressDeadlineSeconds")
    return DEFAULT_PROGRESS_DEADLINE if value is None else int(value)


def get_condition(status: Mapping[str, Any], ctype: str) -> Obj | None:
    """``GetDeploymentCondition``."""
    for cond in status.get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == ctype:
            return dict(cond)
    return None


def new_condition(ctype: str, status: str, reason: str, message: str, now: float) -> Obj:
    """``NewDeploymentCondition`` at ``now`` (epoch seconds)."""
    t = rfc3339(now)
    return {
        "type": ctype,
        "status": status,
        "lastUpdateTime": t,
        "lastTransitionTime": t,
        "reason": reason,
        "message": message,
    }


def set_condition(status: Obj, condition: Obj) -> None:
    """``SetDeploymentCondition`` (in place): nothing when a condition of the type has the same
    status and reason; else it replaces it at the end of the list (keeping its
    ``lastTransitionTime`` when the status is unchanged)."""
    current = get_condition(status, condition["type"])
    if current is not None and (current.get("status"), current.get("reason")) == (
        condition["status"],
        condition["reason"],
    ):
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, condition["type"])
    status["conditions"] = [*status.get("conditions", []), condition]


def remove_condition(status: Obj, ctype: str) -> None:
    """``RemoveDeploymentCondition`` (in place)."""
    status["conditions"] = [
        c for c in status.get("conditions") or [] if isinstance(c, Mapping) and c.get("type") != ctype
    ]


def deployment_complete(d: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """``DeploymentComplete``: every replica updated and available, no old one left, and the
    current generation observed."""
    want = replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(_meta(d).get("generation") or 1)
    )


def deployment_progressing(d: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``DeploymentProgressing``: ``new`` status has more updated, ready or available replicas, or
    fewer old ones, than the Deployment's current status."""
    old = mapping_field(d, "status")

    def n(s: Mapping[str, Any], key: str) -> int:
        return int(s.get(key) or 0)

    return (
        n(new, "updatedReplicas") > n(old, "updatedReplicas")
        or n(new, "replicas") - n(new, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
        or n(new, "readyReplicas") > n(old, "readyReplicas")
        or n(new, "availableReplicas") > n(old, "availableReplicas")
    )


def deployment_timed_out(d: Mapping[str, Any], new: Mapping[str, Any], now: float) -> bool:
    """``DeploymentTimedOut``: the ``Progressing`` condition of ``new`` was last updated more than
    ``progressDeadlineSeconds`` before ``now`` (never after a completed rollout; always once
    ``ProgressDeadlineExceeded``)."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(new, "Progressing")
    if cond is None or cond.get("reason") == "NewReplicaSetAvailable":
        return False
    if cond.get("reason") == "ProgressDeadlineExceeded":
        return True
    try:
        since = parse_rfc3339(str(cond.get("lastUpdateTime")))
    except ValueError:
        return False
    return since + _progress_deadline(d) < now


def progress_deadline(d: Mapping[str, Any]) -> int:
    """``progressDeadlineSeconds`` (seconds; apps/v1's default 600 when unset)."""
    return _progress_deadline(d)
