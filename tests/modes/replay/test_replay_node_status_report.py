"""The replay's kubelets post their node status every ``nodeStatusReportFrequency`` (5 min, on one
grid from the origin) while anything is left to schedule, as ``serve --kubelet``'s kubelets do; each
post is a Node update, so the scheduler's next snapshot clones the node with the image counts of
that moment (upstream keeps an unchanged node's clone, and its ``ImageStateSummary.NumNodes``, as
they were when it last changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.client.client import WatchEvent
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay import run as replay_run
from kubesched.modes.replay.run import ConfigSpec
from kubesched.trace.workload import Workload, WorkloadPod

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CATALOGUE = load_catalogue(FIX / "catalogue.yaml")
APP = "example.com/app-a:1"


def _workload(pods: list[tuple[float, float | None, int, str]]) -> Workload:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "6", "memory": "8Gi", "pods": "110"}},
        }
        for i in range(3)
    ]
    out = []
    for k, (arrival, duration, cpu, image) in enumerate(pods):
        manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{k}", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": str(cpu)}}}]
            },
        }
        out.append(WorkloadPod(f"p{k}", "default", arrival, duration, manifest))
    return Workload(nodes, out, horizon=1200.0)


def _run(wl: Workload) -> replay_run._Run:
    return replay_run._Run(
        wl,
        ConfigSpec("upstream-default", None),
        CATALOGUE,
        KubeletImageConfig(),
        0,
        [],
        0.0,
        replay_run.STATUS_UPDATE_SECONDS,
        0,
        None,
    )


def test_every_node_posts_its_status_every_five_minutes_while_pods_arrive() -> None:
    run = _run(_workload([(0.0, 30.0, 1, APP), (400.0, 30.0, 1, APP), (1000.0, 30.0, 1, APP)]))
    posts: list[tuple[float, str]] = []

    def seen(ev: WatchEvent) -> None:
        old = ((ev.old_object or {}).get("status") or {}).get("conditions")
        new = (ev.object.get("status") or {}).get("conditions")
        if ev.type == "MODIFIED" and new != old:
            posts.append((run.t(), ev.object["metadata"]["name"]))

    run.cluster.watch("Node", None, seen)
    result = run.run()
    # every node at 300, 600 and 900 s; the next post (1200 s) would come after the run's end (the
    # last pod ends at 1031 s): the posts are daemon timers that keep no run going
    assert posts == [(t, f"n{i}") for t in (300.0, 600.0, 900.0) for i in range(3)]
    assert result.end_time == 1031.0
    assert [tl.started is not None for tl in result.timelines] == [True, True, True]
    conditions = run.cluster.get("Node", None, "n0")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]


def test_a_status_post_refreshes_the_image_counts_the_scheduler_sees() -> None:
    # p0 (4 cpu) pulls the app on one node, listed at 10 s; p1 (4 cpu, the first node is full) on a
    # second node at 100 s, listed at 110 s; the first node is not changed after that until the
    # status post at 300 s; p2 (1 cpu, another image) then goes to the empty third node at 350 s.
    run = _run(
        _workload([(0.0, None, 4, APP), (100.0, None, 4, APP), (350.0, None, 1, "example.com/base:1")])
    )
    result = run.run()
    first, second, third = (tl.node for tl in result.timelines)
    assert len({first, second, third}) == 3
    snapshot: Any = run.scheduler.snapshot
    # the snapshot of p2's cycle: both nodes holding the app count two nodes with it (without the
    # post at 300 s, the first node's clone would still count one, as at 100 s)
    counts = {node: snapshot.get(node).image_states[APP].num_nodes for node in (first, second)}
    assert counts == {first: 2, second: 2}


def test_the_posts_go_on_between_arrivals_and_stop_after_the_last_one() -> None:
    # p0 arrives at 0 s and runs for 2000 s; p1 arrives at 1300 s: posts at 300, 600, 900 and
    # 1200 s (p1 still to come, though nothing is pending), 1500 s (the tick after p1's creation),
    # none after it (every arrival created, nothing pending), though the run goes on to 2000 s
    run = _run(_workload([(0.0, 2000.0, 1, APP), (1300.0, 10.0, 1, APP)]))
    ticks: list[float] = []

    def seen(ev: WatchEvent) -> None:
        old = ((ev.old_object or {}).get("status") or {}).get("conditions")
        if ev.type == "MODIFIED" and ev.object["metadata"]["name"] == "n0":
            if (ev.object.get("status") or {}).get("conditions") != old:
                ticks.append(run.t())

    run.cluster.watch("Node", None, seen)
    run.run()
    assert ticks == [300.0, 600.0, 900.0, 1200.0, 1500.0]
