"""On-demand explanations reproduce the recorded attempts exactly, and match what recording every
attempt during the run (``simulate -o json``) gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_support import EXAMPLE, ROOT

from kubesched.cluster.manifests import load_manifests
from kubesched.modes.simulate.run import run_simulation
from kubesched.ui.session import Session

SNAPSHOTS = [EXAMPLE, *sorted((ROOT / "tests" / "fixtures" / "e2e").glob("*.yaml"))]


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_every_attempt_is_reproduced_and_equals_the_recording(path: Path) -> None:
    manifests = load_manifests([path]).manifests
    s = Session(manifests, None, seed=3)
    run = s.run(None)
    recorded = {f"{p.namespace}/{p.name}": [r.to_dict() for r in p.results]
                for p in run_simulation(manifests, None, seed=3, record=True).pods}
    assert run.log.attempts, "the snapshot has pods to schedule"
    for pod, attempts in run.log.by_pod.items():
        for a in attempts:
            ex = run.explain(pod, a.index)
            assert ex.reproduced is True, (pod, a.index, a.result, a.message, ex.outcome)
            assert ex.record == recorded[pod][a.index - 1], (pod, a.index)
