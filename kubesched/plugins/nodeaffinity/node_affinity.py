"""NodeAffinity: the pod's ``nodeSelector`` and required node affinity must match the node,
the scheduler-enforced ``addedAffinity`` too; preferred terms add their weights to the score
(``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``,
args validation ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``
``ValidateNodeAffinityArgs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass as std_dataclass
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.node import Node
from kubesched.api.node_selector import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from kubesched.api.pod import Pod
from kubesched.api.required_node_affinity import RequiredNodeAffinity, get_required_node_affinity
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.batch import default_normalize_score_batch
from kubesched.framework.cycle_state import CycleState, ReadOnlyStateData
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
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore, PreFilterResult
from kubesched.framework.signers import (
    NODE_AFFINITY_SIGNER_NAME,
    NODE_SELECTOR_SIGNER_NAME,
    SignFragment,
    node_affinity_signer,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper.node_selector_batch import (
    OBJECT_NAME_FIELD,
    required_mask_batch,
    selector_mask_batch,
    term_mask_batch,
)
from kubesched.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _go_str_slice(values: Sequence[str]) -> str:
    """``%#v`` of a ``[]string`` as field errors print it: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


# ---------------------------------------------------------------------------------------------
# Args: v1.NodeAffinity shaped (camelCase in YAML), validated like nodeaffinity.NewNodeSelector.


@dataclass(config=ARGS_CONFIG)
class NodeSelectorRequirementArgs:
    """A ``matchExpressions`` entry: ``key <operator> values`` over node labels."""

    key: str = Field(default="", validate_default=True)
    operator: str = Field(default="", validate_default=True)
    values: list[str] = Field(default_factory=list, validate_default=True)

    @field_validator("key")
    @classmethod
    def _check_key(cls, v: str) -> str:
        if not v:
            raise ValueError('Invalid value: "": name part must be non-empty')
        return v

    @field_validator("operator")
    @classmethod
    def _check_operator(cls, v: str) -> str:
        if v not in _LABEL_OPS:
            raise ValueError(f'Unsupported value: "{v}"')
        return v

    @field_validator("values")
    @classmethod
    def _check_values(cls, v: list[str], info: ValidationInfo) -> list[str]:
        op = info.data.get("operator")
        if op in ("In", "NotIn") and not v:
            raise ValueError(
                f"Invalid value: {_go_str_slice(v)}: for 'in', 'notin' operators, values set can't be empty"
            )
        if op in ("Exists", "DoesNotExist") and v:
            raise ValueError(
                f"Invalid value: {_go_str_slice(v)}: values set must be empty for exists and does not exist"
            )
        if op in ("Gt", "Lt"):
            if len(v) != 1:
                raise ValueError(
                    f"Invalid value: {_go_str_slice(v)}: for 'Gt', 'Lt' operators, exactly one value is required"
                )
            try:
                int(v[0])
            except ValueError:
                raise ValueError(
                    f"Invalid value: \"{v[0]}\": for 'Gt', 'Lt' operators, the value must be an integer"
                ) from None
        return v

    def compile(self) -> NodeSelectorRequirement:
        """The matcher form."""
        return NodeSelectorRequirement(self.key, self.operator, tuple(self.values))


@dataclass(config=ARGS_CONFIG)
class NodeSelectorFieldRequirementArgs:
    """A ``matchFields`` entry: only ``metadata.name`` with ``In``/``NotIn`` and exactly one value."""

    key: str = Field(default="", validate_default=True)
    operator: str = Field(default="", validate_default=True)
    values: list[str] = Field(default_factory=list, validate_default=True)

    @field_validator("key")
    @classmethod
    def _check_key(cls, v: str) -> str:
        if v != OBJECT_NAME_FIELD:
            raise ValueError(f'Invalid value: "{v}": not a valid field selector key')
        return v

    @field_validator("operator")
    @classmethod
    def _check_operator(cls, v: str) -> str:
        if v not in ("In", "NotIn"):
            raise ValueError(f'Invalid value: "{v}": not a valid selector operator')
        return v

    @field_validator("values")
    @classmethod
    def _check_values(cls, v: list[str]) -> list[str]:
        if len(v) != 1:
            raise ValueError(f"Invalid value: {_go_str_slice(v)}: must have one element")
        return v

    def compile(self) -> NodeSelectorRequirement:
        """The matcher form."""
        return NodeSelectorRequirement(self.key, self.operator, tuple(self.values))


@dataclass(config=ARGS_CONFIG)
class NodeSelectorTermArgs:
    """``v1.NodeSelectorTerm``: requirements ANDed; an empty term matches nothing."""

    match_expressions: list[NodeSelectorRequirementArgs] = field(default_factory=list)
    match_fields: list[NodeSelectorFieldRequirementArgs] = field(default_factory=list)

    def compile(self) -> NodeSelectorTerm:
        """The matcher form."""
        return NodeSelectorTerm(
            tuple(r.compile() for r in self.match_expressions), tuple(r.compile() for r in self.match_fields)
        )


@dataclass(config=ARGS_CONFIG)
class NodeSelectorArgs:
    """``v1.NodeSelector``: ORed terms."""

    node_selector_terms: list[NodeSelectorTermArgs] = field(default_factory=list)

    def compile(self) -> NodeSelector:
        """The matcher form."""
        return NodeSelector(tuple(t.compile() for t in self.node_selector_terms))


@dataclass(config=ARGS_CONFIG)
class PreferredSchedulingTermArgs:
    """``v1.PreferredSchedulingTerm``: ``weight`` added to the score when ``preference`` matches."""

    weight: int = 0
    preference: NodeSelectorTermArgs = field(default_factory=NodeSelectorTermArgs)

    def compile(self) -> PreferredSchedulingTerm:
        """The matcher form."""
        return PreferredSchedulingTerm(self.weight, self.preference.compile())


@dataclass(config=ARGS_CONFIG)
class NodeAffinitySpec:
    """``v1.NodeAffinity`` as given in ``addedAffinity``."""

    required_during_scheduling_ignored_during_execution: NodeSelectorArgs | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTermArgs] = field(
        default_factory=list
    )


@dataclass(config=ARGS_CONFIG)
class NodeAffinityArgs:
    """``NodeAffinityArgs``: ``addedAffinity`` applies to every pod of the profile (its required
    part is ANDed with the pod's, its preferred terms are added to the score)."""

    added_affinity: NodeAffinitySpec | None = None


# ---------------------------------------------------------------------------------------------
# Cycle state


@std_dataclass(slots=True)
class _PreFilterState(ReadOnlyStateData):
    required_node_selector_and_affinity: RequiredNodeAffinity

    def clone(self) -> _PreFilterState:
        return self


@std_dataclass(slots=True)
class _PreferredTermsState(ReadOnlyStateData):
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...] | None

    def clone(self) -> _PreferredTermsState:
        return self


def score_preferred_terms(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    """``PreferredSchedulingTerms.Score``: Σ weights of the terms whose preference matches
    (weight-0 and empty terms never count)."""
    total = 0
    for t in terms:
        if t.weight != 0 and t.preference.matches(node.labels, node.name):
            total += t.weight
    return total


def pod_preferred_node_affinity(pod: Pod) -> tuple[PreferredSchedulingTerm, ...] | None:
    """The pod's preferred node-affinity terms, ``None`` when it has none."""
    return pod.preferred_node_affinity or None


def pre_filter_node_names(selector: NodeSelector) -> set[str] | None:
    """The node names pinned by a required node selector: ``None`` ("all nodes") unless every term
    has a ``metadata.name In`` requirement; within a term the sets intersect, across terms they unite."""
    node_names: set[str] | None = None
    for t in selector.terms:
        term_names: set[str] | None = None
        for r in t.match_fields:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                s = set(r.values)
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        node_names = set(term_names) if node_names is None else node_names | term_names
    return node_names


def preferred_score_batch(
    terms: Sequence[PreferredSchedulingTerm], table: NodeTable, rows: IntArray
) -> IntArray | None:
    """Column form of :func:`score_preferred_terms`."""
    total = np.zeros(len(rows), dtype=np.int64)
    for t in terms:
        if t.weight == 0:
            continue
        m = term_mask_batch(t.preference, table, rows)
        if m is None:
            return None
        total += np.where(m, t.weight, 0)
    return total


class NodeAffinity(
    PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions, SignPlugin
):
    """See the module docstring. Reasons: ``node(s) didn't match scheduler-enforced node affinity``
    (addedAffinity), ``node(s) didn't match Pod's node affinity/selector``, PreFilter
    ``pod affinity terms conflict`` (all UnschedulableAndUnresolvable)."""

    NAME = NAME
    Args = NodeAffinityArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility and scoring depend on the pod's node affinity and node selector."""
        return [
            SignFragment(NODE_AFFINITY_SIGNER_NAME, node_affinity_signer(pod)),
            SignFragment(NODE_SELECTOR_SIGNER_NAME, dict(pod.node_selector)),
        ], None

    def __init__(self, args: NodeAffinityArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or NodeAffinityArgs(), handle)
        self.added_node_selector: NodeSelector | None = None
        self.added_pref_sched_terms: tuple[PreferredSchedulingTerm, ...] | None = None
        added = self.args.added_affinity
        if added is not None:
            if added.required_during_scheduling_ignored_during_execution is not None:
                self.added_node_selector = added.required_during_scheduling_ignored_during_execution.compile()
            if added.preferred_during_scheduling_ignored_during_execution:
                self.added_pref_sched_terms = tuple(
                    t.compile() for t in added.preferred_during_scheduling_ignored_during_execution
                )

    # PreFilter / Filter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip when there is nothing to check; otherwise store the required matcher and narrow the
        nodes when every required term pins ``metadata.name``."""
        required = pod.required_node_affinity
        if required is None and self.added_node_selector is None and not pod.node_selector:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(get_required_node_affinity(pod)))
        if required is None or not required.terms:
            return None, None
        names = pre_filter_node_names(required)
        if names is None:
            return None, None
        if not names:
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Check addedAffinity, then the pod's nodeSelector AND required affinity."""
        node = node_info.node
        if node is None:
            return Status(Code.Error, "node not found")
        if self.added_node_selector is not None and not self.added_node_selector.matches(
            node.labels, node.name
        ):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY)
        required = (
            s.required_node_selector_and_affinity
            if isinstance(s, _PreFilterState)
            else get_required_node_affinity(pod)
        )
        if not required.matches(node):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter` over label-code columns."""
        mask = np.ones(len(rows), dtype=np.bool_)
        if self.added_node_selector is not None:
            m = selector_mask_batch(self.added_node_selector, table, rows)
            if m is None:
                return None
            mask &= m
        s = state.get(PRE_FILTER_STATE_KEY)
        required = (
            s.required_node_selector_and_affinity
            if isinstance(s, _PreFilterState)
            else get_required_node_affinity(pod)
        )
        m = required_mask_batch(required, table, rows)
        if m is None:
            return None
        return mask & m

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip when neither the pod nor addedAffinity has preferred terms. A preferred term upstream
        cannot convert is an Error (``nodeaffinity.NewPreferredSchedulingTerms``)."""
        bad = [
            f"[{i}].{t.preference.parse_error}"
            for i, t in enumerate(pod.preferred_node_affinity)
            if t.weight != 0 and t.preference.parse_error is not None
        ]
        if bad:
            return Status(Code.Error, bad[0] if len(bad) == 1 else "[" + ", ".join(bad) + "]")
        preferred = pod_preferred_node_affinity(pod)
        if preferred is None and self.added_pref_sched_terms is None:
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, _PreferredTermsState(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Σ weights of matching preferred terms (addedAffinity's, then the pod's)."""
        node = node_info.node
        if node is None:
            return 0, Status(Code.Error, "node not found")
        count = 0
        if self.added_pref_sched_terms is not None:
            count += score_preferred_terms(self.added_pref_sched_terms, node)
        s = state.get(PRE_SCORE_STATE_KEY)
        preferred = (
            s.preferred_node_affinity
            if isinstance(s, _PreferredTermsState)
            else pod_preferred_node_affinity(pod)
        )
        if preferred is not None:
            count += score_preferred_terms(preferred, node)
        return count, None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score`."""
        total = np.zeros(len(rows), dtype=np.int64)
        s = state.get(PRE_SCORE_STATE_KEY)
        preferred = (
            s.preferred_node_affinity
            if isinstance(s, _PreferredTermsState)
            else pod_preferred_node_affinity(pod)
        )
        for terms in (self.added_pref_sched_terms, preferred):
            if terms is not None:
                m = preferred_score_batch(terms, table, rows)
                if m is None:
                    return None
                total += m
        return total

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score`."""
        return default_normalize_score_batch(MAX_NODE_SCORE, False, scores)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin normalizes its scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """Default normalize, ``reverse=False``."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # Queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Node/Add|UpdateNodeLabel`` with :meth:`is_schedulable_after_node_change`."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when the new node matches addedAffinity and the pod's required affinity and is
        either new or did not match before."""
        original, modified = as_objects(Node, old_obj, new_obj)
        if modified is None:
            return QueueingHint.QueueSkip
        if self.added_node_selector is not None and not self.added_node_selector.matches(
            modified.labels, modified.name
        ):
            return QueueingHint.QueueSkip
        required = get_required_node_affinity(pod)
        if not required.matches(modified):
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        if required.matches(original):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
