"""Optional vectorised forms of Filter and Score over many nodes at once (kubesched's speed path;
no upstream counterpart — upstream parallelises the per-node calls over 16 goroutines instead).

A plugin may add, next to its per-node methods (which stay the definition):

* ``filter_batch(state, pod, table, rows) -> BoolArray | None``: ``mask[i]`` is True iff
  ``filter(state, pod, table.infos[rows[i]])`` would return Success. ``None`` means "cannot
  answer in batch this time" (the framework then runs the per-node path).
* ``score_batch(state, pod, table, rows) -> IntArray | None``: the raw ``score`` of each row
  (before NormalizeScore); ``None`` as above (that plugin is scored node by node).
* ``normalize_score_batch(state, pod, scores) -> IntArray``: NormalizeScore on an array.

``table`` is a :class:`kubesched.cache.node_table.NodeTable` and ``rows`` an ``int64`` array of
its rows in visiting order. Batch forms must not mutate the table or the NodeInfos.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.cache.node_table import NodeTable
    from kubesched.framework.cycle_state import CycleState

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@runtime_checkable
class BatchFilter(Protocol):
    """A Filter plugin with a vectorised form."""

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None: ...


@runtime_checkable
class BatchScore(Protocol):
    """A Score plugin with a vectorised form."""

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None: ...


def go_div_array(a: IntArray, b: Any) -> IntArray:
    """Go ``int64`` division (truncation toward zero) of arrays/scalars; ``b`` must be non-zero."""
    q: IntArray = np.abs(a) // np.abs(b)
    neg = (a < 0) != (np.asarray(b) < 0)
    if np.any(neg):
        q = np.where(neg, -q, q)
    return q


def default_normalize_score_batch(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """Vectorised :func:`kubesched.framework.normalize.default_normalize_score` (same results):
    scale so the maximum becomes ``max_priority`` (Go integer division), then reverse if asked."""
    max_count = int(scores.max()) if len(scores) else 0
    if max_count <= 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores
    s = go_div_array(scores * max_priority, max_count)
    if reverse:
        s = max_priority - s
    return s
