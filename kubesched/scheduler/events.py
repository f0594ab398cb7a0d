"""Event recorder building ``events.k8s.io/v1`` Events (``k8s.io/client-go/tools/events``
``recorderImpl.makeEvent``): reporting controller = the profile's schedulerName, reporting
instance = ``<controller>-<instance>`` (the replica), ``note`` truncated to 1024 bytes as upstream
does for FailedScheduling. The event goes to ``sink``: the client's ``create_event`` (embedded
cluster, synchronous) or an :class:`~kubesched.client.event_broadcaster.EventBroadcaster`'s
``record`` (``kubesched run``: queued, aggregated into series, written by its own workers).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubesched.api.pod import Pod
from kubesched.api.timestamps import rfc3339

log = logging.getLogger(__name__)

MAX_NOTE_BYTES = 1024


def truncate_note(msg: str) -> str:
    """Upstream truncation: a message over 1024 UTF-8 bytes keeps its first 1020 bytes plus ``" ..."``."""
    b = msg.encode()
    if len(b) <= MAX_NOTE_BYTES:
        return msg
    return b[: MAX_NOTE_BYTES - 4].decode(errors="ignore") + " ..."


class ClientEventRecorder:
    """Builds Events and hands them to ``sink`` (default ``client.create_event``); failures are
    only logged (as upstream)."""

    def __init__(
        self,
        client: Any,
        clock: Any,
        reporting_controller: str,
        instance: str = "kubesched",
        sink: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.reporting_controller = reporting_controller
        self.instance = instance
        self.sink = sink if sink is not None else client.create_event
        self._seq = 0

    def eventf(
        self, regarding: Pod, related: Pod | None, eventtype: str, reason: str, action: str, note: str
    ) -> None:
        """Record one event about ``regarding`` (a Pod)."""
        self._seq += 1
        now = self.clock.now()
        ev: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{regarding.name}.{int(now * 1e9):x}.{self._seq}",
                "namespace": regarding.namespace,
            },
            "eventTime": rfc3339(now),
            "reportingController": self.reporting_controller,
            "reportingInstance": f"{self.reporting_controller}-{self.instance}",
            "action": action,
            "reason": reason,
            "type": eventtype,
            "note": truncate_note(note),
            "regarding": {
                "kind": "Pod",
                "namespace": regarding.namespace,
                "name": regarding.name,
                "uid": regarding.uid,
                "apiVersion": "v1",
            },
        }
        if related is not None:
            ev["related"] = {
                "kind": "Pod",
                "namespace": related.namespace,
                "name": related.name,
                "uid": related.uid,
                "apiVersion": "v1",
            }
        try:
            self.sink(ev)
        except Exception as e:  # noqa: BLE001
            log.warning("could not record event %s for %s: %s", reason, regarding.key, e)
