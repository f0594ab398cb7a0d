"""On-demand explanations reproduce the recorded attempts exactly, and match what recording every
attempt during the run (``simulate -o json``) gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ui_support import EXAMPLE, ROOT

from kubesched.embedded.manifests import load_manifests
from kubesched.modes.simulate.run import run_simulation
from kubesched.ui.explain import Explanation
from kubesched.ui.session import Session

SNAPSHOTS = [EXAMPLE, *sorted((ROOT / "tests" / "fixtures" / "e2e").glob("*.yaml"))]


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_every_attempt_is_reproduced_and_equals_the_recording(path: Path) -> None:
    manifests = load_manifests([path]).manifests
    s = Session(manifests, None, seed=3)
    run = s.run(None)
    recorded = {
        f"{p.namespace}/{p.name}": [r.to_dict() for r in p.results]
        for p in run_simulation(manifests, None, seed=3, record=True).pods
    }
    assert run.log.attempts, "the snapshot has pods to schedule"
    for pod, attempts in run.log.by_pod.items():
        for a in attempts:
            ex = run.explain(pod, a.index)
            assert ex.reproduced is True, (pod, a.index, a.result, a.message, ex.outcome)
            assert ex.record == recorded[pod][a.index - 1], (pod, a.index)


def _explanations() -> list[Explanation]:
    s = Session(load_manifests([EXAMPLE]).manifests, None, seed=0)
    run = s.run(None)
    return [run.explain(p) for p in ("shop/web-1", "shop/batch-big", "ml/trainer-0")]


EXPLANATIONS = _explanations()


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(0, len(EXPLANATIONS) - 1),
    sort_index=st.integers(0, 40),
    desc=st.booleans(),
    limit=st.integers(1, 7),
    feasible=st.sampled_from([None, True, False]),
)
def test_pages_partition_the_sorted_rows(
    which: int, sort_index: int, desc: bool, limit: int, feasible: bool | None
) -> None:
    ex = EXPLANATIONS[which]
    keys = [
        "default",
        "node",
        "total",
        "verdict",
        *(f"filter:{p}" for p in ex.filter_plugins),
        *(f"{k}:{p}" for p in ex.score_plugins for k in ("raw", "normalized", "score")),
    ]
    sort = keys[sort_index % len(keys)]
    rows, offset = [], 0
    while True:
        page = ex.page(sort=sort, desc=desc, offset=offset, limit=limit, feasible=feasible)
        rows += page["rows"]
        offset += limit
        if offset >= page["total"]:
            break
    wanted = [r for r in ex.rows if feasible is None or r["feasible"] is feasible]
    assert sorted(r["node"] for r in rows) == sorted(r["node"] for r in wanted)
    assert len(rows) == page["total"] == len(wanted)
    if sort == "node":
        names = [r["node"] for r in rows]
        assert names == sorted(names, reverse=desc)
    if sort == "total":  # rows without a total (not scored) come last either way
        totals = [r["total"] for r in rows if r["total"] is not None]
        assert totals == sorted(totals, reverse=desc)
        assert all(r["total"] is None for r in rows[len(totals) :])
    if sort == "default" and any(r["selected"] for r in wanted):
        assert rows[0]["selected"]
