"""Core ``v1`` Events written by the embedded controllers (what their ``record.EventRecorder``
writes upstream: ``staging/src/k8s.io/client-go/tools/record/event.go: recorder.generateEvent``),
which ``kubectl describe`` lists under the object."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.client.client import ClusterClient
from kubesched.errors import KubeschedError

log = logging.getLogger(__name__)


def record_event(
    cluster: ClusterClient,
    involved: Mapping[str, Any],
    kind: str,
    api_version: str,
    event_type: str,
    reason: str,
    message: str,
    component: str,
    stamp: str | None,
) -> None:
    """Write one Event about ``involved`` (an object of ``kind``/``api_version``; its
    ``metadata`` gives namespace, name, uid and resourceVersion; a missing namespace is
    ``default``) of ``event_type`` (``Normal``/``Warning``) from ``component``, stamped ``stamp``
    (RFC 3339, or None). Best effort, as upstream: a refused Event is logged at debug level and
    dropped, never raised."""
    meta = involved.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    event: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"namespace": ns},
        "involvedObject": {
            "kind": kind,
            "apiVersion": api_version,
            "namespace": ns,
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
    try:
        cluster.create_event(event)
    except (KubeschedError, ValueError) as e:
        log.debug("%s: event for %s %s/%s: %s", component, kind, ns, meta.get("name"), e)
