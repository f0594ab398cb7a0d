"""The two plugins every test-built ``Framework`` needs besides the ones under test: a QueueSort
that orders nothing and a Bind that binds nowhere (a profile must enable one of each)."""

from __future__ import annotations

from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin, QueueSortPlugin


class Sort(QueueSortPlugin):
    NAME = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return False


class Binder(BindPlugin):
    NAME = "Binder"

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
        return None
