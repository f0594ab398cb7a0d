"""kubesched.modes.replay.run: the replay loop against hand-computed timelines.

The tiny trace (tests/fixtures/replay/tiny.yaml) has 3 nodes (4 cpu, 8Gi each) and 5 pods pinned
by nodeSelector; image A = base (100 MB) + app-a (50 MB), image B = base + app-b (20 MB). Kubelet:
100 MB/s, 0.5 s latency per layer fetched, container start 1 s, pulls serialized per node.

* p1 (0 s, n1, A, 3 cpu, runs 10 s): pull 2 x 0.5 + 150/100 = 2.5 s -> running at 3.5, ends 13.5.
* p2 (1 s, n1, B, 1 cpu): waits for A's pull (1.5 s), then only app-b: 0.5 + 0.2 = 0.7 s ->
  pulls done 3.2, running 4.2: start-up 3.2 s.
* p3 (2 s, n1, A, 2 cpu): does not fit (3 + 1 of 4 cpu used) until p1 ends at 13.5; A is cached
  -> running 14.5: start-up 12.5 s. Attempts: 2 s, 13.2 s (p4's deletion retries it; still no
  room on n1), 13.5 s (p1's deletion frees n1).
* p4 (5 s, n2, B, runs 5 s): 2 x 0.5 + 120/100 = 2.2 s -> running 8.2, ends 13.2.
* p5 (6 s, n3, A): 2.5 s -> running 9.5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_support import replay_node, two_node_workload

from kubesched.api.pod import Pod
from kubesched.config.load import load_config
from kubesched.errors import ManifestError
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.run import ConfigSpec, run_replay, run_replays
from kubesched.modes.report.result import ReplayResult
from kubesched.prepull.hook import PlannerContext
from kubesched.trace.load import load_workload
from kubesched.trace.workload import Workload, WorkloadPod

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
OPENB = Path(__file__).resolve().parents[4] / "shared" / "data" / "alibaba-gpu-2023"
APPROX = {"abs": 1e-6}


@pytest.fixture(scope="module")
def catalogue() -> Any:
    return load_catalogue(FIX / "catalogue.yaml")


@pytest.fixture(scope="module")
def tiny(catalogue: Any) -> Workload:
    return load_workload(FIX / "tiny.yaml", ImageAssigner(catalogue, seed=0))


@pytest.fixture(scope="module")
def result(tiny: Workload, catalogue: Any) -> ReplayResult:
    spec = ConfigSpec("default-profile.yaml", load_config(FIX / "default-profile.yaml"))
    return run_replay(tiny, spec, catalogue=catalogue, seed=0)


def _tl(result: ReplayResult, name: str) -> Any:
    return next(t for t in result.timelines if t.key == f"default/{name}")


@pytest.mark.parametrize(
    ("name", "node", "bound", "pull_wait", "pull", "started", "startup"),
    [
        ("p1", "n1", 0.0, 0.0, 2.5, 3.5, 3.5),
        ("p2", "n1", 1.0, 1.5, 0.7, 4.2, 3.2),
        ("p3", "n1", 13.5, 0.0, 0.0, 14.5, 12.5),
        ("p4", "n2", 5.0, 0.0, 2.2, 8.2, 3.2),
        ("p5", "n3", 6.0, 0.0, 2.5, 9.5, 3.5),
    ],
)
def test_per_pod_timeline(
    result: ReplayResult,
    name: str,
    node: str,
    bound: float,
    pull_wait: float,
    pull: float,
    started: float,
    startup: float,
) -> None:
    tl = _tl(result, name)
    assert tl.node == node
    assert tl.queue_wait == 0.0
    assert tl.bound == pytest.approx(bound, **APPROX)
    assert tl.binding == 0.0
    assert tl.pull_wait == pytest.approx(pull_wait, **APPROX)
    assert tl.pull == pytest.approx(pull, **APPROX)
    assert tl.container_start == pytest.approx(1.0, **APPROX)
    assert tl.started == pytest.approx(started, **APPROX)
    assert tl.startup == pytest.approx(startup, **APPROX)


def test_finished_pod_frees_room_for_a_later_pod(result: ReplayResult) -> None:
    p1, p3, p4 = _tl(result, "p1"), _tl(result, "p3"), _tl(result, "p4")
    assert p1.finished == pytest.approx(13.5, **APPROX)
    assert p4.finished == pytest.approx(13.2, **APPROX)
    assert p3.first_attempt == 2.0
    assert p3.attempts == 3
    assert p3.assumed == pytest.approx(13.5, **APPROX)
    assert p3.scheduling == pytest.approx(11.5, **APPROX)
    assert p3.bytes_cache_hit == 150_000_000 and p3.bytes_pulled == 0


def test_run_totals(result: ReplayResult) -> None:
    s = result.summary()
    assert (s["pods"], s["scheduled"], s["neverScheduled"], s["started"]) == (5, 5, 0, 5)
    assert s["bytesPulled"] == 440_000_000  # A 150 + B's app-b 20 + B 120 + A 150 (MB)
    assert s["bytesRequested"] == 690_000_000  # 150 + 120 + 150 + 120 + 150
    assert s["bytesCacheHit"] == 250_000_000  # p2's base + p3's whole A
    assert s["cacheHitRatio"] == pytest.approx(250 / 690)
    # start-up 3.2, 3.2, 3.5, 3.5, 12.5; linear interpolation at q/100 * 4
    assert s["startupLatencySeconds"] == pytest.approx(
        {"p50": 3.5, "p90": 8.9, "p95": 10.7, "p99": 12.14}, **APPROX
    )
    assert s["pullSeconds"] == pytest.approx({"p50": 2.2, "p90": 2.5, "p95": 2.5, "p99": 2.5}, **APPROX)
    assert s["queueWaitSeconds"] == {"p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0}
    # cpu millicore-seconds over [0, 20]: p1 3000*13.5 + p2 1000*19 + p3 2000*6.5 + p4 1000*8.2 + p5 1000*14
    assert s["meanAllocatedFraction"] == pytest.approx(
        {"cpu": 94_700 / 20 / 12_000, "memory": 61.2 / 20 / 24, "nvidia.com/gpu": 0.0}, **APPROX
    )
    assert s["schedulingAttempts"] == 7
    assert s["endSeconds"] == pytest.approx(114.5, **APPROX)  # p3 runs 100 s from 14.5


def test_series_sampled_over_the_horizon(result: ReplayResult) -> None:
    assert len(result.series) == 401
    assert result.series[0].t == 0.0 and result.series[-1].t == pytest.approx(20.0)
    last = result.series[-1]
    assert last.bytes_pulled == 440_000_000 and last.running == 3 and last.pending == 0  # p2, p3, p5
    assert last.allocated_fraction["cpu"] == pytest.approx(4000 / 12000)


def test_never_scheduled_pod(catalogue: Any) -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}},
        }
    ]
    big = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "containers": [
                {"name": "c", "image": "example.com/base:1", "resources": {"requests": {"cpu": "2"}}}
            ]
        },
    }
    wl = Workload(nodes, [WorkloadPod("big", "default", 0.0, 10.0, big)], horizon=10.0)
    r = run_replay(wl, None, catalogue=catalogue)
    s = r.summary()
    assert (s["scheduled"], s["neverScheduled"]) == (0, 1)
    assert s["startupLatencySeconds"] is None and s["pullSeconds"] is None
    assert r.timelines[0].queue_wait == 0.0 and r.timelines[0].attempts == 1


def test_image_whose_layers_are_all_present_starts(catalogue: Any) -> None:
    """``base:1`` on a node that holds app-a (hence the base layer) completes its pull at once (with
    no per-pull cost; by default a pull that fetches no layer still costs ``pullFixedSeconds``)."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    ]

    def pod(name: str, image: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": image}]},
        }

    wl = Workload(
        nodes,
        [
            WorkloadPod("a", "default", 0.0, None, pod("a", "example.com/app-a:1")),
            WorkloadPod("b", "default", 100.0, None, pod("b", "example.com/base:1")),
        ],
        horizon=100.0,
        kubelet={"containerStartSeconds": 1.0, "pullFixedSeconds": 0.0},
    )
    r = run_replay(wl, None, catalogue=catalogue)
    b = r.timelines[1]
    assert b.started == 101.0 and b.pull == 0.0 and b.bytes_pulled == 0 and b.bytes_cache_hit == 100_000_000


def test_unknown_image_is_reported(catalogue: Any) -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    ]
    p = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    wl = Workload(nodes, [WorkloadPod("x", "default", 0.0, 1.0, p)], horizon=1.0)
    with pytest.raises(ManifestError) as e:
        run_replay(wl, None, catalogue=catalogue)
    assert str(e.value) == (
        f"Pod default/x: spec.containers[0].image: image 'nginx' is not in the image catalogue "
        f"{FIX / 'catalogue.yaml'}"
    )


class _Recorder:
    """A planner that pre-pulls image A on n3 at its first tick and records every callback."""

    tick_seconds = 5.0

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.ctx: PlannerContext | None = None

    def attach(self, ctx: PlannerContext) -> None:
        self.ctx = ctx
        self.calls.append(("attach", ctx.clock.now() - ctx.origin))

    def on_pod_pending(self, pod: Pod, t: float) -> None:
        self.calls.append(("pending", pod.name, t))

    def on_pod_bound(self, pod: Pod, node: str, t: float) -> None:
        self.calls.append(("bound", pod.name, node, t))

    def tick(self, t: float) -> None:
        self.calls.append(("tick", t))
        if t == 0.0:
            assert self.ctx is not None
            assert self.ctx.model.prepull("n3", "example.com/app-a:1") is True


def test_prepull_planner_hook(tiny: Workload, catalogue: Any) -> None:
    planner = _Recorder()
    r = run_replay(tiny, None, catalogue=catalogue, seed=0, planners=[planner])
    calls = planner.calls
    assert calls[0] == ("attach", 0.0)
    assert [c for c in calls if c[0] == "pending"] == [
        ("pending", "p1", 0.0),
        ("pending", "p2", 1.0),
        ("pending", "p3", 2.0),
        ("pending", "p4", 5.0),
        ("pending", "p5", 6.0),
    ]
    bound = [c for c in calls if c[0] == "bound"]
    assert [c[1:3] for c in bound] == [("p1", "n1"), ("p2", "n1"), ("p4", "n2"), ("p5", "n3"), ("p3", "n1")]
    ticks = [c[1] for c in calls if c[0] == "tick"]
    assert ticks[:4] == [0.0, 5.0, 10.0, 15.0]
    # A was pre-pulled on n3 (done at 2.5 s), so p5 (6 s) starts after the container start only
    p5 = _tl(r, "p5")
    assert p5.startup == pytest.approx(1.0) and p5.bytes_cache_hit == 150_000_000
    s = r.summary()
    assert (s["prepulls"], s["bytesPrepulled"], s["bytesPulled"]) == (1, 150_000_000, 440_000_000)
    assert s["planners"] == ["_Recorder"]


class _Announced(_Recorder):
    """:class:`_Recorder` that also reads n3's pre-pulls-in-flight annotation at each tick."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[float, str | None]] = []

    def tick(self, t: float) -> None:
        super().tick(t)
        assert self.ctx is not None
        node = self.ctx.cluster.get("Node", None, "n3")
        annotations = node["metadata"].get("annotations") or {}
        self.seen.append((t, annotations.get("kubesched.io/prepulls-in-flight")))


def test_replay_announces_prepulls_in_flight_on_the_node(tiny: Workload, catalogue: Any) -> None:
    planner = _Announced()
    run_replay(tiny, None, catalogue=catalogue, seed=0, planners=[planner])
    # A's pre-pull starts at 0 s and is done at 2.5 s; the status update at 10 s lists it and drops
    # it from the annotation in the same step
    assert planner.seen[:3] == [(0.0, "example.com/app-a:1"), (5.0, "example.com/app-a:1"), (10.0, None)]


def test_run_replays_fresh_planner_per_config(tiny: Workload, catalogue: Any) -> None:
    made: list[_Recorder] = []

    def factory() -> _Recorder:
        made.append(_Recorder())
        return made[-1]

    specs = [ConfigSpec("a", None), ConfigSpec("b", load_config(FIX / "default-profile.yaml"))]
    results = run_replays(tiny, specs, catalogue=catalogue, seed=0, planners=[factory])
    assert [r.config for r in results] == ["a", "b"]
    assert len(made) == 2 and made[0] is not made[1]
    assert results[0].summary()["startupLatencySeconds"] == results[1].summary()["startupLatencySeconds"]


def _spread_workload(n: int) -> Workload:
    nodes = [replay_node(f"n{i}", cpu="8", memory="16Gi") for i in range(6)]
    pods = []
    for i in range(n):
        image = "example.com/app-a:1" if i % 2 else "example.com/app-b:1"
        m = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": "1"}}}]},
        }
        pods.append(WorkloadPod(f"p{i}", "default", float(i // 3), 7.0, m))
    return Workload(nodes, pods, horizon=20.0)


def test_deterministic_with_the_same_seed(catalogue: Any) -> None:
    wl = _spread_workload(30)
    a = run_replay(wl, None, catalogue=catalogue, seed=7)
    b = run_replay(wl, None, catalogue=catalogue, seed=7)
    assert [t.to_dict() for t in a.timelines] == [t.to_dict() for t in b.timelines]
    sa, sb = a.summary(), b.summary()
    sa.pop("wallSeconds"), sb.pop("wallSeconds")
    assert sa == sb


def test_attempt_seconds_keeps_the_scheduler_busy(catalogue: Any) -> None:
    wl = _spread_workload(3)  # three pods arriving at 0
    r = run_replay(wl, None, catalogue=catalogue, attempt_seconds=0.25)
    assert [t.first_attempt for t in r.timelines] == [0.0, 0.25, 0.5]
    assert [t.queue_wait for t in r.timelines] == [0.0, 0.25, 0.5]
    with pytest.raises(ValueError):
        run_replay(wl, None, catalogue=catalogue, attempt_seconds=-1)


@pytest.mark.skipif(not OPENB.exists(), reason="../shared/data/alibaba-gpu-2023 is not available")
def test_openb_subset_replays() -> None:
    from kubesched.images.catalogue import default_catalogue

    cat = default_catalogue()
    wl = load_workload(OPENB, ImageAssigner(cat, seed=0), window="30d", max_pods=300, max_nodes=200)
    assert len(wl.pods) == 300 and len(wl.nodes) == 200
    r = run_replay(wl, None, catalogue=cat, seed=0)
    s = r.summary()
    assert s["pods"] == 300
    assert s["scheduled"] + s["neverScheduled"] == 300
    assert s["started"] == s["scheduled"]
    assert 0.0 <= s["cacheHitRatio"] <= 1.0 and s["bytesPulled"] > 0


_POD = st.tuples(
    st.integers(0, 40),
    st.one_of(st.none(), st.integers(0, 30)),
    st.integers(1, 5),
    st.sampled_from(["example.com/app-a:1", "example.com/app-b:1", "example.com/base:1"]),
)


@settings(max_examples=25, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=12))
def test_phases_add_up_to_startup(specs: list[tuple[int, int | None, int, str]]) -> None:
    """For single-image pods: queue wait + scheduling + binding + pull wait + pull + container start
    = start-up latency; scheduled + never scheduled = pods; allocation never exceeds capacity."""
    cat = load_catalogue(FIX / "catalogue.yaml")
    wl = two_node_workload(specs, horizon=40.0)
    r = run_replay(wl, None, catalogue=cat, seed=1, sample_points=40)
    s = r.summary()
    assert s["scheduled"] + s["neverScheduled"] == len(wl.pods)
    for tl in r.timelines:
        if tl.started is None:
            continue
        parts = [tl.queue_wait, tl.scheduling, tl.binding, tl.pull_wait, tl.pull, tl.container_start]
        assert all(p is not None and p >= -1e-6 for p in parts)
        assert sum(parts) == pytest.approx(tl.startup, abs=1e-5)  # type: ignore[arg-type]
    assert all(0.0 <= p.allocated_fraction["cpu"] <= 1.0 + 1e-9 for p in r.series)
    assert 0.0 <= s["cacheHitRatio"] <= 1.0
