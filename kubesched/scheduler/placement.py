"""Choosing a node for a pod: filtering, scoring and host selection (``pkg/scheduler/schedule_one.go``
``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``numFeasibleNodesToFind``, ``prioritizeNodes``, ``selectHost``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

import numpy as np

from kubesched.api.pod import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, FitError
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.opportunistic_batch import SortedScoredNodes
from kubesched.framework.recorder import CycleRecorder
from kubesched.framework.results import NodePluginScores, PluginScore
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.logs.kv import KObj, v_info
from kubesched.scheduler.tie_break import draw_zero, last_zero_of_run

log = logging.getLogger(__name__)

BATCH = "batch"
PER_NODE = "per-node"

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: ``MaxExtenderPriority``
MAX_EXTENDER_PRIORITY = 10
#: below this many nodes to visit the per-node path is used (NumPy's fixed costs dominate)
BATCH_MIN_NODES = 32


class NoNodesAvailableError(Exception):
    """``ErrNoNodesAvailable``: the snapshot holds no node."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


class SchedulingError(Exception):
    """An Error status raised out of a scheduling cycle."""

    def __init__(self, status: Status) -> None:
        self.status = status
        super().__init__(status.message())


@dataclass
class ScheduleResult:
    """``suggested_host``, ``evaluated_nodes`` (feasible + rejected) and ``feasible_nodes``."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for among ``num_all_nodes`` (``pkg/scheduler/schedule_one.go``
    ``numFeasibleNodesToFind``). ``percentage``
    ``None`` or 0 means adaptive: ``50 - n/125`` percent, at least 5 percent, at least 100 nodes."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


class Placement:
    """Stateful node search for one scheduler: keeps ``next_start_node_index`` across cycles."""

    def __init__(
        self, rng: random.Random, extenders: Sequence[Any] = (), global_percentage: int | None = None
    ) -> None:
        self.rng = rng
        self.extenders = list(extenders)
        self.global_percentage = global_percentage
        self.next_start_node_index = 0
        #: rows (NodeTable) of the feasible nodes of the current cycle when the batch filter ran
        self._feasible_rows: Any = None
        self._table: Any = None
        self._table_list: Any = None
        #: position of the node :meth:`select_host_batch` / :meth:`select_host` chose last in the
        #: list it was given
        self.selected_index = 0
        #: the current cycle's count while OpportunisticBatching runs for it, its hint and signature
        self._batch_cycle: int | None = None
        self._hint = ""
        self._signature: bytes | None = None
        #: batch Filter chunks whose rejected nodes' exact statuses are not computed yet (resolved
        #: by :meth:`resolve_deferred_statuses` when no node fits) and how many nodes they hold
        self._deferred: list[tuple[Any, Any, Any, Any, dict[int, Status | None]]] = []
        self._deferred_count = 0

    def schedule_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, cycle: int | None = None
    ) -> ScheduleResult:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``schedulePod``. ``cycle`` is the scheduling
        queue's cycle count of this attempt; with it, and the profile's OpportunisticBatching on,
        the previous cycle's ranking may give a node hint and this cycle's results are stored
        (:mod:`kubesched.framework.opportunistic_batch`). Raises :class:`NoNodesAvailableError`,
        :class:`FitError` or :class:`SchedulingError`."""
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailableError()
        self._feasible_rows = None
        self._table = snapshot.node_table if not self.extenders else None
        self._table_list = snapshot.node_info_list
        batch = fwk.batch if cycle is not None else None
        self._batch_cycle = cycle if batch is not None else None
        self._hint = ""
        self._signature = None
        self._deferred = []
        self._deferred_count = 0
        try:
            feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod, snapshot)
            rows = self._feasible_rows
            if not feasible:
                self.resolve_deferred_statuses(fwk, state, pod, diagnosis)
        finally:
            self._feasible_rows = None
            self._table = None
            self._table_list = None
            self._batch_cycle = None
        hint, signature = self._hint, self._signature
        if not feasible:
            raise FitError(pod.key, snapshot.num_nodes(), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status) + self._deferred_count
        self._deferred = []
        self._deferred_count = 0
        rec = state.recorder
        if len(feasible) == 1:
            if rec is not None:
                rec.selected_node = feasible[0].name
            if batch is not None:
                batch.store_schedule_results(signature, hint, feasible[0].name, None, cycle or 0)
            return ScheduleResult(feasible[0].name, evaluated, 1)
        if rows is not None and fwk.has_score_plugins():
            if rec is not None:
                rec.score_path = BATCH
            totals = self.prioritize_nodes_batch(fwk, state, pod, snapshot.node_table, rows, feasible)
            host = self.select_host_batch(totals, feasible)
            if rec is not None:
                rec.selected_node = host
                rec.selected_index = self.selected_index
            if batch is not None:
                others = SortedScoredNodes(_Names(feasible), totals.copy(), self.selected_index, self.rng)
                batch.store_schedule_results(signature, hint, host, others, cycle or 0)
            return ScheduleResult(host, evaluated, len(feasible))
        if rec is not None:
            rec.score_path = PER_NODE
        scores = self.prioritize_nodes(fwk, state, pod, feasible)
        host = self.select_host(scores)
        if rec is not None:
            rec.selected_node = host
        if batch is not None:
            others = SortedScoredNodes(
                [nps.name for nps in scores],
                [nps.total_score for nps in scores],
                self.selected_index,
                self.rng,
            )
            batch.store_schedule_results(signature, hint, host, others, cycle or 0)
        return ScheduleResult(host, evaluated, len(feasible))

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``findNodesThatFitPod``: PreFilter, the nominated-node
        fast path, then filtering."""
        diagnosis = Diagnosis()
        all_nodes = snapshot.list()
        pre_res, s, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins)
        if s is not None and not s.is_success():
            if not s.is_rejected():
                raise SchedulingError(s)
            diagnosis.node_to_status.absent_nodes_status = s
            diagnosis.pre_filter_msg = s.message()
            diagnosis.add_plugin_status(s)
            return [], diagnosis
        hint = ""
        if self._batch_cycle is not None and fwk.batch is not None:
            # the hint is asked for even when the pod has a nominated node (upstream does the same)
            hint, self._signature = fwk.batch.get_node_hint(state, pod, self._batch_cycle)
            self._hint = hint
        # the nominated node (set by preemption) is tried first, else the batch's hint
        # (``evaluateNominatedNode``: Filter and extenders on that node alone)
        nnn = pod.nominated_node_name or hint
        if nnn:
            ni = snapshot.get(nnn)
            if ni is not None:
                feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, [ni])
                feasible = self.run_extender_filters(pod, feasible, diagnosis)
                if feasible:
                    return feasible, diagnosis
        if pre_res is None or pre_res.node_names is None:
            nodes = all_nodes
        else:
            nodes = [ni for n in sorted(pre_res.node_names) if (ni := snapshot.get(n)) is not None]
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
            )
        return self._filter_and_extend(fwk, state, pod, diagnosis, nodes, len(all_nodes)), diagnosis

    def _filter_and_extend(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: list[NodeInfo],
        num_all_nodes: int,
    ) -> list[NodeInfo]:
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        processed = len(feasible) + len(diagnosis.node_to_status) + self._deferred_count
        if num_all_nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % num_all_nodes
        feasible2 = self.run_extender_filters(pod, feasible, diagnosis)
        if len(feasible2) != len(feasible):
            diagnosis.unschedulable_plugins.add("Extender")
        return feasible2

    def find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: list[NodeInfo]
    ) -> list[NodeInfo]:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``findNodesThatPassFilters`` /
        ``numFeasibleNodesToFind``: visit ``nodes`` from the rotating start index until enough
        feasible nodes are found. Times the Filter extension point into the framework's sink (upstream's deferred
        observation in ``findNodesThatPassFilters``: Success, or Error when it raised)."""
        sink = fwk.sink
        if not sink.enabled:
            return self._find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        t0 = perf_counter()
        code = "Error"
        try:
            out = self._find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
            code = "Success"
            return out
        finally:
            sink.extension_point_duration("Filter", code, fwk.profile_name, perf_counter() - t0)

    def _batch_unavailable(
        self, fwk: Framework, state: CycleState, nodes: list[NodeInfo], n: int
    ) -> str | None:
        """Why the batch Filter path cannot run over ``nodes`` in this cycle (None: it can)."""
        if self.extenders:
            return "extenders are configured"
        table = self._table
        if table is None:
            return "the snapshot has no node table"
        if n < BATCH_MIN_NODES:
            return f"{n} nodes to visit (batch from {BATCH_MIN_NODES})"
        if nodes is not self._table_list:
            return "PreFilter narrowed the nodes"
        if not table.exact or len(table) != n:
            return "the node table does not mirror the snapshot"
        missing = fwk.filter_without_batch(state)
        if missing is not None:
            return f"Filter plugin {missing} has no batch form"
        return None

    def _chose(self, state: CycleState, pod: Pod, path: str, reason: str | None) -> None:
        rec = state.recorder
        if rec is not None:
            # the last Filter pass of the cycle is the one recorded (the nominated-node pass may
            # have gone per-node before the full search): its path and the reason go together
            rec.filter_path = path
            rec.fallback_reason = reason
        if reason is not None:
            v_info(log, 4, "Filter path", pod=KObj(pod.namespace, pod.name), path=path, reason=reason)
        else:
            v_info(log, 4, "Filter path", pod=KObj(pod.namespace, pod.name), path=path)

    def _find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: list[NodeInfo]
    ) -> list[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        target = num_feasible_nodes_to_find(
            fwk.percentage_of_nodes_to_score
            if fwk.percentage_of_nodes_to_score is not None
            else self.global_percentage,
            n,
        )
        if (
            not fwk.has_score_plugins()
            and not any(e.is_prioritizer() for e in self.extenders)
            and not any(e.is_filter() for e in self.extenders)
        ):
            target = 1
        start = self.next_start_node_index % n
        if not fwk.has_filter_plugins():
            return [nodes[(start + i) % n] for i in range(min(target, n))]
        reason = self._batch_unavailable(fwk, state, nodes, n)
        if reason is None:
            why: list[str] = []
            out = self._pass_filters_batch(fwk, state, pod, diagnosis, self._table, n, start, target, why)
            if out is not None:
                self._chose(state, pod, BATCH, None)
                return out
            reason = why[0] if why else "a batch form declined"
        self._chose(state, pod, PER_NODE, reason)
        feasible: list[NodeInfo] = []
        rec = state.recorder
        statuses = diagnosis.node_to_status
        for i in range(n):
            ni = nodes[(start + i) % n]
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni, rec)
            if s is None or s.code == Code.Success:
                feasible.append(ni)
                if len(feasible) >= target:
                    break
            elif s.is_rejected():
                statuses.set(ni.name, s)
                diagnosis.add_plugin_status(s)
            else:
                raise SchedulingError(s)
        return feasible

    def _pass_filters_batch(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        table: Any,
        n: int,
        start: int,
        target: int,
        why: list[str],
    ) -> list[NodeInfo] | None:
        """Vectorised :meth:`find_nodes_that_pass_filters` over the whole snapshot list: filter
        masks per chunk of the visiting order; only rejected visited nodes (for their exact
        statuses) and nodes with nominated pods go through the per-node path. Without a recorder
        the rejected nodes' statuses are put off until no node fits (a scheduled pod's diagnosis
        is never read: only its count of evaluated nodes, which the masks give). ``None``: not
        possible for this pod (a batch form declined; ``why`` says which), nothing was recorded.
        Plugin evaluations are counted and the recorder (when attached) gets the same verdicts
        as the per-node path would record, in the same node order."""
        # rows holding nominated pods, as a membership mask over all rows: one gather per chunk
        # (np.isin sorts both arrays on every call)
        nominated_rows: Any = None
        rec = state.recorder
        infos = table.infos
        if fwk.nominator is not None:
            names = fwk.nominator.nominated_node_names()
            if names:
                found = [r for r in map(table.rows.get, names) if r is not None]
                if found:
                    nominated_rows = np.zeros(len(infos), dtype=bool)
                    nominated_rows[found] = True
        feasible: list[NodeInfo] = []
        feasible_rows: list[Any] = []
        first_out: list[Any] = []
        need = target
        offset = 0
        chunk = min(n, max(need + need // 4 + 16, 128))
        while offset < n and need > 0:
            cnt = min(chunk, n - offset)
            rows = table.visit_rows((start + offset) % n, cnt)
            mask = fwk.run_filter_plugins_batch(state, pod, table, rows, first_out, why)
            if mask is None:
                if offset == 0:
                    return None
                raise SchedulingError(Status(Code.Error, "a Filter plugin's batch form declined mid-cycle"))
            known: dict[int, Status | None] = {}
            known_rec: CycleRecorder | None = CycleRecorder() if rec is not None else None
            if nominated_rows is not None:
                for i in np.flatnonzero(nominated_rows[rows]).tolist():
                    s = fwk.run_filter_plugins_with_nominated_pods(state, pod, infos[rows[i]], known_rec)
                    known[i] = s
                    mask[i] = s is None or s.code == Code.Success
            # the visit stops at the need-th feasible row
            passed = mask.nonzero()[0]
            if len(passed) >= need:
                passed = passed[:need]
                cut = int(passed[-1]) + 1
            else:
                cut = cnt
            rejected = np.flatnonzero(~mask[:cut])
            first = first_out[0]
            if fwk.sink.enabled:
                counted = first[:cut]
                if known:
                    counted = np.delete(counted, [i for i in known if i < cut])
                fwk.record_filter_batch_evaluations(state, counted)
            if rec is None:
                # the exact statuses of rejected nodes are needed only when no node fits (the
                # FitError's diagnosis, PostFilter) or for a recorder: resolved then
                self._deferred.append((table, rows, rejected, first, known))
                # a node already holding a status (the nominated node tried first) is counted once
                dup = 0
                already = diagnosis.node_to_status.statuses
                if already and len(rejected):
                    rejected_rows = rows[rejected]
                    for name in already:
                        r = table.rows.get(name)
                        if r is not None and bool((rejected_rows == r).any()):
                            dup += 1
                self._deferred_count += len(rejected) - dup
            else:
                rejected_status = self._resolve_rejected(
                    fwk, state, pod, diagnosis, table, rows, rejected, first, known
                )
                assert known_rec is not None
                rec.record_filter_chunk(
                    infos,
                    rows[:cut].tolist(),
                    first[:cut].tolist(),
                    rejected_status,
                    {i: known_rec.filter.get(infos[rows[i]].name, {}) for i in known if i < cut},
                    fwk.filter_plugins,
                    state.skip_filter_plugins,
                )
            ok_rows = rows[passed]
            feasible.extend(table.info_array[ok_rows].tolist())
            feasible_rows.append(ok_rows)
            need -= len(ok_rows)
            offset += cut
            chunk = max(chunk, 2 * need + 64)
        self._feasible_rows = np.concatenate(feasible_rows) if len(feasible_rows) != 1 else feasible_rows[0]
        table.note_rows(feasible, self._feasible_rows)
        return feasible

    def _resolve_rejected(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        table: Any,
        rows: Any,
        rejected: Any,
        first: Any,
        known: dict[int, Status | None],
    ) -> dict[int, Status | None]:
        """The exact statuses of the rejected rows of one batch chunk (the first rejecting
        plugin's per-node Filter, shared among rows whose status keys are equal), set in
        ``diagnosis``; raises :class:`SchedulingError` for an Error status or a row the per-node
        Filter accepts."""
        infos = table.infos
        statuses = diagnosis.node_to_status.statuses
        plugins = fwk.filter_plugins
        status_keys = (
            self._status_keys(fwk, state, pod, table, rows, rejected, first) if len(rejected) > 1 else None
        )
        keys = status_keys.tolist() if status_keys is not None else None
        rows_l = rows.tolist()
        first_l = first.tolist()
        shared: dict[tuple[int, int], Status] = {}
        rejected_status: dict[int, Status | None] = {}
        for i in rejected.tolist():
            ni = infos[rows_l[i]]
            if i in known:
                s = known[i]
            elif keys is not None and keys[i] >= 0:
                # rows whose first rejecting plugin gives the same key get equal statuses
                k = (first_l[i], keys[i])
                rep = shared.get(k)
                if rep is not None:
                    # a copy of a rejection already checked and recorded (its plugin is in the
                    # diagnosis already)
                    statuses[ni.name] = rejected_status[i] = Status(
                        rep.code, *rep.reasons, err=rep.err, plugin=rep.plugin
                    )
                    continue
                s = fwk.run_filter_plugin(plugins[first_l[i]], state, pod, ni)
                if s is not None and s.is_rejected():
                    shared[k] = s
            else:
                # earlier plugins pass this node (their masks say so): only the first rejecting one runs
                s = fwk.run_filter_plugin(plugins[first_l[i]], state, pod, ni)
            if s is None or s.code == Code.Success:
                raise SchedulingError(
                    Status(
                        Code.Error,
                        f"batch Filter rejected node {ni.name} that the per-node Filter accepts",
                    )
                )
            if s.is_rejected():
                statuses[ni.name] = s
                diagnosis.add_plugin_status(s)
            else:
                raise SchedulingError(s)
            rejected_status[i] = s
        return rejected_status

    def resolve_deferred_statuses(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis
    ) -> None:
        """Set the statuses of the rejected nodes whose per-node Filter the batch path put off
        (:meth:`_resolve_rejected` per chunk, in visiting order)."""
        deferred, self._deferred, self._deferred_count = self._deferred, [], 0
        for table, rows, rejected, first, known in deferred:
            self._resolve_rejected(fwk, state, pod, diagnosis, table, rows, rejected, first, known)

    @staticmethod
    def _status_keys(
        fwk: Framework, state: CycleState, pod: Pod, table: Any, rows: Any, rejected: Any, first: Any
    ) -> Any:
        """Per row of ``rows`` the ``filter_batch_status_keys`` key of its first rejecting plugin
        (-1 where that plugin has none), or ``None`` when no rejected row has a key."""
        keys = None
        firsts = first[rejected]
        for idx in np.unique(firsts).tolist():
            form = fwk.filter_status_keys(idx)
            if form is None:
                continue
            sel = rejected[firsts == idx]
            try:
                k = form.filter_batch_status_keys(state, pod, table, rows[sel])
            except Exception:  # noqa: BLE001 - the per-node call reports the plugin's error exactly
                k = None
            if k is None:
                continue
            if keys is None:
                keys = np.full(len(rows), -1, dtype=np.int64)
            keys[sel] = k
        return keys

    def prioritize_nodes_batch(
        self, fwk: Framework, state: CycleState, pod: Pod, table: Any, rows: Any, nodes: list[NodeInfo]
    ) -> Any:
        """:meth:`prioritize_nodes` without extenders, as an ``int64`` array of totals over ``rows``."""
        s = fwk.run_pre_score_plugins(state, pod, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)
        totals, s = fwk.run_score_plugins_batch(state, pod, table, rows, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)
        return totals

    def select_host_batch(self, totals: Any, nodes: list[NodeInfo]) -> str:
        """:meth:`select_host` on an array of totals (same RNG draws in the same order, hence the
        same node): ties with the running maximum each draw ``randrange(count)``. The chosen
        position in ``nodes`` is left in ``selected_index``."""
        n = len(totals)
        if n == 0:
            raise SchedulingError(Status(Code.Error, "empty priorityList"))
        self.selected_index = 0
        if n == 1:
            return nodes[0].name
        top = totals.max()
        if totals[0] == top:
            # no node after the first raises the maximum: one run of ties, counts 2, 3, ...
            ties = np.flatnonzero(totals[1:] == top)
            if ties.size == 0:
                return nodes[0].name
            kept = last_zero_of_run(self.rng, int(ties.size))
            if kept >= 0:
                self.selected_index = int(ties[kept]) + 1
            return nodes[self.selected_index].name
        prev = np.maximum.accumulate(totals)[:-1]
        cur = totals[1:]
        is_new_all = cur > prev
        ev = np.flatnonzero(is_new_all | (cur == prev))
        if ev.size == 0:
            return nodes[0].name
        is_new = is_new_all[ev]
        is_tie = ~is_new
        ties_cum = np.cumsum(is_tie)
        base = np.maximum.accumulate(np.where(is_new, ties_cum, 0))
        counts = (ties_cum - base + 1)[is_tie]
        tie_nodes = ev[is_tie] + 1
        news = ev[is_new]
        best = int(news[-1]) + 1 if news.size else 0
        # a tie whose draw is 0 takes the place of the candidate; the last such tie after the
        # last new maximum is the one kept (tie positions increase)
        winners = tie_nodes[draw_zero(self.rng, counts)]
        if winners.size and int(winners[-1]) > best:
            best = int(winners[-1])
        self.selected_index = best
        return nodes[best].name

    def run_extender_filters(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        """Upstream ``pkg/scheduler/extender.go``: extenders filter sequentially over the shrinking list
        (none configured: identity)."""
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_filter() or not ext.is_interested(pod):
                continue
            try:
                kept, failed, failed_unresolvable = ext.filter(pod, feasible)
            except Exception as e:  # noqa: BLE001
                if ext.is_ignorable():
                    v_info(
                        log,
                        0,
                        "Skipping extender as it returned error and has ignorable flag set",
                        extender=ext.name,
                        err=str(e),
                    )
                    continue
                raise SchedulingError(Status(Code.Error, err=e)) from e
            for node, msg in failed_unresolvable.items():
                diagnosis.node_to_status.set(node, Status(Code.UnschedulableAndUnresolvable, msg))
            for node, msg in failed.items():
                if node not in failed_unresolvable:
                    diagnosis.node_to_status.set(node, Status(Code.Unschedulable, msg))
            feasible = kept
        return feasible

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[NodePluginScores]:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``prioritizeNodes``: PreScore, Score (weighted), plus
        extender priorities × weight × 10."""
        prioritizers = [e for e in self.extenders if e.is_prioritizer()] if self.extenders else []
        if not fwk.has_score_plugins() and not prioritizers:
            return [NodePluginScores(ni.name, total_score=1) for ni in nodes]
        s = fwk.run_pre_score_plugins(state, pod, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)
        scores, s = fwk.run_score_plugins(state, pod, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)
        if prioritizers:
            by_name = {nps.name: nps for nps in scores}
            for ext in prioritizers:
                if not ext.is_interested(pod):
                    continue
                try:
                    prios = ext.prioritize(pod, nodes)
                except Exception:  # noqa: BLE001 - upstream ignores prioritize errors
                    continue
                for host, score in prios.items():
                    nps = by_name.get(host)
                    if nps is None:
                        continue
                    final = score * ext.weight * (100 // MAX_EXTENDER_PRIORITY)
                    nps.scores.append(PluginScore(ext.name, final))
                    nps.total_score += final
        return scores

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """Pick uniformly at random among the highest totals (reservoir sampling: the same choice
        as v1.35's score heap, whose random tie-break makes every top node equally likely). The
        chosen position is left in ``selected_index``."""
        if not scores:
            raise SchedulingError(Status(Code.Error, "empty priorityList"))
        best = 0
        max_score = scores[0].total_score
        count = 1
        for i in range(1, len(scores)):
            t = scores[i].total_score
            if t > max_score:
                max_score = t
                best = i
                count = 1
            elif t == max_score:
                count += 1
                if self.rng.randrange(count) == 0:
                    best = i
        self.selected_index = best
        return scores[best].name


class _Names(Sequence[str]):
    """The names of a list of NodeInfos, read on demand (a stored ranking is rarely read)."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self._nodes = nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [ni.name for ni in self._nodes[i]]
        return self._nodes[i].name
