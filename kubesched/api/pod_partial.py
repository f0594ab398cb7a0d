"""What can be read of a Pod that does not parse.

A bound pod the scheduler cannot parse still occupies its node: dropping it would make the node
look free. :func:`readable_pod` keeps every part of the pod that parses: it removes the field an
error names (a bad toleration, a host port of the wrong type, an affinity term with a bad
operator, ...) from a copy and parses again, until the rest parses. When a removed field is part
of the pod's resource requests (a container's ``resources``, ``spec.overhead``,
``spec.resources``, or a whole container), the requests cannot be trusted and the pod is given
:data:`UNREADABLE_REQUEST` of CPU, memory and ephemeral storage, so its node is full for new pods
until the pod changes (never empty). Such a pod is never a preemption victim: its priority is
taken as :data:`UNREADABLE_PRIORITY` (the scheduler does not delete what it cannot read). The first
error is kept for reporting.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.pod import Pod
from kubesched.errors import ManifestError

__all__ = ["UNREADABLE_PRIORITY", "UNREADABLE_REQUEST", "ReadablePod", "readable_pod"]

#: Request given to each of cpu (millicores), memory and ephemeral-storage (bytes) of a pod whose
#: requests cannot be read: more than any node has, small enough that sums stay exact in int64.
UNREADABLE_REQUEST = 2**50
_UNREADABLE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
#: Priority of a pod that did not parse: the highest int32, above every preemptor's.
UNREADABLE_PRIORITY = 2**31 - 1
#: removals before giving up on the spec and keeping only the pod's identity and node
_MAX_REMOVALS = 64
_REQUEST_PATH = re.compile(
    r"^spec\.(?:overhead|resources)|^spec\.(?:init)?[cC]ontainers(?:\[\d+\](?:\.resources.*)?)?$"
)


@dataclass(frozen=True, slots=True)
class ReadablePod:
    """``pod``: the readable part; ``error``: the first parse error (None if the pod parsed);
    ``requests_unreadable``: the pod counts as :data:`UNREADABLE_REQUEST` of each resource."""

    pod: Pod
    error: ManifestError | None
    requests_unreadable: bool


def _split(path: str, value: Any) -> list[str | int]:
    """Resolve a rendered field path (``spec.containers[0].resources.requests.nvidia.com/gpu``)
    against ``value`` as far as it exists (a missing field resolves to its parent); dict keys may
    contain dots, so the longest key present wins."""
    parts: list[str | int] = []
    rest = path
    cur = value
    while rest:
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0 or not isinstance(cur, list):
                return parts
            try:
                i = int(rest[1:end])
            except ValueError:
                return parts
            if not 0 <= i < len(cur):
                return parts
            parts.append(i)
            cur = cur[i]
            rest = rest[end + 1 :]
            if rest.startswith("."):
                rest = rest[1:]
            continue
        if not isinstance(cur, Mapping):
            return parts
        best = None
        for k in cur:
            ks = str(k)
            if (
                rest == ks
                or (rest.startswith(ks) and rest[len(ks)] in ".[")
                and (best is None or len(ks) > len(str(best)))
            ):
                best = k
        if best is None:
            return parts
        parts.append(best)
        cur = cur[best]
        rest = rest[len(str(best)) :]
        if rest.startswith("."):
            rest = rest[1:]
    return parts


def _remove(obj: Any, parts: list[str | int]) -> None:
    parent = obj
    for p in parts[:-1]:
        parent = parent[p]
    del parent[parts[-1]]


def _identity(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The pod reduced to what any pod has: name, namespace, uid, resourceVersion, node,
    scheduler name, phase and conditions."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    status = obj.get("status")
    status = status if isinstance(status, Mapping) else {}
    keep_meta = {
        k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion") if isinstance(meta.get(k), str)
    }
    if "name" not in keep_meta:
        keep_meta["name"] = "unknown"
    out_spec: dict[str, Any] = {"containers": [{"name": "unreadable"}]}
    for k in ("nodeName", "schedulerName"):
        if isinstance(spec.get(k), str):
            out_spec[k] = spec[k]
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": keep_meta, "spec": out_spec}
    out_status: dict[str, Any] = {}
    if isinstance(status.get("phase"), str):
        out_status["phase"] = status["phase"]
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        out_status["conditions"] = [c for c in conditions if isinstance(c, Mapping)]
    if out_status:
        out["status"] = out_status
    return out


def readable_pod(obj: Mapping[str, Any]) -> ReadablePod:
    """Parse ``obj`` keeping what can be read (see module docstring). Never raises for any
    ``obj`` that is a mapping."""
    try:
        return ReadablePod(Pod.from_manifest(obj), None, False)
    except ManifestError as e:
        first = e
    work: Any = copy.deepcopy(dict(obj))
    unreadable = False
    err: ManifestError = first
    pod: Pod | None = None
    for _ in range(_MAX_REMOVALS):
        parts = _split(err.path, work)
        if len(parts) < 2 or parts[0] not in ("metadata", "spec", "status"):
            break
        if _REQUEST_PATH.match(err.path):
            unreadable = True
        _remove(work, parts)
        try:
            pod = Pod.from_manifest(work)
            break
        except ManifestError as e:
            err = e
    if pod is None:
        unreadable = True
        pod = Pod.from_manifest(_identity(obj))
    if unreadable:
        huge = dict(pod.requests)
        huge.update({r: UNREADABLE_REQUEST for r in _UNREADABLE_RESOURCES})
        pod.requests = huge
        nz = dict(pod.non_zero_requests)
        nz.update({r: UNREADABLE_REQUEST for r in _UNREADABLE_RESOURCES})
        pod.non_zero_requests = nz
    pod.priority = UNREADABLE_PRIORITY
    pod.raw = obj  # type: ignore[assignment]
    return ReadablePod(pod, first, unreadable)
