"""PrePullPlanner: which pulls it starts, where, and when it stays quiet."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.model import KubeletModel
from kubesched.images.catalogue import parse_catalogue
from kubesched.prepull.planner import PrePullPlanner
from kubesched.testing import make_node, make_pod, node_info

GPU = {"nvidia.com/gpu": "1"}
CAT = parse_catalogue(
    {
        "version": 1,
        "images": [
            {
                "name": "app:1",
                "class": "gpu",
                "source": "t",
                "confidence": "derived",
                "layers": [
                    {"id": "base", "size_bytes": 30_000_000},
                    {"id": "cuda", "size_bytes": 2_000_000_000},
                    {"id": "app1", "size_bytes": 100_000_000},
                ],
            },
            {
                "name": "app:2",
                "class": "gpu",
                "source": "t",
                "confidence": "derived",
                "layers": [
                    {"id": "base", "size_bytes": 30_000_000},
                    {"id": "cuda", "size_bytes": 2_000_000_000},
                    {"id": "app2", "size_bytes": 400_000_000},
                ],
            },
            {
                "name": "slim:1",
                "class": "gpu",
                "source": "t",
                "confidence": "derived",
                "layers": [
                    {"id": "base", "size_bytes": 30_000_000},
                    {"id": "slim", "size_bytes": 1_000_000_000},
                ],
            },
            {
                "name": "other:1",
                "class": "gpu",
                "source": "t",
                "confidence": "derived",
                "layers": [{"id": "other", "size_bytes": 1_000_000_000}],
            },
        ],
    }
)
APP1 = "docker.io/library/app:1"


def world(
    gpus: dict[str, int],
    pods: dict[str, list[Any]] | None = None,
    disk: int = 200_000_000_000,
    status: dict[str, str] | None = None,
    **kw: Any,
) -> tuple[PrePullPlanner, KubeletModel, VirtualClock]:
    """Nodes with ``gpus[name]`` GPUs (8 CPUs); ``status[name]``: an image the node has and lists."""
    clock = VirtualClock(0.0)
    model = KubeletModel(clock, CAT, KubeletImageConfig(image_disk_bytes=disk))
    infos = []
    for name, n in gpus.items():
        model.add_node(name)
        images = None
        if status and name in status:
            image = CAT[status[name]]
            model.preload(name, [image])
            images = [([image.name], image.size_bytes)]
        node = make_node(name, cpu="8", allocatable={"nvidia.com/gpu": str(n)}, images=images)
        infos.append(node_info(node, (pods or {}).get(name, [])))
    sched = SimpleNamespace(node_infos=lambda: iter(infos))
    ctx = SimpleNamespace(model=model, cluster=None, scheduler=sched, clock=clock, catalogue=CAT, origin=0.0)
    planner = PrePullPlanner(
        **{"max_warm_nodes": 2, "window_seconds": 3600.0, "lookahead_seconds": 1800.0, **kw}
    )
    planner.attach(ctx)  # type: ignore[arg-type]
    return planner, model, clock


def arrive(planner: PrePullPlanner, name: str, t: float, image: str = "app:1") -> Any:
    pod = make_pod(name, image=image, requests=GPU)
    planner.on_pod_pending(pod, t)
    return pod


def test_single_arrival_is_not_hot() -> None:
    planner, _, _ = world({"a": 1, "b": 1})
    pod = arrive(planner, "p0", 0.0)
    planner.on_pod_bound(pod, "a", 0.0)
    assert planner.plan(1.0) == []


def test_recurring_app_is_warmed_on_nodes_with_shared_layers_first() -> None:
    # c lists app:2 in its status: it holds base + cuda, the cheapest pull of app:1
    planner, model, _ = world({"a": 1, "b": 1, "c": 1, "d": 1}, status={"c": "app:2"})
    for i, t in enumerate((0.0, 10.0)):
        planner.on_pod_bound(arrive(planner, f"p{i}", t), "x", t)
    # demand = 0 pending + ceil(2 * 1800 / 3600) = 1 -> one warm node wanted
    assert planner.plan(20.0) == [("c", APP1)]


def test_tick_starts_pulls_and_then_counts_them_as_warm() -> None:
    planner, model, _ = world({"a": 1, "b": 1, "c": 1})
    for i in range(4):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "x", float(i))
    # demand = ceil(4 * 0.5) = 2 = max_warm_nodes; no holder yet: two pulls, by name
    planner.tick(10.0)
    assert planner.started == [(10.0, "a", APP1), (10.0, "b", APP1)]
    assert model.metrics.prepulls == 2
    arrive(planner, "p9", 11.0)
    assert planner.plan(12.0) == []  # a and b hold it in flight: already warm


def test_default_keeps_at_most_four_warm_nodes_per_application() -> None:
    # 16 arrivals in the hour: demand 8 pods beyond any warm room; 8 usable nodes, 8 slots a tick
    assert PrePullPlanner().max_warm_nodes == 4
    planner, _, _ = world({n: 1 for n in "abcdefgh"}, max_warm_nodes=4, max_per_app_per_tick=8)
    for i in range(16):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "x", float(i))
    planner.tick(20.0)
    assert [node for _, node, _ in planner.started] == ["a", "b", "c", "d"]
    arrive(planner, "p16", 21.0)
    assert planner.plan(40.0) == []  # four warm nodes with room: the cap, though demand is 8.5


def test_nodes_without_room_busy_or_disk_full_are_skipped() -> None:
    busy_pod = make_pod("gpu-user", requests=GPU, node_name="full")
    planner, model, _ = world({"full": 1, "busy": 1, "ok": 1}, pods={"full": [busy_pod]})
    model.prepull("busy", "other:1")
    for i in range(4):
        arrive(planner, f"p{i}", float(i))
    assert planner.plan(10.0) == [("ok", APP1)]
    # image disk too small: app:1 on disk = 2 x 2.13 GB > 75 % of 5 GB
    planner, _, _ = world({"ok": 1}, disk=5_000_000_000)
    for i in range(4):
        arrive(planner, f"p{i}", float(i))
    assert planner.plan(10.0) == []


def test_arrivals_leave_the_window() -> None:
    planner, _, _ = world({"a": 1})
    for i in range(2):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "x", float(i))
    planner._dirty[next(iter(planner.apps))] = None
    assert planner.plan(3601.0 + 1) == []


def test_no_context_no_plan_and_bad_args() -> None:
    planner = PrePullPlanner()
    planner.on_pod_pending(make_pod("p", image="app:1"), 0.0)
    planner.tick(1.0)
    assert planner.plan(1.0) == []
    with pytest.raises(ValueError, match="max_warm_nodes must be >= 0"):
        PrePullPlanner(max_warm_nodes=-1)


def test_warm_room_on_holders_covers_demand() -> None:
    planner, _, _ = world({"a": 8, "b": 8}, status={"a": "app:1"})
    for i in range(4):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "a", float(i))
    # demand = 0 pending + ceil(4 * 1800 / 3600) = 2 pods; a lists app:1 and has room for 8
    assert planner.plan(10.0) == []


def test_full_holders_do_not_use_up_the_warm_node_budget() -> None:
    busy_pod = make_pod("gpu-user", requests=GPU, node_name="a")
    planner, _, _ = world(
        {"a": 1, "b": 1, "c": 1}, pods={"a": [busy_pod]}, status={"a": "app:1"}, max_warm_nodes=1
    )
    for i in range(4):
        arrive(planner, f"p{i}", float(i))
    # a holds app:1 but has no room: one warm node with room is still wanted -> b (by name)
    assert planner.plan(10.0) == [("b", APP1)]


def test_nodes_with_more_room_first_and_required_affinity_honoured() -> None:
    planner, _, _ = world({"a": 1, "b": 4, "c": 2}, max_warm_nodes=2)
    for i in range(4):
        arrive(planner, f"p{i}", float(i))
    # demand = 4 pending + 2: b (room 4) then c (room 2)
    assert planner.plan(10.0) == [("b", APP1), ("c", APP1)]
    planner, _, _ = world({"a": 1, "b": 4, "c": 2}, max_warm_nodes=2)
    pinned = {"nodeSelector": {"kubernetes.io/hostname": "a"}}
    for i in range(4):
        planner.on_pod_pending(make_pod(f"p{i}", image="app:1", requests=GPU, spec=pinned), float(i))
    assert planner.plan(10.0) == [("a", APP1)]


def test_candidates_are_taken_by_bytes_per_pod_they_take() -> None:
    # 4 pending pods + 4 x 1800 / 3600 expected = 6 wanted, nothing warm. c lists app:2 (base + cuda):
    # app:1 costs it 100 MB for its 1 pod; b is fresh, 2.13 GB for 4 pods (532.5 MB each); a lists
    # slim:1, which shares only the 30 MB base: 2.1 GB for its 1 pod. So c, b, then a (the shared
    # base does not put a before a fresh node with four times its room)
    planner, _, _ = world({"a": 1, "b": 4, "c": 1}, status={"a": "slim:1", "c": "app:2"}, max_warm_nodes=3)
    for i in range(4):
        arrive(planner, f"p{i}", float(i))
    assert planner.plan(10.0) == [("c", APP1), ("b", APP1), ("a", APP1)]
    # one pod wanted: the room beyond it buys nothing, so a (2.1 GB) is cheaper than b (2.13 GB)
    planner, _, _ = world({"a": 1, "b": 4}, status={"a": "slim:1"}, max_warm_nodes=1, lookahead_seconds=0.0)
    arrive(planner, "p0", 0.0)
    assert planner.plan(10.0) == [("a", APP1)]


def test_holders_that_lost_the_image_drop_out() -> None:
    # the pods are bound in the planner only, not in the scheduler cache: "arrivals" keeps them
    # counted (under "growth" they would be departures at the first tick)
    planner, model, _ = world({"a": 8, "b": 8}, forecast="arrivals")
    for i in range(4):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "a", float(i))
    assert list(planner.holders[APP1]) == ["a"]
    # the kubelet model never pulled app:1 on a (no pod there in the model): a is not a holder
    assert planner.plan(10.0) == [("a", APP1)]
    assert model.pulling("a", "app:1") is False and list(planner.holders[APP1]) == []


def test_prepull_takes_no_kubelet_pull_slot() -> None:
    clock = VirtualClock(0.0)
    model = KubeletModel(clock, CAT, KubeletImageConfig())
    model.add_node("n")
    assert model.prepull("n", "other:1") is True  # 1 GB, 23 s with the default pull model
    clock.advance_to(1.0)
    record = model.pod_bound("n", "default/p", ["app:1"])
    # serialized pulls, but the pod's pull starts at once: 1 s + 3 layers x 0.037 s + 2.13e9 / 45e6 s
    assert model.pending_pulls("n") == 2 and model.pulling("n", "other:1") is True
    clock.advance_to(100.0)
    assert record.pull_wait_seconds == 0.0
    assert record.pulls_done_at == pytest.approx(1.0 + 1.0 + 0.111 + 2.13e9 / 45e6)
    assert model.metrics.bytes_prepulled == 1_000_000_000


def test_net_bytes_no_prepull_for_less_than_one_expected_pod() -> None:
    # 2 arrivals x 900 / 3600 = 0.5 pods expected, no holder: a pre-pull would spend 2.13 GB on
    # half a pod; without net_bytes (the default) any shortfall is pre-pulled
    planner, _, _ = world({"a": 1, "b": 1}, lookahead_seconds=900.0, net_bytes=True)
    for i, t in enumerate((0.0, 10.0)):
        planner.on_pod_bound(arrive(planner, f"p{i}", t), "x", t)
    assert planner.demand(planner.apps[("app:1",)], 20.0) == 0.5
    assert planner.plan(20.0) == []
    planner, _, _ = world({"a": 1, "b": 1}, lookahead_seconds=900.0, net_bytes=False)
    for i, t in enumerate((0.0, 10.0)):
        planner.on_pod_bound(arrive(planner, f"p{i}", t), "x", t)
    assert planner.plan(20.0) == [("a", APP1)]


def test_net_bytes_a_node_is_pulled_only_for_the_pulls_it_spares() -> None:
    # 6 arrivals: 3 pods expected, rooms of 1 GPU. c lists app:2 (base + cuda): app:1 costs it
    # 100 MB, the cheapest pull any pod could make; a and b would pull 2.13 GB for 1 pod each:
    # 2.13 GB > min(2, 1) x 100 MB, so they are skipped
    planner, _, _ = world({"a": 1, "b": 1, "c": 1}, status={"c": "app:2"}, max_warm_nodes=3, net_bytes=True)
    for i in range(6):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "x", float(i))
    assert planner.plan(10.0) == [("c", APP1)]
    planner, _, _ = world({"a": 1, "b": 1, "c": 1}, status={"c": "app:2"}, max_warm_nodes=3, net_bytes=False)
    for i in range(6):
        planner.on_pod_bound(arrive(planner, f"p{i}", float(i)), "x", float(i))
    assert planner.plan(10.0) == [("c", APP1), ("a", APP1), ("b", APP1)]


def test_growth_not_turnover_is_pre_pulled_for() -> None:
    """Demand is the application's growth in the window (arrivals minus its pods seen gone from
    their nodes): pods that end give their room back on a holder, so they need no new node;
    ``forecast="arrivals"`` counts every arrival."""
    for forecast, demand, plan in (
        ("growth", 1.0, [("b", APP1)]),
        ("arrivals", 2.0, [("b", APP1), ("c", APP1)]),
    ):
        running = [make_pod(f"r{i}", image="app:1", requests=GPU, node_name="a") for i in range(2)]
        planner, _, _ = world(
            {"a": 2, "b": 1, "c": 1}, pods={"a": running}, status={"a": "app:1"}, forecast=forecast
        )
        infos = {ni.name: ni for ni in planner.ctx.scheduler.node_infos()}  # type: ignore[union-attr]
        for i, pod in enumerate(running):
            planner.on_pod_pending(pod, float(i))
            planner.on_pod_bound(pod, "a", float(i))
        for pod in running:  # both end: room for two again on a, which holds the image
            infos["a"].remove_pod(pod)
        assert planner.plan(5.0) == []
        app = next(iter(planner.apps.values()))
        assert len(app.departures) == (2 if forecast == "growth" else 0)
        for i in range(2):  # two more arrive and take that room
            pod = make_pod(f"n{i}", image="app:1", requests=GPU, node_name="a")
            planner.on_pod_pending(pod, 10.0 + i)
            infos["a"].add_pod(pod)
            planner.on_pod_bound(pod, "a", 10.0 + i)
        # 4 arrivals, 2 departures in the window; lookahead / window = 1800 / 3600
        assert planner.demand(app, 20.0) == demand
        # a is full (no warm room): growth wants 1 pod of room, arrivals 2
        assert planner.plan(20.0) == plan
    with pytest.raises(ValueError, match="forecast must be 'growth' or 'arrivals', got 'pulls'"):
        PrePullPlanner(forecast="pulls")
