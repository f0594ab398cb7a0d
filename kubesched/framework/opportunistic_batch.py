"""OpportunisticBatching (KEP-5598, Beta and on by default in v1.35): a pod whose signature equals
the previous cycle's pod's reuses that cycle's ranking of nodes instead of running Filter and
Score over every node (``pkg/scheduler/framework/runtime/batch.go``: ``OpportunisticBatch``,
``GetNodeHint``, ``StoreScheduleResults``, ``batchStateCompatible``).

One :class:`OpportunisticBatch` per profile. After a successful ``schedulePod`` the profile stores
the pod's signature, the node chosen, and the other feasible nodes ranked by total score
(:class:`SortedScoredNodes`). The next cycle's pod gets the next node of that ranking as a hint
when all of these hold: the state is not empty; the cycle directly follows the stored one
(otherwise flushed ``pod_skipped``: a pod of another profile, or one that failed, came in between);
the stored cycle succeeded (``pod_failed``); the pod's signature is not nil and equals the stored
one (``pod_incompatible``); the state is younger than 500 ms (``expired``); the node chosen last
time still exists (``node_missing``) and no longer passes Filter for this pod (``node_not_full``:
if it still fits, its new score is unknown, so the ranking cannot be reused). The hint then goes
through Filter alone (as a nominated node does); when it passes it is the pod's node
(``hint_used``, the state kept for the next pod), otherwise the full cycle runs and its results
replace the state (``hint_not_used``). A result stored without a signature flushes the state
(``pod_not_batchable``), one without other feasible nodes too (``empty_list``).

Metrics (``pkg/scheduler/metrics/metrics.go``): ``scheduler_batch_attempts_total{profile,
result}``, ``scheduler_batch_cache_flushed_total{profile, reason}``,
``scheduler_get_node_hint_duration_seconds{hinted, profile}`` and
``scheduler_store_schedule_results_duration_seconds{profile}``.

The 500 ms age is measured on the scheduler's clock (virtual time in ``simulate``, ``replay`` and
``bench``, so that their placements stay reproducible; wall time in ``run``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from kubesched.logs.kv import KObj, v_info, v_level

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.metrics_sink import MetricsSink
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.status import Status

log = logging.getLogger(__name__)

__all__ = [
    "MAX_BATCH_AGE",
    "OpportunisticBatch",
    "PodSignature",
    "SortedScoredNodes",
]

_V4 = v_level(4)

#: ``maxBatchAge``: seconds after which a stored ranking is not reused
MAX_BATCH_AGE: Final = 0.5

#: a marshalled signature (JSON bytes); ``None``: the pod cannot be signed
PodSignature = bytes

BATCH_ATTEMPTS: Final = "scheduler_batch_attempts_total"
BATCH_CACHE_FLUSHED: Final = "scheduler_batch_cache_flushed_total"
GET_NODE_HINT_DURATION: Final = "scheduler_get_node_hint_duration_seconds"
STORE_SCHEDULE_RESULTS_DURATION: Final = "scheduler_store_schedule_results_duration_seconds"

#: ``result`` values of ``scheduler_batch_attempts_total``
ATTEMPT_NO_HINT: Final = "no_hint"
ATTEMPT_HINT_USED: Final = "hint_used"
ATTEMPT_HINT_NOT_USED: Final = "hint_not_used"

#: ``reason`` values of ``scheduler_batch_cache_flushed_total``
FLUSH_POD_FAILED: Final = "pod_failed"
FLUSH_POD_SKIPPED: Final = "pod_skipped"
FLUSH_NODE_MISSING: Final = "node_missing"
FLUSH_NODE_NOT_FULL: Final = "node_not_full"
FLUSH_EMPTY_LIST: Final = "empty_list"
FLUSH_EXPIRED: Final = "expired"
FLUSH_POD_INCOMPATIBLE: Final = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE: Final = "pod_not_batchable"


class SortedScoredNodes:
    """The feasible nodes of a cycle other than the chosen one, best first (upstream
    ``sortedNodeScores``: a heap on total score, equal totals in random order).

    Built from the cycle's node names and totals without sorting; the order is computed on the
    first :meth:`pop` (most stored rankings are replaced before any is read), its random
    tie-break drawn then from ``rng``. ``names`` and ``totals`` are parallel (``totals`` an
    int sequence or array); ``exclude`` is the position of the chosen node."""

    __slots__ = ("_names", "_next", "_order", "_rng", "_totals", "_exclude", "_len")

    def __init__(self, names: Sequence[str], totals: Any, exclude: int, rng: random.Random) -> None:
        self._names = names
        self._totals = totals
        self._exclude = exclude
        self._rng = rng
        self._order: list[int] | None = None
        self._next = 0
        self._len = len(names) - (1 if 0 <= exclude < len(names) else 0)

    def __len__(self) -> int:
        return self._len

    def _sort(self) -> list[int]:
        totals = np.asarray(self._totals, dtype=np.int64)
        n = len(totals)
        ties = np.random.default_rng(self._rng.getrandbits(64)).permutation(n)
        order: list[int] = np.lexsort((ties, -totals)).tolist()
        if 0 <= self._exclude < n:
            order.remove(self._exclude)
        return order

    def pop(self) -> str:
        """The best remaining node's name. Raises IndexError when empty."""
        if self._len == 0:
            raise IndexError("pop from an empty ranking")
        if self._order is None:
            self._order = self._sort()
        i = self._order[self._next]
        self._next += 1
        self._len -= 1
        return self._names[i]


@dataclass
class _BatchState:
    signature: PodSignature
    sorted_nodes: SortedScoredNodes
    creation_time: float


@dataclass
class _SchedulingCycle:
    cycle_count: int = 0
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batching state (upstream ``OpportunisticBatch``).

    ``sign(pod, record_plugin_stats)`` is the profile's ``SignPod``; ``run_filter(state, pod,
    node_info)`` its ``RunFilterPlugins``; ``node_info(name)`` reads the current snapshot;
    ``now()`` is the scheduler's clock in seconds; ``rng`` breaks ties of the stored rankings."""

    def __init__(
        self,
        profile_name: str,
        *,
        sign: Callable[[Pod, bool], PodSignature | None],
        run_filter: Callable[[CycleState, Pod, NodeInfo], Status | None],
        node_info: Callable[[str], NodeInfo | None],
        now: Callable[[], float],
        rng: random.Random,
        sink: MetricsSink,
    ) -> None:
        self.profile_name = profile_name
        self._sign = sign
        self._run_filter = run_filter
        self._node_info = node_info
        self._now = now
        self.rng = rng
        self._sink = sink
        self.state: _BatchState | None = None
        self.last_cycle = _SchedulingCycle()
        #: pods placed on a hinted node (upstream's test-only ``batchedPods``)
        self.batched_pods = 0

    # ---- GetNodeHint ----------------------------------------------------------------------------

    def get_node_hint(self, state: CycleState, pod: Pod, cycle_count: int) -> tuple[str, PodSignature | None]:
        """Upstream ``GetNodeHint``: ``(hint, signature)``; the hint is ``""`` when the stored
        ranking cannot be reused for ``pod`` (the reason is counted as a flush)."""
        sink = self._sink
        t0 = perf_counter() if sink.enabled else 0.0
        signature = self._sign(pod, state.record_plugin_metrics)
        hint = ""
        if self.state is None:
            # nothing stored (the common case when pods are not signed): no hint, nothing to flush
            if sink.enabled:
                sink.inc(BATCH_ATTEMPTS, {"profile": self.profile_name, "result": ATTEMPT_NO_HINT})
                sink.observe(
                    GET_NODE_HINT_DURATION,
                    {"hinted": "no_hint", "profile": self.profile_name},
                    perf_counter() - t0,
                )
            if log.isEnabledFor(_V4):
                v_info(
                    log,
                    4,
                    "OpportunisticBatch no node hint available for pod",
                    profile=self.profile_name,
                    pod=KObj(pod.namespace, pod.name),
                    cycleCount=cycle_count,
                )
            return hint, signature
        if self._compatible(state, pod, signature, cycle_count):
            assert self.state is not None
            hint = self.state.sorted_nodes.pop()
            v_info(
                log,
                3,
                "OpportunisticBatch provided node hint",
                profile=self.profile_name,
                pod=KObj(pod.namespace, pod.name),
                cycleCount=cycle_count,
                hint=hint,
                remainingNodes=len(self.state.sorted_nodes),
            )
        else:
            if sink.enabled:
                sink.inc(BATCH_ATTEMPTS, {"profile": self.profile_name, "result": ATTEMPT_NO_HINT})
            v_info(
                log,
                4,
                "OpportunisticBatch no node hint available for pod",
                profile=self.profile_name,
                pod=KObj(pod.namespace, pod.name),
                cycleCount=cycle_count,
            )
        if sink.enabled:
            sink.observe(
                GET_NODE_HINT_DURATION,
                {"hinted": "hint" if hint else "no_hint", "profile": self.profile_name},
                perf_counter() - t0,
            )
        return hint, signature

    def _flush(self, cycle_count: int, reason: str) -> None:
        if self._sink.enabled:
            self._sink.inc(BATCH_CACHE_FLUSHED, {"profile": self.profile_name, "reason": reason})
        if not log.isEnabledFor(_V4):
            return
        v_info(
            log,
            4,
            "OpportunisticBatch found unusable state",
            profile=self.profile_name,
            cycleCount=cycle_count,
            reason=reason,
        )

    def _compatible(
        self, state: CycleState, pod: Pod, signature: PodSignature | None, cycle_count: int
    ) -> bool:
        """Upstream ``batchStateCompatible`` (a flush is counted, the state itself is kept until
        the next :meth:`store_schedule_results` replaces it, as upstream does)."""
        st = self.state
        if st is None or len(st.sorted_nodes) == 0:
            return False
        last = self.last_cycle
        if cycle_count != last.cycle_count + 1:
            self._flush(cycle_count, FLUSH_POD_SKIPPED)
            return False
        if not last.succeeded:
            self._flush(cycle_count, FLUSH_POD_FAILED)
            return False
        if signature is None or signature != st.signature:
            self._flush(cycle_count, FLUSH_POD_INCOMPATIBLE)
            return False
        if self._now() > st.creation_time + MAX_BATCH_AGE:
            self._flush(cycle_count, FLUSH_EXPIRED)
            return False
        ni = self._node_info(last.chosen_node)
        if ni is None:
            self._flush(cycle_count, FLUSH_NODE_MISSING)
            return False
        s = self._run_filter(state, pod, ni)
        if s is None or not s.is_rejected():
            self._flush(cycle_count, FLUSH_NODE_NOT_FULL)
            return False
        return True

    # ---- StoreScheduleResults ------------------------------------------------------------------

    def store_schedule_results(
        self,
        signature: PodSignature | None,
        hinted_node: str,
        chosen_node: str,
        other_nodes: SortedScoredNodes | None,
        cycle_count: int,
    ) -> None:
        """Upstream ``StoreScheduleResults``: remember the cycle; keep the state when the hint was
        the node chosen, else replace it by this cycle's ranking (or flush it when the pod is not
        signed or no other node was feasible)."""
        sink = self._sink
        t0 = perf_counter() if sink.enabled else 0.0
        try:
            self._store(signature, hinted_node, chosen_node, other_nodes, cycle_count)
        finally:
            if sink.enabled:
                sink.observe(
                    STORE_SCHEDULE_RESULTS_DURATION, {"profile": self.profile_name}, perf_counter() - t0
                )

    def _store(
        self,
        signature: PodSignature | None,
        hinted_node: str,
        chosen_node: str,
        other_nodes: SortedScoredNodes | None,
        cycle_count: int,
    ) -> None:
        sink = self._sink
        self.last_cycle = _SchedulingCycle(cycle_count, chosen_node, True)
        if hinted_node and hinted_node == chosen_node:
            if sink.enabled:
                sink.inc(BATCH_ATTEMPTS, {"profile": self.profile_name, "result": ATTEMPT_HINT_USED})
            self.batched_pods += 1
            return
        if hinted_node:
            if sink.enabled:
                sink.inc(BATCH_ATTEMPTS, {"profile": self.profile_name, "result": ATTEMPT_HINT_NOT_USED})
            v_info(
                log,
                4,
                "OpportunisticBatch hint not used",
                profile=self.profile_name,
                cycleCount=cycle_count,
                hint=hinted_node,
                chosen=chosen_node,
            )
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, self._now())
            v_info(
                log,
                4,
                "OpportunisticBatch set batch information",
                profile=self.profile_name,
                nodes=len(other_nodes),
                cycleCount=cycle_count,
            )
            return
        if self.state is None and not self._sink.enabled and not log.isEnabledFor(_V4):
            return  # nothing to flush, nothing to count or log
        reason = FLUSH_POD_NOT_BATCHABLE
        if other_nodes is None or len(other_nodes) == 0:
            reason = FLUSH_EMPTY_LIST
        self._flush(cycle_count, reason)
        self.state = None
