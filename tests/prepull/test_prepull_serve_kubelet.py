"""``kubesched run --prepull`` against ``kubesched serve --kubelet``: pods start faster than under
``kubesched run`` alone, read back with ``kubesched startup``.

One embedded cluster with kubelets (clock 20x: a cluster second is 50 ms of wall time), two
schedulers side by side, each with its own pool of identical nodes (4 cpu; nodeSelector ``pool``):

* ``with-prepull``: ``kubesched run --prepull`` (puller pods, a tick every 0.5 s), pool ``pre``
  (12 nodes);
* ``without-prepull``: ``kubesched run``, pool ``plain`` (8 nodes).

Both run the upstream default profile (ImageLocality breaks the tie between empty nodes in favour of
one listing the image). Workload, the same for both: one application whose image is one 1 GB
layer (a 20 s pull at 50 MB/s, 1 s container start) and whose pods take 3 cpu, so a node runs one
of them; 4 waves of 2 pods, 5 s of wall time (100 cluster seconds) apart; the pods run to the end.

What the planner does (its defaults: demand = pending + ceil(arrivals in the last 900 s x 300 / 900),
minus the room of the nodes holding the image): after wave 1 (2 arrivals) it pre-pulls 1 node,
after wave 2 (4 arrivals) 2 nodes, after wave 3 (6) 2 nodes. So without pre-pull every pod pulls;
with it, wave 1 pulls (nothing was known yet), wave 2 finds the image on at least one node, and
waves 3 and 4 find it on every node they land on ("already present on machine"). A tick that
catches a wave half bound may pre-pull more, never less, so the counts for wave 2 are a lower
bound and those of waves 1, 3 and 4 are exact.

Honest about the mechanism: puller pods pull through the kubelet, in its pull slot
(``serializeImagePulls``), unlike the replay's CRI-level pre-pull. A pod bound to a node while a
puller pod is still pulling there waits for that pull: for the same image it joins it (the rest of
the 20 s), for another image it queues behind it. The waves here are 5x a pull apart, so the
pre-pulls are done when the next wave comes; start-up times are measured as they happen, waits
included (``pullWaitSeconds``).

The timelines are read under ``--speed 20`` and must be monotonic on one clock: creation <=
PodScheduled <= Pulling <= Pulled <= container start, and the scheduler's own ``Scheduled`` Event
(written by another process with its wall clock) within the pod's timeline.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

pytest.importorskip("kubernetes")

from run_support import Replica, wait_for  # noqa: E402
from serve_support import ServeProcess  # noqa: E402

from kubesched.api.timestamps import parse_rfc3339  # noqa: E402
from kubesched.modes.report.metrics import percentiles  # noqa: E402
from kubesched.testing import node_manifest  # noqa: E402

SPEED = 20
IMAGE = "example.com/team/big:1"
IMAGE_BYTES = 1_000_000_000
CATALOGUE = {
    "images": [
        {
            "name": IMAGE,
            "class": "cpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": "big-layer", "size_bytes": IMAGE_BYTES}],
        }
    ]
}
KUBELET = {
    "decompressBytesPerSecond": 50_000_000,
    "layerLatencySeconds": 0.0,
    "pullFixedSeconds": 0.0,
    "containerStartSeconds": 1.0,
}
WAVES, PER_WAVE, WAVE_WALL_SECONDS = 4, 2, 5.0
POOLS = {"with-prepull": ("pre", 12), "without-prepull": ("plain", 8)}
PRESENT = f'Container image "{IMAGE}" already present on machine'


def _config(tmp: Path, scheduler: str) -> Path:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler}],
    }
    path = tmp / f"{scheduler}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _pod(scheduler: str, wave: int, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{scheduler}-w{wave}-{i}", "namespace": "default"},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {"pool": POOLS[scheduler][0]},
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "main", "image": IMAGE, "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
            ],
        },
    }


def _event_t(event: dict[str, Any]) -> float:
    """An Event's time: ``eventTime``, else (the kubelet's core Events) ``deprecatedFirstTimestamp``."""
    return parse_rfc3339(event.get("eventTime") or event["deprecatedFirstTimestamp"])


def _timeline(pod: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """creation, PodScheduled, the Scheduled Event, Pulling, Pulled, container start (epoch s of the
    cluster clock) and the Pulled message of one pod."""
    name = pod["metadata"]["name"]
    mine = [e for e in events if (e.get("regarding") or {}).get("name") == name]

    def one(reason: str, controllers: tuple[str, ...]) -> dict[str, Any] | None:
        found = [e for e in mine if e.get("reason") == reason and e.get("reportingController") in controllers]
        assert len(found) <= 1, found
        return found[0] if found else None

    scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    pulling, pulled = one("Pulling", ("kubelet",)), one("Pulled", ("kubelet",))
    event = one("Scheduled", (pod["spec"]["schedulerName"],))  # reportingController: the profile
    assert pulled is not None and event is not None, [
        (e.get("reason"), e.get("reportingController")) for e in mine
    ]
    [cs] = pod["status"]["containerStatuses"]
    return {
        "created": parse_rfc3339(pod["metadata"]["creationTimestamp"]),
        "scheduled": parse_rfc3339(scheduled["lastTransitionTime"]),
        "scheduledEvent": _event_t(event),
        "pulling": None if pulling is None else _event_t(pulling),
        "pulled": _event_t(pulled),
        "started": parse_rfc3339(cs["state"]["running"]["startedAt"]),
        "message": pulled.get("note"),
    }


def test_run_prepull_starts_pods_faster_on_serve_kubelet(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from kubernetes import client, config

    from kubesched.cli.main import main

    nodes = [
        node_manifest(f"{pool}-{i}", cpu="4", memory="16Gi", labels={"pool": pool})
        for pool, count in POOLS.values()
        for i in range(count)
    ]
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all(nodes))
    (tmp_path / "images.yaml").write_text(yaml.safe_dump(CATALOGUE))
    (tmp_path / "kubelet.yaml").write_text(yaml.safe_dump(KUBELET))
    kc = tmp_path / "kubeconfig"
    serve = ServeProcess(
        tmp_path,
        "-f",
        str(tmp_path / "nodes.yaml"),
        "--write-kubeconfig",
        str(kc),
        "--kubelet",
        "--kubelet-config",
        str(tmp_path / "kubelet.yaml"),
        "--images",
        str(tmp_path / "images.yaml"),
        "--speed",
        str(SPEED),
    )
    replicas: list[Replica] = []
    try:
        serve.wait_ready()
        wait_for(kc.exists, 10, "the kubeconfig")
        api_client = config.new_client_from_config(str(kc))
        core = client.CoreV1Api(api_client)
        core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prepull"}})
        shim = SimpleNamespace(tmp=tmp_path, kubeconfig=str(kc), reader_token=None)
        replicas.append(
            Replica(
                shim,
                _config(tmp_path, "with-prepull"),
                "--prepull",  # type: ignore[arg-type]
                "--prepull-namespace",
                "prepull",
                "--prepull-interval",
                "0.5",
                "--prepull-catalogue",
                str(tmp_path / "images.yaml"),
                name="with-prepull",
            )
        )
        replicas.append(Replica(shim, _config(tmp_path, "without-prepull"), name="without-prepull"))  # type: ignore[arg-type]
        for r in replicas:
            r.wait_ready(60)
        t0 = time.monotonic()
        for wave in range(WAVES):
            delay = t0 + wave * WAVE_WALL_SECONDS - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for i in range(PER_WAVE):
                for scheduler in POOLS:
                    core.create_namespaced_pod("default", _pod(scheduler, wave, i))

        def all_running() -> list[Any] | None:
            resp = core.list_namespaced_pod("default", _preload_content=False)
            pods = json.loads(resp.data)["items"]
            done = len(pods) == 2 * WAVES * PER_WAVE and all(
                p["status"].get("phase") == "Running" for p in pods
            )
            return pods if done else None

        try:
            pods = wait_for(all_running, 60, "every pod Running")
        except AssertionError:
            raise AssertionError("\n".join(r.log()[-3000:] for r in replicas)) from None

        out = tmp_path / "report"
        res = CliRunner().invoke(
            main,
            [
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
            ],
        )
        assert res.exit_code == 0, res.output
        resp = client.EventsV1Api(api_client).list_namespaced_event("default", _preload_content=False)
        events = json.loads(resp.data)["items"]
    finally:
        for r in replicas:
            r.stop()
        serve.stop()

    report = {r["scheduler"]: r for r in json.loads((out / "report.json").read_text())["runs"]}
    assert sorted(report) == ["with-prepull", "without-prepull"]
    with open(out / "pods.csv", encoding="utf-8") as f:
        rows = {row["pod"].removeprefix("default/"): row for row in csv.DictReader(f)}
    timelines = {p["metadata"]["name"]: _timeline(p, events) for p in pods}

    def present(scheduler: str, wave: int) -> int:
        return sum(timelines[f"{scheduler}-w{wave}-{i}"]["message"] == PRESENT for i in range(PER_WAVE))

    # without pre-pull every pod pulls the image; with it, wave 1 pulls, waves 3 and 4 find it
    assert [present("without-prepull", w) for w in range(WAVES)] == [0, 0, 0, 0]
    hits = [present("with-prepull", w) for w in range(WAVES)]
    assert hits[0] == 0 and hits[1] >= 1 and hits[2:] == [PER_WAVE, PER_WAVE], hits
    # every other Pulled event is a pull of the whole image
    for name, tl in timelines.items():
        if tl["message"] != PRESENT:
            assert tl["message"].startswith(f'Successfully pulled image "{IMAGE}" in '), (name, tl["message"])
            assert tl["message"].endswith(f"Image size: {IMAGE_BYTES} bytes."), (name, tl["message"])
    pods_total = WAVES * PER_WAVE
    without, with_ = report["without-prepull"], report["with-prepull"]
    assert (without["pods"], without["scheduled"], with_["pods"], with_["scheduled"]) == (pods_total,) * 4
    assert (without["bytesPulled"], without["cacheHitRatio"]) == (pods_total * IMAGE_BYTES, 0.0)
    assert with_["bytesPulled"] == (pods_total - sum(hits)) * IMAGE_BYTES
    assert with_["cacheHitRatio"] == sum(hits) / pods_total

    # start-up (cluster seconds): a pull is 20 s + 1 s of container start; an image present, 1 s
    def startups(scheduler: str, waves: range) -> list[float]:
        return [
            float(rows[f"{scheduler}-w{w}-{i}"]["startupLatencySeconds"])
            for w in waves
            for i in range(PER_WAVE)
        ]

    assert without["startupLatencySeconds"]["p50"] >= 21.0
    assert with_["startupLatencySeconds"]["p50"] < 5.0  # most pods find the image
    later = range(1, WAVES)
    p95_with, p95_without = (
        percentiles(startups("with-prepull", later)),
        percentiles(startups("without-prepull", later)),
    )
    assert p95_with is not None and p95_without is not None
    assert p95_with["p95"] < p95_without["p95"] and p95_without["p95"] >= 21.0
    assert max(startups("with-prepull", range(2, WAVES))) < 5.0
    assert min(startups("without-prepull", range(WAVES))) >= 21.0

    # the pre-pulls: on the with-prepull pool only, announced and completed
    prepull = [
        (e["reason"], e["regarding"]["name"])
        for e in events
        if e.get("reportingController") == "kubesched-prepull" and e["regarding"].get("kind") == "Node"
    ]
    assert prepull and all(node.startswith("pre-") for _, node in prepull), prepull
    assert sum(reason == "PrePulled" for reason, _ in prepull) >= 1 + 2 + 2

    # one clock under --speed 20: every pod's timeline is monotonic
    for name, tl in timelines.items():
        steps = (
            [tl["created"], tl["scheduled"]]
            + ([tl["pulling"]] if tl["pulling"] is not None else [])
            + [tl["pulled"], tl["started"]]
        )
        assert steps == sorted(steps), (name, tl)
        assert (tl["pulling"] is None) == (tl["message"] == PRESENT), (name, tl)
        # the scheduler's Event (another process, with its wall clock: stamped as it was, it would lie
        # before the pod's creation, by 19 cluster seconds per wall second since serve started) is on
        # the cluster's clock too, written within half a wall second of the binding
        assert tl["created"] <= tl["scheduledEvent"] <= tl["scheduled"] + 10.0, (name, tl)
