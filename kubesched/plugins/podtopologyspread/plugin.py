"""PodTopologySpread: spread pods matching a selector evenly over topology domains
(``pkg/scheduler/framework/plugins/podtopologyspread/{plugin,filtering,scoring,common}.go``,
args validation from ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``).

Hard constraints (``DoNotSchedule``) are enforced by PreFilter/Filter, soft ones
(``ScheduleAnyway``) scored by PreScore/Score/NormalizeScore (see
:mod:`kubesched.plugins.podtopologyspread.scoring`). A pod without constraints gets the
default constraints (system defaults unless ``defaultingType: List``) with a selector built
from its Services and controller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from kubesched.api.node import Node
from kubesched.api.pod import Pod, TopologySpreadConstraint
from kubesched.api.required_node_affinity import get_required_node_affinity
from kubesched.framework.batch import BoolArray, IntArray, table_for
from kubesched.framework.cycle_state import CycleState, StateData, StateNotFoundError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore, PreFilterResult
from kubesched.framework.signers import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.plugins.podtopologyspread import batch
from kubesched.plugins.podtopologyspread.args import (
    SYSTEM_DEFAULTING,
    DefaultSpreadConstraint,
    PodTopologySpreadArgs,
)
from kubesched.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SpreadConstraint,
    count_pods_match_selector,
    filter_constraints,
    node_labels_match_spread_constraints,
)
from kubesched.plugins.podtopologyspread.default_cache import DefaultConstraintsCache
from kubesched.plugins.podtopologyspread.scoring import (
    PreScoreState,
    count_all_nodes,
    init_pre_score_state,
    normalize_scores,
    score_node,
)

NAME: Final = "PodTopologySpread"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_MAX_INT32: Final = 2**31 - 1

# --- PreFilter state -------------------------------------------------------------------------


class PreFilterState(StateData):
    """``preFilterState``: the hard constraints, per constraint ``value -> matching pods`` over the
    eligible nodes, and per constraint the two "critical paths" (the two smallest domains as
    tracked incrementally; ``[value, count]`` pairs) from which the global minimum is read.
    ``clone`` copies the counts and paths (constraints are shared)."""

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num")

    def __init__(self, constraints: list[SpreadConstraint]) -> None:
        self.constraints = constraints
        self.tp_value_to_match_num: list[dict[str, int]] = [{} for _ in constraints]
        self.critical_paths: list[list[list[Any]]] = [_new_critical_paths() for _ in constraints]

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.constraints = self.constraints
        c.tp_value_to_match_num = [dict(m) for m in self.tp_value_to_match_num]
        c.critical_paths = [[list(p[0]), list(p[1])] for p in self.critical_paths]
        return c

    def min_match_num(self, i: int, min_domains: int) -> int:
        """``minMatchNum``: the tracked minimum, or 0 when there are fewer domains than ``min_domains``."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return int(self.critical_paths[i][0][1])


def _new_critical_paths() -> list[list[Any]]:
    return [["", _MAX_INT32], ["", _MAX_INT32]]


def update_critical_paths(p: list[list[Any]], tp_val: str, num: int) -> None:
    """``criticalPaths.update``: keep ``p[0]`` the smallest and ``p[1]`` the second smallest as far
    as incremental updates allow (upstream's approximation, reproduced as is)."""
    i = 0 if tp_val == p[0][0] else 1 if tp_val == p[1][0] else -1
    if i >= 0:
        p[i][1] = num
        if p[0][1] > p[1][1]:
            p[0], p[1] = p[1], p[0]
    elif num < p[0][1]:
        p[1] = p[0]
        p[0] = [tp_val, num]
    elif num < p[1][1]:
        p[1] = [tp_val, num]


# --- plugin ----------------------------------------------------------------------------------


class PodTopologySpread(
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
    SignPlugin,
):
    """Filter reasons: ``node(s) didn't match pod topology spread constraints (missing required
    label)`` (UnschedulableAndUnresolvable) and ``node(s) didn't match pod topology spread
    constraints`` (Unschedulable, skew > maxSkew). PreFilter Skips without hard constraints,
    PreScore without soft ones. Args: :class:`PodTopologySpreadArgs`."""

    NAME = NAME
    Args = PodTopologySpreadArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Topology spreading is not local to one pod and node: a pod with spread constraints,
        written or defaulted (the profile has default constraints), is not signed."""
        if pod.topology_spread_constraints:
            return None, Status(Code.Unschedulable, "pods with topology constraints are not signable")
        if self.default_constraints:
            return None, Status(Code.Unschedulable, "pods with default topology constraints are not signable")
        return None, None

    def __init__(self, args: PodTopologySpreadArgs | None = None, handle: Handle | None = None) -> None:
        args = args or PodTopologySpreadArgs()
        super().__init__(args, handle)
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = tuple(c.to_api() for c in args.default_constraints)
        self._default_cache = DefaultConstraintsCache()

    # constraints

    def get_constraints(self, pod: Pod, action: str = DO_NOT_SCHEDULE) -> list[SpreadConstraint]:
        """The pod's own constraints for ``action`` or, when it has none, the default ones."""
        if pod.topology_spread_constraints:
            return filter_constraints(pod.topology_spread_constraints, pod.labels, action)
        objects = self.handle.objects if self.handle is not None else None
        return self._default_cache.get(self.default_constraints, pod, action, objects)

    # PreFilter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count matching pods per domain over ``nodes`` (all nodes); Skip without hard constraints."""
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status(Code.Skip)
        s = PreFilterState(constraints)
        table = table_for(self.handle, nodes)
        counts = batch.pre_filter_counts(table, pod, constraints) if table is not None else None
        if counts is not None:
            s.tp_value_to_match_num = counts
        else:
            self._count_walk(s, pod, nodes)
        for i, m in enumerate(s.tp_value_to_match_num):
            for value, num in m.items():
                update_critical_paths(s.critical_paths[i], value, num)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _count_walk(self, s: PreFilterState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        constraints = s.constraints
        required = get_required_node_affinity(pod)
        for ni in nodes:
            node = ni.node
            if node is None or not node_labels_match_spread_constraints(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, node, required):
                    continue
                value = node.labels[c.topology_key]
                m = s.tp_value_to_match_num[i]
                m[value] = m.get(value, 0) + count_pods_match_selector(ni.pods, c.selector, pod.namespace)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod adjust the counts."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_info_to_add`` as placed on ``node_info``."""
        return self._update_with_pod(state, pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Stop counting ``pod_info_to_remove`` on ``node_info``."""
        return self._update_with_pod(state, pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)

    def _update_with_pod(
        self, state: CycleState, updated: Pod, preemptor: Pod, node: Node | None, delta: int
    ) -> Status | None:
        s, err = _read_pre_filter_state(state)
        if s is None:
            return err
        if updated.namespace != preemptor.namespace or node is None:
            return None
        if not node_labels_match_spread_constraints(node.labels, s.constraints):
            return None
        required = get_required_node_affinity(preemptor)
        for i, c in enumerate(s.constraints):
            if not c.selector_matches(updated.labels):
                continue
            if not c.match_node_inclusion_policies(preemptor, node, required):
                continue
            v = node.labels[c.topology_key]
            m = s.tp_value_to_match_num[i]
            m[v] = m.get(v, 0) + delta
            update_critical_paths(s.critical_paths[i], v, m[v])
        return None

    # Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Per hard constraint: missing key -> UnschedulableAndUnresolvable; ``count(domain) +
        self_match - global_min > maxSkew`` -> Unschedulable."""
        s, err = _read_pre_filter_state(state)
        if s is None:
            return err
        if not s.constraints:
            return None
        node = node_info.node
        if node is None:
            return Status(Code.Error, "node not found")
        for i, c in enumerate(s.constraints):
            tp_val = node.labels.get(c.topology_key)
            if tp_val is None:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector_matches(pod.labels) else 0
            skew = s.tp_value_to_match_num[i].get(tp_val, 0) + self_match - min_match
            if skew > c.max_skew:
                return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: Any, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter` (label codes and per-domain count lookups)."""
        s, _ = _read_pre_filter_state(state)
        if s is None:
            return None
        return batch.filter_mask(s, pod, table, rows)

    # Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Build the score state from the feasible ``nodes`` and all snapshot nodes; Skip when the
        snapshot is empty or the pod has no soft constraints."""
        all_nodes = self.handle.snapshot().list() if self.handle is not None else list(nodes)
        if not all_nodes:
            return Status(Code.Skip)
        constraints = self.get_constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status(Code.Skip)
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        table = table_for(self.handle, all_nodes)
        s = batch.init_pre_score_state(constraints, nodes, require_all, table) if table is not None else None
        if s is None:
            s = init_pre_score_state(constraints, nodes, require_all)
        if table is None or not batch.add_all_node_counts(s, pod, table, require_all):
            count_all_nodes(s, pod, all_nodes, require_all)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Rounded weighted count of matching pods in the node's domains (lower is better)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, Status(Code.Error, f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if node_info.node is None:
            return 0, Status(Code.Error, "node not found")
        return score_node(s, pod, node_info), None

    def score_batch(self, state: CycleState, pod: Pod, table: Any, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score`; remembers the ignored rows for :meth:`normalize_score_batch`."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        scores, s.batch_ignored = batch.score_array(s, pod, table, rows)
        return scores

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score` of the rows last given to :meth:`score_batch`."""
        s = state.get(PRE_SCORE_STATE_KEY)
        ignored = s.batch_ignored if isinstance(s, PreScoreState) else None
        return batch.normalize_array(scores, ignored, MAX_NODE_SCORE)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin normalizes its scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """``100 * (max + min - s) // max``; ignored nodes 0; all 100 when max is 0."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return Status(Code.Error, f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        normalize_scores(s, scores)
        return None

    # Queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Pod/Add|UpdatePodLabel|UpdatePodToleration|Delete`` (UpdatePodToleration as upstream with
        queueing hints on) and ``Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint``, with hints."""
        pod_actions = (
            ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration | ActionType.Delete
        )
        node_actions = (
            ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, node_actions), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """``isSchedulableAfterPodChange``: only assigned pods of the same namespace (or ``pod``
        itself) matter; an add/delete queues when the pod matches a hard constraint's selector, a
        label update when it flips a selector match, a self update when tolerations changed and a
        constraint honours taints."""
        original, modified = as_objects(Pod, old_obj, new_obj)
        if (modified is not None and not _involved(modified, pod)) or (
            original is not None and not _involved(original, pod)
        ):
            return QueueingHint.QueueSkip
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if original is not None and modified is not None:
            if modified.uid == pod.uid:
                if modified.tolerations == original.tolerations:
                    return QueueingHint.QueueSkip
                if any(c.node_taints_policy == HONOR for c in constraints):
                    return QueueingHint.Queue
                return QueueingHint.QueueSkip
            if dict(modified.labels) == dict(original.labels):
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.selector_matches(original.labels) != c.selector_matches(modified.labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip
        changed = modified if modified is not None else original
        assert changed is not None
        for c in constraints:
            if c.selector_matches(changed.labels):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: queue when a node having every constraint key is added
        or deleted, when an update makes the node gain/lose the keys, or when a node having them
        changes a key's value or its taints."""
        original, modified = as_objects(Node, old_obj, new_obj)
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        orig_match = original is not None and node_labels_match_spread_constraints(
            original.labels, constraints
        )
        mod_match = modified is not None and node_labels_match_spread_constraints(
            modified.labels, constraints
        )
        if original is not None and modified is not None:
            if orig_match != mod_match:
                return QueueingHint.Queue
            if mod_match and (
                any(
                    original.labels.get(c.topology_key) != modified.labels.get(c.topology_key)
                    for c in constraints
                )
                or original.taints != modified.taints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            return QueueingHint.Queue if mod_match else QueueingHint.QueueSkip
        return QueueingHint.Queue if orig_match else QueueingHint.QueueSkip


def _involved(changed: Pod, pod: Pod) -> bool:
    """``involvedInTopologySpreading``: the pod itself, or an assigned pod in its namespace."""
    return changed.uid == pod.uid or (bool(changed.node_name) and changed.namespace == pod.namespace)


def _read_pre_filter_state(state: CycleState) -> tuple[PreFilterState | None, Status | None]:
    try:
        s = state.read(PRE_FILTER_STATE_KEY)
    except StateNotFoundError:
        return None, Status(Code.Error, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreFilterState):
        return None, Status(Code.Error, f"{s!r}  convert to podtopologyspread.preFilterState error")
    return s, None


__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "DefaultSpreadConstraint",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "PreFilterState",
]
