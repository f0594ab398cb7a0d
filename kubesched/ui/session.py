"""The state behind ``kubesched ui``: simulation runs of a snapshot (what-if), or a live cluster.

A :class:`Run` is one ``kubesched simulate`` of the base manifests plus any added objects, with one
configuration; it keeps the :class:`~kubesched.ui.history.AttemptLog` so any pod's attempt can be
explained on demand (:mod:`kubesched.ui.explain`). :class:`Session` holds the runs of a snapshot
(each what-if is a new run; the diff compares two runs). :class:`LiveSession` follows a cluster
through the project's informers; its what-if runs copy the informers' objects into a snapshot and
never write to the cluster.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesched.api import kinds
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.client.informers import InformerSet, ResourceEventHandlerFuncs
from kubesched.config.load import dump_config, load_config_text
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.manifests import Manifest, load_manifest_text
from kubesched.modes.simulate.run import PodOutcome, SimulationResult, run_simulation
from kubesched.ui.cluster_view import PodStatus, live_pod_status
from kubesched.ui.explain import ExplainError, Explanation, explain_attempt, explain_objects
from kubesched.ui.history import AttemptLog

__all__ = [
    "Run",
    "Session",
    "LiveSession",
    "diff_runs",
    "effective_yaml",
    "score_weights",
    "set_score_weights",
    "ExplainError",
    "STARTER_CONFIG",
    "CONFIG_SOURCE",
    "ADDED_SOURCE",
]

#: names the editor's texts in error messages, as file names would be
CONFIG_SOURCE = "config.yaml"
ADDED_SOURCE = "added.yaml"
STARTER_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""
#: explanations kept per run (least recently used dropped first)
EXPLAIN_CACHE = 16


@dataclass
class Run:
    """One simulation: ``id`` (1, 2, ...), the config text it ran (None: upstream default), the
    added objects' YAML, the result, its attempt log and wall seconds."""

    id: int
    config_text: str | None
    config: KubeSchedulerConfiguration | None
    added_text: str
    seed: int | None
    result: SimulationResult
    log: AttemptLog
    wall_seconds: float
    created: float = field(default_factory=time.time)
    _explained: OrderedDict[tuple[str, int], Explanation] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def outcomes(self) -> dict[str, PodOutcome]:
        """``namespace/name`` -> outcome, for every pod the run scheduled (or tried to)."""
        return {f"{p.namespace}/{p.name}": p for p in self.result.pods}

    def parsed_pods(self) -> list[Pod]:
        """The scheduler's own parsed Pods as the run ended: those in its cache (bound and assumed)
        and those left in its queue. Each one's ``raw`` is the stored object it was parsed from, so
        the tables read them instead of parsing every pod again."""
        sched = self.result.scheduler
        pods = [pi.pod for ni in sched.node_infos() for pi in ni.pods]
        pods.extend(sched.queued_pods())
        return pods

    def parsed_nodes(self) -> list[Node]:
        """The scheduler's own parsed Nodes as the run ended (its cache's), ``raw`` as for
        :meth:`parsed_pods`."""
        return [ni.node for ni in self.result.scheduler.node_infos() if ni.node is not None]

    def statuses(self) -> dict[str, PodStatus]:
        """Outcome status, message and attempt count per simulated pod."""
        return {
            k: PodStatus(p.status, p.message, len(self.log.by_pod.get(k, ())))
            for k, p in self.outcomes.items()
        }

    def summary(self) -> dict[str, Any]:
        """``{"id", "profile", "seed", "pods", "counts": {status: n}, "attempts", "wallSeconds", "config", "added"}``."""
        counts: dict[str, int] = {}
        for p in self.result.pods:
            counts[p.status] = counts.get(p.status, 0) + 1
        return {
            "id": self.id,
            "profile": self.result.profile,
            "seed": self.seed,
            "pods": len(self.result.pods),
            "counts": counts,
            "attempts": self.result.attempts,
            "wallSeconds": round(self.wall_seconds, 3),
            "config": self.config_text,
            "added": self.added_text,
        }

    def attempts(self, pod: str) -> list[dict[str, Any]]:
        """The pod's attempt history, oldest first (see :meth:`Attempt.to_dict`)."""
        return [a.to_dict() for a in self.log.by_pod.get(pod, ())]

    def explain(self, pod: str, attempt: int | None = None) -> Explanation:
        """The explanation of attempt ``attempt`` (1-based; default the last) of ``pod``, computed on
        first request and cached. Raises KeyError (unknown pod / no such attempt), ExplainError."""
        history = self.log.by_pod.get(pod)
        if not history:
            out = self.outcomes.get(pod)
            if out is None:
                raise KeyError(f"pod {pod} is not among the simulated pods of run {self.id}")
            why = f"{out.status}: {out.message}" if out.message else out.status
            raise KeyError(f"pod {pod} had no scheduling attempt ({why})")
        index = len(history) if attempt is None else attempt
        if index < 1 or index > len(history):
            raise KeyError(f"pod {pod} has attempts 1..{len(history)}, not {index}")
        with self._lock:
            hit = self._explained.get((pod, index))
            if hit is not None:
                self._explained.move_to_end((pod, index))
                return hit
        ex = explain_attempt(self.log, history[index - 1], self.config)
        with self._lock:
            self._explained[(pod, index)] = ex
            while len(self._explained) > EXPLAIN_CACHE:
                self._explained.popitem(last=False)
        return ex

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """The run's final objects of ``kind``."""
        return list(self.result.cluster.list(kind).items)


def diff_runs(before: Run, after: Run) -> dict[str, Any]:
    """Placements and pending reasons of ``after`` against ``before``.

    ``{"before": id, "after": id, "counts": {"moved", "newlyScheduled", "newlyPending", "messageChanged",
    "statusChanged", "added", "removed", "unchanged"}, "changes": [{"pod", "change", "before": {"status",
    "node", "message"} | null, "after": ...}]}``; changes sorted by change kind, then pod.
    """
    a, b = before.outcomes, after.outcomes
    changes: list[dict[str, Any]] = []
    counts = {
        "moved": 0,
        "newlyScheduled": 0,
        "newlyPending": 0,
        "messageChanged": 0,
        "statusChanged": 0,
        "added": 0,
        "removed": 0,
        "unchanged": 0,
    }
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None:
            kind = "added"
        elif y is None:
            kind = "removed"
        elif x.status == "Scheduled" and y.status == "Scheduled":
            kind = "moved" if x.node != y.node else "unchanged"
        elif y.status == "Scheduled":
            kind = "newlyScheduled"
        elif x.status == "Scheduled":
            kind = "newlyPending"
        elif x.status != y.status:
            kind = "statusChanged"
        elif x.message != y.message:
            kind = "messageChanged"
        else:
            kind = "unchanged"
        counts[kind] += 1
        if kind != "unchanged":
            changes.append({"pod": key, "change": kind, "before": _side(x), "after": _side(y)})
    order = list(counts)
    changes.sort(key=lambda c: (order.index(str(c["change"])), str(c["pod"])))
    return {"before": before.id, "after": after.id, "counts": counts, "changes": changes}


def _side(p: PodOutcome | None) -> dict[str, Any] | None:
    return None if p is None else {"status": p.status, "node": p.node, "message": p.message}


class Session:
    """Runs of one snapshot (``kubesched ui -f ...``): the base manifests, the config text and file
    name used in messages, and the runs so far (ids from 1). Thread-safe; one run at a time."""

    def __init__(
        self,
        manifests: Sequence[Manifest],
        config_text: str | None,
        *,
        config_source: str = CONFIG_SOURCE,
        seed: int | None = 0,
        sources: Sequence[str] = (),
    ) -> None:
        self.manifests = list(manifests)
        self.config_text = config_text
        self.config_source = config_source
        self.seed = seed
        self.sources = list(sources)
        self.runs: list[Run] = []
        self._lock = threading.Lock()
        self.generation = 0

    def parse_config(self, text: str | None) -> KubeSchedulerConfiguration | None:
        """Validate config text as ``--config`` does (same messages, located at the config's file
        name). Empty/None text means the upstream default profile. Raises ConfigError."""
        if text is None or not text.strip():
            return None
        return load_config_text(text, self.config_source)

    def parse_added(self, text: str) -> list[Manifest]:
        """Objects to add, from YAML (messages name ``added.yaml``). Raises ManifestError."""
        if not text.strip():
            return []
        return load_manifest_text(text, ADDED_SOURCE).manifests

    def run(
        self,
        config_text: str | None = None,
        added_text: str = "",
        *,
        keep_config: bool = False,
        freeze_gc: bool = False,
    ) -> Run:
        """Simulate the base manifests plus ``added_text`` with ``config_text`` (``keep_config``: the
        last run's config). Raises ConfigError / ManifestError, nothing is kept then.

        ``freeze_gc`` (``run_simulation``'s): for the first run of ``ui -f`` only. The collector is
        paused while the cluster loads and what is alive then is frozen (``gc.freeze()``): the
        base manifests and the first run's cluster, which the session keeps for as long as it
        serves. Frozen objects are never visited by the cyclic collector again, so a reference
        cycle among them is never freed even when nothing refers to it any more; the session keeps
        every run, so that frees nothing it would free otherwise. Later what-if runs leave it off:
        their clusters are built and dropped while the process serves, and the collector must
        stay free to reclaim them."""
        with self._lock:
            if keep_config:
                config_text = self.runs[-1].config_text if self.runs else self.config_text
            config = self.parse_config(config_text)
            added = self.parse_added(added_text)
            t0 = time.perf_counter()
            log = AttemptLog()
            result = run_simulation(
                self.manifests + added,
                config,
                seed=self.seed,
                record=False,
                observer=log,
                freeze_gc=freeze_gc,
            )
            wall = time.perf_counter() - t0
            r = Run(
                len(self.runs) + 1,
                config_text if config_text and config_text.strip() else None,
                config,
                added_text,
                self.seed,
                result,
                log,
                wall,
            )
            self.runs.append(r)
            self.generation += 1
            return r

    def get(self, run_id: int | None = None) -> Run:
        """Run ``run_id`` (default: the latest). Raises KeyError."""
        if not self.runs:
            raise KeyError("no run yet")
        if run_id is None:
            return self.runs[-1]
        if run_id < 1 or run_id > len(self.runs):
            raise KeyError(f"run {run_id} does not exist (runs 1..{len(self.runs)})")
        return self.runs[run_id - 1]

    def editor_config(self) -> str:
        """The text the config editor starts with: the latest run's config, the ``--config`` file,
        or a minimal default-profile document."""
        if self.runs and self.runs[-1].config_text:
            return self.runs[-1].config_text
        return self.config_text or STARTER_CONFIG

    def effective_config(self, run_id: int | None = None) -> dict[str, Any]:
        """The run's configuration with every default applied (the v1 document)."""
        r = self.get(run_id)
        cfg = r.result.scheduler.config
        return dump_config(cfg)


def score_weights(run: Run) -> dict[str, dict[str, int]]:
    """Per profile (schedulerName), each enabled Score plugin's weight, in the order they run."""
    return run.result.scheduler.score_weights()


def set_score_weights(text: str | None, weights: Mapping[str, Mapping[str, int]]) -> str:
    """``text`` (a KubeSchedulerConfiguration; empty: a minimal one) with, per profile, each given
    plugin's weight set in ``plugins.multiPoint.enabled`` (the entry is added when missing; a
    profile missing from the document is added), which overrides the default weight as in
    upstream's ``pkg/scheduler/apis/config/v1/default_plugins.go: mergePlugins``. Comments are not
    kept. Raises ValueError when the text is not a YAML mapping with a ``profiles`` list or a weight
    is not a positive integer."""
    from kubesched.api.yaml_limits import YAMLLimitError, safe_load

    try:
        doc: Any = safe_load(text) if text and text.strip() else safe_load(STARTER_CONFIG)  # bounded
    except (yaml.YAMLError, YAMLLimitError) as e:
        raise ValueError(f"the configuration is not valid YAML: {' '.join(str(e).split())}") from None
    if not isinstance(doc, dict):
        raise ValueError("the configuration is not a YAML mapping")
    profiles: Any = doc.setdefault("profiles", [])
    if not isinstance(profiles, list):
        raise ValueError("profiles: must be a list")
    for profile_name, per_plugin in weights.items():
        prof: Any = next(
            (
                p
                for p in profiles
                if isinstance(p, dict) and (p.get("schedulerName") or "default-scheduler") == profile_name
            ),
            None,
        )
        if prof is None:
            prof = {"schedulerName": profile_name}
            profiles.append(prof)
        enabled = _child(_child(_child(prof, "plugins", dict), "multiPoint", dict), "enabled", list)
        for plugin, weight in per_plugin.items():
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
                raise ValueError(
                    f"{profile_name}: {plugin}: weight must be a positive integer, got {weight!r}"
                )
            entry = next((e for e in enabled if isinstance(e, dict) and e.get("name") == plugin), None)
            if entry is None:
                enabled.append({"name": plugin, "weight": weight})
            else:
                entry["weight"] = weight
    return yaml.safe_dump(doc, sort_keys=False)


def _child(parent: dict[str, Any], key: str, kind: type) -> Any:
    """``parent[key]``, replaced by a new empty ``kind`` when missing or of another type."""
    v = parent.get(key)
    if not isinstance(v, kind):
        v = parent[key] = kind()
    return v


def effective_yaml(doc: Mapping[str, Any]) -> str:
    """YAML of a config document, keys in their order."""
    return yaml.safe_dump(dict(doc), sort_keys=False)


class LiveSession:
    """A cluster followed through informers (``kubesched ui --kubeconfig``): the same views, read
    from the informers' stores; ``generation`` grows on every watch event. What-if runs snapshot the
    stores into a :class:`Session` (:meth:`snapshot_session`) and never write to the cluster."""

    def __init__(
        self,
        client: Any,
        config_text: str | None,
        *,
        config_source: str = CONFIG_SOURCE,
        config: KubeSchedulerConfiguration | None = None,
    ) -> None:
        self.client = client
        self.config_text = config_text
        self.config_source = config_source
        self.config = config
        self.informers = InformerSet(client, (*kinds.watched_kinds(), "Event"))
        self.generation = 0
        self.whatif: Session | None = None
        self._listeners: list[Callable[[], None]] = []
        bump = ResourceEventHandlerFuncs(
            on_add=lambda _o: self._bump(),
            on_update=lambda _a, _b: self._bump(),
            on_delete=lambda _o: self._bump(),
        )
        for kind in ("Node", "Pod", "Event"):
            self.informers.informer(kind).add_handlers(bump)

    def _bump(self) -> None:
        self.generation += 1
        for cb in list(self._listeners):
            cb()

    def on_change(self, cb: Callable[[], None]) -> None:
        """Call ``cb`` (from the watch thread) after each watch event of Nodes, Pods and Events."""
        self._listeners.append(cb)

    def start(self) -> None:
        """List and watch (Nodes before Pods)."""
        self.informers.start(("Namespace", "Node", "Pod"))

    def stop(self) -> None:
        self.informers.stop()

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """Current objects of ``kind`` in the informer's store."""
        objs = self.informers.list(kind)
        return sorted(
            objs,
            key=lambda o: (
                (o.get("metadata") or {}).get("namespace") or "",
                (o.get("metadata") or {}).get("name") or "",
            ),
        )

    def statuses(self) -> dict[str, PodStatus]:
        """Status per pod from its object (see :func:`~kubesched.ui.cluster_view.live_pod_status`), with
        the number of FailedScheduling/Scheduled Events seen for it as attempts."""
        attempts: dict[str, int] = {}
        for e in self.informers.list("Event"):
            if e.get("reason") in ("FailedScheduling", "Scheduled"):
                reg = e.get("regarding") or {}
                k = f"{reg.get('namespace')}/{reg.get('name')}"
                attempts[k] = attempts.get(k, 0) + int(((e.get("series") or {}).get("count")) or 1)
        out = {}
        for o in self.informers.list("Pod"):
            meta = o.get("metadata") or {}
            k = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
            st = live_pod_status(o)
            out[k] = PodStatus(st.status, st.message, attempts.get(k, 0))
        return out

    def attempts(self, pod: str) -> list[dict[str, Any]]:
        """The pod's scheduling Events (Scheduled / FailedScheduling), oldest first:
        ``{"attempt", "time", "result", "node", "message", "count"}``."""
        rows = []
        for e in self.informers.list("Event"):
            reg = e.get("regarding") or {}
            if f"{reg.get('namespace')}/{reg.get('name')}" != pod or e.get("reason") not in (
                "FailedScheduling",
                "Scheduled",
            ):
                continue
            note = str(e.get("note") or e.get("message") or "")
            t = e.get("eventTime") or (e.get("metadata") or {}).get("creationTimestamp") or ""
            node = note.rsplit(" to ", 1)[-1] if e.get("reason") == "Scheduled" and " to " in note else None
            rows.append(
                {
                    "time": t,
                    "result": e.get("reason"),
                    "node": node,
                    "message": note,
                    "count": int(((e.get("series") or {}).get("count")) or 1),
                }
            )
        rows.sort(key=lambda r: str(r["time"]))
        for i, r in enumerate(rows, 1):
            r["attempt"] = i
        return rows

    def snapshot_manifests(self) -> list[Manifest]:
        """The informers' objects as manifests (``live cluster`` in messages), Events left out."""
        out = []
        for kind in kinds.watched_kinds():
            for i, o in enumerate(self.objects(kind), 1):
                obj = {"kind": kind, **dict(o)}
                out.append(Manifest(obj, f"live cluster {kind}", i))
        return out

    def explain_now(self, pod: str) -> Explanation:
        """One scheduling cycle of a pending ``pod`` against the cluster as the informers see it now,
        on a throw-away embedded copy. Raises ExplainError."""
        objects = [m.obj for m in self.snapshot_manifests()]
        return explain_objects(objects, pod, self.config, time=time.time())

    def snapshot_session(self, *, fresh: bool = False) -> Session:
        """The what-if session on a snapshot of the cluster (taken on first use, or again with ``fresh``)."""
        if self.whatif is None or fresh:
            self.whatif = Session(
                self.snapshot_manifests(),
                self.config_text,
                config_source=self.config_source,
                sources=["live cluster"],
            )
        return self.whatif
