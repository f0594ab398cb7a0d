"""What a simulation run keeps so that any pod's attempt can be explained later, on demand.

Recording every plugin's verdict on every node for every pod up front costs gigabytes at 3,000
pods x 1,523 nodes, so a run keeps only, per scheduling attempt, the cluster's resourceVersion, the
virtual time, the scheduler's random state (:mod:`kubesched.ui.rng_states`: a few dozen bytes) and
its rotating node start index, plus the
log of watch events of the kinds the scheduler watches. :func:`objects_at` rebuilds the exact
cluster an attempt saw from that log (the embedded store never edits a stored object in place,
so keeping references is enough); :mod:`kubesched.ui.explain` re-runs that one attempt on it with a
:class:`~kubesched.framework.recorder.CycleRecorder` attached.

The attempt's outcome is read from the Events the scheduler wrote during it (``Scheduled`` /
``FailedScheduling``, the note is the exact upstream message), as ``kubectl describe pod`` shows.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api import kinds
from kubesched.client.client import WatchEvent
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.scheduler import Scheduler
from kubesched.ui.rng_states import RngState, RngStateLog, unpack_rng_state

__all__ = ["Attempt", "AttemptLog", "unpack_rng_state"]

Obj = dict[str, Any]


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt of one pod.

    ``seq``: 0-based position among all attempts of the run; ``index``: 1-based among this pod's;
    ``time``: virtual clock (epoch seconds); ``resource_version``: the cluster's before the attempt;
    ``result``: ``Scheduled`` / ``FailedScheduling`` / ``Waiting`` (Permit) / ``None`` (no Event);
    ``node``: the node chosen (Scheduled, or assumed while Waiting); ``message``: the Event's note;
    ``nominated_node``: ``status.nominatedNodeName`` after the attempt.
    """

    seq: int
    index: int
    pod: str
    profile: str
    time: float
    resource_version: int
    rng_state: RngState
    start_node_index: int
    result: str | None = None
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"attempt", "seq", "time", "result", "node", "message", "nominatedNode"}``."""
        from kubesched.api.timestamps import rfc3339

        return {
            "attempt": self.index,
            "seq": self.seq,
            "time": rfc3339(self.time),
            "result": self.result,
            "node": self.node,
            "message": self.message,
            "nominatedNode": self.nominated_node,
        }


@dataclass
class AttemptLog:
    """A :class:`~kubesched.modes.simulate.run.SimulationObserver` keeping what :func:`objects_at` and the
    explanation need (see the module docstring)."""

    attempts: list[Attempt] = field(default_factory=list)
    by_pod: dict[str, list[Attempt]] = field(default_factory=dict)
    _base: dict[str, dict[str, Obj]] = field(default_factory=dict)
    _changes: list[tuple[int, str, str, Obj]] = field(default_factory=list)
    _change_rvs: list[int] = field(default_factory=list)
    _cluster: MemoryCluster | None = None
    _sched: Scheduler | None = None
    _current: Attempt | None = None
    _rng_states: RngStateLog = field(default_factory=RngStateLog)

    # ---- SimulationObserver ----------------------------------------------------------------------

    def loaded(self, cluster: MemoryCluster, sched: Scheduler) -> None:
        """Take the loaded objects as the base state and start logging changes."""
        self._cluster = cluster
        self._sched = sched
        for obj in cluster.snapshot_objects():
            self._base.setdefault(obj["kind"], {})[_key(obj)] = obj
        rv = cluster.resource_version
        for kind in kinds.watched_kinds():
            cluster.watch(kind, rv, self._on_change)
        cluster.watch("Event", rv, self._on_event)

    def before_attempt(self, qpi: QueuedPodInfo) -> None:
        assert self._cluster is not None and self._sched is not None
        pod = qpi.pod
        mine = self.by_pod.setdefault(pod.key, [])
        a = Attempt(
            seq=len(self.attempts),
            index=len(mine) + 1,
            pod=pod.key,
            profile=pod.scheduler_name,
            time=self._sched.clock.now(),
            resource_version=int(self._cluster.resource_version),
            rng_state=self._rng_states.pack(self._sched.rng),
            start_node_index=self._sched.placement.next_start_node_index,
        )
        self.attempts.append(a)
        mine.append(a)
        self._current = a

    def after_attempt(self, qpi: QueuedPodInfo) -> None:
        a = self._current
        self._current = None
        if a is None or self._cluster is None:
            return
        ns, _, name = a.pod.partition("/")
        try:
            obj = self._cluster.get("Pod", ns, name)
        except NotFoundError:  # deleted during its own attempt (e.g. by a Permit plugin)
            return
        status = obj.get("status") or {}
        a.nominated_node = status.get("nominatedNodeName") or None
        if a.result is None:
            assumed = self._sched.is_assumed(qpi.pod) if self._sched is not None else False
            node = (obj.get("spec") or {}).get("nodeName")
            if node:
                a.result, a.node = "Scheduled", node
            elif assumed:
                a.result = "Waiting"

    # ---- watch handlers --------------------------------------------------------------------------

    def _on_change(self, ev: WatchEvent) -> None:
        rv = int((ev.object.get("metadata") or {}).get("resourceVersion") or 0)
        self._changes.append((rv, ev.type, ev.kind, ev.object))
        self._change_rvs.append(rv)

    def _on_event(self, ev: WatchEvent) -> None:
        a = self._current
        if a is None:
            return
        e = ev.object
        reg = e.get("regarding") or e.get("involvedObject") or {}
        if f"{reg.get('namespace')}/{reg.get('name')}" != a.pod:
            return
        reason = e.get("reason")
        if reason == "Scheduled":
            a.result = "Scheduled"
            note = str(e.get("note") or e.get("message") or "")
            a.message = note
            a.node = note.rsplit(" to ", 1)[-1] if " to " in note else None
        elif reason == "FailedScheduling":
            a.result = "FailedScheduling"
            a.message = str(e.get("note") or e.get("message") or "")

    # ---- reconstruction --------------------------------------------------------------------------

    def objects_at(self, resource_version: int) -> list[Obj]:
        """Every object of the watched kinds (and the other loaded kinds, which nothing changes) as
        the cluster held them at ``resource_version``, kinds in the load order."""
        state = {kind: dict(objs) for kind, objs in self._base.items()}
        end = bisect.bisect_right(self._change_rvs, resource_version)
        for _rv, typ, kind, obj in self._changes[:end]:
            store = state.setdefault(kind, {})
            if typ == "DELETED":
                store.pop(_key(obj), None)
            else:
                store[_key(obj)] = obj
        return [o for objs in state.values() for o in objs.values()]

    def pods(self) -> Iterable[str]:
        """Keys of the pods that had at least one attempt."""
        return self.by_pod.keys()


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    if kinds.is_cluster_scoped(str(obj.get("kind"))):
        return str(meta.get("name"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
