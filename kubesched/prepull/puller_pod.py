"""Puller pods: short-lived pods that make a node's kubelet pull images ahead of the pods that need them.

Shape of a puller pod (:func:`puller_pod`), pinned to its node with ``spec.nodeName`` (no
scheduler involved, as a DaemonSet controller or kube-fledged does it):

* one container per image, ``imagePullPolicy: IfNotPresent`` (an image already there costs
  nothing), command ``/bin/true``: the kubelet pulls the images one after the other (it never
  pulls two images of one pod in parallel) and each container exits at once. An image without
  ``/bin/true`` fails to *start* (``StartError``), after its pull: that still counts as pulled;
* requests ``cpu: 1m``, ``memory: 8Mi`` (limits ``10m`` / ``32Mi``), no service account token,
  no service links, all capabilities dropped, ``terminationGracePeriodSeconds: 0``;
* ``restartPolicy: Never``; the lowest priority (``priorityClassName``, by default
  ``kubesched-prepull`` of value -1000000, created by the controller when it may, so a
  puller is the first to go when the node is short of resources);
* owned by its Node (``ownerReferences``), so the garbage collector removes it when the node goes;
  the controller deletes it as soon as its pulls are done;
* labels ``kubesched.io/prepull: "true"`` and ``kubesched.io/prepull-node: <node>``, annotation
  ``kubesched.io/prepull-images`` (the images, comma-separated).

:func:`pull_outcome` reads a puller's status: ``succeeded`` once every container got past its
pull (running or terminated, whatever the exit code), ``failed`` when one cannot be pulled
(``ErrImagePull``, ``ImagePullBackOff``, ``InvalidImageName``, ``ErrImageNeverPull``), None while
pulls are still going.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "PREPULL_LABEL",
    "PREPULL_NODE_LABEL",
    "PREPULL_IMAGES_ANNOTATION",
    "DEFAULT_PRIORITY_CLASS",
    "PRIORITY_CLASS_VALUE",
    "priority_class",
    "puller_pod",
    "pull_outcome",
    "is_puller",
]

PREPULL_LABEL = "kubesched.io/prepull"
PREPULL_NODE_LABEL = "kubesched.io/prepull-node"
PREPULL_IMAGES_ANNOTATION = "kubesched.io/prepull-images"
DEFAULT_PRIORITY_CLASS = "kubesched-prepull"
#: value of the puller PriorityClass: below every workload (the default priority is 0)
PRIORITY_CLASS_VALUE = -1_000_000
_PULL_FAILURES = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "RegistryUnavailable",
        "SignatureValidationFailed",
    }
)


def priority_class(name: str = DEFAULT_PRIORITY_CLASS) -> dict[str, Any]:
    """The PriorityClass of puller pods: value -1000000, never preempting."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": PRIORITY_CLASS_VALUE,
        "preemptionPolicy": "Never",
        "globalDefault": False,
        "description": "kubesched pre-pull pods: pull images on a node ahead of the pods that need them",
    }


def puller_pod(
    node: str,
    node_uid: str,
    images: Sequence[str],
    namespace: str,
    priority_class_name: str | None = DEFAULT_PRIORITY_CLASS,
) -> dict[str, Any]:
    """The puller pod manifest for ``images`` on ``node`` (see the module docstring); the API
    server names it (``generateName: kubesched-prepull-``)."""
    spec: dict[str, Any] = {
        "nodeName": node,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "containers": [
            {
                "name": f"pull-{i}",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/true"],
                "resources": {
                    "requests": {"cpu": "1m", "memory": "8Mi"},
                    "limits": {"cpu": "10m", "memory": "32Mi"},
                },
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
            for i, image in enumerate(images)
        ],
    }
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "kubesched-prepull-",
            "namespace": namespace,
            "labels": {PREPULL_LABEL: "true", PREPULL_NODE_LABEL: node},
            "annotations": {PREPULL_IMAGES_ANNOTATION: ",".join(images)},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node,
                    "uid": node_uid,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "spec": spec,
    }


def is_puller(obj: Mapping[str, Any]) -> bool:
    """True for a pod made by :func:`puller_pod`."""
    return ((obj.get("metadata") or {}).get("labels") or {}).get(PREPULL_LABEL) == "true"


def pull_outcome(obj: Mapping[str, Any]) -> str | None:
    """``"succeeded"``, ``"failed"`` or None (still pulling) for a puller pod (see the module docstring)."""
    status = obj.get("status") or {}
    containers = ((obj.get("spec") or {}).get("containers")) or []
    statuses = {s.get("name"): s for s in status.get("containerStatuses") or [] if isinstance(s, Mapping)}
    pulled = 0
    for c in containers:
        s = statuses.get(c.get("name"))
        if s is None:
            continue
        state = s.get("state") or {}
        waiting = state.get("waiting")
        if isinstance(waiting, Mapping) and waiting.get("reason") in _PULL_FAILURES:
            return "failed"
        if state.get("running") is not None or state.get("terminated") is not None or s.get("imageID"):
            pulled += 1
    if containers and pulled == len(containers):
        return "succeeded"
    if status.get("phase") == "Failed" and not statuses:
        return "failed"  # rejected by the kubelet before any pull (e.g. OutOfpods)
    return None
