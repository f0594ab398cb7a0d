"""Small result types of the extension points (``pkg/scheduler/framework/types.go``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``node_names is None`` means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        """True when no narrowing was asked for."""
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Intersection of the non-"all" sets (all + all -> all)."""
        if other is None or other.node_names is None:
            return PreFilterResult(None if self.node_names is None else set(self.node_names))
        if self.node_names is None:
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NodeScore:
    """A node's score from one plugin (mutated in place by NormalizeScore)."""

    name: str
    score: int


@dataclass(slots=True)
class PluginScore:
    """One plugin's weighted score for a node."""

    name: str
    score: int


@dataclass(slots=True)
class NodePluginScores:
    """Every plugin's weighted score for a node and their total."""

    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0
    randomizer: int = 0


class NominatingMode(IntEnum):
    """``ModeNoop`` keeps the current nomination; ``ModeOverride`` replaces it."""

    Noop = 0
    Override = 1


@dataclass(slots=True)
class NominatingInfo:
    """Which node a pod is nominated to after a failed attempt."""

    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.Noop


@dataclass(slots=True)
class PostFilterResult:
    """A PostFilter plugin's result: the nomination it asks for."""

    nominating_info: NominatingInfo | None = None
