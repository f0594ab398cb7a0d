"""The ``churn`` op of a benchmark workload, as upstream's ``scheduler_perf`` runs it
(``test/integration/scheduler_perf/scheduler_perf.go``, ``case *churnOp``), without a clock: the
caller calls :meth:`Churn.tick` every ``intervalMilliseconds`` (default 500) until the workload ends.

* ``mode: create``: each tick creates one object of every template; after ``number`` ticks
  (0: never) it stops.
* ``mode: recreate``: every template has ``number`` slots, used round-robin, one per tick: an
  empty slot gets a new object, a full one has its object deleted (and is empty again).

Objects are created from the templates as they are (``generateName`` names them); namespaced
ones in the op's ``namespace``, default ``namespace-<op index>``. A failed create leaves the slot
empty and a failed delete is forgotten, as upstream (which only logs them); both are counted.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubesched.api import kinds
from kubesched.errors import KubeschedError
from kubesched.modes.bench.workloads import Op

__all__ = ["Churn", "churn_namespace"]

Obj = dict[str, Any]
#: ``create(obj)`` -> the created object (with its name); ``delete(kind, namespace, name)``
Create = Callable[[Obj], Obj]
Delete = Callable[[str, "str | None", str], None]


def churn_namespace(index: int, op: Op) -> str:
    """The namespace of the op's namespaced objects."""
    return op.namespace or f"namespace-{index}"


class Churn:
    """State of one churn op (op ``index`` of the workload)."""

    def __init__(self, index: int, op: Op) -> None:
        self.op = op
        self.namespace = churn_namespace(index, op)
        self.ticks = 0
        self.created = 0
        self.deleted = 0
        self.failures = 0
        self.slots: list[list[tuple[str, str | None, str] | None]] = [
            [None] * max(op.count, 1) for _ in op.templates
        ]

    @property
    def interval_seconds(self) -> float:
        return self.op.interval_seconds

    @property
    def finished(self) -> bool:
        """True once a ``create`` churn has made its ``number`` rounds."""
        return self.op.mode == "create" and self.op.count > 0 and self.ticks >= self.op.count

    def _create(self, template: Obj, create: Create) -> tuple[str, str | None, str] | None:
        obj = copy.deepcopy(template)
        kind = str(obj.get("kind", ""))
        ns = None if kinds.is_cluster_scoped(kind) else self.namespace
        if ns is not None:
            obj.setdefault("metadata", {})["namespace"] = ns
        try:
            made = create(obj)
        except KubeschedError:
            self.failures += 1
            return None
        self.created += 1
        return kind, ns, str((made.get("metadata") or {}).get("name", ""))

    def tick(self, create: Create, delete: Delete) -> None:
        """One interval's work (nothing once :attr:`finished`)."""
        if self.finished:
            return
        if self.op.mode == "create":
            for t in self.op.templates:
                self._create(t, create)
        else:
            for template, slots in zip(self.op.templates, self.slots, strict=True):
                k = self.ticks % len(slots)
                held = slots[k]
                if held is None:
                    slots[k] = self._create(template, create)
                    continue
                slots[k] = None
                try:
                    delete(*held)
                    self.deleted += 1
                except KubeschedError:
                    self.failures += 1
        self.ticks += 1
