"""InterPodAffinity: required/preferred pod (anti-)affinity between the incoming pod and the
pods already placed (``pkg/scheduler/framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go``).

PreFilter counts, keyed by ``(topologyKey, value)``: existing pods' required anti-affinity terms
matching the incoming pod, existing pods matching *all* the incoming pod's required affinity terms
and existing pods matching each of its required anti-affinity terms. The incoming pod's terms
have a non-empty ``namespaceSelector`` resolved to concrete namespaces through
``handle.objects.list("Namespace")``; existing pods' terms are evaluated with the incoming pod's
namespace labels. Scoring lives in :mod:`kubesched.plugins.interpodaffinity.scoring`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.affinity_term import AffinityTerm, WeightedAffinityTerm, affinity_terms
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
from kubesched.framework.signers import LABELS_SIGNER_NAME, SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.plugins.interpodaffinity import batch
from kubesched.plugins.interpodaffinity.scoring import (
    PreScoreState,
    ScoreMap,
    accumulate,
    normalize_scores,
    process_existing_pod,
    score_node,
)

NAME: Final = "InterPodAffinity"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
"""``(topologyKey, value)``."""


@dataclass(config=ARGS_CONFIG)
class InterPodAffinityArgs:
    """``InterPodAffinityArgs``: ``hard_pod_affinity_weight`` (0..100, default 1) scores existing
    pods' required affinity terms the incoming pod matches; ``ignore_preferred_terms_of_existing_pods``
    skips scoring when the incoming pod has no preferred terms."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @field_validator("hard_pod_affinity_weight")
    @classmethod
    def _weight_range(cls, v: int) -> int:
        if v < 0 or v > 100:
            raise ValueError(f"Invalid value: {v}: not in valid range [0-100]")
        return v


# --- term helpers ----------------------------------------------------------------------------


def pod_matches_all_affinity_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms``: False for no terms (namespace labels not consulted)."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


def pod_matches_any_affinity_term(terms: Iterable[AffinityTerm], pod: Pod) -> bool:
    """``podMatchesAnyAffinityTerm`` (namespace labels not consulted)."""
    return any(t.matches(pod, None) for t in terms)


def _add(m: dict[TopologyPair, int], node: Node, key: str, value: int) -> None:
    """``topologyToMatchedTermCount.update``: add at ``(key, node value)`` if the node has the key;
    an entry brought down to 0 is deleted."""
    tv = node.labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = m.get(pair, 0) + value
    if n == 0:
        m.pop(pair, None)
    else:
        m[pair] = n


def _update_with_affinity_terms(
    m: dict[TopologyPair, int], terms: Sequence[AffinityTerm], pod: Pod, node: Node, value: int
) -> None:
    if pod_matches_all_affinity_terms(terms, pod):
        for t in terms:
            _add(m, node, t.topology_key, value)


def _update_with_anti_affinity_terms(
    m: dict[TopologyPair, int],
    terms: Iterable[AffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    value: int,
) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _add(m, node, t.topology_key, value)


# --- PreFilter state -------------------------------------------------------------------------


class PreFilterState(StateData):
    """``preFilterState``: the three count maps, the incoming pod's required terms (namespace
    selectors resolved) and its namespace labels. ``clone`` copies the maps."""

    __slots__ = (
        "existing_anti_affinity_counts",
        "affinity_counts",
        "anti_affinity_counts",
        "pod",
        "affinity_terms",
        "anti_affinity_terms",
        "namespace_labels",
        "batch_lookups",
    )

    def __init__(
        self,
        pod: Pod,
        affinity: tuple[AffinityTerm, ...],
        anti_affinity: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity
        self.anti_affinity_terms = anti_affinity
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: dict[TopologyPair, int] = {}
        self.affinity_counts: dict[TopologyPair, int] = {}
        self.anti_affinity_counts: dict[TopologyPair, int] = {}
        #: ``(table version, batch.filter_lookups(...))`` cached by ``filter_batch``
        self.batch_lookups: Any = None

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.pod, self.affinity_terms, self.anti_affinity_terms, self.namespace_labels)
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        return c

    def update_with_pod(self, pi: PodInfo, node: Node | None, multiplier: int) -> None:
        """``updateWithPod``: account (``+1``) or forget (``-1``) pod ``pi`` placed on ``node``."""
        self.batch_lookups = None
        if node is None:
            return
        _update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts,
            pi.required_anti_affinity_terms,
            self.pod,
            self.namespace_labels,
            node,
            multiplier,
        )
        _update_with_affinity_terms(self.affinity_counts, self.affinity_terms, pi.pod, node, multiplier)
        _update_with_anti_affinity_terms(
            self.anti_affinity_counts, self.anti_affinity_terms, pi.pod, None, node, multiplier
        )


# --- plugin ----------------------------------------------------------------------------------


class InterPodAffinity(
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
    SignPlugin,
):
    """Filter reasons: ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable),
    ``node(s) didn't match pod anti-affinity rules`` and ``node(s) didn't satisfy existing pods
    anti-affinity rules`` (Unschedulable). Args: :class:`InterPodAffinityArgs`."""

    NAME = NAME
    Args = InterPodAffinityArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """A pod with pod affinity or anti-affinity terms is not signed (its verdicts depend on
        other pods' placements); any other pod's results depend on its labels (existing pods'
        terms match them)."""
        if (
            pod.pod_affinity_required
            or pod.pod_affinity_preferred
            or pod.pod_anti_affinity_required
            or pod.pod_anti_affinity_preferred
        ):
            return None, Status(Code.Unschedulable, "pods with inter-pod affinity are not signable")
        return [SignFragment(LABELS_SIGNER_NAME, dict(pod.labels))], None

    def __init__(self, args: InterPodAffinityArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or InterPodAffinityArgs(), handle)
        self.args: InterPodAffinityArgs

    # helpers

    def _snapshot(self, nodes: Sequence[NodeInfo]) -> Snapshot:
        if self.handle is not None:
            return self.handle.snapshot()
        return Snapshot(list(nodes))

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """``GetNamespaceLabelsSnapshot``: the namespace's labels (empty when unknown)."""
        if self.handle is None or self.handle.objects is None:
            return {}
        return dict(self.handle.objects.namespace_labels(namespace) or {})

    def merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """``mergeAffinityTermNamespacesIfNotEmpty``: a non-empty namespaceSelector is replaced by the
        names of the namespaces it selects (unioned into ``namespaces``; selector becomes nothing);
        an empty selector (all namespaces) or a nil one (none) is kept."""
        sel = term.namespace_selector
        if sel is None or sel.empty:
            return term
        names = set(term.namespaces)
        if self.handle is not None and self.handle.objects is not None:
            for ns in self.handle.objects.list("Namespace"):
                meta = ns.get("metadata") or {}
                if sel.matches(meta.get("labels") or {}):
                    names.add(str(meta.get("name") or ""))
        return dataclasses.replace(term, namespaces=frozenset(names), namespace_selector=None)

    def _merge_weighted(self, terms: Iterable[WeightedAffinityTerm]) -> tuple[WeightedAffinityTerm, ...]:
        return tuple(WeightedAffinityTerm(self.merge_namespaces(t.term), t.weight) for t in terms)

    # PreFilter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Compute the three count maps; Skip when the pod has no required terms and no existing
        pod's anti-affinity matches it. A pod whose (anti-)affinity selectors cannot be converted
        is UnschedulableAndUnresolvable with ``parsing pod: ...`` (``framework.NewPodInfo`` error)."""
        if pod.affinity_parse_error is not None:
            return None, Status(Code.UnschedulableAndUnresolvable, f"parsing pod: {pod.affinity_parse_error}")
        if (
            not (pod.has_affinity and (pod.pod_affinity_required or pod.pod_anti_affinity_required))
            and not self._snapshot(nodes).have_pods_with_required_anti_affinity_list
        ):
            # no required term of its own and no existing pod with required anti-affinity: the
            # three maps are empty (only nodes of that list contribute existing counts)
            return None, Status(Code.Skip)
        pi = PodInfo(pod)
        s = PreFilterState(
            pod,
            tuple(self.merge_namespaces(t) for t in pi.required_affinity_terms),
            tuple(self.merge_namespaces(t) for t in pi.required_anti_affinity_terms),
            self._namespace_labels(pod.namespace),
        )
        table = table_for(self.handle, nodes)
        if table is not None:
            self._pre_filter_from_table(s, pod, table, nodes)
        else:
            self._pre_filter_walk(s, pod, nodes)
        if not s.existing_anti_affinity_counts and not s.affinity_terms and not s.anti_affinity_terms:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _pre_filter_from_table(
        self, s: PreFilterState, pod: Pod, table: Any, nodes: Sequence[NodeInfo]
    ) -> None:
        """The three maps from the node table (same contents as :meth:`_pre_filter_walk`): the
        incoming pod's term counts from the pod-match index, the existing pods' anti-affinity as a
        cached per-node aggregate."""
        ns_labels = s.namespace_labels

        def existing_anti(ni: NodeInfo) -> dict[Any, int]:
            m: dict[TopologyPair, int] = {}
            node = ni.node
            if node is not None:
                for existing in ni.pods_with_required_anti_affinity:
                    _update_with_anti_affinity_terms(
                        m, existing.required_anti_affinity_terms, pod, ns_labels, node, 1
                    )
            return m  # type: ignore[return-value]

        s.existing_anti_affinity_counts = batch.existing_anti_affinity_counts(
            table,
            pod,
            ns_labels,
            self._snapshot(nodes).have_pods_with_required_anti_affinity_list,
            existing_anti,
        )
        s.affinity_counts = batch.incoming_affinity_counts(table, s.affinity_terms)
        s.anti_affinity_counts = batch.incoming_anti_affinity_counts(table, s.anti_affinity_terms)

    def _pre_filter_walk(self, s: PreFilterState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        """The three maps by walking the nodes and their pods (upstream's loops)."""
        for ni in self._snapshot(nodes).have_pods_with_required_anti_affinity_list:
            node = ni.node
            if node is None:
                continue
            for existing in ni.pods_with_required_anti_affinity:
                _update_with_anti_affinity_terms(
                    s.existing_anti_affinity_counts,
                    existing.required_anti_affinity_terms,
                    pod,
                    s.namespace_labels,
                    node,
                    1,
                )
        if s.affinity_terms or s.anti_affinity_terms:
            for ni in nodes:
                node = ni.node
                if node is None:
                    continue
                for existing in ni.pods:
                    _update_with_affinity_terms(s.affinity_counts, s.affinity_terms, existing.pod, node, 1)
                    _update_with_anti_affinity_terms(
                        s.anti_affinity_counts, s.anti_affinity_terms, existing.pod, None, node, 1
                    )

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod update the counts."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Account ``pod_info_to_add`` on ``node_info``."""
        s, err = _read_pre_filter_state(state)
        if s is None:
            return err
        s.update_with_pod(pod_info_to_add, node_info.node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Forget ``pod_info_to_remove`` on ``node_info``."""
        s, err = _read_pre_filter_state(state)
        if s is None:
            return err
        s.update_with_pod(pod_info_to_remove, node_info.node, -1)
        return None

    # Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Affinity, then the pod's anti-affinity, then existing pods' anti-affinity."""
        s, err = _read_pre_filter_state(state)
        if s is None:
            return err
        node = node_info.node
        if node is None:
            return Status(Code.Error, "node not found")
        if not _satisfy_pod_affinity(s, node):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti_affinity_counts:
            for t in s.anti_affinity_terms:
                tv = node.labels.get(t.topology_key)
                if tv is not None and s.anti_affinity_counts.get((t.topology_key, tv), 0) > 0:
                    return Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti_affinity_counts:
            for k, v in node.labels.items():
                if s.existing_anti_affinity_counts.get((k, v), 0) > 0:
                    return Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: Any, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter` (label codes and per-domain count lookups)."""
        s, _ = _read_pre_filter_state(state)
        if s is None:
            return None
        cached = s.batch_lookups
        if cached is None or cached[0] is not table or cached[1] != table.version:
            cached = s.batch_lookups = (
                table,
                table.version,
                batch.filter_lookups(s, table),
                pod_matches_all_affinity_terms(s.affinity_terms, s.pod),
            )
        return batch.filter_mask(s, cached[2], rows, cached[3])

    # Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Accumulate ``topology_score`` over all nodes (pod has preferred terms) or the nodes with
        affinity pods; Skip when ``ignorePreferredTermsOfExistingPods`` and the pod has no preferred
        terms, or when nothing was accumulated. A pod whose (anti-)affinity selectors cannot be
        converted is an Error ``failed to parse pod: ...`` (``interpodaffinity/scoring.go: PreScore``,
        the ``framework.NewPodInfo`` error)."""
        has_constraints = _has_preferred_terms(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.Skip)
        if pod.affinity_parse_error is not None:
            # reached only when PreFilter did not run (a profile with InterPodAffinity for scoring only)
            return Status(Code.Error, f"failed to parse pod: {pod.affinity_parse_error}")
        snap = self._snapshot(nodes)
        all_nodes = snap.list() if has_constraints else snap.have_pods_with_affinity_list
        if not all_nodes:
            # nothing to accumulate: the topology score stays empty, which Skips below
            return Status(Code.Skip)
        pi = PodInfo(pod)
        s = PreScoreState(
            self._merge_weighted(pi.preferred_affinity_terms),
            self._merge_weighted(pi.preferred_anti_affinity_terms),
            self._namespace_labels(pod.namespace),
        )
        table = table_for(self.handle, snap.list())
        hard = self.args.hard_pod_affinity_weight
        if table is not None:

            def contrib(ni: NodeInfo) -> dict[Any, int]:
                node = ni.node
                m: ScoreMap = {}
                if node is not None:
                    for existing in ni.pods_with_affinity:
                        process_existing_pod(s, existing, node, pod, hard, m, incoming_terms=False)
                return {(k, v): n for k, vals in m.items() for v, n in vals.items()}

            key = (
                pod.namespace,
                frozenset(pod.labels.items()),
                frozenset(s.namespace_labels.items()),
                hard,
            )
            preferred = (
                batch.preferred_term_scores(
                    table, s.preferred_affinity_terms, s.preferred_anti_affinity_terms
                )
                if has_constraints
                else {}
            )
            s.topology_score = batch.topology_score(
                table, key, contrib, snap.have_pods_with_affinity_list, preferred
            )
        else:
            accumulate(s, all_nodes, pod, has_constraints, hard)
        if not s.topology_score:
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Sum of the topology scores of the node's domains (may be negative before normalizing)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, Status(Code.Error, f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if node_info.node is None:
            return 0, Status(Code.Error, "node not found")
        return score_node(s, node_info.node), None

    def score_batch(self, state: CycleState, pod: Pod, table: Any, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score`."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        return batch.score_array(s.topology_score, table, rows)

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score`."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or not s.topology_score:
            return scores
        return batch.normalize_array(scores, MAX_NODE_SCORE)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin normalizes its scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """Min-max onto 0..100 (float, truncated)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return Status(Code.Error, f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        normalize_scores(s, scores)
        return None

    # Queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Pod/Add|UpdatePodLabel|Delete`` and ``Node/Add|UpdateNodeLabel``, with hints."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete
                ),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Only assigned pods matter. Update: queue when the pod starts matching all affinity terms
        or stops matching an anti-affinity term. Add: queue when it matches all affinity terms.
        Delete: queue when it matched an anti-affinity term of ``pod``, or when its own required
        anti-affinity matched ``pod`` (kubesched addition, see module notes)."""
        original, modified = as_objects(Pod, old_obj, new_obj)
        if (modified is not None and not modified.node_name) or (
            original is not None and not original.node_name
        ):
            return QueueingHint.QueueSkip
        terms = affinity_terms(pod, pod.pod_affinity_required)
        anti_terms = affinity_terms(pod, pod.pod_anti_affinity_required)
        if original is not None and modified is not None:
            if not pod_matches_all_affinity_terms(terms, original) and pod_matches_all_affinity_terms(
                terms, modified
            ):
                return QueueingHint.Queue
            if pod_matches_any_affinity_term(anti_terms, original) and not pod_matches_any_affinity_term(
                anti_terms, modified
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            return (
                QueueingHint.Queue
                if pod_matches_all_affinity_terms(terms, modified)
                else QueueingHint.QueueSkip
            )
        assert original is not None
        if pod_matches_any_affinity_term(anti_terms, original):
            return QueueingHint.Queue
        ns_labels = self._namespace_labels(pod.namespace)
        if any(t.matches(pod, ns_labels) for t in PodInfo(original).required_anti_affinity_terms):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when an added node has, or an updated node gains, an affinity term's topology key,
        or when a node is added or changes the value of an anti-affinity term's key."""
        original, modified = as_objects(Node, old_obj, new_obj)
        if modified is None:
            return QueueingHint.QueueSkip
        for t in affinity_terms(pod, pod.pod_affinity_required):
            if t.topology_key in modified.labels and (
                original is None or t.topology_key not in original.labels
            ):
                return QueueingHint.Queue
        for t in affinity_terms(pod, pod.pod_anti_affinity_required):
            if original is None or original.labels.get(t.topology_key) != modified.labels.get(t.topology_key):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _has_preferred_terms(pod: Pod) -> bool:
    """``hasPreferredAffinityConstraints || hasPreferredAntiAffinityConstraints``: the spec lists
    preferred pod (anti-)affinity terms (also when one of them could not be parsed)."""
    if pod.pod_affinity_preferred or pod.pod_anti_affinity_preferred:
        return True
    if pod.affinity_parse_error is None:
        return False
    spec = pod.raw.get("spec")
    affinity = spec.get("affinity") if isinstance(spec, Mapping) else None
    if not isinstance(affinity, Mapping):
        return False
    return any(
        isinstance(a := affinity.get(k), Mapping)
        and bool(a.get("preferredDuringSchedulingIgnoredDuringExecution"))
        for k in ("podAffinity", "podAntiAffinity")
    )


def _satisfy_pod_affinity(s: PreFilterState, node: Node) -> bool:
    """``satisfyPodAffinity``: every term's key on the node and a positive count at its value, or
    the "first pod of a self-affine group" exception (no matching pod anywhere and the pod
    matches all its own terms)."""
    pods_exist = True
    for t in s.affinity_terms:
        tv = node.labels.get(t.topology_key)
        if tv is None:
            return False
        if s.affinity_counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        return not s.affinity_counts and pod_matches_all_affinity_terms(s.affinity_terms, s.pod)
    return True


def _read_pre_filter_state(state: CycleState) -> tuple[PreFilterState | None, Status | None]:
    try:
        s = state.read(PRE_FILTER_STATE_KEY)
    except StateNotFoundError:
        return None, Status(Code.Error, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreFilterState):
        return None, Status(Code.Error, f"{s!r}  convert to interpodaffinity.state error")
    return s, None
