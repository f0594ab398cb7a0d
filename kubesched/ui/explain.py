""" "Why this pod": one attempt re-run with a recorder on the exact cluster state it saw.

:func:`explain_attempt` rebuilds the embedded cluster at the attempt's resourceVersion
(:meth:`kubesched.ui.history.AttemptLog.objects_at`), starts a fresh scheduler with the same
configuration, restores the random state and the rotating node start index
(``pkg/scheduler/schedule_one.go: findNodesThatPassFilters``, ``nextStartNodeIndex``), and runs that
pod's scheduling cycle once (``schedule_one.go: ScheduleOne``) with a
:class:`~kubesched.framework.recorder.CycleRecorder` attached. The result must match the recorded
outcome; ``reproduced`` says whether it did (same node, or the same FailedScheduling message).

:class:`Explanation` turns the recorder into what the page shows: a summary by reason (the counts
behind ``0/N nodes are available: ...``) and one row per evaluated node with every Filter
plugin's verdict and every Score plugin's raw, normalised and weighted score, sortable and paged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.controllers.manager import ControllerManager
from kubesched.embedded.store import MemoryCluster
from kubesched.framework.recorder import CycleRecorder
from kubesched.scheduler.factory import new_scheduler
from kubesched.ui.history import Attempt, AttemptLog, unpack_rng_state

__all__ = ["Explanation", "ExplainError", "explain_attempt", "explain_objects", "SORT_KEYS", "MAX_PAGE"]

#: largest page of node rows one request returns
MAX_PAGE = 1000
#: sort keys besides ``filter:<Plugin>``, ``raw:<Plugin>``, ``normalized:<Plugin>``, ``score:<Plugin>``
SORT_KEYS = ("node", "total", "verdict")


class ExplainError(Exception):
    """The attempt cannot be re-run (the pod is not in the rebuilt queue); the message says why."""


@dataclass
class Explanation:
    """One attempt's recorded verdicts and scores (see the module docstring).

    ``record``: the recorder's JSON (``simulate -o json`` ``results[]`` entry); ``nodes_total``:
    nodes in the snapshot; ``selected``: node chosen by the re-run; ``outcome``: ``(result, message)``
    of the re-run; ``reproduced``: None when there is no recorded outcome to compare with.
    """

    pod: str
    attempt: int
    record: dict[str, Any]
    nodes_total: int
    selected: str | None
    outcome: tuple[str | None, str]
    reproduced: bool | None

    def __post_init__(self) -> None:
        rec = self.record
        self.filter_plugins = _columns(rec["filter"])
        self.score_plugins = _columns(rec["score"])
        scores, norm, final = rec["score"], rec["normalizedScore"], rec["finalScore"]
        rows = []
        for i, (node, per_node) in enumerate(rec["filter"].items()):
            fail = next(((pl, st) for pl, st in per_node.items() if st["code"] != "Success"), None)
            row: dict[str, Any] = {
                "node": node,
                "order": i,
                "feasible": fail is None,
                "failedPlugin": fail[0] if fail else None,
                "reason": (", ".join(fail[1]["reasons"]) or fail[1]["code"]) if fail else None,
                "filter": {pl: _verdict(st) for pl, st in per_node.items()},
                "scores": {
                    pl: [raw, norm.get(node, {}).get(pl), final.get(node, {}).get(pl)]
                    for pl, raw in scores.get(node, {}).items()
                },
                "selected": node == self.selected,
            }
            row["total"] = sum(f for f in final.get(node, {}).values()) if node in final else None
            rows.append(row)
        self.rows = rows

    def summary(self) -> dict[str, Any]:
        """``{"evaluated", "feasible", "notEvaluated", "reasons": [{"plugin", "reason", "nodes"}]}``;
        reasons by node count, largest first (ties by reason). A node counts once per reason of its
        first failing Filter plugin, as in the FitError message."""
        counts: dict[tuple[str, str], int] = {}
        for r in self.rows:
            if r["feasible"]:
                continue
            pl = r["failedPlugin"]
            for reason in self.record["filter"][r["node"]][pl]["reasons"] or [
                self.record["filter"][r["node"]][pl]["code"]
            ]:
                counts[(pl, reason)] = counts.get((pl, reason), 0) + 1
        reasons = [
            {"plugin": pl, "reason": reason, "nodes": n}
            for (pl, reason), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][1], kv[0][0]))
        ]
        feasible = sum(1 for r in self.rows if r["feasible"])
        return {
            "evaluated": len(self.rows),
            "feasible": feasible,
            "notEvaluated": max(0, self.nodes_total - len(self.rows)),
            "reasons": reasons,
        }

    def page(
        self,
        *,
        sort: str = "default",
        desc: bool = False,
        offset: int = 0,
        limit: int = 100,
        reason: str | None = None,
        node: str | None = None,
        feasible: bool | None = None,
    ) -> dict[str, Any]:
        """Rows ``offset .. offset+limit`` after filtering (``reason``: exact reason of the first
        failing plugin, ``node``: substring of the name, ``feasible``) and sorting.

        ``sort``: ``default`` (selected node first, then total score high to low, then feasible
        before infeasible in evaluation order), ``node``, ``total``, ``verdict`` (failing plugin,
        then reason), ``filter:<Plugin>``, ``raw:<Plugin>``, ``normalized:<Plugin>`` or
        ``score:<Plugin>`` (weighted). Missing values sort last either way. Raises ValueError for
        an unknown key or a bad range."""
        if limit < 1 or limit > MAX_PAGE or offset < 0:
            raise ValueError(f"limit must be 1..{MAX_PAGE} and offset >= 0")
        rows = self.rows
        if reason is not None:
            rows = [r for r in rows if r["reason"] == reason]
        if node:
            rows = [r for r in rows if node in r["node"]]
        if feasible is not None:
            rows = [r for r in rows if r["feasible"] is feasible]
        rows = sorted(rows, key=self._sort_key(sort, desc))
        return {
            "total": len(rows),
            "offset": offset,
            "limit": limit,
            "sort": sort,
            "desc": desc,
            "rows": rows[offset : offset + limit],
        }

    def _sort_key(self, sort: str, desc: bool) -> Callable[[dict[str, Any]], Any]:
        sign = -1 if desc else 1
        if sort == "default":
            return lambda r: (
                not r["selected"],
                r["total"] is None,
                -(r["total"] or 0),
                not r["feasible"],
                r["order"],
            )
        if sort == "node":
            return lambda r: _Rev(r["node"]) if desc else r["node"]
        if sort == "total":
            return lambda r: (r["total"] is None, sign * (r["total"] or 0), r["order"])
        if sort == "verdict":
            return lambda r: (
                r["feasible"] if not desc else not r["feasible"],
                r["failedPlugin"] or "",
                r["reason"] or "",
                r["order"],
            )
        kind, _, plugin = sort.partition(":")
        if kind == "filter" and plugin in self.filter_plugins:
            return lambda r: (
                plugin not in r["filter"],
                _Rev(r["filter"].get(plugin, "")) if desc else r["filter"].get(plugin, ""),
                r["order"],
            )
        index = {"raw": 0, "normalized": 1, "score": 2}.get(kind)
        if index is not None and plugin in self.score_plugins:

            def key(r: dict[str, Any]) -> Any:
                v = r["scores"].get(plugin, [None, None, None])[index]
                return (v is None, sign * (v or 0), r["order"])

            return key
        raise ValueError(f"unknown sort key {sort!r}")

    def to_dict(self) -> dict[str, Any]:
        """Everything but the node rows (those come paged, see :meth:`page`)."""
        rec = self.record
        return {
            "pod": self.pod,
            "attempt": self.attempt,
            "selectedNode": self.selected,
            "result": self.outcome[0],
            "message": self.outcome[1],
            "reproduced": self.reproduced,
            "nodes": self.nodes_total,
            "filterPlugins": self.filter_plugins,
            "scorePlugins": self.score_plugins,
            "summary": self.summary(),
            "preFilter": rec["preFilter"],
            "postFilter": rec["postFilter"],
            "preScore": rec["preScore"],
            "reserve": rec["reserve"],
            "permit": rec["permit"],
            "preBind": rec["preBind"],
            "bind": rec["bind"],
        }


class _Rev(str):
    """A string sorting in reverse."""

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)


def _columns(per_node: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for plugins in per_node.values():
        for pl in plugins:
            if pl not in seen:
                seen.add(pl)
                out.append(pl)
    return out


def _verdict(st: dict[str, Any]) -> str:
    if st["code"] == "Success":
        return "Success"
    reasons = ", ".join(st.get("reasons") or [])
    return f"{st['code']}: {reasons}" if reasons else str(st["code"])


def explain_attempt(
    log: AttemptLog, attempt: Attempt, config: KubeSchedulerConfiguration | None
) -> Explanation:
    """Re-run ``attempt`` on the cluster as it was (see the module docstring). Raises ExplainError."""
    objects = log.objects_at(attempt.resource_version)
    return explain_objects(objects, attempt.pod, config, time=attempt.time, attempt=attempt)


def explain_objects(
    objects: list[dict[str, Any]],
    pod_key: str,
    config: KubeSchedulerConfiguration | None,
    *,
    time: float,
    attempt: Attempt | None = None,
) -> Explanation:
    """One scheduling cycle of ``pod_key`` against ``objects`` at virtual ``time`` (epoch seconds);
    with ``attempt``, its random state and start index are restored and the outcome is compared.
    Nothing outside the throw-away embedded cluster is written. Raises ExplainError when the pod
    is not pending in ``objects`` (bound, gated, deleted, or for another scheduler)."""
    clock = VirtualClock(time)
    cluster = MemoryCluster(clock)
    cluster.load(objects)
    ControllerManager(
        cluster, clock
    ).start()  # as in simulate: PreBind waits for them to bind and allocate claims
    sched = new_scheduler(
        cluster, config, clock=clock, seed=0, record=lambda p: bool(p.key == pod_key), on_skipped_plugins=None
    )
    sched.start()
    qpi = sched.pop_pending(pod_key)
    if qpi is None:
        raise ExplainError(
            f"pod {pod_key} is not waiting to be scheduled in that cluster state "
            f"(bound, gated, deleted, or for another scheduler)"
        )
    if attempt is not None:
        sched.rng.setstate(unpack_rng_state(attempt.rng_state))
        sched.placement.next_start_node_index = attempt.start_node_index
    before = cluster.events_total
    sched.schedule_one(qpi)
    recs: list[CycleRecorder] = sched.records.get(pod_key, [])
    if not recs:
        raise ExplainError(f"pod {pod_key}: the scheduling cycle did not run")
    rec = recs[-1]
    result, message = None, ""
    new = cluster.events_total - before
    for e in cluster.events()[-new:] if new > 0 else []:
        reg = e.get("regarding") or {}
        if f"{reg.get('namespace')}/{reg.get('name')}" == pod_key and e.get("reason") in (
            "Scheduled",
            "FailedScheduling",
        ):
            result, message = str(e["reason"]), str(e.get("note") or "")
    reproduced = None
    if attempt is not None and attempt.result is not None:
        if attempt.result == "Scheduled":
            reproduced = rec.selected_node == attempt.node and result == "Scheduled"
        elif attempt.result == "Waiting":  # held at Permit: no Event yet, a Wait status recorded
            reproduced = result is None and any(st["code"] == "Wait" for st in rec.permit.values())
        else:
            reproduced = (result, message) == (attempt.result, attempt.message)
    sched.stop()
    return Explanation(
        pod_key,
        attempt.index if attempt is not None else 0,
        rec.to_dict(),
        len(cluster.list("Node").items),
        rec.selected_node,
        (result, message),
        reproduced,
    )
