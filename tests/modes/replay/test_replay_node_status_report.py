"""The replay's kubelets report their node status every ``nodeStatusReportFrequency`` (5 min, on one
grid from the origin) while anything is left to schedule, as ``serve --kubelet``'s kubelets do. A
report is a Node update, so the scheduler's next snapshot clones the node with the image counts of
that moment (upstream keeps an unchanged node's clone, and its ``ImageStateSummary.NumNodes``, as
they were when it last changed). A node's first report is posted; the later ones, which would
renew only ``lastHeartbeatTime``, are the cache's recount of the nodes whose counts changed, and
the replay's report is the one that posting every report gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.client.client import WatchEvent
from kubesched.config.load import load_config
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.heartbeat import ready_conditions
from kubesched.errors import NotFoundError
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import ImageCatalogue, default_catalogue, load_catalogue
from kubesched.modes.replay import run as replay_run
from kubesched.modes.replay.run import ConfigSpec
from kubesched.modes.report.report_json import report_dict
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.load import load_workload
from kubesched.trace.workload import Workload, WorkloadPod

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CATALOGUE = load_catalogue(FIX / "catalogue.yaml")
APP = "example.com/app-a:1"
IMAGES = [APP, "example.com/app-b:1", "example.com/base:1"]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "replay"
OPENB = Path(__file__).resolve().parents[4] / "shared" / "data" / "alibaba-gpu-2023"
UPSTREAM = ConfigSpec("upstream-default", None)


def _workload(pods: list[tuple[float, float | None, int, str]], nodes: int = 3) -> Workload:
    node_objs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "6", "memory": "8Gi", "pods": "110"}},
        }
        for i in range(nodes)
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
    out.sort(key=lambda p: p.arrival)
    return Workload(node_objs, out, horizon=max([1200.0, *(p.arrival for p in out)]))


class _ReportTimes(replay_run._Run):
    """The replay, recording when its kubelets report (seconds since the origin)."""

    reports: list[float]

    def _report_status(self) -> None:
        self.reports = [*getattr(self, "reports", []), self.t()]
        super()._report_status()


class _PostingRun(replay_run._Run):
    """The replay with every report posted as a Node update of every node (what a kubelet writes),
    the reference the replay's recount must equal."""

    def _report_status(self) -> None:
        self.report_timer = None
        now = self.clock.now()
        for node in self.model.node_names():
            try:
                obj = self.cluster.get("Node", None, node)
            except NotFoundError:
                continue
            self.cluster.patch_status("Node", None, node, {"conditions": ready_conditions(obj, now)})
        if self.created < len(self.workload.pods) or self.pending > 0:
            self._arm_status_report()


def _run(
    wl: Workload,
    cls: type[replay_run._Run] = replay_run._Run,
    spec: ConfigSpec = UPSTREAM,
    catalogue: ImageCatalogue = CATALOGUE,
) -> replay_run._Run:
    return cls(
        wl,
        spec,
        catalogue,
        KubeletImageConfig(),
        0,
        [],
        0.0,
        replay_run.STATUS_UPDATE_SECONDS,
        50,
        None,
    )


def _report(result: ReplayResult) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``report.json``'s run (but its wall time) and the ``pods.csv`` rows of ``result``."""
    run = report_dict([result])["runs"][0]
    del run["wallSeconds"]
    return run, [tl.to_dict() for tl in result.timelines]


def test_every_node_posts_its_conditions_once_and_reports_every_five_minutes_while_pods_arrive() -> None:
    run = _run(_workload([(0.0, 30.0, 1, APP), (400.0, 30.0, 1, APP), (1000.0, 30.0, 1, APP)]), _ReportTimes)
    posts: list[tuple[float, str]] = []

    def seen(ev: WatchEvent) -> None:
        old = ((ev.old_object or {}).get("status") or {}).get("conditions")
        new = (ev.object.get("status") or {}).get("conditions")
        if ev.type == "MODIFIED" and new != old:
            posts.append((run.t(), ev.object["metadata"]["name"]))

    run.cluster.watch("Node", None, seen)
    result = run.run()
    # reports at 300, 600 and 900 s; the next (1200 s) would come after the run's end (the last pod
    # ends at 1031 s): the reports are daemon timers that keep no run going
    assert run.reports == [300.0, 600.0, 900.0]  # type: ignore[attr-defined]
    # the first report posts every node's conditions; the later ones would renew only
    # lastHeartbeatTime and are the cache's recount
    assert posts == [(300.0, f"n{i}") for i in range(3)]
    assert result.end_time == 1031.0
    assert [tl.started is not None for tl in result.timelines] == [True, True, True]
    conditions = run.cluster.get("Node", None, "n0")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"], c["lastHeartbeatTime"]) for c in conditions] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "2025-01-01T00:05:00Z"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "2025-01-01T00:05:00Z"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "2025-01-01T00:05:00Z"),
        ("Ready", "True", "KubeletReady", "2025-01-01T00:05:00Z"),
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


def test_a_later_report_refreshes_the_image_counts_without_a_node_update() -> None:
    # p0 pulls the app on one node before the first report (300 s: every node posted); p1 (the
    # first node is full) pulls it on a second node at 350 s; the first node is not changed after
    # that, and the report at 600 s writes no Node: the cache's recount re-clones the first node,
    # so p2's cycle at 650 s sees two nodes with the app on both (one on the first without it)
    run = _run(
        _workload([(0.0, None, 4, APP), (350.0, None, 4, APP), (650.0, None, 1, "example.com/base:1")])
    )
    writes: list[float] = []
    run.cluster.watch("Node", None, lambda ev: writes.append(run.t()))
    result = run.run()
    first, second, third = (tl.node for tl in result.timelines)
    assert len({first, second, third}) == 3
    # Node writes: the app listed on the first node (10 s), the first report (300 s), the app
    # listed on the second node (360 s), the base image on the third (660 s); none at 600 s
    assert [t for t in writes if t > 0] == [10.0, 300.0, 300.0, 300.0, 360.0, 660.0]
    snapshot: Any = run.scheduler.snapshot
    counts = {node: snapshot.get(node).image_states[APP].num_nodes for node in (first, second)}
    assert counts == {first: 2, second: 2}


def test_the_reports_go_on_between_arrivals_and_stop_after_the_last_one() -> None:
    # p0 arrives at 0 s and runs for 2000 s; p1 arrives at 1300 s: reports at 300, 600, 900 and
    # 1200 s (p1 still to come, though nothing is pending), 1500 s (the tick after p1's creation),
    # none after it (every arrival created, nothing pending), though the run goes on to 2000 s
    run = _run(_workload([(0.0, 2000.0, 1, APP), (1300.0, 10.0, 1, APP)]), _ReportTimes)
    run.run()
    assert run.reports == [300.0, 600.0, 900.0, 1200.0, 1500.0]  # type: ignore[attr-defined]


_POD = st.tuples(
    st.integers(0, 60).map(lambda k: 50.0 * k),  # arrival: 0 to 3000 s
    st.one_of(st.none(), st.integers(1, 40).map(lambda k: 50.0 * k)),
    st.integers(1, 4),
    st.sampled_from(IMAGES),
)
_PROFILES = [
    UPSTREAM,
    ConfigSpec("imagelocality-weight-50", load_config(EXAMPLES / "imagelocality-weight-50.yaml")),
]


@settings(max_examples=40, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=16), st.integers(2, 5), st.sampled_from(_PROFILES))
def test_the_report_equals_the_one_of_posting_every_report(
    pods: list[tuple[float, float | None, int, str]], nodes: int, spec: ConfigSpec
) -> None:
    wl = _workload(pods, nodes)
    assert _report(_run(wl, spec=spec).run()) == _report(_run(wl, _PostingRun, spec).run())


@pytest.mark.skipif(not OPENB.exists(), reason="../shared/data/alibaba-gpu-2023 is not available")
@pytest.mark.parametrize("profile", ["upstream-default", "imagelocality-weight-20-all-nodes"])
def test_an_openb_real_time_window_reports_as_posting_every_report(profile: str) -> None:
    cat = default_catalogue()
    wl = load_workload(OPENB, ImageAssigner(cat, seed=0), window="30d", max_pods=120, max_nodes=300)
    spec = ConfigSpec(profile, load_config(EXAMPLES / f"{profile}.yaml"))
    recounted = _run(wl, spec=spec, catalogue=cat).run()
    posted = _run(wl, _PostingRun, spec, cat).run()
    assert _report(recounted) == _report(posted)
    assert recounted.summary()["scheduled"] == 120
