"""``kubectl get`` columns of the ``resource.k8s.io`` kinds, as kube-apiserver's
``pkg/printers/internalversion/printers.go`` prints them: ``printDeviceClass`` and
``printResourceClaimTemplate`` (Name, Age), ``printResourceClaim`` (Name, State, Age; the state from
``resourceClaimState``) and ``printResourceSlice`` (Name, Node, Driver, Pool, Age). None of them has
``-o wide`` columns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["dra_printers", "resource_claim_state"]

Obj = dict[str, Any]
Cells = list[Any]
Since = Callable[[Any, float], str]


def _col(name: str, description: str, fmt: str = "") -> Obj:
    return {"name": name, "type": "string", "format": fmt, "description": description, "priority": 0}


_NAME = _col(
    "Name",
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically.",
    "name",
)
_AGE = _col(
    "Age",
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is represented in RFC3339 form and is in UTC.",
)
_STATE = _col("State", "A summary of the current state (allocated, pending, reserved, etc.).")
_NODE = _col(
    "Node",
    "NodeName identifies the node which provides the resources in this pool. A field selector can be used "
    "to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit "
    "access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that "
    "adding new nodes of the same type as some old node might also make new resources available.\n\n"
    "Exactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field "
    "is immutable.",
)
_DRIVER = _col(
    "Driver",
    "Driver identifies the DRA driver providing the capacity information. A field selector can be used "
    "to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should "
    "end with a DNS domain owned by the vendor of the driver. This field is immutable.",
)
_POOL = _col(
    "Pool",
    "Name is used to identify the pool. For node-local devices, this is often the node name, but this is "
    "not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS "
    "sub-domains separated by slashes. This field is immutable.",
)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def resource_claim_state(claim: Mapping[str, Any]) -> str:
    """``resourceClaimState``: ``deleted`` while being deleted, then ``pending`` (not allocated and
    not being deleted) or ``allocated`` plus ``reserved`` when ``status.reservedFor`` is not empty;
    joined with commas (``allocated,reserved``, ``deleted,allocated``)."""
    deleting = bool(_meta(claim).get("deletionTimestamp"))
    status = claim.get("status") or {}
    states = ["deleted"] if deleting else []
    if status.get("allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def dra_printers(since: Since) -> dict[str, tuple[list[Obj], Callable[[Obj, float], Cells]]]:
    """Columns and cell functions per kind; ``since(timestamp, now)`` is ``translateTimestampSince``."""

    def name_age(obj: Obj, now: float) -> Cells:
        meta = _meta(obj)
        return [meta.get("name"), since(meta.get("creationTimestamp"), now)]

    def claim(obj: Obj, now: float) -> Cells:
        meta = _meta(obj)
        return [meta.get("name"), resource_claim_state(obj), since(meta.get("creationTimestamp"), now)]

    def slice_(obj: Obj, now: float) -> Cells:
        meta = _meta(obj)
        spec = obj.get("spec") or {}
        return [
            meta.get("name"),
            str(spec.get("nodeName") or ""),
            str(spec.get("driver") or ""),
            str((spec.get("pool") or {}).get("name") or ""),
            since(meta.get("creationTimestamp"), now),
        ]

    return {
        "DeviceClass": ([_NAME, _AGE], name_age),
        "ResourceClaim": ([_NAME, _STATE, _AGE], claim),
        "ResourceClaimTemplate": ([_NAME, _AGE], name_age),
        "ResourceSlice": ([_NAME, _NODE, _DRIVER, _POOL, _AGE], slice_),
    }
