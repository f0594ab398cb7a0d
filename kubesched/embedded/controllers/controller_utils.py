"""Helpers shared by the workload controllers, after ``pkg/controller/controller_utils.go`` and
``pkg/api/v1/pod/util.go``: controller references, pods from templates, pod activity, readiness
and availability, and the work queue the controllers run their syncs from.

:class:`WorkQueue` stands for client-go's rate-limited work queue: keys added from the store's
watch handlers (any thread) are synced one at a time on the cluster clock's timer thread
(``clock.call_later``), each key at most once per drain however often it was added; a sync may
add keys again (also after a delay). On a virtual clock the syncs run as time is advanced.

The controllers watch their own kind from the start (every existing object is synced once) and
pods (and nodes) from the current resourceVersion only: the first sync of each owner looks at
every pod anyway, so replaying thousands of existing pods one event at a time would only repeat
that work.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.labels import parse_label_selector
from kubesched.api.timestamps import parse_rfc3339
from kubesched.clock import Clock
from kubesched.errors import KubeschedError, ManifestError

__all__ = [
    "PodAdmission",
    "WorkQueue",
    "compute_hash",
    "controller_ref",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "label_selector_matcher",
    "mapping_field",
    "new_controller_ref",
    "pod_from_template",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: What the API server does to a new pod before storing it (defaults, priority, default
#: tolerations); the controllers create pods through it. Identity when there is no API server.
PodAdmission = Callable[[Obj], Obj]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def mapping_field(obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is a mapping (as a dict), else an empty dict: a missing or malformed
    field (``spec: null``) reads as empty."""
    value = obj.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def label_selector_matcher(selector: Any) -> Callable[[Mapping[str, str]], bool]:
    """A predicate over label dicts for a workload's ``spec.selector`` (a missing, empty or
    malformed selector matches nothing: workloads require one)."""
    try:
        parsed = parse_label_selector(selector, "spec.selector")
    except ManifestError:
        return lambda labels: False
    if parsed is None or parsed.empty:
        return lambda labels: False
    return parsed.matches


def owner_refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``metadata.ownerReferences`` as a list of mappings: a malformed field (not a list, or
    entries that are not objects) reads as no references."""
    refs = _meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, Mapping)] if isinstance(refs, list) else []


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``ownerReferences`` entry with ``controller: true`` (``metav1.GetControllerOf``)."""
    for ref in owner_refs(obj):
        if ref.get("controller"):
            return ref
    return None


def new_controller_ref(owner: Mapping[str, Any]) -> Obj:
    """``metav1.NewControllerRef``: a controller reference to ``owner`` that blocks its deletion."""
    meta = _meta(owner)
    return {
        "apiVersion": owner.get("apiVersion"),
        "kind": owner.get("kind"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_from_template(
    template: Mapping[str, Any],
    owner: Mapping[str, Any],
    *,
    name: str | None = None,
    generate_name: str | None = None,
) -> Obj:
    """``GetPodFromTemplate``: a pod with the template's labels, annotations, finalizers and spec,
    controlled by ``owner``, in its namespace; named ``name`` or ``generate_name`` + random
    suffix (``<owner>-`` by default, ``getPodsPrefix``)."""
    tmeta = mapping_field(template, "metadata")
    meta: Obj = {
        "namespace": _meta(owner).get("namespace") or "default",
        "ownerReferences": [new_controller_ref(owner)],
    }
    if name is not None:
        meta["name"] = name
    else:
        meta["generateName"] = generate_name if generate_name is not None else f"{_meta(owner).get('name')}-"
    for key in ("labels", "annotations", "finalizers"):
        if tmeta.get(key):
            meta[key] = dict(tmeta[key]) if isinstance(tmeta[key], Mapping) else list(tmeta[key])
    spec = mapping_field(template, "spec")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(spec)}


_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: SafeEncodeString


def compute_hash(template: Any, collision_count: int | None = None) -> str:
    """``ComputeHash``: the ``pod-template-hash`` / ``controller-revision-hash`` of a pod template
    (a short string of ``bcdfghjklmnpqrstvwxz2456789``): fnv-32a over the template, then, when
    ``collision_count`` is given, its 8 little-endian bytes (``binary.LittleEndian.PutUint32`` into
    an 8-byte buffer), the sum's decimal text encoded by ``rand.SafeEncodeString``.

    Upstream hashes Go's printing of the typed ``PodTemplateSpec`` (``hashutil.DeepHashObject``:
    ``spew`` with every zero-valued field of the struct); this hashes the template's canonical
    JSON instead, so the values differ from upstream's (equal templates still hash equal, and any
    change of the template changes the hash)."""
    h = 0x811C9DC5
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += (int(collision_count) & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """``IsPodActive``: not Succeeded or Failed and not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not _meta(pod).get("deletionTimestamp")


def _ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            return cond
    return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """``IsPodReady``: the ``Ready`` condition is ``True``."""
    cond = _ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: float, now: float) -> bool:
    """``IsPodAvailable``: ready for at least ``min_ready_seconds`` (seconds) at ``now``."""
    cond = _ready_condition(pod)
    if cond is None or cond.get("status") != "True":
        return False
    if min_ready_seconds <= 0:
        return True
    since = cond.get("lastTransitionTime")
    if not since:
        return False
    try:
        return parse_rfc3339(str(since)) + min_ready_seconds <= now
    except ValueError:
        return False


class WorkQueue:
    """Keys synced by ``sync(key)`` on ``clock`` (module docstring); ``name`` labels log lines."""

    def __init__(self, clock: Clock, sync: Callable[[str], None], name: str) -> None:
        self.clock = clock
        self._sync = sync
        self.name = name
        self._pending: dict[str, None] = {}
        self._waiting: dict[str, float] = {}
        self._scheduled = False
        self._lock = threading.Lock()
        self.closed = False

    def add(self, key: str) -> None:
        with self._lock:
            if self.closed:
                return
            self._pending[key] = None
            if self._scheduled:
                return
            self._scheduled = True
        self.clock.call_later(0.0, self._drain)

    def add_after(self, key: str, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds of the clock (a key already waiting to be added
        no later is not added again, as client-go's delaying queue)."""
        due = self.clock.now() + max(0.0, delay)
        with self._lock:
            waiting = self._waiting.get(key)
            if waiting is not None and waiting <= due:
                return
            self._waiting[key] = due

        def fire() -> None:
            with self._lock:
                if self._waiting.get(key) != due:
                    return  # superseded by an earlier add_after
                del self._waiting[key]
            self.add(key)

        self.clock.call_later(max(0.0, delay), fire, daemon=True)

    def _drain(self) -> None:
        with self._lock:
            keys = list(self._pending)
            self._pending.clear()
            self._scheduled = False
        for key in keys:
            if self.closed:
                return
            try:
                self._sync(key)
            except KubeschedError as e:
                log.info("%s controller: syncing %s: %s (retrying)", self.name, key, e)
                self.add_after(key, 1.0)
            except Exception:  # noqa: BLE001 - one object's failure never stops a controller
                log.exception("%s controller: syncing %s failed", self.name, key)
