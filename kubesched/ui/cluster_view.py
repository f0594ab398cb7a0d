"""The cluster view's rows: nodes with allocation per resource, taints, zone and images; pods by
status with filters, pending ones first.

Allocation is what the scheduler accounts (``pkg/scheduler/framework/types.go: NodeInfo.Requested``):
the sum over the node's non-terminal pods of the pod request (containers summed, init containers
maxed, overhead added), against ``status.allocatable``. Units: ``cpu`` millicores, memory and
storage bytes, ``pods`` a count, extended resources their integer amount.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.embedded.selector import compile_selector
from kubesched.errors import ManifestError

__all__ = [
    "PodStatus",
    "STATUS_ORDER",
    "node_rows",
    "pod_parser",
    "pod_rows",
    "filter_pods",
    "live_pod_status",
    "page",
]

Obj = Mapping[str, Any]

#: pods are listed in this status order (pending kinds first), then by namespace/name
STATUS_ORDER = (
    "Unschedulable",
    "Error",
    "Pending",
    "Gated",
    "Preempted",
    "Ignored",
    "Scheduled",
    "Running",
    "Bound",
    "Succeeded",
    "Failed",
)
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
MAX_IMAGES = 50


@dataclass(frozen=True)
class PodStatus:
    """A pod's status as the page shows it, with the exact upstream message when it is not bound."""

    status: str
    message: str = ""
    attempts: int = 0


def live_pod_status(obj: Obj) -> PodStatus:
    """Status of a pod object of a live cluster: its phase once bound; unbound, the PodScheduled
    condition's reason (``Unschedulable``, ``SchedulerError`` shown as ``Error``,
    ``SchedulingGated`` as ``Gated``) with its message, else ``Pending``."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    phase = status.get("phase") or "Pending"
    if spec.get("nodeName"):
        return PodStatus("Running" if phase == "Running" else ("Bound" if phase == "Pending" else phase))
    if phase in ("Succeeded", "Failed"):
        return PodStatus(phase)
    if spec.get("schedulingGates"):
        names = ", ".join(str(g.get("name")) for g in spec["schedulingGates"])
        return PodStatus("Gated", f"waiting for scheduling gates: [{names}]")
    cond = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    if cond is not None and cond.get("status") == "False":
        reason = cond.get("reason")
        shown = {"SchedulerError": "Error", "SchedulingGated": "Gated"}.get(str(reason), "Unschedulable")
        return PodStatus(shown, str(cond.get("message") or ""))
    return PodStatus("Pending")


@dataclass(frozen=True, slots=True)
class PodFigures:
    """What the node and pod tables read of a parsed pod: ``priority`` and ``requests``
    (resource name -> amount, millicores for cpu, bytes for memory)."""

    priority: int
    requests: Mapping[str, int]


def _parse_pod(obj: Obj) -> PodFigures | None:
    """The pod's :class:`PodFigures`, or None for a malformed pod."""
    try:
        p = Pod.from_manifest(obj)
    except ManifestError:
        return None
    return PodFigures(p.priority, p.requests)


PodParser = Callable[[Obj], "PodFigures | None"]


def pod_parser(known: Iterable[Pod] = ()) -> PodParser:
    """A pod parser that parses each object once (by identity; the caller keeps the objects alive
    while it uses the parser) and keeps only its :class:`PodFigures`: :func:`node_rows` and
    :func:`pod_rows` of one listing share it, so 20,000 pods are parsed once instead of twice.
    ``known``: pods parsed already (e.g. the scheduler's own, :meth:`Run.parsed_pods
    <kubesched.ui.session.Run.parsed_pods>`); an object that is one of their ``raw`` objects is not
    parsed again. Malformed pods give None."""
    seen: dict[int, PodFigures | None] = {}
    parsed: dict[int, Pod] = {id(p.raw): p for p in known}

    def parse(obj: Obj) -> PodFigures | None:
        k = id(obj)
        if k in seen:
            return seen[k]
        q = parsed.get(k)
        if q is not None and q.raw is obj:
            p: PodFigures | None = PodFigures(q.priority, q.requests)
        else:
            p = _parse_pod(obj)
        seen[k] = p
        return p

    return parse


def node_rows(
    nodes: Iterable[Obj],
    pods: Iterable[Obj],
    parse: PodParser = _parse_pod,
    known_nodes: Iterable[Node] = (),
) -> list[dict[str, Any]]:
    """One row per node, by name: ``{"name", "zone", "region", "unschedulable", "taints": ["k=v:Effect"],
    "labels", "resources": {name: {"allocatable", "requested"}}, "pods": {"count", "allocatable"},
    "images": [{"names", "sizeBytes"}] (at most 50, as the kubelet reports), "imageCount", "ready"}``.
    Malformed nodes are listed with an ``error`` and no resources. ``parse``: the pod parser
    (e.g. one :func:`pod_parser` shared with :func:`pod_rows`); ``known_nodes``: nodes parsed already
    (e.g. the scheduler's own), whose ``raw`` objects are not parsed again."""
    parsed_nodes = {id(n.raw): n for n in known_nodes}
    requested: dict[str, dict[str, int]] = {}
    counts: dict[str, int] = {}
    for obj in pods:
        node = (obj.get("spec") or {}).get("nodeName")
        if not node or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        counts[node] = counts.get(node, 0) + 1
        p = parse(obj)
        if p is None:
            continue
        acc = requested.setdefault(node, {})
        for res, v in p.requests.items():
            acc[res] = acc.get(res, 0) + v
    rows = []
    for obj in nodes:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name"))
        labels = meta.get("labels") or {}
        row: dict[str, Any] = {
            "name": name,
            "zone": labels.get(ZONE_LABEL, ""),
            "region": labels.get(REGION_LABEL, ""),
            "labels": dict(labels),
        }
        try:
            known = parsed_nodes.get(id(obj))
            n = known if known is not None and known.raw is obj else Node.from_manifest(obj)
        except ManifestError as e:
            row.update(
                {
                    "error": str(e),
                    "resources": {},
                    "taints": [],
                    "images": [],
                    "imageCount": 0,
                    "pods": {"count": counts.get(name, 0), "allocatable": 0},
                    "unschedulable": False,
                    "ready": None,
                }
            )
            rows.append(row)
            continue
        req = requested.get(name, {})
        resources = {
            res: {"allocatable": v, "requested": req.get(res, 0)}
            for res, v in sorted(n.allocatable.items(), key=lambda kv: _res_order(kv[0]))
            if res != "pods"
        }
        for res, v in req.items():
            resources.setdefault(res, {"allocatable": 0, "requested": v})
        ready = next((c.get("status") == "True" for c in n.conditions if c.get("type") == "Ready"), None)
        row.update(
            {
                "unschedulable": n.unschedulable,
                "taints": [
                    f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in n.taints
                ],
                "resources": resources,
                "pods": {"count": counts.get(name, 0), "allocatable": n.allocatable.get("pods", 0)},
                "images": [
                    {"names": list(im.names), "sizeBytes": im.size_bytes} for im in n.images[:MAX_IMAGES]
                ],
                "imageCount": len(n.images),
                "ready": ready,
            }
        )
        rows.append(row)
    rows.sort(key=lambda r: r["name"])
    return rows


def _res_order(name: str) -> tuple[int, str]:
    return ({"cpu": 0, "memory": 1, "ephemeral-storage": 2}.get(name, 3), name)


def pod_rows(
    pods: Iterable[Obj], status_of: Mapping[str, PodStatus], parse: PodParser = _parse_pod
) -> list[dict[str, Any]]:
    """One row per pod: ``{"key", "namespace", "name", "node", "status", "message", "attempts",
    "labels", "priority", "requests", "nominatedNode", "schedulerName"}``; ``status_of`` overrides
    :func:`live_pod_status` per ``namespace/name`` (a simulation's outcomes). Sorted by
    :data:`STATUS_ORDER`, then key."""
    rows = []
    for obj in pods:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        st = status_of.get(key) or live_pod_status(obj)
        p = parse(obj)
        rows.append(
            {
                "key": key,
                "namespace": meta.get("namespace") or "default",
                "name": meta.get("name"),
                "node": spec.get("nodeName") or None,
                "status": st.status,
                "message": st.message,
                "attempts": st.attempts,
                "labels": dict(meta.get("labels") or {}),
                "priority": p.priority if p is not None else spec.get("priority"),
                "requests": dict(p.requests) if p is not None else {},
                "nominatedNode": (obj.get("status") or {}).get("nominatedNodeName") or None,
                "schedulerName": spec.get("schedulerName") or "default-scheduler",
            }
        )
    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    rows.sort(key=lambda r: (order.get(str(r["status"]), len(order)), str(r["key"])))
    return rows


def filter_pods(
    rows: list[dict[str, Any]],
    *,
    namespace: str | None = None,
    node: str | None = None,
    status: str | None = None,
    selector: str | None = None,
    q: str | None = None,
) -> list[dict[str, Any]]:
    """Rows matching every given filter: exact ``namespace``, exact ``node`` (``<none>``: unbound),
    ``status`` (comma-separated list), a label ``selector`` (``app=web,tier!=db,env in (a,b)``),
    ``q`` a substring of ``namespace/name``. Raises ValueError for a malformed selector."""
    out = rows
    if namespace:
        out = [r for r in out if r["namespace"] == namespace]
    if node:
        out = [r for r in out if (r["node"] or "<none>") == node]
    if status:
        wanted = {s.strip() for s in status.split(",") if s.strip()}
        out = [r for r in out if r["status"] in wanted]
    if selector:
        match = compile_selector(selector)
        out = [r for r in out if match(r["labels"])]
    if q:
        out = [r for r in out if q in r["key"]]
    return out


def page(rows: list[dict[str, Any]], offset: int, limit: int, max_limit: int = 1000) -> dict[str, Any]:
    """``{"total", "offset", "limit", "rows"}``. Raises ValueError for a bad range."""
    if limit < 1 or limit > max_limit or offset < 0:
        raise ValueError(f"limit must be 1..{max_limit} and offset >= 0")
    return {"total": len(rows), "offset": offset, "limit": limit, "rows": rows[offset : offset + limit]}
