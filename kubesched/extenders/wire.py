"""JSON shapes exchanged with an HTTP extender (``staging/src/k8s.io/kube-scheduler/extender/v1/types.go``).

The Go structs have **no JSON tags**, so keys are the capitalised Go field names (``Pod``,
``NodeNames``, ``FailedAndUnresolvableNodes``...). Embedded Kubernetes objects (Pod, NodeList)
use their normal API JSON. Encoding follows ``encoding/json``: nil pointers/maps/slices are
``null``, and every field is present. Decoding follows it too: a key matches a field exactly or,
failing that, case-insensitively; missing fields keep their zero value; a wrong JSON type is an
error (:class:`WireError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.pod import Pod


class WireError(ValueError):
    """A response body does not decode into the expected Go type."""


def node_list(nodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``*v1.NodeList`` built from node manifests as the scheduler sends it:
    ``{"metadata": {}, "items": [...]}`` (``kind``/``apiVersion`` are omitempty and unset)."""
    return {"metadata": {}, "items": [dict(n) for n in nodes] if nodes else None}


def extender_args(
    pod: Pod, nodes: Sequence[Mapping[str, Any]] | None, node_names: Sequence[str] | None
) -> dict[str, Any]:
    """``ExtenderArgs``: ``{"Pod", "Nodes", "NodeNames"}`` (one of the last two is ``null``)."""
    return {
        "Pod": pod.raw,
        "Nodes": node_list(nodes) if nodes is not None else None,
        "NodeNames": list(node_names) if node_names is not None else None,
    }


def binding_args(pod_name: str, pod_namespace: str, pod_uid: str, node: str) -> dict[str, Any]:
    """``ExtenderBindingArgs``: ``{"PodName", "PodNamespace", "PodUID", "Node"}``."""
    return {"PodName": pod_name, "PodNamespace": pod_namespace, "PodUID": pod_uid, "Node": node}


@dataclass
class Victims:
    """``extenderv1.Victims``: victim pods of one node and how many violate a PDB."""

    pods: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


def preemption_args(pod: Pod, node_to_victims: Mapping[str, Victims], meta: bool) -> dict[str, Any]:
    """``ExtenderPreemptionArgs``. ``meta`` (nodeCacheCapable): victims as ``{"UID": uid}`` under
    ``NodeNameToMetaVictims``; else full pod manifests under ``NodeNameToVictims``."""
    if meta:
        return {
            "Pod": pod.raw,
            "NodeNameToVictims": None,
            "NodeNameToMetaVictims": {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()
            },
        }
    return {
        "Pod": pod.raw,
        "NodeNameToVictims": {
            node: {"Pods": [p.raw for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
            for node, v in node_to_victims.items()
        },
        "NodeNameToMetaVictims": None,
    }


# ---- decoding (encoding/json semantics) --------------------------------------------------------------


def go_field(obj: Mapping[str, Any], name: str) -> Any:
    """The value of Go field ``name`` in a decoded JSON object: exact key first, else the first
    key equal under case folding (``encoding/json``); ``None`` when absent."""
    if name in obj:
        return obj[name]
    low = name.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _object(v: Any, what: str) -> Mapping[str, Any] | None:
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise WireError(f"json: cannot unmarshal {_json_type(v)} into Go value of type {what}")
    return v


def _string(v: Any, what: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise WireError(f"json: cannot unmarshal {_json_type(v)} into Go struct field {what} of type string")
    return v


def _int(v: Any, what: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int | float) or (isinstance(v, float) and not v.is_integer()):
        raise WireError(f"json: cannot unmarshal {_json_type(v)} into Go struct field {what} of type int64")
    return int(v)


def _string_map(v: Any, what: str) -> dict[str, str]:
    m = _object(v, f"map[string]string ({what})")
    return {str(k): _string(x, what) for k, x in (m or {}).items()}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return f"number {v}"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, Mapping):
        return "object"
    return "null"


@dataclass
class FilterResult:
    """``ExtenderFilterResult``. ``nodes`` are node manifests (``Nodes.items``) or None;
    ``node_names`` None when the field was null/absent."""

    nodes: list[Mapping[str, Any]] | None
    node_names: list[str] | None
    failed_nodes: dict[str, str]
    failed_and_unresolvable_nodes: dict[str, str]
    error: str


def decode_filter_result(body: Any) -> FilterResult:
    """Decode an ``ExtenderFilterResult``. Raises :class:`WireError`."""
    obj = _object(body, "v1.ExtenderFilterResult") or {}
    nodes_obj = _object(go_field(obj, "Nodes"), "v1.NodeList")
    nodes: list[Mapping[str, Any]] | None = None
    if nodes_obj is not None:
        items = go_field(nodes_obj, "items")
        if items is not None and not isinstance(items, list):
            raise WireError("json: cannot unmarshal into Go struct field NodeList.items of type []v1.Node")
        nodes = []
        for it in items or []:
            if not isinstance(it, Mapping):
                raise WireError(f"json: cannot unmarshal {_json_type(it)} into Go value of type v1.Node")
            nodes.append(it)
    names_raw = go_field(obj, "NodeNames")
    names: list[str] | None = None
    if names_raw is not None:
        if not isinstance(names_raw, list):
            raise WireError(
                f"json: cannot unmarshal {_json_type(names_raw)} into Go struct field "
                "ExtenderFilterResult.NodeNames of type []string"
            )
        names = [_string(n, "ExtenderFilterResult.NodeNames") for n in names_raw]
    return FilterResult(
        nodes,
        names,
        _string_map(go_field(obj, "FailedNodes"), "ExtenderFilterResult.FailedNodes"),
        _string_map(
            go_field(obj, "FailedAndUnresolvableNodes"), "ExtenderFilterResult.FailedAndUnresolvableNodes"
        ),
        _string(go_field(obj, "Error"), "ExtenderFilterResult.Error"),
    )


def decode_host_priority_list(body: Any) -> list[tuple[str, int]]:
    """Decode a ``HostPriorityList`` into ``[(host, score), ...]`` (order kept). Raises :class:`WireError`."""
    if body is None:
        return []
    if not isinstance(body, list):
        raise WireError(
            f"json: cannot unmarshal {_json_type(body)} into Go value of type v1.HostPriorityList"
        )
    out = []
    for e in body:
        o = _object(e, "v1.HostPriority") or {}
        out.append(
            (
                _string(go_field(o, "Host"), "HostPriority.Host"),
                _int(go_field(o, "Score"), "HostPriority.Score"),
            )
        )
    return out


def decode_error_result(body: Any, type_name: str) -> str:
    """The ``Error`` field of ``ExtenderBindingResult`` (or any ``{Error}`` result)."""
    obj = _object(body, f"v1.{type_name}") or {}
    return _string(go_field(obj, "Error"), f"{type_name}.Error")


def decode_meta_victims(body: Any) -> dict[str, tuple[list[str], int]] | None:
    """Decode ``ExtenderPreemptionResult.NodeNameToMetaVictims`` into ``{node: ([uid...], numPDBViolations)}``
    (``None`` when null; a null entry decodes as no pods). Raises :class:`WireError`."""
    obj = _object(body, "v1.ExtenderPreemptionResult") or {}
    m = _object(go_field(obj, "NodeNameToMetaVictims"), "map[string]*v1.MetaVictims")
    if m is None:
        return None
    out: dict[str, tuple[list[str], int]] = {}
    for node, mv in m.items():
        mvo = _object(mv, "v1.MetaVictims") or {}
        pods_raw = go_field(mvo, "Pods")
        if pods_raw is not None and not isinstance(pods_raw, list):
            raise WireError(
                f"json: cannot unmarshal {_json_type(pods_raw)} into Go struct field "
                "MetaVictims.Pods of type []*v1.MetaPod"
            )
        uids = [
            _string(go_field(_object(p, "v1.MetaPod") or {}, "UID"), "MetaPod.UID") for p in pods_raw or []
        ]
        out[str(node)] = (uids, _int(go_field(mvo, "NumPDBViolations"), "MetaVictims.NumPDBViolations"))
    return out
