"""Record a ``kubesched serve --kubelet`` cluster while ``kubesched load`` drives a growing
application that ``kubesched run --prepull`` schedules with the image-aware profile
(``examples/replay/image-aware.yaml``), then ``kubesched replay --trace --prepull`` the recording
with the same profile: the replay reproduces the recorded start-ups, pre-pulls included.

World: 8 nodes of 4 cpu with 6, 8, ..., 20 GiB (shapes whose scores do not tie, so both sides
place a pod on the same node; on a tie the scheduler picks at random, upstream's selectHost); an
application image of one 1 GB layer (a 21 s pull at 50 MB/s and 1 s per pull) and another of
400 MB (so the recorded pulls have two sizes for the calibration); one pod of 1 cpu with the
small image at second 0, then 8 pods of 3 cpu (one per node) with the large one, one every 80
cluster seconds from second 20, all running to the end. The kubelets pull one image at a time and start
a container 1 s after its image is there. The cluster runs at ``--speed 5``; ``load --speed 5``
keeps the trace on its clock and ``run --speed 5`` the scheduler's and the planner's windows and ticks.

What happens on both sides: the first two pods pull (the application is not hot before its
second arrival); from then on the planner (growth: nothing ends) pre-pulls a node with room after
each arrival, the puller pod's pull takes the kubelet's slot (the replay models it so, as the
recording holds puller pods), and each later pod lands on a node that lists the image. Compared:
p50 and p95 of the per-pod start-up, recorded and replayed, within 20 %, the replay's own
agreement report (median ratio, share within 2x), and pre-pulls made on both sides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")

from record_support import record_load  # noqa: E402
from run_support import REPO  # noqa: E402

from kubesched.testing import node_manifest  # noqa: E402

SPEED = 5
MB = 1_000_000
IMAGE = "example.com/ml/big:1"
SMALL = "example.com/ml/small:1"
KUBELET = {
    "decompressBytesPerSecond": 50 * MB,
    "layerLatencySeconds": 0.0,
    "pullFixedSeconds": 1.0,
    "containerStartSeconds": 1.0,
}
PODS = 8
GAP = 80


def _catalogue() -> dict[str, Any]:
    return {
        "images": [
            {
                "name": IMAGE,
                "class": "gpu",
                "source": "test",
                "confidence": "derived",
                "layers": [{"id": "big", "size_bytes": 1000 * MB}],
            },
            {
                "name": SMALL,
                "class": "cpu",
                "source": "test",
                "confidence": "derived",
                "layers": [{"id": "small", "size_bytes": 400 * MB}],
            },
        ]
    }


def _trace(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    pods = [{"name": "s0", "arrival": 0, "duration": 3600, "cpu": "1", "memory": "1Gi", "image": SMALL}]
    pods += [
        {
            "name": f"p{i}",
            "arrival": 20 + GAP * i,
            "duration": 3600,
            "cpu": "3",
            "memory": "1Gi",
            "image": IMAGE,
        }
        for i in range(PODS)
    ]
    return {"nodes": nodes, "pods": pods}


def test_replay_of_a_prepull_recording_agrees_with_the_cluster(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    nodes = [node_manifest(f"n{i}", cpu="4", memory=f"{6 + 2 * i}Gi") for i in range(PODS)]
    profile = REPO / "examples" / "replay" / "image-aware.yaml"
    loaded = record_load(
        tmp_path,
        nodes=nodes,
        catalogue=_catalogue(),
        kubelet=KUBELET,
        trace=_trace(nodes),
        profile=profile,
        run_args=(
            "--leader-elect=false",
            "--prepull",
            "--speed",
            str(SPEED),
            "--prepull-catalogue",
            str(tmp_path / "images.yaml"),
            "--authorization-always-allow-paths",
            "/healthz,/readyz,/livez,/metrics",
        ),
        name="prepull",
        speed=SPEED,
        load_timeout=15,
        wall_timeout=300,
        read_metrics=True,
    )
    rec, metrics = loaded.rec, loaded.metrics
    live = loaded.live
    assert (live[0]["pods"], live[0]["scheduled"]) == (PODS + 1, PODS + 1)
    succeeded = [
        line
        for line in metrics.splitlines()
        if line.startswith('kubesched_prepulls_total{outcome="succeeded"}')
    ]
    assert succeeded and float(succeeded[0].split()[-1]) >= 3, metrics

    out = tmp_path / "replay"
    res = CliRunner().invoke(
        main,
        [
            "replay",
            "--trace",
            str(rec),
            "--images",
            str(loaded.images),
            "--config",
            str(profile),
            "--prepull",
            "--out",
            str(out),
            "--no-html",
        ],
    )
    assert res.exit_code == 0, res.output
    assert f"replaying {PODS + 1} pods on {PODS} nodes" in res.output, res.output  # no puller pod
    report = json.loads((out / "report.json").read_text())
    report_cal = report["recording"]["calibration"]
    # the fit finds the serve's 50 MB/s and 1 s per pull (the puller pods' pulls among its points)
    assert report_cal["bytesPerSecond"] == pytest.approx(50 * MB, rel=0.05), report_cal
    assert report_cal["pullFixedSeconds"] == pytest.approx(1.0, abs=0.3), report_cal
    assert "prePullKubeletSlot" in " ".join(report["recording"]["notes"]), report["recording"]["notes"]
    assert report["runs"][0]["prepulls"] >= 3, report["runs"][0]
    agreement = next(iter(report["recording"]["agreement"].values()))
    assert agreement["pods"] == PODS + 1, agreement
    rec_p, rep_p = agreement["recorded"], agreement["replayed"]
    for q in ("p50", "p95"):
        assert rep_p[q] == pytest.approx(rec_p[q], rel=0.2), (q, agreement)
    assert 0.9 <= agreement["medianRatio"] <= 1.1 and agreement["within2x"] >= 0.85, agreement
    print(
        json.dumps({"live": live[0]["startupLatencySeconds"], "agreement": agreement, "metrics": succeeded})
    )
