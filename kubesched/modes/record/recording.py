"""A recording (``kubesched record``) read back: the cluster's objects over time, and the trace a
replay runs from it.

:func:`read_recording` folds the log's records into per-object histories. Times in a recording
come from two clocks: the records' ``t`` (the recorder's wall clock when a change arrived) and the
objects' own timestamps (``creationTimestamp``, containers' ``startedAt`` / ``finishedAt``, Events'
``eventTime``: the cluster's clock, which runs faster than the wall under ``kubesched serve
--speed``). Everything is put on the cluster's clock: record times are mapped by a least-squares
line ``cluster = a + b * t`` fitted on the pairs (record time, object time) of objects created
while recording (new Pods and Events); with fewer than two such pairs the map is ``t`` itself.

:func:`recording_workload` turns it into a :class:`~kubesched.trace.workload.Workload`:

* second 0 is the start of the first session (its first list); the horizon its last record;
* a pod created while recording arrives at its ``creationTimestamp``, with the recorded spec
  (``nodeName``, ``schedulerName`` and status removed: every replayed config schedules it). Once
  started it runs until its containers finished (the latest ``finishedAt``) or it was deleted
  (``deletionTimestamp``, else the delete record's time), and until the end of the replay when
  neither happened while recording. A pod deleted before it started is left out (noted); a pod
  never scheduled is replayed pending;
* pods that were running when the recording started (bound in its first list) are
  ``Workload.running``: on their node from second 0, holding their requests and images until they
  ended while recording (or to the end), and not measured; pods pending then arrive at second 0;
  finished ones are left out (noted);
* the puller pods of ``kubesched run --prepull`` (label ``kubesched.io/prepull``) are left out
  (noted): they are the pre-pull agent's, not the workload's, and ``replay --prepull`` plans its
  own pre-pulls; their ``Pulled`` Events still calibrate the kubelet model;
* each node's image cache at second 0 is its ``status.images`` at the start (``Workload.images``),
  and its kubelet's status phase (``Workload.status_phases``) the circular mean, modulo the status
  period (10 s, ``nodeStatusUpdateFrequency``), of the times its ``status.images`` changed: each
  kubelet writes on a grid of its own, and whether a scheduler sees an image that has just been
  pulled depends on it;
* image sizes and layers: the image catalogue's where it lists the image, else the recording's
  registry cache (``registry-cache.json`` in the recording, filled by lookups with
  ``--registry-settings``), else one opaque layer of the size the nodes' ``status.images`` or the
  kubelet's ``Pulled`` Events report (:func:`recording_catalogue`).

No upstream counterpart.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.embedded.kubelet.pulled_events import PulledEvent, parse_pulled_message
from kubesched.embedded.kubelet.reported_images import opaque_image, status_image_sizes
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue, Layer
from kubesched.images.names import InvalidImageReference, parse_image_ref
from kubesched.modes.record.log import RecordingError, read_records, segments
from kubesched.modes.replay.run import STATUS_UPDATE_SECONDS
from kubesched.modes.startup.analysis import event_time, joined_pulls, pod_started, read_time
from kubesched.prepull.puller_pod import is_puller
from kubesched.trace.workload import Workload, WorkloadPod

__all__ = [
    "Recording",
    "PodHistory",
    "read_recording",
    "recording_workload",
    "recording_catalogue",
    "is_recording",
    "REGISTRY_CACHE",
    "RegistryCache",
    "recorded_pulls",
    "pod_images",
    "reported_sizes",
    "status_phase",
]

log = logging.getLogger(__name__)

#: file of the registry lookups' on-disk cache, inside the recording directory
REGISTRY_CACHE = "registry-cache.json"

Obj = dict[str, Any]


def is_recording(path: str | Path) -> bool:
    """Whether ``path`` is a recording directory (holds ``segment-NNNNNN.jsonl.gz`` files)."""
    p = Path(path)
    try:
        return p.is_dir() and bool(segments(p))
    except RecordingError:
        return False


@dataclass
class PodHistory:
    """One pod (by uid): ``first`` and ``last`` object seen, ``deleted_t`` (record time of its
    delete, None while it exists), ``listed`` (it was in a session's initial list)."""

    first: Obj
    last: Obj
    first_t: float
    deleted_t: float | None = None
    listed: bool = False


@dataclass
class Recording:
    """What :func:`read_recording` found. Times: ``start``/``end`` on the cluster clock (epoch s);
    ``clock(t)`` maps a record time to it. ``nodes_at_start``: Node objects after the first
    session's list; ``nodes``: their last state; ``pods`` by uid; ``events``: the last state of each
    image Event by uid; ``problems``: what could not be read."""

    path: Path
    start: float
    end: float
    clock: Callable[[float], float]
    nodes_at_start: list[Obj]
    nodes: dict[str, Obj]
    pods: dict[str, PodHistory]
    events: dict[str, Obj]
    sessions: int
    problems: list[str] = field(default_factory=list)
    #: node name -> cluster times (epoch s) at which its status.images changed
    image_updates: dict[str, list[float]] = field(default_factory=dict)

    def pod_objects(self) -> list[Obj]:
        """The last state of every pod created while recording (for ``kubesched startup``'s analysis)."""
        return [h.last for h in self.pods.values() if not h.listed]

    def image_events(self) -> list[Obj]:
        """Every recorded image Event (last state)."""
        return list(self.events.values())


def _clock_map(pairs: list[tuple[float, float]]) -> Callable[[float], float]:
    if len(pairs) < 2 or max(t for t, _ in pairs) - min(t for t, _ in pairs) < 1.0:
        if pairs:
            offset = float(np.median([c - t for t, c in pairs]))
            return lambda t: t + offset
        return lambda t: t
    ts = np.array([t for t, _ in pairs])
    cs = np.array([c for _, c in pairs])
    b, a = np.polyfit(ts - ts[0], cs, 1)
    t0 = float(ts[0])
    return lambda t: float(a + b * (t - t0))


def read_recording(path: str | Path) -> Recording:
    """Read a recording directory (see the module docstring). Raises RecordingError when it holds
    no session."""
    problems: list[str] = []
    sessions = 0
    synced_first = False
    first_t: float | None = None
    last_t: float | None = None
    nodes: dict[str, Obj] = {}
    nodes_at_start: list[Obj] = []
    pods: dict[str, PodHistory] = {}
    events: dict[str, Obj] = {}
    pairs: list[tuple[float, float]] = []
    image_updates: dict[str, list[float]] = {}
    listing = False
    for rec in read_records(path, problems):
        op, t = rec.get("op"), rec.get("t")
        if not isinstance(t, int | float):
            continue
        if op == "session":
            sessions += 1
            listing = True
            first_t = t if first_t is None else first_t
            continue
        if first_t is None:
            continue
        last_t = t
        if op == "synced":
            listing = False
            if not synced_first:
                synced_first = True
                nodes_at_start = [dict(n) for n in nodes.values()]
            continue
        kind, obj = rec.get("kind"), rec.get("object")
        if not isinstance(obj, dict) or op not in ("add", "update", "delete"):
            continue
        meta = obj.get("metadata") or {}
        if kind == "Node":
            name = str(meta.get("name"))
            if op == "delete":
                nodes.pop(name, None)
            else:
                before = (nodes.get(name) or {}).get("status") or {}
                if op == "update" and before.get("images") != (obj.get("status") or {}).get("images"):
                    image_updates.setdefault(name, []).append(t)
                nodes[name] = obj
        elif kind == "Pod":
            uid = str(meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}")
            h = pods.get(uid)
            if h is None:
                h = pods[uid] = PodHistory(obj, obj, t, listed=listing and sessions == 1)
                created = read_time(meta.get("creationTimestamp"))
                if not listing and created is not None:
                    pairs.append((t, created))
            h.last = obj
            if op == "delete":
                h.deleted_t = t
        elif kind == "Event":
            uid = str(meta.get("uid") or meta.get("name"))
            if uid not in events and not listing:
                et = event_time(obj)
                if et is not None:
                    pairs.append((t, et))
            events[uid] = obj
    if first_t is None or last_t is None:
        raise RecordingError(f"recording {path}: no session recorded")
    clock = _clock_map(pairs)
    updates = {n: [clock(t) for t in ts] for n, ts in image_updates.items()}
    return Recording(
        Path(path),
        clock(first_t),
        clock(last_t),
        clock,
        nodes_at_start,
        nodes,
        pods,
        events,
        sessions,
        problems,
        updates,
    )


def status_phase(times: list[float], origin: float, period: float) -> float | None:
    """The phase (s in ``[0, period)`` after ``origin``) of a grid of period ``period`` that
    ``times`` (epoch s) fall on: their circular mean modulo ``period``; None without times."""
    if not times:
        return None
    angles = 2 * np.pi * ((np.array(times) - origin) % period) / period
    mean = float(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean()))
    return round(float((mean / (2 * np.pi) * period) % period), 3)


def _finished(pod: Mapping[str, Any]) -> float | None:
    ends = [
        read_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        for cs in (pod.get("status") or {}).get("containerStatuses") or []
    ]
    known = [t for t in ends if t is not None]
    return max(known) if known and len(known) == len(ends) else None


def _stop(recording: Recording, h: PodHistory) -> float | None:
    """When the pod's run ended (cluster clock): its containers' latest ``finishedAt``, or its
    deletion (``deletionTimestamp``, else the delete record's time), whichever came first."""
    finish = _finished(h.last)
    deleted = None
    if h.deleted_t is not None:
        deleted = read_time((h.last.get("metadata") or {}).get("deletionTimestamp")) or recording.clock(
            h.deleted_t
        )
    known = [x for x in (finish, deleted) if x is not None]
    return min(known) if known else None


def _manifest(pod: Mapping[str, Any], name: str) -> dict[str, Any]:
    meta = pod.get("metadata") or {}
    keep = {k: meta[k] for k in ("labels", "annotations", "ownerReferences") if meta.get(k)}
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k not in ("nodeName", "schedulerName")}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": str(meta.get("namespace") or "default"), **keep},
        "spec": spec,
    }


def pod_images(pod: Mapping[str, Any]) -> list[str]:
    """Images of a pod's init and app containers, in order."""
    spec = pod.get("spec") or {}
    return [
        str(c.get("image"))
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, Mapping) and c.get("image")
    ]


def _canonical(ref: str) -> str | None:
    try:
        return parse_image_ref(ref).canonical
    except InvalidImageReference:
        return None


def reported_sizes(recording: Recording) -> dict[str, int]:
    """Image sizes (bytes) the recording reports, by canonical reference: nodes' ``status.images``
    (every name of an entry), then the ``Image size`` of ``Pulled`` Events."""
    sizes = status_image_sizes([*recording.nodes_at_start, *recording.nodes.values()])
    for ev in recording.events.values():
        if ev.get("reason") != "Pulled":
            continue
        pulled = parse_pulled_message(str(ev.get("note") or ev.get("message") or ""))
        if pulled is not None and pulled.size_bytes:
            canon = _canonical(pulled.image)
            if canon is not None:
                sizes.setdefault(canon, pulled.size_bytes)
    return sizes


class RegistryCache:
    """The registry lookups' on-disk cache of a recording (``registry-cache.json``): canonical
    reference -> ``{"digest", "layers": [[digest, bytes], ...]}``. ``lookup(ref)`` answers from
    the file, else from ``fetch(ref)`` (a registry lookup returning ``(digest, layers)`` or None),
    whose answers are written back by :meth:`save`."""

    def __init__(
        self, path: Path, fetch: Callable[[str], tuple[str, list[tuple[str, int]]] | None] | None
    ) -> None:
        self.path = path
        self.fetch = fetch
        self.entries: dict[str, Any] = {}
        self.dirty = False
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise RecordingError(f"{path}: unreadable registry cache: {e}") from None
            if isinstance(data, dict):
                self.entries = data

    def lookup(self, canonical: str) -> CatalogueImage | None:
        entry = self.entries.get(canonical)
        if entry is None and self.fetch is not None:
            got = self.fetch(canonical)
            if got is not None:
                entry = self.entries[canonical] = {"digest": got[0], "layers": [list(x) for x in got[1]]}
                self.dirty = True
        if not isinstance(entry, dict) or not entry.get("layers"):
            return None
        ref = parse_image_ref(canonical)
        layers = tuple(Layer(str(d), int(s)) for d, s in entry["layers"])
        unique = tuple({layer.id: layer for layer in layers}.values())
        return CatalogueImage(
            name=ref.canonical,
            ref=ref,
            image_class="cpu",
            layers=layers,
            source=f"registry (cached in {self.path.name})",
            confidence="verified",
            manifest_digest=entry.get("digest"),
            unique_layers=unique,
        )

    def save(self) -> None:
        if self.dirty:
            self.path.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            self.dirty = False


def recording_catalogue(
    recording: Recording, base: ImageCatalogue, images: Iterable[str], cache: RegistryCache | None = None
) -> tuple[ImageCatalogue, list[str]]:
    """``base`` plus every image of ``images`` it lacks: from ``cache`` (registry layers) or as one
    opaque layer of the reported size (:func:`reported_sizes`). Returns the catalogue and notes
    (images left out: unknown size, or an invalid reference)."""
    sizes = reported_sizes(recording)
    extra: dict[str, CatalogueImage] = {}
    notes: list[str] = []
    for ref in images:
        if base.get(ref) is not None:
            continue
        canon = _canonical(ref)
        if canon is None:
            notes.append(f"image {ref!r}: invalid reference")
            continue
        if canon in extra:
            continue
        image = cache.lookup(canon) if cache is not None else None
        if image is None and canon in sizes:
            image = opaque_image(canon, sizes[canon], "recording (status.images / Pulled size)")
        if image is None:
            notes.append(
                f"image {ref}: size unknown (not in the catalogue, the registry cache, status.images or "
                "a Pulled event)"
            )
            continue
        extra[canon] = image
    if cache is not None:
        cache.save()
    return ImageCatalogue([*base, *extra.values()], f"{base.where} + {recording.path}"), notes


def recording_workload(recording: Recording, catalogue: ImageCatalogue) -> Workload:
    """The trace of a recording (see the module docstring). Pods whose images ``catalogue`` lacks
    are left out, with a note."""
    notes: list[str] = list(recording.problems)
    start, end = recording.start, recording.end
    pods: list[WorkloadPod] = []
    running: list[WorkloadPod] = []
    names: set[str] = set()
    before = unstarted = missing = pending_at_start = pullers = 0
    for h in sorted(
        recording.pods.values(),
        key=lambda h: (read_time(h.first["metadata"].get("creationTimestamp")) or 0.0, h.first_t),
    ):
        meta = h.first.get("metadata") or {}
        if is_puller(h.first):
            pullers += 1
            continue
        created = read_time(meta.get("creationTimestamp"))
        phase = (h.first.get("status") or {}).get("phase")
        if h.listed or created is None or created < start - 1.0:
            if phase in ("Succeeded", "Failed") or any(catalogue.get(i) is None for i in pod_images(h.first)):
                before += 1
                continue
            node = (h.first.get("spec") or {}).get("nodeName")
            stop = _stop(recording, h)
            ns, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
            names.add(f"{ns}/{name}")
            if node:
                manifest = _manifest(h.first, name)
                manifest["spec"]["nodeName"] = node
                running.append(
                    WorkloadPod(
                        name,
                        ns,
                        0.0,
                        None if stop is None else max(0.0, stop - start),
                        manifest,
                        source="running at start",
                    )
                )
            else:
                pending_at_start += 1
                started = pod_started(h.last)
                pods.append(
                    WorkloadPod(
                        name,
                        ns,
                        0.0,
                        None if started is None or stop is None else max(0.0, stop - started),
                        _manifest(h.first, name),
                        source="pending at start",
                    )
                )
            continue
        started = pod_started(h.last)
        stop = _stop(recording, h)
        if started is None and h.deleted_t is not None:
            unstarted += 1
            continue
        if any(catalogue.get(i) is None for i in pod_images(h.first)):
            missing += 1
            continue
        duration = None if started is None or stop is None else max(0.0, stop - started)
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        unique, n = name, 1
        while f"{ns}/{unique}" in names:
            n += 1
            unique = f"{name}-{n}"
        names.add(f"{ns}/{unique}")
        pods.append(
            WorkloadPod(
                unique, ns, max(0.0, created - start), duration, _manifest(h.first, unique), source="recorded"
            )
        )
    if running:
        notes.append(f"{len(running)} pods running at the start hold their nodes and images (not measured)")
    if pending_at_start:
        notes.append(f"{pending_at_start} pods pending at the start arrive at second 0")
    if before:
        notes.append(
            f"{before} pods created before the recording started are left out (finished, or images of "
            "unknown size)"
        )
    if unstarted:
        notes.append(f"{unstarted} pods deleted before they started are left out")
    if pullers:
        notes.append(
            f"{pullers} puller pods of `kubesched run --prepull` are left out (`replay --prepull` plans "
            "its own pre-pulls; their pulls still calibrate the kubelet model)"
        )
    if missing:
        notes.append(f"{missing} pods with images of unknown size are left out")
    nodes: list[Obj] = []
    images: dict[str, tuple[str, ...]] = {}
    for node in recording.nodes_at_start:
        meta = node.get("metadata") or {}
        name = str(meta.get("name"))
        status = {k: v for k, v in (node.get("status") or {}).items() if k != "images"}
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {k: v for k, v in meta.items() if k in ("name", "labels", "annotations")},
                "spec": node.get("spec") or {},
                "status": status,
            }
        )
        present = []
        for entry in (node.get("status") or {}).get("images") or []:
            for ref in entry.get("names") or []:
                image = catalogue.get(str(ref)) if "@" not in str(ref) else None
                if image is not None:
                    present.append(image.name)
                    break
        images[name] = tuple(dict.fromkeys(present))
    pods.sort(key=lambda p: (p.arrival, p.key))
    phases = {}
    for name in images:
        phase = status_phase(recording.image_updates.get(name, []), start, STATUS_UPDATE_SECONDS)
        if phase is not None:
            phases[name] = phase
    return Workload(
        nodes,
        pods,
        horizon=max(0.0, end - start),
        origin=start,
        description=f"recording {recording.path}",
        notes=tuple(notes),
        images=images,
        status_phases=phases,
        running=running,
    )


def recorded_pulls(recording: Recording) -> tuple[list[PulledEvent], int]:
    """The pulls of the recording's ``Pulled`` Events, for calibrating the kubelet model, and how
    many were left out because they joined another pod's pull of the image on the node
    (:func:`~kubesched.modes.startup.analysis.joined_pulls`: such an Event reports the whole size
    for a part of the pull). The node is the pod's ``spec.nodeName``, else the Event's source host."""
    node_of: dict[str, str] = {}
    for h in recording.pods.values():
        node = (h.last.get("spec") or {}).get("nodeName")
        if node:
            node_of[str((h.last.get("metadata") or {}).get("uid"))] = str(node)
    found: list[tuple[PulledEvent, float]] = []
    for ev in recording.events.values():
        if ev.get("reason") != "Pulled":
            continue
        regarding = ev.get("regarding") or ev.get("involvedObject") or {}
        source = ev.get("deprecatedSource") or ev.get("source") or {}
        node = node_of.get(str(regarding.get("uid"))) or str(source.get("host") or "")
        pulled = parse_pulled_message(str(ev.get("note") or ev.get("message") or ""), node)
        t = event_time(ev)
        if pulled is not None and t is not None:
            found.append((pulled, t))
    joined = joined_pulls([(p.node, p.image, t - p.seconds, t) for p, t in found])
    return [p for i, (p, _) in enumerate(found) if i not in joined], len(joined)
