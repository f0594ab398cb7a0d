"""Pod start-up from what a cluster's API shows: pods (creation, ``PodScheduled``, container
``startedAt``), kubelet Events (``Pulling`` / ``Pulled``) and nodes (allocatable, ``status.images``).
Works on any cluster whose kubelets write the upstream Events; ``kubesched serve --kubelet`` writes
the same ones.

Per pod (a :class:`~kubesched.modes.report.metrics.PodTimeline`, seconds since ``origin``):

* arrival = ``metadata.creationTimestamp``;
* queue + scheduling = ``PodScheduled`` (True) ``lastTransitionTime`` - arrival. The API does not
  show when the first scheduling attempt began or when the scheduler reserved the node, so
  ``queueWaitSeconds`` and ``bindingSeconds`` are 0 and ``schedulingSeconds`` covers both;
* image pull / pull wait = over the pod's ``Pulled`` Events
  (``Successfully pulled image "X" in 1.2s (3.4s including waiting). Image size: N bytes.``,
  ``pkg/kubelet/images/image_manager.go``): the sum of the first durations, and the sum of
  (including waiting - first);
* start-up = the last container's ``startedAt`` (``state.running`` or ``state.terminated``) -
  arrival; container start = start-up - scheduling - pull wait - pull (what is left: sandbox,
  create, start; never below 0).

Bytes: a pulled image counts its reported size as pulled; an image "already present on machine"
counts as a cache hit with the size found for it (the ``Image size`` of another pull of it, else
the node's ``status.images`` entry; 0 when unknown). Pods that shared one pull each get a
``Pulled`` Event with the whole size: on one node, a ``Pulled`` of an image whose pull
(``[event time - pull duration, event time]``) began before an earlier-started pull of the same
image there ended (plus :data:`JOIN_SLACK_SECONDS` for the Events' second precision; a serialized
kubelet runs the second request after the first, and the runtime finds the content present) is a
*joined* pull: its bytes count as joined, as the replay counts them, not as pulled again; the
first pull of the group counts as pulled. So ``bytes requested = cache hit + joined + pulled``,
and the cache-hit ratio is ``cache hit / requested`` (a joined pull is no hit: the pod waited for
it). Unlike the replay's ``bytesPulled``, a pull counts the whole image even when the runtime
had some of its layers, so ``imageBytesPulled`` (the replay's whole-image count) equals
``bytesPulled`` here. Timestamps have the API's second precision,
the pull durations millisecond precision.

One report run per scheduler (``spec.schedulerName``), named after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.timestamps import parse_rfc3339
from kubesched.embedded.kubelet.pull_records import PullMetrics
from kubesched.errors import ManifestError
from kubesched.modes.report.metrics import AllocationTracker, PodTimeline, SeriesPoint
from kubesched.modes.report.result import ReplayResult
from kubesched.units import parse_go_duration

__all__ = [
    "parse_pulled",
    "StartupData",
    "StartupRun",
    "ImagePullStats",
    "analyse",
    "PulledEvent",
    "joined_pulls",
    "pod_started",
    "event_time",
    "read_time",
    "JOIN_SLACK_SECONDS",
]

Obj = Mapping[str, Any]

_PULLED = re.compile(
    r'Successfully pulled image "(?P<image>[^"]+)" in (?P<pull>\S+) '
    r"\((?P<total>\S+) including waiting\)(?:\. Image size: (?P<size>\d+) bytes)?"
)
_PRESENT = re.compile(r'Container image "(?P<image>[^"]+)" already present on machine')
#: samples of the time series (plots)
SAMPLE_POINTS = 400
#: seconds a pull may start after the end of another pull of the same image on the same node and
#: still be that pull joined (Event timestamps have second precision)
JOIN_SLACK_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class PulledEvent:
    """One image step of a pod: ``pulled`` (False = already present), durations (s), size (bytes
    or None when the message has none)."""

    image: str
    pulled: bool
    pull_seconds: float = 0.0
    total_seconds: float = 0.0
    size_bytes: int | None = None
    #: another pod's pull of the image on the same node fetched it (see the module docstring)
    joined: bool = False


@dataclass
class ImagePullStats:
    """Per image: pulls, cache hits, joined pulls, pull seconds (without and with waiting; joined
    pulls add their time with waiting only), bytes pulled."""

    image: str
    pulls: int = 0
    hits: int = 0
    #: pulls that joined another pod's pull of the image on the same node (bytes counted once)
    joins: int = 0
    pull_seconds: float = 0.0
    total_seconds: float = 0.0
    bytes_pulled: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "pulls": self.pulls,
            "cacheHits": self.hits,
            "joins": self.joins,
            "pullSeconds": round(self.pull_seconds, 3),
            "pullSecondsIncludingWaiting": round(self.total_seconds, 3),
            "bytesPulled": self.bytes_pulled,
        }


@dataclass(frozen=True, slots=True)
class StartupRun:
    """One scheduler's pods: ``result`` (the replay report's run: timelines, pull totals,
    allocation) and ``images`` (per-image figures, most pull time with waiting first)."""

    result: ReplayResult
    images: list[ImagePullStats]


@dataclass
class StartupData:
    """What :func:`analyse` reads: Pod, Node and Event objects (Events in the ``v1`` or the
    ``events.k8s.io/v1`` shape), as the API lists them."""

    pods: Sequence[Obj]
    nodes: Sequence[Obj]
    events: Sequence[Obj]
    source: str = "cluster"
    problems: list[str] = field(default_factory=list)


def read_time(value: Any) -> float | None:
    """Epoch seconds of an RFC 3339 field value (``metav1.Time``/``MicroTime`` text) as a recorded
    object holds it; None when the field is absent, not a string or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_rfc3339(value)
    except ValueError:
        return None


def _event_fields(ev: Obj) -> tuple[Obj, str, str, str, float | None]:
    """(regarding object, reason, message, reporting component, first time) of either Event shape."""
    regarding = ev.get("regarding") or ev.get("involvedObject") or {}
    message = str(ev.get("note") or ev.get("message") or "")
    source = ev.get("deprecatedSource") or ev.get("source") or {}
    component = str(
        ev.get("reportingController") or ev.get("reportingComponent") or source.get("component") or ""
    )
    return regarding, str(ev.get("reason") or ""), message, component, event_time(ev)


def event_time(ev: Obj) -> float | None:
    """When an Event (``events.k8s.io/v1`` or ``core/v1`` shape) first happened, epoch s: its
    ``eventTime``, else ``deprecatedFirstTimestamp``, ``firstTimestamp``, then its creation."""
    return (
        read_time(ev.get("eventTime"))
        or read_time(ev.get("deprecatedFirstTimestamp"))
        or read_time(ev.get("firstTimestamp"))
        or read_time((ev.get("metadata") or {}).get("creationTimestamp"))
    )


def parse_pulled(message: str) -> PulledEvent | None:
    """The image step a kubelet ``Pulled`` message reports, or None for another message."""
    m = _PULLED.match(message)
    if m is not None:
        try:
            pull, total = parse_go_duration(m.group("pull")), parse_go_duration(m.group("total"))
        except ValueError:
            return None
        size = m.group("size")
        return PulledEvent(m.group("image"), True, pull, total, int(size) if size else None)
    m = _PRESENT.match(message)
    if m is not None:
        return PulledEvent(m.group("image"), False)
    return None


def pod_started(pod: Obj) -> float | None:
    """The last container start (``state.running`` / ``state.terminated`` ``startedAt``), None
    while a container has not started."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    containers = (pod.get("spec") or {}).get("containers") or []
    if not statuses or len(statuses) < len(containers):
        return None
    last = None
    for cs in statuses:
        state = cs.get("state") or {}
        t = read_time((state.get("running") or {}).get("startedAt")) or read_time(
            (state.get("terminated") or {}).get("startedAt")
        )
        if t is None:
            return None
        last = t if last is None else max(last, t)
    return last


def _pod_finished(pod: Obj) -> float | None:
    status = pod.get("status") or {}
    if status.get("phase") not in ("Succeeded", "Failed"):
        return None
    ends = [
        read_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        for cs in status.get("containerStatuses") or []
    ]
    known = [t for t in ends if t is not None]
    return max(known) if known else None


def _scheduled_at(pod: Obj) -> float | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            return read_time(c.get("lastTransitionTime"))
    return None


def analyse(data: StartupData, *, since: float | None = None, now: float | None = None) -> list[StartupRun]:
    """One :class:`StartupRun` per scheduler name over the pods created at or after ``since``
    (epoch seconds; None = all), in scheduler-name order. ``now`` (epoch s, default: the newest
    time seen) ends the allocation window. Pods with an unreadable manifest are skipped and named
    in ``data.problems``."""
    steps: dict[str, list[tuple[float, PulledEvent]]] = {}
    sizes: dict[str, int] = {}
    attempts: dict[str, int] = {}
    for ev in data.events:
        regarding, reason, message, component, t = _event_fields(ev)
        if regarding.get("kind") not in (None, "Pod"):
            continue
        key = str(regarding.get("uid") or f"{regarding.get('namespace')}/{regarding.get('name')}")
        if reason == "FailedScheduling":
            count = ev.get("deprecatedCount") or ev.get("count") or (ev.get("series") or {}).get("count") or 1
            attempts[key] = attempts.get(key, 0) + int(count)
        if reason != "Pulled" or component != "kubelet":
            continue
        step = parse_pulled(message)
        if step is None:
            continue
        steps.setdefault(key, []).append((t or 0.0, step))
        if step.size_bytes is not None:
            sizes.setdefault(step.image, step.size_bytes)
    allocatable: dict[str, int] = {}
    for node in data.nodes:
        for entry in (node.get("status") or {}).get("images") or []:
            for name in entry.get("names") or []:
                sizes.setdefault(str(name), int(entry.get("sizeBytes") or 0))
        try:
            parsed = Node.from_manifest(node)
        except ManifestError as e:
            data.problems.append(f"Node {(node.get('metadata') or {}).get('name')}: {e}")
            continue
        for r, v in parsed.allocatable.items():
            allocatable[r] = allocatable.get(r, 0) + v

    _mark_joined(steps, data.pods)
    groups: dict[str, list[Obj]] = {}
    for pod in data.pods:
        created = read_time((pod.get("metadata") or {}).get("creationTimestamp"))
        if created is None or (since is not None and created < since):
            continue
        scheduler = str((pod.get("spec") or {}).get("schedulerName") or "default-scheduler")
        groups.setdefault(scheduler, []).append(pod)
    all_times = [
        t
        for pods in groups.values()
        for p in pods
        for t in (read_time(p["metadata"].get("creationTimestamp")), pod_started(p), _pod_finished(p))
        if t is not None
    ]
    end = now if now is not None else (max(all_times) if all_times else 0.0)
    results = []
    for scheduler in sorted(groups):
        results.append(_run(scheduler, groups[scheduler], steps, sizes, attempts, allocatable, end, data))
    return results


def joined_pulls(pulls: Sequence[tuple[str, str, float, float]]) -> set[int]:
    """Indices of the pulls, ``(node, image, start, end)`` (epoch s), that joined an earlier-started
    pull of the same image on the same node: pulls of one (node, image) sorted by start; one
    starting at or before the end of its group's pulls so far (+ :data:`JOIN_SLACK_SECONDS`) joins
    the group, whose first pull (the longest of those starting first) fetched the bytes."""
    groups: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for i, (node, image, start, end) in enumerate(pulls):
        groups.setdefault((node, image), []).append((start, end, i))
    joined: set[int] = set()
    for group in groups.values():
        group.sort(key=lambda g: (g[0], -g[1], g[2]))  # at one start, the longest pull fetched
        until = None
        for start, end, i in group:
            if until is not None and start <= until + JOIN_SLACK_SECONDS:
                joined.add(i)
                until = max(until, end)
            else:
                until = end
    return joined


def _mark_joined(steps: dict[str, list[tuple[float, PulledEvent]]], pods: Sequence[Obj]) -> None:
    """Flag, in place, the ``Pulled`` steps that joined another pod's pull of the same image on
    the same node (the pod's ``spec.nodeName``; :func:`joined_pulls`)."""
    node_of: dict[str, str] = {}
    for pod in pods:
        meta, node = pod.get("metadata") or {}, (pod.get("spec") or {}).get("nodeName")
        if node:
            node_of[str(meta.get("uid"))] = node_of[
                f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
            ] = str(node)
    pulls: list[tuple[str, str, float, float]] = []
    where: list[tuple[str, int]] = []
    for key, pod_steps in steps.items():
        node = node_of.get(key)
        if node is None:
            continue
        for i, (t, step) in enumerate(pod_steps):
            if step.pulled:
                pulls.append((node, step.image, t - step.pull_seconds, t))
                where.append((key, i))
    for j in joined_pulls(pulls):
        key, i = where[j]
        t, step = steps[key][i]
        steps[key][i] = (t, replace(step, joined=True))


def _run(
    scheduler: str,
    pods: list[Obj],
    steps: Mapping[str, list[tuple[float, PulledEvent]]],
    sizes: Mapping[str, int],
    attempts: Mapping[str, int],
    allocatable: Mapping[str, int],
    end: float,
    data: StartupData,
) -> StartupRun:
    pods = sorted(
        pods,
        key=lambda p: (
            read_time(p["metadata"].get("creationTimestamp")) or 0.0,
            str(p["metadata"].get("namespace")),
            str(p["metadata"].get("name")),
        ),
    )
    origin = read_time(pods[0]["metadata"].get("creationTimestamp")) or 0.0
    metrics = PullMetrics()
    per_image: dict[str, ImagePullStats] = {}
    timelines: list[PodTimeline] = []
    spans: list[tuple[float, float | None, Mapping[str, int]]] = []
    total_attempts = 0
    points: list[tuple[float, int, int, int]] = []  # (t, pulled, requested, hit) per pod start
    for pod in pods:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        created = (read_time(meta.get("creationTimestamp")) or origin) - origin
        tl = PodTimeline(key, created)
        scheduled = _scheduled_at(pod)
        node = (pod.get("spec") or {}).get("nodeName")
        tl.node = str(node) if node else None
        if scheduled is not None:
            tl.first_attempt = created
            tl.assumed = tl.bound = scheduled - origin
        tl.attempts = (
            attempts.get(str(meta.get("uid")), 0) + attempts.get(key, 0) + (1 if scheduled is not None else 0)
        )
        total_attempts += tl.attempts
        pod_steps = sorted(steps.get(str(meta.get("uid")), []) or steps.get(key, []), key=lambda s: s[0])
        pull = wait = 0.0
        images = []
        for _, step in pod_steps:
            images.append(step.image)
            stats = per_image.setdefault(step.image, ImagePullStats(step.image))
            size = step.size_bytes if step.size_bytes is not None else sizes.get(step.image, 0)
            tl.bytes_requested += size
            metrics.bytes_requested += size
            if step.pulled and step.joined:
                stats.joins += 1
                stats.total_seconds += step.total_seconds
                pull += step.pull_seconds
                wait += max(0.0, step.total_seconds - step.pull_seconds)
                metrics.bytes_joined += size
                metrics.pulls_joined += 1
            elif step.pulled:
                stats.pulls += 1
                stats.pull_seconds += step.pull_seconds
                stats.total_seconds += step.total_seconds
                stats.bytes_pulled += size
                pull += step.pull_seconds
                wait += max(0.0, step.total_seconds - step.pull_seconds)
                tl.bytes_pulled += size
                metrics.bytes_pulled += size
                metrics.image_bytes_pulled += size  # a Pulled Event's size is the whole image's
                metrics.pulls_completed += 1
            else:
                stats.hits += 1
                tl.bytes_cache_hit += size
                metrics.bytes_cache_hit += size
        tl.images = tuple(images)
        started = pod_started(pod)
        finished = _pod_finished(pod)
        if started is not None:
            tl.started = started - origin
            tl.pull_seconds, tl.pull_wait_seconds = pull, wait
            base = tl.bound if tl.bound is not None else created
            tl.pulls_done = min(tl.started, base + pull + wait)
            points.append(
                (tl.started, metrics.bytes_pulled, metrics.bytes_requested, metrics.bytes_cache_hit)
            )
        if finished is not None:
            tl.finished = finished - origin
        if tl.bound is not None:
            try:
                requests = Pod.from_manifest(pod).requests
            except ManifestError as e:
                data.problems.append(f"Pod {key}: {e}")
                requests = {}
            spans.append((tl.bound, tl.finished, requests))
        timelines.append(tl)
    horizon = max(0.0, end - origin)
    tracker = AllocationTracker(dict(allocatable), horizon)
    changes = sorted(
        [(b, 0, r) for b, _, r in spans] + [(f, 1, r) for _, f, r in spans if f is not None],
        key=lambda c: (c[0], c[1]),
    )
    for t, kind, req in changes:
        (tracker.add if kind == 0 else tracker.remove)(req, t)
    series = [
        SeriesPoint(t, pulled, req, hit, 0, 0, {})
        for t, pulled, req, hit in sorted(points)[:: max(1, len(points) // SAMPLE_POINTS)]
    ]
    result = ReplayResult(
        config=scheduler,
        profiles=[scheduler],
        workload=data.source,
        seed=None,
        horizon=horizon,
        timelines=timelines,
        pull_metrics=metrics,
        mean_allocated_fraction=tracker.mean_fractions(),
        series=series,
        attempts=total_attempts,
        end_time=horizon,
        wall_seconds=0.0,
    )
    return StartupRun(result, sorted(per_image.values(), key=lambda s: (-s.total_seconds, s.image)))
