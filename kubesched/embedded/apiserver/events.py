"""Conversion between the two served Event versions, ``v1`` and ``events.k8s.io/v1``.

The embedded store keeps one kind ``Event`` in the ``events.k8s.io/v1`` shape (what the scheduler
writes). ``/api/v1/.../events`` shows and accepts the core shape, converted field by field as
``pkg/apis/events/v1/conversion.go`` does (``regarding`` <-> ``involvedObject``, ``note`` <->
``message``, ``reportingController`` <-> ``reportingComponent``/``source.component``,
``deprecatedCount`` <-> ``count``, ...).
"""

from __future__ import annotations

from typing import Any

__all__ = ["to_core", "to_events_v1"]

Obj = dict[str, Any]

# (events.k8s.io/v1 field, core/v1 field) copied as they are.
_SAME = ("metadata", "eventTime", "series", "action", "reason", "related", "type", "reportingInstance")
_RENAMED = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedCount", "count"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedSource", "source"),
)


def to_core(event: Obj) -> Obj:
    """The ``v1`` Event view of a stored (``events.k8s.io/v1``) Event. Core events created through
    ``/api/v1`` round-trip unchanged."""
    if event.get("apiVersion") == "v1":
        return event
    out: Obj = {"kind": "Event", "apiVersion": "v1"}
    for f in _SAME:
        if f in event:
            out[f] = event[f]
    for new, old in _RENAMED:
        if new in event:
            out[old] = event[new]
    if "source" not in out and event.get("reportingController"):
        out["source"] = {"component": event["reportingController"]}
        if event.get("reportingInstance"):
            out["source"]["host"] = event["reportingInstance"]
    return out


def to_events_v1(event: Obj) -> Obj:
    """The ``events.k8s.io/v1`` view of an Event (given in either version)."""
    if event.get("apiVersion") != "v1":
        return event
    out: Obj = {"kind": "Event", "apiVersion": "events.k8s.io/v1"}
    for f in _SAME:
        if f in event:
            out[f] = event[f]
    for new, old in _RENAMED:
        if old in event:
            out[new] = event[old]
    if "reportingController" not in out and (event.get("source") or {}).get("component"):
        out["reportingController"] = event["source"]["component"]
    return out
