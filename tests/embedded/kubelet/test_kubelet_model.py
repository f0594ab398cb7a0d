"""Kubelet image model against hand-computed timelines (exact floats).

Test world: layers ``base`` 400 B (shared), ``a-top`` 100 B, ``b-top`` 200 B, ``c`` 300 B;
images a = [base, a-top] (500 B), b = [base, b-top] (600 B), c = [c] (300 B).
Defaults here: decompress 100 B/s, node bandwidth 1000 B/s (so rate = 100 B/s), per-layer latency
0.5 s, container start 1.0 s.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.model import KubeletModel, refresh_node_status
from kubesched.embedded.kubelet.node_images import NodeImageStore
from kubesched.embedded.kubelet.pulls import allocate_registry_bandwidth
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ConfigError
from kubesched.images.catalogue import ImageCatalogue, parse_catalogue
from kubesched.testing import node_manifest


def _image(name: str, layers: list[tuple[str, int]], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "class": "cpu",
        "source": "test",
        "confidence": "derived",
        "layers": [{"id": i, "size_bytes": s} for i, s in layers],
        **extra,
    }


def _catalogue() -> ImageCatalogue:
    return parse_catalogue(
        {
            "images": [
                _image("a", [("base", 400), ("a-top", 100)]),
                _image("b", [("base", 400), ("b-top", 200)]),
                _image("c", [("c", 300)]),
                _image("x1", [("l1", 150)]),
                _image("x2", [("l2", 150)]),
                _image("x3", [("l3", 150)]),
                _image("y", [("l1", 150), ("l4", 150)]),
            ]
        },
        "test",
    )


BASE = dict(
    node_bandwidth_bps=1000.0,
    decompress_bps=100.0,
    layer_latency_seconds=0.5,
    pull_fixed_seconds=0.0,
    container_start_seconds=1.0,
)


def _model(**cfg: Any) -> tuple[VirtualClock, KubeletModel, list[tuple[str, str, float]]]:
    clock = VirtualClock()
    started: list[tuple[str, str, float]] = []
    config = KubeletImageConfig(**{**BASE, **cfg})
    model = KubeletModel(
        clock, _catalogue(), config, on_container_started=lambda p, n, t: started.append((p, n, t))
    )
    return clock, model, started


def test_shared_base_layer_second_pod_pulls_only_its_top_layer() -> None:
    clock, m, started = _model()
    r1 = m.pod_bound("n1", "default/p1", ["a"], now=0.0)
    clock.advance_to(10.0)
    r2 = m.pod_bound("n1", "default/p2", ["b"], now=10.0)
    clock.run_until()
    # p1: 2 layers x 0.5 s + 500 B / 100 B/s = 6.0; start +1.0
    assert (r1.pull_wait_seconds, r1.pull_seconds, r1.pulls_done_at, r1.started_at) == (0.0, 6.0, 6.0, 7.0)
    # p2: base present; b-top: 0.5 + 200/100 = 2.5
    assert (r2.pull_wait_seconds, r2.pull_seconds, r2.pulls_done_at, r2.started_at) == (0.0, 2.5, 12.5, 13.5)
    assert (r2.bytes_requested, r2.bytes_cache_hit, r2.bytes_joined, r2.bytes_pulled) == (600, 400, 0, 200)
    assert started == [("default/p1", "n1", 7.0), ("default/p2", "n1", 13.5)]
    assert r2.start_seconds == 1.0 and r2.startup_seconds == 3.5
    mt = m.metrics
    assert (mt.bytes_pulled, mt.bytes_requested, mt.bytes_cache_hit, mt.pulls_started) == (700, 1100, 400, 2)
    assert mt.cache_hit_ratio == 400 / 1100
    # as the kubelet's Pulled Events report them: each pull counts its image's whole size (p2's
    # 600 B image though it fetched 200 B)
    assert (r1.image_bytes_pulled, r2.image_bytes_pulled, mt.image_bytes_pulled) == (500, 600, 1100)


def test_pull_joined_in_flight() -> None:
    clock, m, started = _model()
    r1 = m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.advance_to(2.0)
    assert m.layer_bytes("n1", "b") == (0, 400)
    assert m.pending_pulls("n1") == 1
    r2 = m.pod_bound("n1", "p2", ["a"], now=2.0)
    clock.run_until()
    assert started == [("p1", "n1", 7.0), ("p2", "n1", 7.0)]
    assert (r2.pull_wait_seconds, r2.pull_seconds, r2.pulls_joined) == (0.0, 4.0, 1)
    assert (r2.bytes_cache_hit, r2.bytes_joined, r2.bytes_pulled) == (0, 500, 0)
    assert (r1.bytes_pulled, m.metrics.bytes_pulled, m.metrics.pulls_started, m.metrics.pulls_joined) == (
        500,
        500,
        1,
        1,
    )
    assert m.layer_bytes("n1", "b") == (400, 0)
    # the joined pull counts once (p1's), as `kubesched startup` counts a joined pull's Event
    assert (r1.image_bytes_pulled, r2.image_bytes_pulled, m.metrics.image_bytes_pulled) == (500, 0, 500)


def test_serialized_pulls_queue_fifo() -> None:
    clock, m, started = _model()
    m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.advance_to(1.0)
    r2 = m.pod_bound("n1", "p2", ["c"], now=1.0)
    clock.run_until()
    # c waits for a (done at 6.0), then 0.5 + 300/100
    assert (r2.pull_wait_seconds, r2.pull_seconds, r2.pulls_done_at, r2.started_at) == (5.0, 3.5, 9.5, 10.5)
    assert started == [("p1", "n1", 7.0), ("p2", "n1", 10.5)]


def test_parallel_pulls_share_node_bandwidth() -> None:
    clock, m, _ = _model(serialize_image_pulls=False, node_bandwidth_bps=150.0)
    r1 = m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.advance_to(1.0)
    r2 = m.pod_bound("n1", "p2", ["c"], now=1.0)
    clock.run_until()
    # p1 transfers alone at 100 B/s from 1.0; at 1.5 c joins: 150/2 = 75 B/s each.
    # c: 300/75 = 4 -> 5.5. p1: 450 left at 1.5, 150 left at 5.5, then 100 B/s -> 7.0.
    assert (r2.pulls_done_at, r2.pull_wait_seconds) == (5.5, 0.0)
    assert r1.pulls_done_at == 7.0


def test_parallel_pull_joins_a_layer_in_flight() -> None:
    clock, m, started = _model(serialize_image_pulls=False)
    m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.advance_to(0.25)
    r2 = m.pod_bound("n1", "p2", ["b"], now=0.25)
    clock.run_until()
    # p2 fetches b-top only (0.25 + 0.5 + 2.0 = 2.75) but waits for base from p1's pull (6.0)
    assert (r2.pulls_done_at, r2.started_at) == (6.0, 7.0)
    assert (r2.bytes_cache_hit, r2.bytes_joined, r2.bytes_pulled) == (0, 400, 200)
    assert (m.metrics.bytes_pulled, m.metrics.layers_joined) == (700, 1)
    assert started[0] == ("p1", "n1", 7.0)


def test_registry_concurrency_limit_queues_pulls_across_nodes() -> None:
    clock, m, started = _model(registry_max_concurrent_pulls=1)
    m.pod_bound("n1", "p1", ["a"], now=0.0)
    r2 = m.pod_bound("n2", "p2", ["c"], now=0.0)
    clock.run_until()
    assert (r2.pull_wait_seconds, r2.pull_seconds, r2.pulls_done_at) == (6.0, 3.5, 9.5)
    assert started == [("p1", "n1", 7.0), ("p2", "n2", 10.5)]


def test_registry_bandwidth_shared_across_nodes() -> None:
    clock, m, _ = _model(registry_bandwidth_bps=150.0)
    r1 = m.pod_bound("n1", "p1", ["c"], now=0.0)
    r2 = m.pod_bound("n2", "p2", ["c"], now=0.0)
    clock.run_until()
    # both transfer from 0.5 at 75 B/s: 300/75 = 4
    assert r1.pulls_done_at == r2.pulls_done_at == 4.5


def test_allocate_registry_bandwidth() -> None:
    assert allocate_registry_bandwidth([10.0, 100.0, 100.0], 110.0) == [10.0, 50.0, 50.0]
    assert allocate_registry_bandwidth([10.0, 20.0], 100.0) == [10.0, 20.0]


def test_present_image_starts_without_pull_and_pod_images_are_sequential() -> None:
    clock, m, started = _model()
    m.preload("n1", ["c"], now=0.0)
    r = m.pod_bound("n1", "p1", ["c", "a"], now=0.0)
    clock.run_until()
    assert (r.pulls_done_at, r.started_at, r.bytes_cache_hit, r.bytes_pulled) == (6.0, 7.0, 300, 500)


def test_pull_policies() -> None:
    # Always: a present image is pulled again (no layer to fetch: the per-pull cost only, 0.25 s,
    # and a pull slot: p2's pull of a queues behind it); Never: a present image is used, an absent
    # one pulls nothing and the pod never starts
    clock, m, started = _model(pull_fixed_seconds=0.25)
    m.preload("n1", ["c"], now=0.0)
    r1 = m.pod_bound("n1", "p1", ["c"], now=0.0, pull_policies=["Always"])
    r2 = m.pod_bound("n1", "p2", ["c", "a"], now=0.0, pull_policies=["Never", "IfNotPresent"])
    r3 = m.pod_bound("n1", "p3", ["b"], now=0.0, pull_policies=["Never"])
    clock.run_until()
    assert (r1.pulls_done_at, r1.started_at, r1.bytes_cache_hit, r1.bytes_pulled, r1.image_bytes_pulled) == (
        0.25,
        1.25,
        300,
        0,
        300,
    )
    # a: 0.25 + 2 layers * 0.5 + 500 B / 100 B/s after p1's pull
    assert (r2.pulls_done_at, r2.started_at, r2.bytes_cache_hit, r2.bytes_pulled) == (6.5, 7.5, 300, 500)
    assert (r3.pulls_done_at, r3.started_at, r3.bytes_pulled) == (None, None, 0)
    assert started == [("p1", "n1", 1.25), ("p2", "n1", 7.5)]
    assert not m.has_image("n1", "b")
    with pytest.raises(ValueError, match="1 pull policies for 2 images"):
        m.pod_bound("n1", "p4", ["a", "b"], pull_policies=["Always"])


def test_finished_pod_cancels_its_start() -> None:
    clock, m, started = _model()
    r = m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.advance_to(6.5)
    m.pod_finished("n1", "p1")
    clock.run_until()
    assert started == [] and r.started_at is None and r.finished_at == 6.5
    assert m.has_image("n1", "a")


# ---------------------------------------------------------------- image GC
# x1/x2/x3: one 150 B layer each -> 300 B on disk (ratio 2.0). Disk 1000 B: three images = 900 B,
# usagePercent = 100 - 100*100//1000 = 90 >= 85 -> amountToFree = 1000*20//100 - 100 = 100.

GC = dict(layer_latency_seconds=0.0, pull_fixed_seconds=0.0, image_disk_bytes=1000, uncompressed_ratio=2.0)


def test_gc_evicts_least_recently_used_at_the_next_gc_tick() -> None:
    clock, m, _ = _model(**GC)
    m.pod_bound("n1", "p1", ["x1"], now=0.0)  # present 1.5
    clock.advance_to(10.0)
    m.pod_finished("n1", "p1")  # x1 last used 10
    clock.advance_to(20.0)
    m.pod_bound("n1", "p2", ["x2"])  # present 21.5
    clock.advance_to(30.0)
    m.pod_finished("n1", "p2")  # x2 last used 30
    clock.advance_to(200.0)
    m.pod_bound("n1", "p3", ["x3"])  # present 201.5, in use
    clock.advance_to(299.0)
    assert m.store("n1").usage_bytes == 900
    assert sorted(m.store("n1").images) == [
        "docker.io/library/x1:latest",
        "docker.io/library/x2:latest",
        "docker.io/library/x3:latest",
    ]
    clock.advance_to(300.0)  # ImageGCPeriod tick
    assert sorted(m.store("n1").images) == ["docker.io/library/x2:latest", "docker.io/library/x3:latest"]
    assert (m.store("n1").usage_bytes, m.metrics.images_removed, m.metrics.bytes_freed) == (600, 1, 300)
    assert m.pop_dirty_nodes() == ["n1"]


def test_gc_skips_in_use_and_young_images() -> None:
    clock, m, _ = _model(**GC)
    m.pod_bound("n1", "p1", ["x1"], now=0.0)  # x1 in use all along
    clock.advance_to(20.0)
    m.pod_bound("n1", "p2", ["x2"])
    clock.advance_to(30.0)
    m.pod_finished("n1", "p2")  # x2 last used 30
    clock.advance_to(250.0)
    assert m.prepull("n1", "x3") is True  # never used: sorted first, but present at 251.5 (young)
    assert m.prepull("n1", "x3") is False
    clock.advance_to(300.0)
    assert sorted(m.store("n1").images) == ["docker.io/library/x1:latest", "docker.io/library/x3:latest"]
    assert m.metrics.bytes_prepulled == 150


def test_gc_keeps_layers_shared_with_a_kept_image() -> None:
    cat = _catalogue()
    store = NodeImageStore(1000, 2.0)
    store.add_image(cat["x1"], 0.0)
    store.add_image(cat["y"], 1.0)  # shares l1 with x1
    assert store.usage_bytes == 600
    assert store.remove_image("docker.io/library/x1:latest") == 0
    assert store.has_layer("l1") and store.usage_bytes == 600
    store.add_image(cat["x2"], 2.0)
    store.add_image(cat["x3"], 3.0)
    store.add_image(cat["x1"], 4.0)
    # usage 1200 -> available 0 -> 100% -> amount 200. Order (never used, by detection): y, x2, x3, x1.
    # removing y frees only l4 (300; l1 stays for x1) -> 300 >= 200, stop.
    result = store.gc(1000.0, 85, 80, 120.0)
    assert (result.removed, result.freed_bytes, result.amount_to_free) == (
        ("docker.io/library/y:latest",),
        300,
        200,
    )
    assert store.has_layer("l1") and not store.has_layer("l4")


def test_gc_below_threshold_does_nothing() -> None:
    cat = _catalogue()
    store = NodeImageStore(1000, 2.0)
    store.add_image(cat["x1"], 0.0)
    assert store.gc(1000.0, 85, 80, 120.0).triggered is False


# ---------------------------------------------------------------- status images


def test_status_images_cap_and_order() -> None:
    images = [_image(f"img{i:02d}", [(f"l{i}", 1000 * (i % 30 + 1))]) for i in range(60)]
    images[0]["manifest_digest"] = "sha256:" + "d" * 64
    cat = parse_catalogue({"images": images}, "t")
    clock = VirtualClock()
    m = KubeletModel(clock, cat)
    m.preload("n1", [i.name for i in cat], now=0.0)
    status = m.status_images("n1")
    assert len(status) == 50
    # sizes 30000 x2 (img29, img59), 29000 x2, ... ties by name; the 10 smallest dropped
    assert status[0] == {"names": ["docker.io/library/img29:latest"], "sizeBytes": 30000}
    assert status[1] == {"names": ["docker.io/library/img59:latest"], "sizeBytes": 30000}
    assert [s["sizeBytes"] for s in status] == [1000 * (30 - k // 2) for k in range(50)]
    assert status[-1]["sizeBytes"] == 6000
    unlimited = KubeletModel(clock, cat, KubeletImageConfig(node_status_max_images=-1))
    unlimited.preload("n1", [i.name for i in cat], now=0.0)
    full = unlimited.status_images("n1")
    assert len(full) == 60
    assert full[-2:] == [
        {
            "names": [f"docker.io/library/img00@sha256:{'d' * 64}", "docker.io/library/img00:latest"],
            "sizeBytes": 1000,
        },
        {"names": ["docker.io/library/img30:latest"], "sizeBytes": 1000},
    ]


def test_refresh_node_status_patches_memory_cluster() -> None:
    clock, m, _ = _model()
    cluster = MemoryCluster(clock)
    cluster.create(node_manifest("n1"))
    m.pod_bound("n1", "p1", ["a"], now=0.0)
    clock.run_until()
    refresh_node_status(cluster, m, "n1")
    node = cluster.get("Node", "", "n1")
    assert node["status"]["images"] == [{"names": ["docker.io/library/a:latest"], "sizeBytes": 500}]
    rv = node["metadata"]["resourceVersion"]
    m.refresh_node_status(cluster, "n1")  # unchanged: no write
    assert cluster.get("Node", "", "n1")["metadata"]["resourceVersion"] == rv


def test_config_validation() -> None:
    with pytest.raises(
        ConfigError, match=r"kubelet.maxParallelImagePulls: maxParallelImagePulls \(3\) must be 1 or nil"
    ):
        KubeletImageConfig(max_parallel_image_pulls=3)
    with pytest.raises(ConfigError, match="imageGCLowThresholdPercent \\(85\\) must be less than"):
        KubeletImageConfig(image_gc_low_threshold_percent=85)
    with pytest.raises(ConfigError, match="kubelet.decompressBytesPerSecond: must be > 0"):
        KubeletImageConfig(decompress_bps=0)
    cfg = KubeletImageConfig.from_mapping({"serializeImagePulls": False, "maxParallelImagePulls": 2})
    assert cfg.node_pull_slots == 2 and KubeletImageConfig().node_pull_slots == 1
    with pytest.raises(ConfigError, match="f.yaml: kubelet.bogus: unknown field"):
        KubeletImageConfig.from_mapping({"bogus": 1}, "f.yaml")
    assert KubeletImageConfig.from_mapping(KubeletImageConfig().to_mapping()) == KubeletImageConfig()


def test_max_parallel_pulls_limits_node_slots() -> None:
    clock, m, _ = _model(serialize_image_pulls=False, max_parallel_image_pulls=1)
    m.pod_bound("n1", "p1", ["a"], now=0.0)
    r2 = m.pod_bound("n1", "p2", ["c"], now=0.0)
    clock.run_until()
    assert (r2.pull_wait_seconds, r2.pulls_done_at) == (6.0, 9.5)


@pytest.mark.parametrize(
    "cfg",
    [
        {},
        {"serialize_image_pulls": False},
        {"serialize_image_pulls": False, "registry_bandwidth_bps": 120.0},
        {"registry_max_concurrent_pulls": 2, "serialize_image_pulls": False, "max_parallel_image_pulls": 2},
    ],
)
def test_bytes_add_up_and_every_pod_starts(cfg: dict[str, Any]) -> None:
    import random

    clock, m, started = _model(**cfg)
    rnd = random.Random(5)
    t = 0.0
    for i in range(200):
        t += rnd.choice([0.0, 0.25, 1.0, 3.0])
        clock.advance_to(t)
        m.pod_bound(f"n{rnd.randrange(4)}", f"p{i}", [rnd.choice("abc")])
    clock.run_until()
    assert len(started) == 200
    for r in m.records.values():
        assert r.bytes_requested == r.bytes_cache_hit + r.bytes_joined + r.bytes_pulled
        assert r.started_at is not None and r.pulls_done_at is not None
        assert r.started_at == r.pulls_done_at + 1.0
    mt = m.metrics
    assert mt.bytes_requested == mt.bytes_cache_hit + mt.bytes_joined + mt.bytes_pulled
    assert mt.bytes_pulled == sum(r.bytes_pulled for r in m.records.values())
    assert mt.pulls_started == mt.pulls_completed


def test_prepull_precision_counts_images_a_pod_used_before_gc() -> None:
    clock, m, _ = _model()
    assert m.metrics.prepull_precision is None
    assert m.prepull("n1", "a", now=0.0)  # used: a pod finds it present
    assert m.prepull("n2", "b", now=0.0)  # used: a pod joins it while in flight
    assert m.prepull("n3", "c", now=0.0)  # never used
    clock.run_until(10.0)
    m.pod_bound("n1", "default/p1", ["a"], now=10.0)
    assert m.prepull("n2", "x1", now=10.0) and m.pulling("n2", "x1")
    m.pod_bound("n2", "default/p2", ["x1"], now=10.0)
    m.pod_bound("n1", "default/p3", ["a"], now=10.0)  # a second use of the same pre-pull counts once
    clock.run_until(100.0)
    assert (m.metrics.prepulls, m.metrics.prepulls_used) == (4, 2)
    assert m.metrics.prepull_precision == 0.5
    # bytes: a, b, c and x1 fetched whole (500 + 600 + 300 + 150 B); b on n1, which holds a, fetches
    # its 200 B top layer, but counts as a 600 B image, as the agent's kubesched_prepull_bytes_total
    assert m.prepull("n1", "b", now=100.0)
    clock.run_until(200.0)
    assert (m.metrics.bytes_prepulled, m.metrics.image_bytes_prepulled) == (1750, 2150)
    # removed by GC before any pod used it: a later pull of it is not a use of the pre-pull
    # (c is 300 B, 600 B unpacked: the whole 600 B disk, over the 85 % threshold)
    clock2, m2, _ = _model(image_disk_bytes=600, image_gc_period_seconds=300, image_minimum_gc_age_seconds=0)
    m2.prepull("n1", "c", now=0.0)
    clock2.run_until(10.0)
    assert m2.has_image("n1", "c")
    assert m2.run_gc("n1", 10.0).removed == ("docker.io/library/c:latest",)
    m2.pod_bound("n1", "default/p", ["c"], now=10.0)
    clock2.run_until(100.0)
    assert (m2.metrics.prepulls, m2.metrics.prepulls_used) == (1, 0)


@pytest.mark.parametrize(("kubelet_slot", "wait", "done"), [(False, 0.0, 2.1), (True, 3.4, 5.5)])
def test_prepull_slot_cri_or_kubelet(kubelet_slot: bool, wait: float, done: float) -> None:
    """A pre-pull of c (300 B: 0.5 s + 3 s) starts at 0; a pod needing x1 (150 B: 0.5 s + 1.5 s) is
    bound at 0.1. Through the CRI (an ImagePullJob) the pod's pull starts at once; in the kubelet's
    serialized slot (a puller pod) it waits for the pre-pull to end at 3.5."""
    clock, m, _ = _model(prepull_kubelet_slot=kubelet_slot)
    assert m.prepull("n1", "c", now=0.0)
    clock.advance_to(0.1)
    r = m.pod_bound("n1", "default/p", ["x1"], now=0.1)
    clock.advance_to(10.0)
    assert r.pull_wait_seconds == pytest.approx(wait) and r.pulls_done_at == pytest.approx(done)
    assert m.metrics.prepulls == 1 and m.metrics.bytes_prepulled == 300


def test_prepull_kubelet_slot_setting() -> None:
    assert KubeletImageConfig.from_mapping({"prePullKubeletSlot": True}).prepull_kubelet_slot is True
    assert KubeletImageConfig().to_mapping()["prePullKubeletSlot"] is False
    with pytest.raises(ConfigError, match=r"kubelet\.prePullKubeletSlot: must be true or false, got 'yes'"):
        KubeletImageConfig(prepull_kubelet_slot="yes")  # type: ignore[arg-type]


def test_prepulls_in_flight_are_announced_and_listed_until_done() -> None:
    clock, m, _ = _model()
    announced: list[tuple[str, str, float]] = []
    m.on_prepull_started = lambda node, image, t: announced.append((node, image, t))
    assert m.prepull("n1", "c", now=0.0) and m.prepull("n1", "x1", now=0.0)
    m.pod_bound("n1", "default/p1", ["a"], now=0.0)  # a pod's own pull is not a pre-pull
    # the catalogue's names (normalised as the runtime does)
    c, x1 = "docker.io/library/c:latest", "docker.io/library/x1:latest"
    assert announced == [("n1", c, 0.0), ("n1", x1, 0.0)]
    assert m.prepulls_in_flight("n1") == [c, x1]
    assert m.prepull("n1", "c", now=0.0) is False and len(announced) == 2  # already pulling
    clock.run_until(100.0)
    assert m.prepulls_in_flight("n1") == []
