"""Kubelet ``Pulled`` events: parse what real nodes report about their image pulls.

The kubelet's image manager (``pkg/kubelet/images/image_manager.go``: ``EnsureImageExists``)
records, after a pull::

    Successfully pulled image "X" in 1.2s (3.4s including waiting). Image size: 123 bytes.

The first duration is the pull itself, the second adds the time the pull queued behind others
(``serializeImagePulls``); both are Go ``time.Duration`` strings truncated to milliseconds
(``890ms``, ``1m53.8s``). Kubelets before v1.30 leave out the size, and older ones the waiting
time: such events are still read, and the size is then taken from the image catalogue when it
knows the image. ``Container image "X" already present on machine`` events (also reason
``Pulled``) are not pulls and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.units import parse_go_duration

__all__ = [
    "PulledEvent",
    "parse_pulled_message",
    "pulled_events",
    "pulled_events_in_text",
]

_MESSAGE = re.compile(
    r'Successfully pulled image "(?P<image>[^"]+)" in (?P<pull>[0-9.a-zµ]+)'
    r"(?: \((?P<waiting>[0-9.a-zµ]+) including waiting\))?"
    r"(?:\. Image size: (?P<size>\d+) bytes)?"
)


@dataclass(frozen=True, slots=True)
class PulledEvent:
    """One successful pull: ``image`` (as the pod spelled it), ``seconds`` (the pull),
    ``seconds_including_waiting`` (None when the kubelet did not report it), ``size_bytes``
    (compressed; None when not reported) and ``node`` ("" when unknown)."""

    image: str
    seconds: float
    seconds_including_waiting: float | None
    size_bytes: int | None
    node: str = ""


def parse_pulled_message(message: str, node: str = "") -> PulledEvent | None:
    """The pull in a kubelet ``Pulled`` event message, or None when the message reports no pull
    (``already present on machine``, other text, or an unparsable duration)."""
    m = _MESSAGE.search(message)
    if m is None:
        return None
    try:
        seconds = parse_go_duration(m.group("pull"))
        waiting = parse_go_duration(m.group("waiting")) if m.group("waiting") else None
    except ValueError:
        return None
    size = int(m.group("size")) if m.group("size") else None
    return PulledEvent(m.group("image"), seconds, waiting, size, node)


def _event_node(event: Mapping[str, Any]) -> str:
    for key in ("source", "deprecatedSource"):
        source = event.get(key)
        if isinstance(source, Mapping) and source.get("host"):
            return str(source["host"])
    return str(event.get("reportingInstance") or "")


def pulled_events(events: Iterable[Mapping[str, Any]]) -> Iterator[PulledEvent]:
    """The pulls in Event objects, ``v1`` (``message``) or ``events.k8s.io/v1`` (``note``), with
    reason ``Pulled``; other objects are skipped. An event whose ``count`` (or ``series.count``)
    says it repeated stands for one pull: repeats are the same message."""
    for event in events:
        if not isinstance(event, Mapping) or event.get("reason") != "Pulled":
            continue
        message = event.get("message") or event.get("note") or ""
        if not isinstance(message, str):
            continue
        pulled = parse_pulled_message(message, _event_node(event))
        if pulled is not None:
            yield pulled


def pulled_events_in_text(text: str) -> Iterator[PulledEvent]:
    """The pulls in free text, one per line (``kubectl describe pod`` or ``kubectl get events``
    output, kubelet logs)."""
    for line in text.splitlines():
        pulled = parse_pulled_message(line)
        if pulled is not None:
            yield pulled
