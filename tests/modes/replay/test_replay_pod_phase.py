"""The replay's kubelets report a pod ``Running`` when its containers start, as ``serve --kubelet``'s
and real kubelets do, and the scheduler sees it: ImagePullTimeSaved counts a started pod's images
as present on its node before the node's next status update lists them."""

from __future__ import annotations

from pathlib import Path

from replay_support import replay_node

from kubesched.client.client import WatchEvent
from kubesched.config.load import load_config_text
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay import run as replay_run
from kubesched.modes.replay.run import ConfigSpec
from kubesched.trace.workload import Workload, WorkloadPod

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CATALOGUE = load_catalogue(FIX / "catalogue.yaml")
APP = "example.com/app-a:1"  # 150 MB in two layers
IMAGE_AWARE = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{{name: ImagePullTimeSaved, weight: 10}}]
      score:
        disabled: [{{name: ImageLocality}}]
    pluginConfig:
      - name: ImagePullTimeSaved
        args: {{cataloguePath: {FIX / "catalogue.yaml"}, inFlightProgress: 0}}
"""


def _workload(arrivals: list[float]) -> Workload:
    nodes = [replay_node(f"n{i}") for i in range(3)]
    pods = [
        WorkloadPod(
            f"p{k}",
            "default",
            arrival,
            100.0,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{k}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "image": APP, "resources": {"requests": {"cpu": "1"}}}]
                },
            },
        )
        for k, arrival in enumerate(arrivals)
    ]
    return Workload(nodes, pods, horizon=300.0)


def _run(wl: Workload, spec: ConfigSpec) -> replay_run._Run:
    return replay_run._Run(
        wl, spec, CATALOGUE, KubeletImageConfig(), 0, [], 0.0, replay_run.STATUS_UPDATE_SECONDS, 0, None
    )


def test_a_pod_is_reported_running_when_its_containers_start() -> None:
    run = _run(_workload([0.0, 20.0]), ConfigSpec("upstream-default", None))
    running: list[tuple[str, float, str]] = []

    def seen(ev: WatchEvent) -> None:
        phase = (ev.object.get("status") or {}).get("phase")
        old = ((ev.old_object or {}).get("status") or {}).get("phase")
        if ev.type == "MODIFIED" and phase == "Running" and old != "Running":
            status = ev.object["status"]
            running.append((ev.object["metadata"]["name"], run.t(), status["containerStatuses"][0]["name"]))

    run.cluster.watch("Pod", None, seen)
    result = run.run()
    started = [(tl.key.split("/")[1], tl.started, "c") for tl in result.timelines]
    assert running == started
    # p0 pulls the 150 MB image (150e6 / 45e6 B/s + 1 s + 2 x 0.037 s) and starts its container 1 s
    # later; p1 goes to an empty node (upstream's resource scores) and pulls it too
    assert [round(tl.started or 0, 3) for tl in result.timelines] == [5.407, 25.407]


def test_a_pod_arriving_before_the_status_lists_a_started_pods_image_joins_it() -> None:
    # p0 starts at 5.4 s; the nodes' status lists the image at 10 s; p1 arrives at 7 s: the image is
    # on p0's node for certain (p0 is Running), so p1 goes there and pulls nothing
    spec = ConfigSpec("image-aware", load_config_text(IMAGE_AWARE, "image-aware"))
    result = _run(_workload([0.0, 7.0]), spec).run()
    p0, p1 = result.timelines
    assert p1.node == p0.node
    assert (p0.bytes_pulled, p1.bytes_pulled) == (150_000_000, 0)
    assert p1.started == 8.0  # the container start (1 s) only
