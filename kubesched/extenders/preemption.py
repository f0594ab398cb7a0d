"""Extenders' say in preemption (``pkg/scheduler/framework/preemption/preemption.go``
``callExtenders``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.pod import Pod
from kubesched.extenders.wire import Victims
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.preemption import Candidate
from kubesched.framework.status import Code, Status

log = logging.getLogger(__name__)


def call_extenders(
    extenders: Sequence[Any],
    pod: Pod,
    candidates: list[Candidate],
    node_info: Callable[[str], NodeInfo | None],
) -> tuple[list[Candidate], Status | None]:
    """Let every extender that supports preemption and is interested in ``pod`` shrink the
    candidate map, in order; each one sees the previous one's answer.

    An extender error skips it when ignorable and otherwise fails with an Error status; a node
    returned without victims is dropped for an ignorable extender and otherwise fails with
    ``expected at least one victim pod on node "<node>"``; an empty map ends the loop.
    Candidates keep their input order (upstream rebuilds them from a Go map, whose order is
    random); nodes an extender added are appended in its answer's order. Returns
    ``(candidates, None)`` or ``([], Error status)``.
    """
    if not extenders or not candidates:
        return candidates, None
    victims: dict[str, Victims] = {c.name: Victims(list(c.victims), c.num_pdb_violations) for c in candidates}
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            result = ext.process_preemption(pod, victims, node_info)
        except Exception as e:  # noqa: BLE001 - an extender failure is a status, never a crash
            if ext.is_ignorable():
                log.info(
                    "skipped extender %s as it returned error and has ignorable flag set: %s", ext.name, e
                )
                continue
            return [], Status(Code.Error, err=e)
        for node in list(result):
            v = result[node]
            if v is None or not v.pods:
                if ext.is_ignorable():
                    del result[node]
                    log.info(
                        "ignored node %s for which the extender %s didn't report victims", node, ext.name
                    )
                    continue
                return [], Status(Code.Error, f'expected at least one victim pod on node "{node}"')
        victims = result
        if not victims:
            break
    order = [c.name for c in candidates if c.name in victims] + [
        n for n in victims if n not in {c.name for c in candidates}
    ]
    return [Candidate(n, list(victims[n].pods), victims[n].num_pdb_violations) for n in order], None
