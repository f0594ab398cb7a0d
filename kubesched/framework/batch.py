"""Optional vectorised forms of Filter and Score over many nodes at once (kubesched's speed path;
no upstream counterpart — upstream parallelises the per-node calls over 16 goroutines instead).

A plugin may add, next to its per-node methods (which stay the definition), the methods of the
protocols below; the framework resolves them once per profile (:func:`filter_forms`,
:func:`score_forms`), never per cycle:

* ``filter_batch(state, pod, table, rows) -> BoolArray | None``: ``mask[i]`` is True iff
  ``filter(state, pod, table.infos[rows[i]])`` would return Success. ``None`` means "cannot
  answer in batch this time" (the framework then runs the per-node path).
* ``score_batch(state, pod, table, rows) -> IntArray | None``: the raw ``score`` of each row
  (before NormalizeScore); ``None`` as above (that plugin is scored node by node).
* ``normalize_score_batch(state, pod, scores) -> IntArray``: NormalizeScore on an array.

``table`` is a :class:`kubesched.framework.node_table.NodeTable` and ``rows`` an ``int64`` array of
its rows in visiting order. Batch forms must not mutate the table or the NodeInfos.

PreFilter/PreScore passes over *all* nodes may use the table's cached derived data instead of
walking every NodeInfo (:func:`table_for` says when that is allowed); they must produce the same
state as the walk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.api.pod import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interfaces import ScoreExtensions, ScorePlugin
    from kubesched.framework.node_table import NodeTable
    from kubesched.framework.snapshot import Snapshot

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: use the node table's derived data in PreFilter/PreScore (tests turn it off to compare with the walk)
TABLE_PRECOMPUTE = True


def table_for(handle: Any, nodes: Sequence[Any]) -> NodeTable | None:
    """The snapshot's node table when ``nodes`` is exactly the snapshot's node list (same object)
    and the table mirrors it; else ``None`` (the caller walks ``nodes``)."""
    if not TABLE_PRECOMPUTE or handle is None:
        return None
    snap: Snapshot = handle.snapshot()
    table = snap.node_table
    if table is None or snap.node_info_list is not nodes or len(table) != len(nodes):
        return None
    return table


def label_lookup(
    table: NodeTable, key: str, values: dict[str, int]
) -> tuple[npt.NDArray[np.int32], IntArray]:
    """``(codes, lookup)`` for label ``key``: ``lookup[codes[row]]`` is ``values.get(label value)``
    (0 when absent or when the node lacks the label; ``codes[row] == 0`` then)."""
    lc = table.label(key)
    lookup = np.zeros(len(lc.values) + 1, dtype=np.int64)
    vocab = lc.vocab
    for v, n in values.items():
        c = vocab.get(v)
        if c is not None:
            lookup[c] = n
    return lc.codes, lookup


@runtime_checkable
class BatchFilter(Protocol):
    """A Filter plugin with a vectorised form."""

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> BoolArray | None: ...


@runtime_checkable
class BatchScore(Protocol):
    """A Score plugin with a vectorised form."""

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None: ...


@runtime_checkable
class BatchNormalizeScore(Protocol):
    """A Score plugin whose NormalizeScore has a vectorised form (same results as ``normalize_score``)."""

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray: ...


@runtime_checkable
class BatchFilterStatusKeys(Protocol):
    """A batch Filter plugin that can say which rejected rows share one status: ``keys[i]`` equal
    (and ``>= 0``) for two rejected rows means ``filter`` returns equal statuses for them; ``-1``
    means no shared status; ``None`` declines."""

    def filter_batch_status_keys(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None: ...


@dataclass(frozen=True)
class FilterForms:
    """The forms of one Filter plugin, resolved once when the profile is built."""

    batch: BatchFilter | None
    status_keys: BatchFilterStatusKeys | None


@dataclass(frozen=True)
class ScoreForms:
    """The forms of one Score plugin, resolved once when the profile is built: its batch Score,
    its batch NormalizeScore, and its per-node NormalizeScore extension (``score_extensions()``)."""

    batch: BatchScore | None
    normalize_batch: BatchNormalizeScore | None
    extensions: ScoreExtensions | None


def filter_forms(plugin: object) -> FilterForms:
    """Resolve ``plugin``'s batch Filter forms (interfaces checked once, at profile build)."""
    batch = plugin if isinstance(plugin, BatchFilter) else None
    keys = plugin if batch is not None and isinstance(plugin, BatchFilterStatusKeys) else None
    return FilterForms(batch, keys)


def score_forms(plugin: ScorePlugin) -> ScoreForms:
    """Resolve ``plugin``'s batch Score forms and NormalizeScore extension (once, at profile build)."""
    batch = plugin if isinstance(plugin, BatchScore) else None
    norm = plugin if isinstance(plugin, BatchNormalizeScore) else None
    return ScoreForms(batch, norm, plugin.score_extensions())


def go_div_array(a: IntArray, b: Any) -> IntArray:
    """Go ``int64`` division (truncation toward zero) of arrays/scalars; ``b`` must be non-zero."""
    q: IntArray = np.abs(a) // np.abs(b)
    neg = (a < 0) != (np.asarray(b) < 0)
    if np.any(neg):
        q = np.where(neg, -q, q)
    return q


def default_normalize_score_batch(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """Vectorised :func:`kubesched.plugins.helper.normalize_score.default_normalize_score` (same results):
    scale so the maximum becomes ``max_priority`` (Go integer division), then reverse if asked."""
    max_count = int(np.maximum.reduce(scores)) if len(scores) else 0
    if max_count <= 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores
    s = go_div_array(scores * max_priority, max_count)
    if reverse:
        s = max_priority - s
    return s
