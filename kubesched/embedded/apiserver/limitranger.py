"""The ``LimitRanger`` admission plugin's defaulting: containers without requests or limits get
the defaults of their namespace's LimitRanges, as
``plugin/pkg/admission/limitranger/admission.go`` does (``defaultContainerResourceRequirements``,
``mergeContainerResources``, ``mergePodResourceRequirements``), with the LimitRange defaults of
``pkg/apis/core/v1/defaults.go: SetDefaults_LimitRangeItem`` (a ``Container`` item's ``default``
falls back to its ``max``, its ``defaultRequest`` to its ``default``, then to its ``min``).

For each ``Container`` item of each LimitRange of the pod's namespace (in name order), every
container and init container missing a request (a limit) of a resource the item has a
``defaultRequest`` (``default``) for gets it, and the pod is annotated
``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu request for container c; ...``.

Not modelled: the ``Pod`` and ``PersistentVolumeClaim`` item types, and enforcing ``min``, ``max``
and ``maxLimitRequestRatio`` (upstream refuses such pods with 403).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.embedded.store import MemoryCluster

__all__ = ["LIMIT_RANGER_ANNOTATION", "apply_limit_ranges", "container_defaults"]

Obj = dict[str, Any]

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"


def container_defaults(item: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(defaultRequest, default)`` of a ``Container`` LimitRange item after
    ``SetDefaults_LimitRangeItem``."""
    default = dict(item.get("default") or {})
    for key, value in (item.get("max") or {}).items():
        default.setdefault(key, value)
    request = dict(item.get("defaultRequest") or {})
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (item.get("min") or {}).items():
        request.setdefault(key, value)
    return request, default


def apply_limit_ranges(pod: Obj, cluster: MemoryCluster) -> Obj:
    """``pod`` with the LimitRange defaults of its namespace (unchanged when there is none)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    items = [
        item
        for lr in cluster.list("LimitRange", namespace).items
        for item in ((lr.get("spec") or {}).get("limits") or [])
        if isinstance(item, Mapping) and item.get("type") == "Container"
    ]
    if not items:
        return pod
    spec = dict(pod.get("spec") or {})
    notes: list[str] = []
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        out = []
        for c in containers:
            if not isinstance(c, Mapping):
                out.append(c)
                continue
            c = dict(c)
            resources = dict(c.get("resources") or {})
            requests = dict(resources.get("requests") or {})
            limits = dict(resources.get("limits") or {})
            what = f"{'init container' if field == 'initContainers' else 'container'} {c.get('name')}"
            for item in items:
                default_request, default_limit = container_defaults(item)
                for key, value in default_request.items():
                    if key not in requests:
                        requests[key] = value
                        notes.append(f"{key} request for {what}")
                for key, value in default_limit.items():
                    if key not in limits:
                        limits[key] = value
                        notes.append(f"{key} limit for {what}")
            if requests:
                resources["requests"] = requests
            if limits:
                resources["limits"] = limits
            c["resources"] = resources
            out.append(c)
        spec[field] = out
    if not notes:
        return pod
    meta = dict(pod.get("metadata") or {})
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        LIMIT_RANGER_ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes),
    }
    return {**pod, "metadata": meta, "spec": spec}
