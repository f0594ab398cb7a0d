"""How a pre-pull is carried out on a real cluster: OpenKruise ``ImagePullJob`` objects when that
CRD is served, otherwise puller pods.

* :class:`ImagePullJobs`: one ``apps.kruise.io/v1alpha1`` ``ImagePullJob`` per (node, image),
  ``spec.selector.names: [node]``, ``parallelism: 1``, ``completionPolicy: {type: Always,
  activeDeadlineSeconds, ttlSecondsAfterFinished}``; kruise-daemon pulls through the CRI on the
  node, outside the kubelet's pull slot. Done when ``status.completionTime`` is set: succeeded
  when ``status.succeeded >= status.desired`` and nothing failed.
* :class:`PullerPods`: pods of :mod:`kubesched.prepull.puller_pod` (the kubelet pulls).

:func:`discover` picks ImagePullJob when the API server lists ``imagepulljobs`` in
``apps.kruise.io/v1alpha1`` (API discovery), else puller pods. Both reach the API only through
the :class:`~kubesched.client.client.ClusterClient` interface (ImagePullJobs by their
:class:`~kubesched.client.client.GroupVersionResource`), and puller pods are read from the
scheduler's Pod informer (:class:`ObjectReader`: ``Scheduler.objects``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.timestamps import parse_time
from kubesched.client.client import ClusterClient, GroupVersionResource
from kubesched.prepull.puller_pod import (
    PREPULL_IMAGES_ANNOTATION,
    PREPULL_LABEL,
    PREPULL_NODE_LABEL,
    is_puller,
    pull_outcome,
    puller_pod,
)

__all__ = [
    "ActivePull",
    "PullMechanism",
    "PullerPods",
    "ImagePullJobs",
    "ObjectReader",
    "discover",
    "KRUISE_GROUP",
    "KRUISE_VERSION",
    "IMAGE_PULL_JOBS",
    "IMAGE_PULL_JOBS_GVR",
]

log = logging.getLogger(__name__)

KRUISE_GROUP = "apps.kruise.io"
KRUISE_VERSION = "v1alpha1"
IMAGE_PULL_JOBS = "imagepulljobs"
IMAGE_PULL_JOBS_GVR = GroupVersionResource(KRUISE_GROUP, KRUISE_VERSION, IMAGE_PULL_JOBS)


class ObjectReader(Protocol):
    """The scheduler's informer objects (``Scheduler.objects``)."""

    def objects(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class ActivePull:
    """One pre-pull object: ``name``, ``node``, ``images``, ``outcome`` (``succeeded``/``failed``,
    None while running) and ``created`` (epoch seconds, None when unknown)."""

    name: str
    node: str
    images: tuple[str, ...]
    outcome: str | None
    created: float | None


class PullMechanism(Protocol):
    """Lists (``pulls``), starts and deletes pre-pull objects (in the controller's namespace)."""

    name: str

    def pulls(self) -> list[ActivePull]: ...

    def start(self, node: str, node_uid: str, images: list[str]) -> str: ...

    def delete(self, pull: ActivePull) -> None: ...


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class PullerPods:
    """Puller pods through the cluster client; listed from the scheduler's Pod informer."""

    name = "pods"

    def __init__(
        self, client: ClusterClient, reader: ObjectReader, namespace: str, priority_class_name: str | None
    ) -> None:
        self.client = client
        self.reader = reader
        self.namespace = namespace
        self.priority_class_name = priority_class_name

    def pulls(self) -> list[ActivePull]:
        out = []
        for obj in self.reader.objects("Pod", self.namespace):
            if not is_puller(obj):
                continue
            meta = _meta(obj)
            images = tuple(
                i for i in (meta.get("annotations") or {}).get(PREPULL_IMAGES_ANNOTATION, "").split(",") if i
            )
            out.append(
                ActivePull(
                    str(meta.get("name") or ""),
                    (meta.get("labels") or {}).get(PREPULL_NODE_LABEL, ""),
                    images,
                    pull_outcome(obj),
                    parse_time(meta.get("creationTimestamp")),
                )
            )
        return out

    def start(self, node: str, node_uid: str, images: list[str]) -> str:
        created = self.client.create(
            puller_pod(node, node_uid, images, self.namespace, self.priority_class_name)
        )
        return str(_meta(created).get("name") or "") if isinstance(created, Mapping) else ""

    def delete(self, pull: ActivePull) -> None:
        self.client.delete("Pod", self.namespace, pull.name)


def image_pull_job(
    node: str, node_uid: str, image: str, namespace: str, timeout_seconds: float
) -> dict[str, Any]:
    """The ImagePullJob of ``image`` on ``node`` (see the module docstring)."""
    return {
        "apiVersion": f"{KRUISE_GROUP}/{KRUISE_VERSION}",
        "kind": "ImagePullJob",
        "metadata": {
            "generateName": "kubesched-prepull-",
            "namespace": namespace,
            "labels": {PREPULL_LABEL: "true", PREPULL_NODE_LABEL: node},
            "annotations": {PREPULL_IMAGES_ANNOTATION: image},
        },
        "spec": {
            "image": image,
            "parallelism": 1,
            "selector": {"names": [node]},
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": int(timeout_seconds)},
            "completionPolicy": {
                "type": "Always",
                "activeDeadlineSeconds": int(timeout_seconds),
                "ttlSecondsAfterFinished": 300,
            },
        },
    }


def job_outcome(obj: Mapping[str, Any]) -> str | None:
    """``succeeded`` / ``failed`` once the job's ``status.completionTime`` is set, else None."""
    status = obj.get("status") or {}
    if not status.get("completionTime"):
        return None
    desired = int(status.get("desired") or 0)
    ok = int(status.get("succeeded") or 0) >= desired > 0 and not int(status.get("failed") or 0)
    return "succeeded" if ok else "failed"


class ImagePullJobs:
    """OpenKruise ImagePullJobs through the cluster client (:data:`IMAGE_PULL_JOBS_GVR`)."""

    name = "imagepulljob"

    def __init__(self, client: ClusterClient, namespace: str, timeout_seconds: float) -> None:
        self.client = client
        self.namespace = namespace
        self.timeout_seconds = timeout_seconds

    def pulls(self) -> list[ActivePull]:
        out = []
        for obj in self.client.list_resource(IMAGE_PULL_JOBS_GVR, self.namespace, f"{PREPULL_LABEL}=true"):
            meta = _meta(obj)
            image = (obj.get("spec") or {}).get("image") or ""
            out.append(
                ActivePull(
                    str(meta.get("name") or ""),
                    (meta.get("labels") or {}).get(PREPULL_NODE_LABEL, ""),
                    (image,),
                    job_outcome(obj),
                    parse_time(meta.get("creationTimestamp")),
                )
            )
        return out

    def start(self, node: str, node_uid: str, images: list[str]) -> str:
        names = []
        for image in images:
            created = self.client.create_resource(
                IMAGE_PULL_JOBS_GVR,
                image_pull_job(node, node_uid, image, self.namespace, self.timeout_seconds),
            )
            names.append(str(_meta(created).get("name") or ""))
        return ",".join(names)

    def delete(self, pull: ActivePull) -> None:
        self.client.delete_resource(IMAGE_PULL_JOBS_GVR, self.namespace, pull.name)


def image_pull_jobs_served(client: ClusterClient) -> bool:
    """True when discovery lists ``imagepulljobs`` in ``apps.kruise.io/v1alpha1`` (False too when
    discovery fails: puller pods work everywhere)."""
    try:
        return client.serves_resource(IMAGE_PULL_JOBS_GVR)
    except Exception as e:  # noqa: BLE001 - any discovery failure
        log.debug("discovery of %s/%s: %s", KRUISE_GROUP, KRUISE_VERSION, e)
        return False


def discover(
    client: ClusterClient,
    reader: ObjectReader,
    namespace: str,
    priority_class_name: str | None,
    timeout_seconds: float,
    mode: str = "auto",
) -> PullMechanism:
    """The mechanism for ``mode`` (``auto``, ``pods``, ``imagepulljob``); ``auto`` asks discovery
    through ``client``. Raises ValueError for an unknown mode."""
    if mode not in ("auto", "pods", "imagepulljob"):
        raise ValueError(f"unknown pre-pull mechanism {mode!r} (auto, pods, imagepulljob)")
    if mode == "imagepulljob" or (mode == "auto" and image_pull_jobs_served(client)):
        return ImagePullJobs(client, namespace, timeout_seconds)
    return PullerPods(client, reader, namespace, priority_class_name)
