"""Types shared by the preemption plugin and the extenders' preempt verb
(``pkg/scheduler/framework/preemption/preemption.go``: ``Candidate``, ``candidate``).

They live in the framework so that :mod:`kubesched.extenders` can shrink DefaultPreemption's
candidate list without importing the plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api.pod import Pod

if TYPE_CHECKING:
    from kubesched.framework.node_info import NodeInfo


@dataclass(slots=True)
class Candidate:
    """A node where preemption makes room: ``victims`` most important first, and how many of them
    violate a PodDisruptionBudget (upstream ``candidate`` / ``extenderv1.Victims``)."""

    name: str
    victims: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


class PreemptionExtender(Protocol):
    """What preemption uses of an HTTP extender (``framework.Extender``: ``Name``,
    ``SupportsPreemption``, ``IsInterested``, ``IsIgnorable``, ``ProcessPreemption``).

    ``process_preemption(pod, victims, node_info)`` takes and returns ``{node name: Victims}``
    (``kubesched.extenders.wire.Victims``: ``pods``, ``num_pdb_violations``); raises on a failed call.
    """

    name: str

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Any], node_info: Callable[[str], NodeInfo | None]
    ) -> dict[str, Any]: ...
