"""The ``scale`` subresource of Deployments, ReplicaSets and StatefulSets: an ``autoscaling/v1``
``Scale`` view of the object (``pkg/registry/apps/deployment/storage/storage.go``: ``ScaleREST``,
``scaleFromDeployment``), which ``kubectl scale`` and the HorizontalPodAutoscaler read and write.

``spec.replicas`` is the object's ``spec.replicas`` (default 1); ``status.replicas`` its
``status.replicas`` (0 when unset); ``status.selector`` its ``spec.selector`` in label-selector
text (``metav1.LabelSelectorAsSelector(...).String()``: requirements sorted by key, ``k=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.embedded.apiserver.status import invalid

__all__ = ["format_label_selector", "replicas_from_scale", "to_scale"]

Obj = dict[str, Any]


def format_label_selector(selector: Any) -> str:
    """Text of a ``metav1.LabelSelector`` (``""`` for an empty or missing one)."""
    if not isinstance(selector, Mapping):
        return ""
    reqs: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        reqs.append((str(key), f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, Mapping):
            continue
        key, op = str(expr.get("key")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(str(op), f"{key} {op}")
        reqs.append((key, text))
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))


def to_scale(obj: Mapping[str, Any]) -> Obj:
    """The ``Scale`` of a Deployment, ReplicaSet or StatefulSet."""
    meta = obj.get("metadata") or {}
    spec: Mapping[str, Any] = obj["spec"] if isinstance(obj.get("spec"), Mapping) else {}
    status: Mapping[str, Any] = obj["status"] if isinstance(obj.get("status"), Mapping) else {}
    replicas = spec.get("replicas")
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": 1 if replicas is None else replicas},
        "status": {
            "replicas": status.get("replicas") or 0,
            "selector": format_label_selector(spec.get("selector")),
        },
    }


def replicas_from_scale(scale: Any, name: str) -> int:
    """``spec.replicas`` of a ``Scale`` body. Raises ApiError 422 Invalid
    (``Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than
    or equal to 0``, with NewInvalid's details)."""
    spec = scale.get("spec") if isinstance(scale, Mapping) else None
    replicas = spec.get("replicas", 0) if isinstance(spec, Mapping) else 0
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise invalid(
            "Scale",
            "autoscaling",
            name,
            [("spec.replicas", f"Invalid value: {replicas!r}: must be greater than or equal to 0")],
        )
    return replicas
