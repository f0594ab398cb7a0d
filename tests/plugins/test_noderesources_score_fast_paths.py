"""The unmasked Score forms of NodeResourcesFit (LeastAllocated / MostAllocated) and
NodeResourcesBalancedAllocation give the same integers as the scalar scorers, and the resource
columns both plugins read are gathered once per CycleState."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.noderesources.balanced_allocation import (
    balanced_resource_score,
    balanced_resource_score_batch,
)
from kubesched.plugins.noderesources.scoring import (
    RESOURCE_COLUMNS_STATE_KEY,
    ResourceColumns,
    ResourceSpec,
    least_allocated_scorer,
    most_allocated_scorer,
    weighted_mean_batch,
)

_amount = st.integers(min_value=0, max_value=(1 << 56) - 1)
_alloc = st.integers(min_value=1, max_value=(1 << 56) - 1)


@st.composite
def _columns(draw: st.DrawFn) -> tuple[list[ResourceSpec], list[list[int]], list[list[int]]]:
    k = draw(st.integers(min_value=1, max_value=3))
    n = draw(st.integers(min_value=0, max_value=12))
    resources = [ResourceSpec(f"r{i}", draw(st.integers(min_value=1, max_value=100))) for i in range(k)]
    small = st.integers(min_value=0, max_value=5000)
    requested = [[draw(st.one_of(small, _amount)) for _ in range(n)] for _ in range(k)]
    allocatable = [[draw(st.one_of(st.integers(1, 5000), _alloc)) for _ in range(n)] for _ in range(k)]
    return resources, requested, allocatable


@settings(max_examples=300, deadline=None)
@given(_columns(), st.booleans())
def test_weighted_mean_simple_equals_scalar(
    cols: tuple[list[ResourceSpec], list[list[int]], list[list[int]]], most: bool
) -> None:
    resources, requested, allocatable = cols
    scorer = (most_allocated_scorer if most else least_allocated_scorer)(resources)
    req = [np.array(c, dtype=np.int64) for c in requested]
    alloc = [np.array(c, dtype=np.int64) for c in allocatable]
    n = len(requested[0])
    want = [scorer([c[j] for c in requested], [c[j] for c in allocatable]) for j in range(n)]
    assert weighted_mean_batch(resources, req, alloc, most, True).tolist() == want
    assert weighted_mean_batch(resources, req, alloc, most, False).tolist() == want


@settings(max_examples=300, deadline=None)
@given(_columns())
def test_balanced_all_valid_equals_scalar(
    cols: tuple[list[ResourceSpec], list[list[int]], list[list[int]]],
) -> None:
    _, requested, allocatable = cols
    req = [np.array(c, dtype=np.int64) for c in requested]
    alloc = [np.array(c, dtype=np.int64) for c in allocatable]
    n = len(requested[0])
    want = [balanced_resource_score([c[j] for c in requested], [c[j] for c in allocatable]) for j in range(n)]
    if n:
        assert balanced_resource_score_batch(req, alloc, True).tolist() == want
        assert balanced_resource_score_batch(req, alloc, False).tolist() == want


class _Table:
    def __init__(self, version: int) -> None:
        self.version = version


def test_resource_columns_shared_within_a_cycle_and_rebuilt_after() -> None:
    state = CycleState()
    table = _Table(3)
    rows = np.array([2, 0], dtype=np.int64)
    source = np.array([10, 20, 30], dtype=np.int64)
    c = ResourceColumns.of(state, table, rows)  # type: ignore[arg-type]
    col = c.column("alloc_cpu", source)
    assert col is not None and col.tolist() == [30, 10]
    assert state.read(RESOURCE_COLUMNS_STATE_KEY) is c
    assert ResourceColumns.of(state, table, rows) is c  # type: ignore[arg-type]
    assert ResourceColumns.of(state, table, rows).column("alloc_cpu", source) is col  # type: ignore[arg-type]
    # other rows, or the table changed: new columns
    assert ResourceColumns.of(state, table, rows.copy()) is not c  # type: ignore[arg-type]
    table.version = 4
    fresh = ResourceColumns.of(state, table, rows)  # type: ignore[arg-type]
    assert fresh is not c
    # out of the exact range: None (the plugins fall back to the per-node path)
    assert fresh.column("req_cpu", np.array([-1, 0, 1 << 56], dtype=np.int64)) is None
    assert fresh.allocatable_all_valid("alloc_cpu", np.array([1, 0], dtype=np.int64)) is False
