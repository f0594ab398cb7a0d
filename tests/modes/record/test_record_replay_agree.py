"""Record a ``kubesched serve --kubelet`` cluster while ``kubesched load`` drives a small workload
that ``kubesched run`` schedules (the upstream default profile), then ``kubesched replay --trace``
the recording: the replay reproduces the recorded start-ups.

World: 4 nodes of 6, 12, 10 and 3 cpu and 9, 7, 23 and 29 GiB (shapes for which no two nodes
tie in the upstream default's scores for this workload: replayed with six seeds, every pod lands
on the same node; on a tie the scheduler picks a node at random, upstream's selectHost, and the
two sides could place a pod differently); six images of one layer each (100 MB to 1 GB: 3 s to 21 s at 50 MB/s, 1 s
per pull); 18 pods of 1 cpu in 6 waves of 3, 20 cluster seconds apart (the pods of a wave 4 s apart, so
both sides schedule them in the same order), each running 45 s; the
kubelets pull one image at a time and start a container 1 s after its image is there. The cluster
runs at ``--speed 5`` (a cluster second is 200 ms of wall time) and ``load --speed 5`` keeps the
trace on the cluster's clock.

What is compared: p50 and p95 of the per-pod start-up, recorded (``startedAt`` -
``creationTimestamp``) and replayed, within 20 % of each other, and the replay's own report of the
agreement (median ratio, share within 2x). The replay's kubelet model is calibrated on the
recording's ``Pulled`` events only (throughput, per-pull cost, container start), not given the
serve's settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kubernetes")

from record_support import record_load  # noqa: E402

from kubesched.testing import node_manifest  # noqa: E402

SPEED = 5
MB = 1_000_000
IMAGES = {
    f"example.com/ml/img{i}:1": size
    for i, size in enumerate([100 * MB, 250 * MB, 400 * MB, 600 * MB, 800 * MB, 1000 * MB])
}
NAMES = list(IMAGES)
KUBELET = {
    "decompressBytesPerSecond": 50 * MB,
    "layerLatencySeconds": 0.0,
    "pullFixedSeconds": 1.0,
    "containerStartSeconds": 1.0,
}
# wave w: three pods, images chosen so later waves mix cache hits, joins and new pulls
WAVES = [[0, 5, 2], [1, 3, 5], [4, 0, 2], [5, 1, 3], [2, 4, 0], [3, 5, 1]]


def _catalogue() -> dict[str, Any]:
    # (the image assigner, unused here since every pod names its image, wants one image per class)
    return {
        "images": [
            {
                "name": n,
                "class": "gpu" if i == 5 else "cpu",
                "source": "test",
                "confidence": "derived",
                "layers": [{"id": f"layer-{i}", "size_bytes": s}],
            }
            for i, (n, s) in enumerate(IMAGES.items())
        ]
    }


def _trace(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    pods = [
        {
            "name": f"w{w}-{i}",
            "arrival": 20 * w + 4 * i,
            "duration": 45,
            "cpu": "1",
            "memory": "1Gi",
            "image": NAMES[img],
        }
        for w, images in enumerate(WAVES)
        for i, img in enumerate(images)
    ]
    return {"nodes": nodes, "pods": pods}


def _config(tmp: Path) -> Path:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    path = tmp / "upstream.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_replay_of_a_recording_agrees_with_the_cluster(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    nodes = [
        node_manifest(f"n{i}", cpu=cpu, memory=memory)
        for i, (cpu, memory) in enumerate([("6", "9Gi"), ("12", "7Gi"), ("10", "23Gi"), ("3", "29Gi")])
    ]
    loaded = record_load(
        tmp_path,
        nodes=nodes,
        catalogue=_catalogue(),
        kubelet=KUBELET,
        trace=_trace(nodes),
        profile=_config(tmp_path),
        name="upstream",
        speed=SPEED,
        load_timeout=60,
        wall_timeout=240,
    )
    rec = loaded.rec
    live = loaded.live
    assert [r["scheduler"] for r in live] == ["default-scheduler"]
    assert (live[0]["pods"], live[0]["scheduled"]) == (18, 18)

    out = tmp_path / "replay"
    res = CliRunner().invoke(
        main,
        [
            "replay",
            "--trace",
            str(rec),
            "--images",
            str(loaded.images),
            "--out",
            str(out),
            "--no-html",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    cal = report["recording"]["calibration"]
    # the fit finds the serve's 50 MB/s and 1 s per pull from the recorded Pulled events
    assert cal["bytesPerSecond"] == pytest.approx(50 * MB, rel=0.05), cal
    assert cal["pullFixedSeconds"] == pytest.approx(1.0, abs=0.3), cal
    agreement = report["recording"]["agreement"]["upstream-default"]
    assert agreement["pods"] == 18, agreement
    rec_p, rep_p = agreement["recorded"], agreement["replayed"]
    for q in ("p50", "p95"):
        assert rep_p[q] == pytest.approx(rec_p[q], rel=0.2), (q, agreement)
    # per pod too (before the replay wrote each node's status.images on that kubelet's own 10 s grid,
    # a pod could find an image just pulled in one and not the other: within 2x 0.6-0.8)
    assert 0.9 <= agreement["medianRatio"] <= 1.1 and agreement["within2x"] >= 0.85, agreement
    print(json.dumps({"live": live[0]["startupLatencySeconds"], "agreement": agreement, "calibration": cal}))
