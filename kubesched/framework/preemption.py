"""Types shared by the preemption plugin and the extenders' preempt verb
(``pkg/scheduler/framework/preemption/preemption.go``: ``Candidate``, ``candidate``).

They live in the framework so that :mod:`kubesched.extenders` can shrink DefaultPreemption's
candidate list without importing the plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.pod import Pod


@dataclass(slots=True)
class Candidate:
    """A node where preemption makes room: ``victims`` most important first, and how many of them
    violate a PodDisruptionBudget (upstream ``candidate`` / ``extenderv1.Victims``)."""

    name: str
    victims: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0
