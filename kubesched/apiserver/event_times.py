"""One clock for Event times in a sped-up embedded cluster (``kubesched serve --speed X``).

Under ``--speed`` the cluster's clock (creation timestamps, conditions set by the server such as
``PodScheduled`` at binding, the kubelets' Events and status times) runs X times faster than the
wall clock, while clients (``kubesched run``, kubectl, controllers) stamp the Events they write with
their own wall clock. Left as they are, a pod's ``Scheduled`` Event would lie minutes before its
creation and ``kubectl get events`` would interleave two timelines. So, with
``ResourceHandlers.event_clock`` set, the server replaces the times a client writes into an Event
(``eventTime``, ``series.lastObservedTime``, ``deprecatedFirstTimestamp`` /
``deprecatedLastTimestamp``, and the core shape's ``firstTimestamp`` / ``lastTimestamp``) by its
own clock when it receives the create or patch. A real API server keeps them (at speed 1 the two
clocks agree, and ``serve`` leaves them alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import rfc3339, rfc3339_micro

__all__ = ["restamp_event"]

#: MicroTime fields (RFC 3339 with microseconds) and Time fields (seconds) of both Event shapes
_MICRO = ("eventTime",)
_SECONDS = ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "firstTimestamp", "lastTimestamp")


def restamp_event(event: Mapping[str, Any], now: float) -> dict[str, Any]:
    """A copy of ``event`` (an Event or a merge patch of one) whose client-written times that are
    set (not null) read ``now`` (epoch seconds of the cluster's clock)."""
    out = dict(event)
    for key in _MICRO:
        if out.get(key):
            out[key] = rfc3339_micro(now)
    for key in _SECONDS:
        if out.get(key):
            out[key] = rfc3339(now)
    series = out.get("series")
    if isinstance(series, Mapping) and series.get("lastObservedTime"):
        out["series"] = {**series, "lastObservedTime": rfc3339_micro(now)}
    return out
