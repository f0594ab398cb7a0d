"""Server-side ``Table`` output (``meta.k8s.io/v1``), as kube-apiserver answers
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` -- what ``kubectl get`` asks for, so that
``kubectl get pods -o wide`` shows READY, STATUS, IP, NODE, ... and not just NAME and AGE.

Columns and cells follow kube-apiserver's printers (``pkg/printers/internalversion/printers.go``:
``printPod``, ``printNode``, ``printEvent``, ``printNamespace``, ``printLease``,
``printPriorityClass``; the workload kinds in ``workload_tables``, the ``resource.k8s.io`` kinds in
``dra_tables``); other resources get ``Name`` and ``Age``. The server always fills every
column (``GenerateOptions{Wide: true}``); kubectl hides the columns of priority 1 unless
``-o wide``. Ages are ``duration.HumanDuration`` of ``k8s.io/apimachinery/pkg/util/duration``.
Each row carries the object as ``includeObject`` asks: ``Metadata`` (default,
``PartialObjectMetadata``), ``Object`` (the whole object) or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.embedded.apiserver.dra_tables import dra_printers
from kubesched.embedded.apiserver.events import to_core
from kubesched.embedded.apiserver.workload_tables import workload_printers

__all__ = ["human_duration", "table_version", "to_table"]

Obj = dict[str, Any]
Cells = list[Any]

_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically."
)
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is represented in RFC3339 form and is in UTC."
)


def _col(name: str, description: str, priority: int = 0, type_: str = "string", fmt: str = "") -> Obj:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME = _col("Name", _NAME_DOC, fmt="name")
_AGE = _col("Age", _AGE_DOC)


def table_version(accept: str) -> str | None:
    """``v1``/``v1beta1`` when ``accept`` (an HTTP Accept header) asks for a ``meta.k8s.io``
    Table in JSON (first such entry wins), else None."""
    for entry in accept.split(","):
        parts = [p.strip() for p in entry.split(";")]
        if parts[0].lower() not in ("application/json", "*/*"):
            continue
        params = {}
        for p in parts[1:]:
            key, _, value = p.partition("=")
            params[key.strip().lower()] = value.strip()
        if (
            params.get("as") == "Table"
            and params.get("g") == "meta.k8s.io"
            and params.get("v") in ("v1", "v1beta1")
        ):
            return params["v"]
    return None


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ``45s``, ``3m20s``, ``2d4h``, ... (``<invalid>`` below -1 s)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _since(ts: Any, now: float) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing timestamp."""
    if not ts:
        return "<unknown>"
    try:
        return human_duration(now - parse_rfc3339(str(ts)))
    except ValueError:
        return "<unknown>"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


# ----------------------------------------------------------------------------- pods

_POD_COLUMNS = [
    _NAME,
    _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", "The aggregate status of the containers in this pod."),
    _col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    _AGE,
    _col(
        "IP",
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
        "allocated.",
        1,
    ),
    _col(
        "Node",
        "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for "
        "scheduling by the scheduler defined in schedulerName.",
        1,
    ),
    _col(
        "Nominated Node",
        "nominatedNodeName is set when this pod preempts other pods on the node, but it cannot "
        "be scheduled right away as preemption victims receive their graceful termination "
        "periods.",
        1,
    ),
    _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", 1),
]


def _restartable(container: Mapping[str, Any] | None) -> bool:
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _pod_cells(pod: Obj, now: float) -> Cells:
    """``printPod``."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = restarts = restartable_restarts = 0
    last_restart = last_restartable_restart = ""
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or "") or phase
    conditions = status.get("conditions") or []
    for cond in conditions:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    def finished(cs: Mapping[str, Any]) -> str:
        return str((((cs.get("lastState") or {}).get("terminated")) or {}).get("finishedAt") or "")

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        restarts += int(cs.get("restartCount") or 0)
        last_restart = max(last_restart, finished(cs))
        restartable = _restartable(init_specs.get(cs.get("name")))
        if restartable:
            restartable_restarts += int(cs.get("restartCount") or 0)
            last_restartable_restart = max(last_restartable_restart, finished(cs))
        state = cs.get("state") or {}
        term = state.get("terminated")
        waiting = state.get("waiting")
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if restartable and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                signal = int(term.get("signal") or 0)
                reason = (
                    f"Init:Signal:{signal}" if signal else f"Init:ExitCode:{int(term.get('exitCode') or 0)}"
                )
            else:
                reason = "Init:" + str(term["reason"])
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conditions)
    if not initializing or initialized:
        restarts, last_restart = restartable_restarts, last_restartable_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            last_restart = max(last_restart, finished(cs))
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif term is not None and term.get("reason"):
                reason = str(term["reason"])
            elif term is not None:
                signal = int(term.get("signal") or 0)
                reason = f"Signal:{signal}" if signal else f"ExitCode:{int(term.get('exitCode') or 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            ready_cond = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            reason = "Running" if ready_cond else "NotReady"
    meta = _meta(pod)
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart:
        restarts_text = f"{restarts} ({_since(last_restart, now)} ago)"
    ips = status.get("podIPs") or []
    ip = str((ips[0] or {}).get("ip") or "") if ips else ""
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        true = 0
        for gate in gates:
            for cond in conditions:
                if cond.get("type") == gate.get("conditionType"):
                    true += cond.get("status") == "True"
                    break
        gates_text = f"{true}/{len(gates)}"
    return [
        meta.get("name"),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _since(meta.get("creationTimestamp"), now),
        ip or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


# ----------------------------------------------------------------------------- nodes

_NODE_COLUMNS = [
    _NAME,
    _col("Status", "The status of the node"),
    _col("Roles", "The roles of the node"),
    _AGE,
    _col("Version", "Kubelet Version reported by the node."),
    _col(
        "Internal-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        1,
    ),
    _col(
        "External-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        1,
    ),
    _col(
        "OS-Image",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        1,
    ),
    _col(
        "Kernel-Version",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        1,
    ),
    _col(
        "Container-Runtime",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        1,
    ),
]


def _node_cells(node: Obj, now: float) -> Cells:
    """``printNode``."""
    meta = _meta(node)
    status = node.get("status") or {}
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    states = []
    ready = conds.get("Ready")
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (meta.get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        for a in status.get("addresses") or []:
            if a.get("type") == kind:
                return str(a.get("address") or "")
        return "<none>"

    return [
        meta.get("name"),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        str(info.get("kubeletVersion") or ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# ----------------------------------------------------------------------------- events

_EVENT_COLUMNS = [
    _col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    _col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
    _col(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the "
        "transition into the object's current status.",
    ),
    _col("Object", "The object that this event is about."),
    _col(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should "
        "contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
        1,
    ),
    _col("Source", "The component reporting this event. Should be a short machine understandable string.", 1),
    _col("Message", "A human-readable description of the status of this operation."),
    _col(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
    ),
    _col("Count", "The number of times this event has occurred.", 1),
    _col("Name", _NAME_DOC, 1, fmt="name"),
]


def _event_cells(event: Obj, now: float) -> Cells:
    """``printEvent`` (events.k8s.io/v1 Events are printed from their core/v1 form, as upstream
    prints both from the internal type)."""
    ev = to_core(event) if "regarding" in event or "note" in event else event
    first = (
        _since(ev.get("firstTimestamp"), now)
        if ev.get("firstTimestamp")
        else _since(ev.get("eventTime"), now)
    )
    last = _since(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = int(ev.get("count") or 0)
    series = ev.get("series")
    if series:
        last = _since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    instance = source.get("host") or ev.get("reportingInstance") or ""
    return [
        last,
        ev.get("type") or "",
        ev.get("reason") or "",
        target,
        involved.get("fieldPath") or "",
        f"{component}, {instance}" if instance else component,
        str(ev.get("message") or "").strip(),
        first,
        count,
        _meta(ev).get("name"),
    ]


# ----------------------------------------------------------------------------- others

_NAMESPACE_COLUMNS = [_NAME, _col("Status", "The status of the namespace"), _AGE]
_LEASE_COLUMNS = [_NAME, _col("Holder", "The holder of the lease"), _AGE]
_PRIORITY_CLASS_COLUMNS = [
    _NAME,
    _col("Value", "Value is the integer value of this priority class.", type_="integer"),
    _col(
        "Global-Default",
        "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
        type_="boolean",
    ),
    _AGE,
    _col("PreemptionPolicy", "PreemptionPolicy is the Policy for preempting pods with lower priority."),
]
_DEFAULT_COLUMNS = [_NAME, _AGE]


def _namespace_cells(ns: Obj, now: float) -> Cells:
    meta = _meta(ns)
    return [
        meta.get("name"),
        (ns.get("status") or {}).get("phase") or "",
        _since(meta.get("creationTimestamp"), now),
    ]


def _lease_cells(lease: Obj, now: float) -> Cells:
    meta = _meta(lease)
    return [
        meta.get("name"),
        (lease.get("spec") or {}).get("holderIdentity") or "",
        _since(meta.get("creationTimestamp"), now),
    ]


def _priority_class_cells(pc: Obj, now: float) -> Cells:
    meta = _meta(pc)
    return [
        meta.get("name"),
        int(pc.get("value") or 0),
        bool(pc.get("globalDefault")),
        _since(meta.get("creationTimestamp"), now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


def _default_cells(obj: Obj, now: float) -> Cells:
    meta = _meta(obj)
    return [meta.get("name"), _since(meta.get("creationTimestamp"), now)]


_PRINTERS: dict[str, tuple[list[Obj], Callable[[Obj, float], Cells]]] = {
    "Pod": (_POD_COLUMNS, _pod_cells),
    "Node": (_NODE_COLUMNS, _node_cells),
    "Event": (_EVENT_COLUMNS, _event_cells),
    "Namespace": (_NAMESPACE_COLUMNS, _namespace_cells),
    "Lease": (_LEASE_COLUMNS, _lease_cells),
    "PriorityClass": (_PRIORITY_CLASS_COLUMNS, _priority_class_cells),
    **workload_printers(_since),
    **dra_printers(_since),
}


def _row_object(obj: Obj, include: str, version: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata"),
    }


def to_table(
    kind: str,
    items: Iterable[Obj],
    list_meta: Mapping[str, Any],
    now: float,
    *,
    version: str = "v1",
    include_object: str = "Metadata",
) -> Obj:
    """The ``Table`` of ``items`` (served objects of ``kind``) at epoch seconds ``now``.
    ``list_meta``: the ListMeta to carry (``resourceVersion``, ``continue``, ...);
    ``include_object``: ``Metadata``, ``Object`` or ``None``. Raises ValueError for another
    ``include_object``."""
    if include_object not in ("Metadata", "Object", "None"):
        raise ValueError(
            f'includeObject: Unsupported value: "{include_object}": supported values: '
            '"None", "Metadata", "Object"'
        )
    columns, cells = _PRINTERS.get(kind, (_DEFAULT_COLUMNS, _default_cells))
    rows = []
    for obj in items:
        try:
            row: Obj = {"cells": cells(obj, now)}
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            # an object loaded with a malformed field (``serve -f``): its name, the rest unknown,
            # so that one object never fails the whole list
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, Mapping) else None
            row = {"cells": [str(name or "")] + ["<unknown>"] * (len(columns) - 1)}
        ro = _row_object(obj, include_object, version)
        if ro is not None:
            row["object"] = ro
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": dict(list_meta),
        "columnDefinitions": columns,
        "rows": rows,
    }
