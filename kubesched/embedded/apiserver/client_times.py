"""One clock for a sped-up embedded cluster (``kubesched serve --speed X``): the times clients
write are replaced by the cluster's.

Under ``--speed`` the cluster's clock (creation timestamps, conditions set by the server such as
``PodScheduled`` at binding, the kubelets' Events and pod status) runs X times faster than the
wall clock, while clients (``kubesched run``, kubectl, controllers) stamp what they write with
their own wall clock. Left as they are, a pod's ``Scheduled`` Event or ``PodScheduled=False``
condition would lie minutes before its creation, and ``kubectl get events`` would interleave two
timelines. So, with ``ResourceHandlers.client_time_clock`` set, the server replaces on receipt:

* in an Event it is given (create) or a patch of one (series updates): ``eventTime``,
  ``series.lastObservedTime``, ``deprecatedFirstTimestamp`` / ``deprecatedLastTimestamp``, and the
  core shape's ``firstTimestamp`` / ``lastTimestamp`` (:func:`restamp_event`);
* in a status write: the ``lastTransitionTime`` / ``lastProbeTime`` of each condition whose time
  the write changes (:func:`restamp_conditions`; a condition rewritten with its stored time keeps it).

A real API server keeps client times; at speed 1 the clocks agree and ``serve`` leaves them alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import rfc3339, rfc3339_micro

__all__ = ["restamp_conditions", "restamp_event"]

#: MicroTime fields (RFC 3339 with microseconds) and Time fields (seconds) of both Event shapes
_MICRO = ("eventTime",)
_SECONDS = ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "firstTimestamp", "lastTimestamp")
_CONDITION_TIMES = ("lastTransitionTime", "lastProbeTime")


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


def restamp_conditions(patch: Mapping[str, Any], current: Any, now: float) -> dict[str, Any]:
    """A copy of the status ``patch`` (as ``status_merge_patch`` makes it: ``conditions`` as full
    items by ``type``) in which each condition time that is set and differs from the stored
    condition's (``current``: the object's status) reads ``now``."""
    items = patch.get("conditions")
    if not isinstance(items, list):
        return dict(patch)
    stored = {c.get("type"): c for c in (current or {}).get("conditions") or [] if isinstance(c, Mapping)}
    out = []
    for cond in items:
        if isinstance(cond, Mapping) and cond.get("$patch") != "delete":
            before = stored.get(cond.get("type")) or {}
            cond = {
                **cond,
                **{
                    key: rfc3339(now)
                    for key in _CONDITION_TIMES
                    if cond.get(key) and cond.get(key) != before.get(key)
                },
            }
        out.append(cond)
    return {**patch, "conditions": out}
