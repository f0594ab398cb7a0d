"""Kubelet Events of a pod's start, as ``kubectl describe pod`` shows them (core ``v1`` Events with
``source.component: kubelet``, the legacy recorder the kubelet uses).

Messages follow ``pkg/kubelet/images/image_manager.go: EnsureImageExists`` and
``pkg/kubelet/kuberuntime/kuberuntime_container.go: startContainer`` (v1.35):

* ``Pulling``  ``Pulling image "IMAGE"``
* ``Pulled``   ``Successfully pulled image "IMAGE" in 1.2s (3.4s including waiting). Image size: N bytes.``
* ``Pulled``   ``Container image "IMAGE" already present on machine``
* ``Created``  ``Container created``
* ``Started``  ``Container started``
* ``InspectFailed`` ``Failed to apply default image tag "IMAGE": couldn't parse image name "IMAGE": invalid reference format``

Durations are printed as Go's ``time.Duration.String`` of a duration truncated to milliseconds
(``313ms``, ``1.594s``, ``1m53.8s``), as the kubelet does.
"""

from __future__ import annotations

import itertools
from typing import Any

from kubesched.api.timestamps import rfc3339
from kubesched.units import format_go_duration

__all__ = ["go_duration", "pulled_message", "present_message", "pulling_message", "kubelet_event"]

_counter = itertools.count(1)


def go_duration(seconds: float) -> str:
    """Go ``time.Duration(seconds).Truncate(time.Millisecond).String()``, as the kubelet prints a
    pull's duration: ``0s``, ``313ms``, ``1.594s``, ``1m53.8s``, ``2h0m5s``. Negative durations
    are printed as ``0s``."""
    return format_go_duration(int(max(0.0, seconds) * 1000 + 1e-6) / 1000)


def pulling_message(image: str) -> str:
    return f'Pulling image "{image}"'


def pulled_message(image: str, pull_seconds: float, total_seconds: float, size_bytes: int) -> str:
    return (
        f'Successfully pulled image "{image}" in {go_duration(pull_seconds)} '
        f"({go_duration(total_seconds)} including waiting). Image size: {size_bytes} bytes."
    )


def present_message(image: str) -> str:
    return f'Container image "{image}" already present on machine'


def kubelet_event(
    pod: dict[str, Any],
    node: str,
    reason: str,
    message: str,
    t: float,
    *,
    container: str | None = None,
    event_type: str = "Normal",
) -> dict[str, Any]:
    """A core ``v1`` Event about ``pod`` (a Pod manifest) from the kubelet on ``node`` at clock
    time ``t`` (``fieldPath: spec.containers{NAME}`` when ``container`` is given)."""
    meta = pod.get("metadata") or {}
    name = str(meta.get("name"))
    namespace = str(meta.get("namespace") or "default")
    involved: dict[str, Any] = {
        "kind": "Pod",
        "apiVersion": "v1",
        "namespace": namespace,
        "name": name,
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    if container is not None:
        involved["fieldPath"] = container
    stamp = rfc3339(t)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{int(t * 1e9):x}.{next(_counter)}", "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": "kubelet", "host": node},
        "reportingComponent": "kubelet",
        "reportingInstance": node,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "eventTime": None,
    }
