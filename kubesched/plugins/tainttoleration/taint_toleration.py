"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; untolerated PreferNoSchedule
taints lower the score (``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    find_untolerated,
)
from kubesched.framework.batch import default_normalize_score_batch
from kubesched.framework.cycle_state import CycleState, ReadOnlyStateData, StateNotFoundError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.signers import TOLERATIONS_SIGNER_NAME, SignFragment, tolerations_signer
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
#: v1.35 reason (PR #134740); before it: ``node(s) had untolerated taint {<key>: <value>}``.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_DO_NOT_SCHEDULE = (NO_SCHEDULE, NO_EXECUTE)


@dataclass(slots=True)
class _TolerationsState(ReadOnlyStateData):
    """The pod's tolerations with an empty effect or ``PreferNoSchedule``."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _TolerationsState:
        return self


def tolerations_prefer_no_schedule(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: tolerations whose effect is empty or PreferNoSchedule."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> int:
    """``countIntolerableTaintsPreferNoSchedule``: PreferNoSchedule taints no toleration tolerates."""
    n = 0
    for taint in taints:
        if taint.effect != PREFER_NO_SCHEDULE:
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            n += 1
    return n


class TaintToleration(
    FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions, SignPlugin
):
    """Filter: the first untolerated NoSchedule/NoExecute taint (node order) rejects the node with
    UnschedulableAndUnresolvable ``node(s) had untolerated taint(s)``.
    Score: number of untolerated PreferNoSchedule taints; NormalizeScore reverses it onto 0..100
    (fewest such taints -> 100). No args."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility and scoring depend on the pod's tolerations."""
        return [SignFragment(TOLERATIONS_SIGNER_NAME, tolerations_signer(pod))], None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        #: the last all-zero raw score array :meth:`score_batch` returned (its normalization is
        #: known without reading it: every node 100)
        self._zero_scores: IntArray | None = None

    # Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node with an untolerated NoSchedule/NoExecute taint."""
        node = node_info.node
        if node is None:
            return Status(Code.Error, "invalid nodeInfo")
        if find_untolerated(node.taints, pod.tolerations, _DO_NOT_SCHEDULE) is None:
            return None
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNTOLERATED)

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter`: evaluated once per distinct taint set, looked up per row."""
        sets = table.taint_sets
        if len(sets) == 1:
            return np.ones(len(rows), dtype=np.bool_)
        tol = pod.tolerations
        ok = np.fromiter(
            (find_untolerated(t, tol, _DO_NOT_SCHEDULE) is None for t in sets),
            dtype=np.bool_,
            count=len(sets),
        )
        return ok[table.taint_sig[rows]]

    # Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Store the pod's PreferNoSchedule-relevant tolerations; never Skips."""
        state.write(PRE_SCORE_STATE_KEY, _TolerationsState(tolerations_prefer_no_schedule(pod.tolerations)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Raw score: count of untolerated PreferNoSchedule taints on the node."""
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError as e:
            return 0, Status.as_status(
                RuntimeError(
                    f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: {e.args[0] if e.args else e}'
                )
            )
        if not isinstance(s, _TolerationsState):
            return 0, Status.as_status(RuntimeError(f"invalid PreScore state, got type {type(s).__name__}"))
        node = node_info.node
        if node is None:
            return 0, Status.as_status(RuntimeError("invalid nodeInfo"))
        return count_intolerable_prefer_no_schedule(node.taints, s.tolerations_prefer_no_schedule), None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score` (raw counts), evaluated once per distinct taint set."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _TolerationsState):
            return None
        sets = table.taint_sets
        if len(sets) > 1:
            tol = s.tolerations_prefer_no_schedule
            counts = np.fromiter(
                (count_intolerable_prefer_no_schedule(t, tol) for t in sets), dtype=np.int64, count=len(sets)
            )
            if counts.any():
                out: IntArray = counts[table.taint_sig[rows]]
                return out
        # no taint set (only the empty one) or none with an untolerated PreferNoSchedule taint
        zeros: IntArray = np.zeros(len(rows), dtype=np.int64)
        self._zero_scores = zeros
        return zeros

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score`; the all-zero scores :meth:`score_batch` just
        returned become 100 everywhere without being read (a maximum of 0 with ``reverse``)."""
        if scores is self._zero_scores:
            self._zero_scores = None
            return np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        return default_normalize_score_batch(MAX_NODE_SCORE, True, scores)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin normalizes its scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """Default normalize with ``reverse=True``."""
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    # Queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Node/Add|UpdateNodeTaint`` and ``Pod/UpdatePodToleration`` with hints."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when the node goes from "has an untolerated NoSchedule/NoExecute taint" (an added
        node counts as having one) to "has none"."""
        original, modified = as_objects(Node, old_obj, new_obj)
        if modified is None:
            return QueueingHint.QueueSkip
        was_untolerated = True
        if original is not None:
            was_untolerated = find_untolerated(original.taints, pod.tolerations, _DO_NOT_SCHEDULE) is not None
        is_untolerated = find_untolerated(modified.taints, pod.tolerations, _DO_NOT_SCHEDULE) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when the updated pod is ``pod`` itself (same UID)."""
        _, modified = as_objects(Pod, old_obj, new_obj)
        if modified is not None and modified.uid == pod.uid:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
