"""``kubectl get`` columns of the workload kinds (Deployment, ReplicaSet, StatefulSet, DaemonSet,
Job) and ControllerRevisions, as ``pkg/printers/internalversion/printers.go`` prints them
(``printDeployment``, ``printReplicaSet``, ``printStatefulSet``, ``printDaemonSet``, ``printJob``,
``printControllerRevision``); ``-o wide`` adds Containers, Images and Selector to the workloads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.embedded.apiserver.scale import format_label_selector

__all__ = ["workload_printers"]

Obj = dict[str, Any]
Cells = list[Any]
Since = Callable[[Any, float], str]


def _col(name: str, description: str, priority: int = 0, type_: str = "string", fmt: str = "") -> Obj:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME = _col("Name", "Name must be unique within a namespace.", fmt="name")
_AGE = _col(
    "Age", "CreationTimestamp is a timestamp representing the server time when this object was created."
)
_WIDE = [
    _col("Containers", "Names of each container in the template.", 1),
    _col("Images", "Images referenced by each container in the template.", 1),
    _col("Selector", "Label selector for pods.", 1),
]


def _int(obj: Mapping[str, Any], section: str, key: str, default: int = 0) -> int:
    value = (obj.get(section) or {}).get(key)
    return default if value is None else int(value)


def _wide(obj: Mapping[str, Any]) -> Cells:
    spec = obj.get("spec") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [
        ",".join(str(c.get("name")) for c in containers),
        ",".join(str(c.get("image")) for c in containers),
        format_label_selector(spec.get("selector")) or "<none>",
    ]


def _job_status(job: Mapping[str, Any]) -> str:
    conds = {c.get("type"): c.get("status") for c in (job.get("status") or {}).get("conditions") or []}
    for ctype in ("Complete", "Failed", "FailureTarget", "SuccessCriteriaMet", "Suspended"):
        if conds.get(ctype) == "True":
            return ctype
    return "Running"


def _duration(job: Mapping[str, Any], now: float, since: Since) -> str:
    status = job.get("status") or {}
    start = status.get("startTime")
    if not start:
        return ""
    end = status.get("completionTime")
    if end:
        return since(start, parse_rfc3339(str(end)))
    return since(start, now)


def workload_printers(since: Since) -> dict[str, tuple[list[Obj], Callable[[Obj, float], Cells]]]:
    """Columns and cell functions by kind; ``since(timestamp, now)`` renders an age."""

    def age(obj: Mapping[str, Any], now: float) -> str:
        return since((obj.get("metadata") or {}).get("creationTimestamp"), now)

    def name(obj: Mapping[str, Any]) -> Any:
        return (obj.get("metadata") or {}).get("name")

    def deployment(d: Obj, now: float) -> Cells:
        return [
            name(d),
            f"{_int(d, 'status', 'readyReplicas')}/{_int(d, 'spec', 'replicas', 1)}",
            _int(d, "status", "updatedReplicas"),
            _int(d, "status", "availableReplicas"),
            age(d, now),
            *_wide(d),
        ]

    def replica_set(rs: Obj, now: float) -> Cells:
        return [
            name(rs),
            _int(rs, "spec", "replicas", 1),
            _int(rs, "status", "replicas"),
            _int(rs, "status", "readyReplicas"),
            age(rs, now),
            *_wide(rs),
        ]

    def stateful_set(ss: Obj, now: float) -> Cells:
        return [
            name(ss),
            f"{_int(ss, 'status', 'readyReplicas')}/{_int(ss, 'spec', 'replicas', 1)}",
            age(ss, now),
            *_wide(ss)[:2],
        ]

    def daemon_set(ds: Obj, now: float) -> Cells:
        node_selector = (((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
            "nodeSelector"
        ) or {}
        return [
            name(ds),
            _int(ds, "status", "desiredNumberScheduled"),
            _int(ds, "status", "currentNumberScheduled"),
            _int(ds, "status", "numberReady"),
            _int(ds, "status", "updatedNumberScheduled"),
            _int(ds, "status", "numberAvailable"),
            ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
            age(ds, now),
            *_wide(ds),
        ]

    def job(j: Obj, now: float) -> Cells:
        spec = j.get("spec") or {}
        completions = spec.get("completions")
        succeeded = _int(j, "status", "succeeded")
        if completions is not None:
            done = f"{succeeded}/{completions}"
        else:
            parallelism = spec.get("parallelism")
            done = f"{succeeded}/1 of {1 if parallelism is None else parallelism}"
        return [name(j), _job_status(j), done, _duration(j, now, since), age(j, now), *_wide(j)]

    def controller_revision(cr: Obj, now: float) -> Cells:
        controller = "<none>"
        for ref in (cr.get("metadata") or {}).get("ownerReferences") or []:
            if isinstance(ref, Mapping) and ref.get("controller"):
                api_version = str(ref.get("apiVersion") or "")
                group = api_version.rpartition("/")[0]
                kind = str(ref.get("kind") or "")
                controller = f"{(kind + '.' + group) if group else kind}".lower() + f"/{ref.get('name')}"
                break
        return [name(cr), controller, int(cr.get("revision") or 0), age(cr, now)]

    count = "integer"
    return {
        "ControllerRevision": (
            [
                _NAME,
                _col("Controller", "Controller of the object"),
                _col("Revision", "Revision indicates the revision of the state represented by Data."),
                _AGE,
            ],
            controller_revision,
        ),
        "Deployment": (
            [
                _NAME,
                _col("Ready", "Number of the pod with ready state"),
                _col(
                    "Up-to-date",
                    "Total number of non-terminated pods targeted by this deployment that "
                    "have the desired template spec.",
                    type_=count,
                ),
                _col(
                    "Available",
                    "Total number of available pods (ready for at least minReadySeconds) "
                    "targeted by this deployment.",
                    type_=count,
                ),
                _AGE,
                *_WIDE,
            ],
            deployment,
        ),
        "ReplicaSet": (
            [
                _NAME,
                _col("Desired", "Number of desired pods.", type_=count),
                _col("Current", "Number of actual replicas.", type_=count),
                _col("Ready", "The number of ready replicas for this replica set.", type_=count),
                _AGE,
                *_WIDE,
            ],
            replica_set,
        ),
        "StatefulSet": (
            [_NAME, _col("Ready", "Number of the pod with ready state"), _AGE, *_WIDE[:2]],
            stateful_set,
        ),
        "DaemonSet": (
            [
                _NAME,
                _col(
                    "Desired", "The total number of nodes that should be running the daemon pod.", type_=count
                ),
                _col("Current", "The number of nodes that are running at least 1 daemon pod.", type_=count),
                _col(
                    "Ready",
                    "The number of nodes that should be running the daemon pod and have one or "
                    "more of the daemon pod running and ready.",
                    type_=count,
                ),
                _col(
                    "Up-to-date", "The total number of nodes that are running updated daemon pod", type_=count
                ),
                _col(
                    "Available",
                    "The number of nodes that should be running the daemon pod and have one "
                    "or more of the daemon pod running and available.",
                    type_=count,
                ),
                _col(
                    "Node Selector",
                    "NodeSelector is a selector which must be true for the pod to fit on a node.",
                ),
                _AGE,
                *_WIDE,
            ],
            daemon_set,
        ),
        "Job": (
            [
                _NAME,
                _col("Status", "Status of the job."),
                _col(
                    "Completions",
                    "The desired number of successfully finished pods the job should be run with.",
                ),
                _col("Duration", "Time required to complete the job."),
                _AGE,
                *_WIDE,
            ],
            job,
        ),
    }
