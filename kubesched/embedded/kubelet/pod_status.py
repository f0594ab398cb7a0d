"""The ``status`` a kubelet writes for a pod through its start and end (``pkg/kubelet/status`` and
``kubelet_pods.go: generateAPIPodStatus``): phase, ``startTime``, the conditions
``PodReadyToStartContainers``, ``Initialized``, ``ContainersReady`` and ``Ready`` (``PodScheduled``
is the binding's), and ``containerStatuses`` / ``initContainerStatuses``.

Each function returns a status patch for ``PATCH pods/status`` (conditions are merged by type).
Times are clock seconds, written as ``metav1.Time`` (second precision).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import rfc3339

__all__ = [
    "container_names",
    "deadline_exceeded_status",
    "exited_status",
    "pending_status",
    "running_status",
    "succeeded_status",
]


def container_names(pod: Mapping[str, Any], field: str = "containers") -> list[str]:
    spec = pod.get("spec") or {}
    return [str(c.get("name")) for c in spec.get(field) or [] if isinstance(c, Mapping)]


def _cond(
    kind: str, status: bool, t: float, reason: str | None = None, message: str | None = None
) -> dict[str, Any]:
    """A condition for a status patch; ``reason``/``message`` None are written as null, which the
    merge by ``type`` removes from the stored condition (a Ready condition that turns True loses
    the ``ContainersNotReady`` reason it had while Pending, as the kubelet's full status write does)."""
    return {
        "type": kind,
        "status": "True" if status else "False",
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(t),
        "reason": reason or None,
        "message": message or None,
    }


def _container_id(pod: Mapping[str, Any], name: str) -> str:
    uid = str((pod.get("metadata") or {}).get("uid"))
    return "containerd://" + hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()


def _statuses(
    pod: Mapping[str, Any],
    field: str,
    state: dict[str, Any],
    *,
    ready: bool,
    started: bool,
    image_ids: Mapping[str, str],
    with_id: bool,
) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    out = []
    for c in spec.get(field) or []:
        if not isinstance(c, Mapping):
            continue
        name = str(c.get("name"))
        image = str(c.get("image"))
        entry: dict[str, Any] = {
            "name": name,
            "image": image,
            "imageID": image_ids.get(image, "") if with_id else "",
            "ready": ready,
            "restartCount": 0,
            "started": started,
            "state": state,
        }
        if with_id:
            entry["containerID"] = _container_id(pod, name)
        out.append(entry)
    return out


def pending_status(
    pod: Mapping[str, Any],
    t: float,
    *,
    host_ip: str | None = None,
    waiting_reason: str = "ContainerCreating",
    waiting_message: str | None = None,
) -> dict[str, Any]:
    """The pod was admitted on its node at ``t``: ``Pending``, sandbox ready, containers waiting
    (``ContainerCreating``, or ``waiting_reason`` such as ``InvalidImageName``)."""
    names = container_names(pod)
    unready = f"containers with unready status: [{' '.join(names)}]"
    has_init = bool(container_names(pod, "initContainers"))
    conditions = [
        _cond("PodReadyToStartContainers", True, t),
        _cond(
            "Initialized",
            not has_init,
            t,
            *(
                (
                    "ContainersNotInitialized",
                    f"containers with incomplete status: [{' '.join(container_names(pod, 'initContainers'))}]",
                )
                if has_init
                else (None, None)
            ),
        ),
        _cond("Ready", False, t, "ContainersNotReady", unready),
        _cond("ContainersReady", False, t, "ContainersNotReady", unready),
    ]
    waiting: dict[str, Any] = {"reason": waiting_reason}
    if waiting_message:
        waiting["message"] = waiting_message
    status: dict[str, Any] = {
        "phase": "Pending",
        "startTime": rfc3339(t),
        "conditions": conditions,
        "containerStatuses": _statuses(
            pod, "containers", {"waiting": waiting}, ready=False, started=False, image_ids={}, with_id=False
        ),
    }
    if has_init:
        status["initContainerStatuses"] = _statuses(
            pod,
            "initContainers",
            {"waiting": {"reason": "PodInitializing"}},
            ready=False,
            started=False,
            image_ids={},
            with_id=False,
        )
    if host_ip:
        status["hostIP"] = host_ip
        status["hostIPs"] = [{"ip": host_ip}]
    return status


def running_status(pod: Mapping[str, Any], started: float, image_ids: Mapping[str, str]) -> dict[str, Any]:
    """Every container started at ``started``: ``Running``, all conditions True. Init containers
    (run to completion before, in the model at the same moment) are ``terminated`` ``Completed``."""
    stamp = rfc3339(started)
    # Initialized turns True here only after init containers (without them it was True at admission)
    initialized = [_cond("Initialized", True, started)] if container_names(pod, "initContainers") else []
    status: dict[str, Any] = {
        "phase": "Running",
        "conditions": [*initialized, _cond("ContainersReady", True, started), _cond("Ready", True, started)],
        "containerStatuses": _statuses(
            pod,
            "containers",
            {"running": {"startedAt": stamp}},
            ready=True,
            started=True,
            image_ids=image_ids,
            with_id=True,
        ),
    }
    if container_names(pod, "initContainers"):
        status["initContainerStatuses"] = _statuses(
            pod,
            "initContainers",
            {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": stamp, "finishedAt": stamp}},
            ready=True,
            started=False,
            image_ids=image_ids,
            with_id=True,
        )
    return status


def succeeded_status(
    pod: Mapping[str, Any], started: float, finished: float, image_ids: Mapping[str, str]
) -> dict[str, Any]:
    """Every container exited 0 at ``finished``: ``Succeeded``, Ready/ContainersReady False
    (``PodCompleted``), ``PodReadyToStartContainers`` False (the sandbox is gone)."""
    state = {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": rfc3339(started),
            "finishedAt": rfc3339(finished),
        }
    }
    return {
        "phase": "Succeeded",
        "conditions": [
            _cond("PodReadyToStartContainers", False, finished),
            _cond("ContainersReady", False, finished, "PodCompleted"),
            _cond("Ready", False, finished, "PodCompleted"),
        ],
        "containerStatuses": _statuses(
            pod, "containers", state, ready=False, started=False, image_ids=image_ids, with_id=True
        ),
    }


def exited_status(
    pod: Mapping[str, Any], started: float, finished: float, image_ids: Mapping[str, str], exit_code: int
) -> dict[str, Any]:
    """Every container exited with ``exit_code`` at ``finished``: :func:`succeeded_status` for 0,
    else ``Failed`` with the containers ``terminated`` (``exitCode``, reason ``Error``) and
    Ready/ContainersReady False (``PodFailed``), as the kubelet writes a pod whose
    ``restartPolicy: Never`` containers failed."""
    if exit_code == 0:
        return succeeded_status(pod, started, finished, image_ids)
    state = {
        "terminated": {
            "exitCode": exit_code,
            "reason": "Error",
            "startedAt": rfc3339(started),
            "finishedAt": rfc3339(finished),
        }
    }
    return {
        "phase": "Failed",
        "conditions": [
            _cond("PodReadyToStartContainers", False, finished),
            _cond("ContainersReady", False, finished, "PodFailed"),
            _cond("Ready", False, finished, "PodFailed"),
        ],
        "containerStatuses": _statuses(
            pod, "containers", state, ready=False, started=False, image_ids=image_ids, with_id=True
        ),
    }


def deadline_exceeded_status(
    pod: Mapping[str, Any], started: float | None, finished: float, image_ids: Mapping[str, str]
) -> dict[str, Any]:
    """The pod ran longer than ``spec.activeDeadlineSeconds``: ``Failed`` with reason
    ``DeadlineExceeded`` (``pkg/kubelet/active_deadline.go``), its containers killed (exit code
    137, ``Error``) at ``finished``."""
    stamp = rfc3339(finished)
    terminated: dict[str, Any] = {"exitCode": 137, "reason": "Error", "finishedAt": stamp}
    if started is not None:
        terminated["startedAt"] = rfc3339(started)
    return {
        "phase": "Failed",
        "reason": "DeadlineExceeded",
        "message": "Pod was active on the node longer than the specified deadline",
        "conditions": [
            _cond("PodReadyToStartContainers", False, finished),
            _cond("ContainersReady", False, finished, "PodFailed"),
            _cond("Ready", False, finished, "PodFailed"),
        ],
        "containerStatuses": _statuses(
            pod,
            "containers",
            {"terminated": terminated},
            ready=False,
            started=False,
            image_ids=image_ids,
            with_id=started is not None,
        ),
    }
