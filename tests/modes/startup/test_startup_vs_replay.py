"""The same small workload, once replayed and once live: ``kubesched serve --kubelet`` (clock 20x)
with ``kubesched run`` binding the pods of two profiles (upstream default and the image-aware
profile, each on its own pool of three nodes), read back by ``kubesched startup``. Both must rank
the profiles the same way (start-up p50 and bytes pulled).

Workload: 3 nodes of 8 cpu / 32 GiB; 10 pods of 3 cpu / 12 GiB arriving every 30 s, alternating
between two 500 MB images, each running 60 s. Pulls at 25 MB/s take 20 s. Upstream's LeastAllocated
outweighs ImageLocality here and spreads the pods (pulling again); ImagePullTimeSaved sends each
pod to the node holding its image."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from process_support import stop_process
from record_support import serve_kubelet
from run_support import kubesched_command, kubesched_env

from kubesched.config.load import load_config
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.images.catalogue import parse_catalogue
from kubesched.modes.replay.run import ConfigSpec, run_replays
from kubesched.testing import node_manifest
from kubesched.trace.workload import Workload, WorkloadPod

pytest.importorskip("kubernetes")

REPO = Path(__file__).resolve().parents[3]
SPEED = 20.0
IMAGES = ["example.com/team/img-a:1", "example.com/team/img-b:1"]
CATALOGUE = {
    "images": [
        {
            "name": name,
            "class": "cpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": f"{name}-layer", "size_bytes": 500_000_000}],
        }
        for name in IMAGES
    ]
}
KUBELET = {
    "decompressBytesPerSecond": 25_000_000,
    "layerLatencySeconds": 0.0,
    "pullFixedSeconds": 0.0,
    "containerStartSeconds": 1.0,
}
PODS = [(f"p{i}", 30.0 * i, IMAGES[i % 2]) for i in range(10)]


def _pod(
    name: str,
    image: str,
    scheduler: str | None = None,
    pool: str | None = None,
    run_seconds: float | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": image, "resources": {"requests": {"cpu": "3", "memory": "12Gi"}}}
        ]
    }
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if scheduler:
        spec["schedulerName"] = scheduler
        spec["nodeSelector"] = {"pool": str(pool)}
        meta["annotations"] = {"kubesched.io/run-seconds": str(run_seconds)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _replay() -> dict[str, dict[str, Any]]:
    nodes = [node_manifest(f"n{i}", cpu="8", memory="32Gi") for i in range(3)]
    pods = [WorkloadPod(name, "default", arrival, 60.0, _pod(name, image)) for name, arrival, image in PODS]
    workload = Workload(nodes, pods, horizon=400.0, description="test")
    specs = [
        ConfigSpec("upstream", None),
        ConfigSpec("image-aware", load_config(REPO / "examples/replay/image-aware.yaml")),
    ]
    results = run_replays(
        workload,
        specs,
        catalogue=parse_catalogue(CATALOGUE, "test"),
        kubelet_config=KubeletImageConfig.from_mapping(KUBELET),
    )
    return {r.config: r.summary() for r in results}


def _scheduler_config(path: Path) -> Path:
    aware = yaml.safe_load((REPO / "examples/replay/image-aware.yaml").read_text())["profiles"][0]
    aware["schedulerName"] = "image-aware"
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "upstream"}, aware],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _live(tmp: Path) -> dict[str, dict[str, Any]]:
    from kubernetes import client, config

    nodes = [
        node_manifest(f"{pool}-{i}", cpu="8", memory="32Gi", labels={"pool": pool})
        for pool in ("up", "aware")
        for i in range(3)
    ]
    serve, kc = serve_kubelet(tmp, nodes, CATALOGUE, KUBELET, SPEED)
    sched = None
    try:
        log = open(tmp / "run.log", "w")  # noqa: SIM115 - closed below
        sched = subprocess.Popen(
            kubesched_command(
                "run",
                "--kubeconfig",
                str(kc),
                "--config",
                str(_scheduler_config(tmp / "sched.yaml")),
                "--secure-port",
                "0",
                "--port",
                "0",
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=kubesched_env(),
        )
        api = client.CoreV1Api(config.new_client_from_config(str(kc)))
        t0 = time.monotonic() + 5.0  # let the scheduler start
        for name, arrival, image in PODS:
            delay = t0 + arrival / SPEED - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for scheduler, pool in (("upstream", "up"), ("image-aware", "aware")):
                api.create_namespaced_pod(
                    "default", _pod(f"{scheduler}-{name}", image, scheduler, pool, 60.0)
                )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pods = api.list_namespaced_pod("default").items
            if len(pods) == 2 * len(PODS) and all(p.status.phase in ("Running", "Succeeded") for p in pods):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"pods did not all start:\n{(tmp / 'run.log').read_text()}")
        out = tmp / "report"
        done = subprocess.run(
            kubesched_command(
                "startup",
                "--kubeconfig",
                str(kc),
                "-n",
                "default",
                "--since",
                "all",
                "--out",
                str(out),
                "--no-html",
            ),
            capture_output=True,
            text=True,
            timeout=120,
            env=kubesched_env(),
        )
        assert done.returncode == 0, done.stderr
        report = json.loads((out / "report.json").read_text())
        return {r["scheduler"]: r for r in report["runs"]}
    finally:
        if sched is not None:
            stop_process(sched)
        serve.stop()


def test_startup_ranks_profiles_like_the_replay(tmp_path: Path) -> None:
    replay = _replay()
    live = _live(tmp_path)
    assert sorted(live) == ["image-aware", "upstream"]
    assert all(r["scheduled"] == len(PODS) for r in live.values())

    def p50(runs: dict[str, dict[str, Any]], name: str) -> float:
        return float(runs[name]["startupLatencySeconds"]["p50"])

    # the replay: image-aware pulls each image once, upstream spreads and pulls again
    assert p50(replay, "image-aware") < p50(replay, "upstream")
    assert replay["image-aware"]["bytesPulled"] < replay["upstream"]["bytesPulled"]
    # live, the same ranking
    assert p50(live, "image-aware") < p50(live, "upstream")
    assert live["image-aware"]["bytesPulled"] < live["upstream"]["bytesPulled"]
    assert live["image-aware"]["cacheHitRatio"] > live["upstream"]["cacheHitRatio"]
