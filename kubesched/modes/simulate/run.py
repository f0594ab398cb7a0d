"""``kubesched simulate``: schedule a snapshot's pending pods on the embedded cluster until the
queue is quiet, recording every plugin's verdicts.

The real scheduler (queue, cycle, cache, binding) runs against a :class:`MemoryCluster` on a
:class:`VirtualClock` whose start is the newest ``creationTimestamp`` in the input (or
2025-01-01T00:00:00Z), so the same input and seed give the same output byte for byte.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.api.load_checks import check_loaded_object, check_pod
from kubesched.api.pod import Pod
from kubesched.api.priority import admit_priority
from kubesched.api.timestamps import parse_time
from kubesched.clock import VirtualClock
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.controllers.manager import ControllerManager, expand_workloads
from kubesched.embedded.manifests import Manifest
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ManifestError
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.recorder import CycleRecorder
from kubesched.framework.registry import Registry
from kubesched.modes.simulate.compact import CompactRecords
from kubesched.modes.simulate.origins import pod_origins
from kubesched.scheduler import Scheduler, new_scheduler

DEFAULT_START = 1735689600.0  # 2025-01-01T00:00:00Z
#: safety bound on scheduling attempts per pending pod (a livelock would otherwise never end)
MAX_ATTEMPTS_PER_POD = 50
#: attempts between two progress reports
PROGRESS_EVERY = 200


class SimulationObserver(Protocol):
    """Watches a run: ``loaded`` once the input is in the cluster (before the scheduler's informers
    start), then ``before_attempt``/``after_attempt`` around every scheduling cycle."""

    def loaded(self, cluster: MemoryCluster, sched: Scheduler) -> None: ...

    def before_attempt(self, qpi: QueuedPodInfo) -> None: ...

    def after_attempt(self, qpi: QueuedPodInfo) -> None: ...


@dataclass
class PodOutcome:
    """One pod's result: ``status`` is Scheduled/Unschedulable/Preempted/Gated/Error/Ignored."""

    namespace: str
    name: str
    status: str
    node: str | None
    message: str
    results: list[CycleRecorder] = field(default_factory=list)
    profile: str | None = None
    #: scheduling attempts (compact records count them; full records are one per attempt)
    attempts: int | None = None


@dataclass
class SimulationResult:
    """Outcome of a run: the profile(s), seed, per-pod outcomes and the final cluster objects."""

    profile: str
    seed: int | None
    pods: list[PodOutcome]
    cluster: MemoryCluster
    scheduler: Scheduler
    attempts: int
    #: ``full``: every attempt recorded with every node; ``compact``: only each pod's last attempt, summarised
    detail: str = "full"
    #: wall seconds of the run's phases: ``load`` (checking and parsing the objects, loading them into the
    #: embedded cluster, the scheduler's informers syncing), ``schedule`` (until quiet) and ``collect``
    #: (the per-pod outcomes)
    timings: dict[str, float] = field(default_factory=dict)
    #: compact runs: every attempt, in full, of the pods named by ``full_detail`` (pod key -> records)
    full_records: dict[str, list[CycleRecorder]] = field(default_factory=dict)


def _field(obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """``obj[name]`` when it is a mapping, else ``{}`` (malformed pods are still loaded)."""
    v = obj.get(name)
    return v if isinstance(v, Mapping) else {}


def _start_time(objects: Iterable[Mapping[str, Any]]) -> float:
    latest = DEFAULT_START
    for o in objects:
        try:
            t = parse_time(_field(o, "metadata").get("creationTimestamp"))
        except (ValueError, TypeError):
            t = None
        if t is not None and t > latest:
            latest = t
    return latest


def validate_manifests(
    manifests: list[Manifest],
    parsed: list[Pod] | None = None,
    *,
    invalid: list[tuple[Manifest, str]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Check and prepare the input as an API server would before the scheduler sees it.

    Every Pod and Node is parsed once. Pods get their priority from their PriorityClass
    (:func:`kubesched.api.priority.admit_priority`). Malformed Nodes and duplicate objects raise
    :class:`ManifestError` located at ``file doc N (Kind name)``; malformed Pods are returned in the
    error map (``"ns/name" -> located message``) and still loaded, so they show up as ``Error``.
    ``parsed``: if given, the well-formed Pods are appended to it (parsed from the returned
    objects, for :meth:`kubesched.scheduler.event_handlers.EventHandlers.prime`).
    ``invalid``: if given, every malformed or duplicate object of any kind is appended to it with
    its located message (``nodes.yaml doc 2 (Node n1): status.allocatable.cpu: ...``) and left out
    of the returned objects instead (what ``serve -f`` does: it serves the rest).
    """
    from kubesched.api.node import Node
    from kubesched.api.priority import admit_priority

    classes = {m.name: m.obj for m in manifests if m.kind == "PriorityClass"}
    errors: dict[str, str] = {}
    seen: dict[tuple[str, str, str], Manifest] = {}
    objs = []
    for m in manifests:
        obj = m.obj
        ident = (m.kind, m.namespace or "", m.name)
        first = seen.get(ident)
        if first is not None:
            duplicate = ManifestError("metadata.name", f"duplicate of {first.where}", where=m.where)
            if invalid is None:
                raise duplicate
            invalid.append((m, str(duplicate)))
            continue
        seen[ident] = m
        try:
            if m.kind == "Pod":
                obj = admit_priority(obj, classes)
                pod = check_pod(obj)
                if parsed is not None:
                    parsed.append(pod)
            elif m.kind == "Node":
                Node.from_manifest(obj)
            else:
                check_loaded_object(m.kind, obj)
        except ManifestError as e:
            located = e.located(m.where)
            if invalid is not None:
                invalid.append((m, str(located)))
                continue
            if m.kind != "Pod":
                raise located from None
            errors[f"{m.namespace or 'default'}/{m.name}"] = str(located)
        objs.append(obj)
    return objs, errors


def run_simulation(
    manifests: list[Manifest],
    config: KubeSchedulerConfiguration | None,
    *,
    seed: int | None = None,
    record: bool | Callable[[Pod], bool] = True,
    registry: Registry | None = None,
    compact: bool = False,
    progress: Callable[[int, int, float], None] | None = None,
    observer: SimulationObserver | None = None,
    full_detail: Callable[[Pod], bool] | None = None,
    controllers: bool = True,
    freeze_gc: bool = False,
) -> SimulationResult:
    """Load ``manifests`` into an embedded cluster, schedule every pending pod until quiet and
    return the outcome. Raises ``ManifestError`` for malformed non-Pod objects and ``ConfigError``
    for a bad config; malformed Pods become ``Error`` outcomes.

    ``record``: which pods get per-plugin records (True: all); ``registry``: the plugin registry
    (default: in-tree plus entry points); ``compact``: keep only each pod's last attempt,
    summarised (:mod:`kubesched.modes.simulate.compact`); ``progress``: called every few hundred
    attempts and at the end with (pods settled, pods pending at the start, virtual seconds since
    the start); ``observer`` sees the loaded cluster and every attempt; ``full_detail``: with
    ``compact``, pods whose every attempt is also kept with every node's verdicts
    (``SimulationResult.full_records``, for ``--explain``). With ``controllers`` the
    workload controllers run once before scheduling (:func:`expand_workloads`): Deployments,
    ReplicaSets, StatefulSets, DaemonSets and Jobs without their pods get them, and those pods are
    scheduled and reported with the others. ``freeze_gc``: the cyclic garbage collector is paused
    while the cluster is loaded and, once the informers have listed it, every object alive then
    is frozen (``gc.freeze()``) - for a process that runs one simulation and exits: the loaded
    objects live until the end, and the collector's passes over them are most of its cost; what
    of them is replaced later is still freed by reference counting.
    A library caller that runs many simulations in one process leaves it off."""
    t0 = time.perf_counter()
    if freeze_gc:
        gc.disable()
    try:
        return _run_simulation(
            manifests,
            config,
            seed,
            record,
            registry,
            compact,
            progress,
            observer,
            full_detail,
            controllers,
            freeze_gc,
            t0,
        )
    finally:
        if freeze_gc:
            gc.enable()


def _run_simulation(
    manifests: list[Manifest],
    config: KubeSchedulerConfiguration | None,
    seed: int | None,
    record: bool | Callable[[Pod], bool],
    registry: Registry | None,
    compact: bool,
    progress: Callable[[int, int, float], None] | None,
    observer: SimulationObserver | None,
    full_detail: Callable[[Pod], bool] | None,
    controllers: bool,
    freeze_gc: bool,
    t0: float,
) -> SimulationResult:
    parsed: list[Pod] = []
    objects, pod_errors = validate_manifests(manifests, parsed)
    clock = VirtualClock(_start_time(objects))
    cluster = MemoryCluster(clock)
    cluster.load(objects)
    ControllerManager(cluster, clock).start()  # binds and creates claims as kube-controller-manager would
    expanded: list[str] = []
    if controllers:
        classes = {m.name: m.obj for m in manifests if m.kind == "PriorityClass"}
        expanded = expand_workloads(cluster, clock, lambda pod: admit_priority(pod, classes))
    sched = new_scheduler(cluster, config, clock=clock, seed=seed, record=record, registry=registry)
    sched.handlers.prime(parsed)  # the informers read the stored copies without parsing them again
    del parsed
    records = CompactRecords(full_detail) if compact else None
    if records is not None:
        sched.records = records
        sched.new_recorder = records.new_recorder
    pending_keys = [
        f"{m.namespace or 'default'}/{m.name}"
        for m in manifests
        if m.kind == "Pod"
        and not _field(m.obj, "spec").get("nodeName")
        and _field(m.obj, "status").get("phase") not in ("Succeeded", "Failed")
    ] + expanded
    bound_at_start = {
        f"{m.namespace or 'default'}/{m.name}"
        for m in manifests
        if m.kind == "Pod" and _field(m.obj, "spec").get("nodeName")
    }
    if observer is not None:
        observer.loaded(cluster, sched)
    sched.start()
    if freeze_gc:
        gc.enable()
        gc.freeze()
    t1 = time.perf_counter()
    attempts = 0
    limit = MAX_ATTEMPTS_PER_POD * max(1, len(pending_keys))
    start = clock.now()

    def report() -> None:
        if progress is not None:
            q = sched.pending_pods()
            unsettled = q.active + q.backoff + q.in_flight
            progress(max(0, len(pending_keys) - unsettled), len(pending_keys), clock.now() - start)

    def before(qpi: QueuedPodInfo) -> None:
        if observer is not None:
            observer.before_attempt(qpi)

    def after(qpi: QueuedPodInfo) -> None:
        nonlocal attempts
        if observer is not None:
            observer.after_attempt(qpi)
        attempts += 1
        if attempts % PROGRESS_EVERY == 0:
            report()

    sched.run_until_quiet(max_attempts=limit, before_attempt=before, after_attempt=after)
    report()
    t2 = time.perf_counter()
    if records is not None:
        records.finish()
    profile = ",".join(sched.profile_names())
    outcomes = collect_outcomes(
        sched, cluster, pending_keys, bound_at_start, pod_errors, pod_origins(manifests, cluster.get)
    )
    if records is not None:
        for o in outcomes:
            o.attempts = records.attempts(f"{o.namespace}/{o.name}")
    timings = {"load": t1 - t0, "schedule": t2 - t1, "collect": time.perf_counter() - t2}
    return SimulationResult(
        profile,
        seed,
        outcomes,
        cluster,
        sched,
        attempts,
        "compact" if compact else "full",
        timings,
        records.full_records if records is not None else {},
    )


#: ``Preempted by pod <uid> on node <node>`` (``default_preemption.go: prepareCandidate``'s Event).
_PREEMPTED_BY = re.compile(r"^Preempted by pod (\S+)( on node .*)$")


def collect_outcomes(
    sched: Scheduler,
    cluster: MemoryCluster,
    pending_keys: list[str],
    bound_at_start: set[str],
    pod_errors: Mapping[str, str],
    origin: Callable[[str], str] = lambda key: "",
) -> list[PodOutcome]:
    """Classify every pod that was pending at the start, plus pods preempted during the run and
    bound pods that did not parse (``Error`` rows naming their node: they still count there for
    what can be read of them, see :func:`kubesched.api.pod_partial.readable_pod`).

    A pod whose last attempt failed with an error (a plugin's, PodScheduled reason
    ``SchedulerError``) is an ``Error`` row with the condition's message prefixed by ``origin(key)``
    (:func:`kubesched.modes.simulate.origins.pod_origins`: the file, document and object it came
    from), as the loader's own errors are located."""
    current = {}
    for o in cluster.list("Pod").items:
        meta = _field(o, "metadata")
        current[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = o
    gated = sched.gated_pods()
    profiles = set(sched.profile_names())
    # the Event names the preemptor by UID, as upstream's; the report names it as users do
    by_uid = {str(_field(o, "metadata").get("uid")): key for key, o in current.items()}
    preempted = {}
    for ev in cluster.events():
        if ev.get("reason") == "Preempted":
            reg = ev.get("regarding") or {}
            note = str(ev.get("note") or "")
            m = _PREEMPTED_BY.match(note)
            if m and m.group(1) in by_uid:
                note = f"Preempted by pod {by_uid[m.group(1)]}{m.group(2)}"
            preempted[f"{reg.get('namespace')}/{reg.get('name')}"] = note
    out: list[PodOutcome] = []
    for key in pending_keys:
        ns, name = key.split("/", 1)
        records = sched.records.get(key, [])
        if key in pod_errors:
            out.append(PodOutcome(ns, name, "Error", None, pod_errors[key], records))
            continue
        obj = current.get(key)
        if obj is None:
            out.append(
                PodOutcome(
                    ns, name, "Preempted", None, preempted.get(key, "pod was deleted during the run"), records
                )
            )
            continue
        if _field(obj, "metadata").get("deletionTimestamp") and not _field(obj, "spec").get("nodeName"):
            out.append(PodOutcome(ns, name, "Ignored", None, f"skip schedule deleting pod: {key}", records))
            continue
        spec = _field(obj, "spec")
        sched_name = str(spec.get("schedulerName") or "default-scheduler")
        if spec.get("nodeName"):
            out.append(PodOutcome(ns, name, "Scheduled", spec["nodeName"], "", records))
            continue
        if sched_name not in profiles:
            out.append(
                PodOutcome(ns, name, "Ignored", None, f'no profile for schedulerName "{sched_name}"', records)
            )
            continue
        if key in gated:
            qpi = gated[key]
            s = sched.pre_enqueue_status(qpi.pod)
            out.append(PodOutcome(ns, name, "Gated", None, s.message() if s is not None else "", records))
            continue
        conds = _field(obj, "status").get("conditions")
        cond = (
            next((c for c in conds if isinstance(c, Mapping) and c.get("type") == "PodScheduled"), None)
            if isinstance(conds, list)
            else None
        )
        msg = str(cond.get("message") or "") if cond else ""
        status = "Error" if cond is not None and cond.get("reason") == "SchedulerError" else "Unschedulable"
        if status == "Error":
            where = origin(key)
            msg = f"{where}: {msg}" if where else msg
        out.append(PodOutcome(ns, name, status, None, msg, records))
    for outcome in out:
        pod_obj = current.get(f"{outcome.namespace}/{outcome.name}") or {}
        profile = str(_field(pod_obj, "spec").get("schedulerName") or "default-scheduler")
        outcome.profile = profile if profile in profiles and outcome.status != "Error" else None
    for key in sorted(bound_at_start):
        if key in pod_errors and key in current:
            ns, name = key.split("/", 1)
            node = _field(current[key], "spec").get("nodeName")
            out.append(
                PodOutcome(
                    ns,
                    name,
                    "Error",
                    node if isinstance(node, str) else None,
                    f"{pod_errors[key]} (bound pod, counted on its node for what can be read)",
                    [],
                )
            )
            continue
        if key not in current:
            ns, name = key.split("/", 1)
            out.append(
                PodOutcome(ns, name, "Preempted", None, preempted.get(key, "deleted during the run"), [])
            )
    return out
