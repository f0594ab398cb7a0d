"""ImagePullTimeSaved: pull seconds saved per node, layer-aware, normalised, with the piling guard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from image_plugin_support import write_catalogue

from kubesched.clock import VirtualClock
from kubesched.config.args import decode_args
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code
from kubesched.images.pull_model import DEFAULT_PULL_BYTES_PER_SECOND
from kubesched.plugins import IN_TREE
from kubesched.plugins.imagelocality.image_locality import ImageLocality
from kubesched.plugins.imagepulltimesaved.image_pull_time_saved import (
    ImagePullTimeSaved,
    ImagePullTimeSavedArgs,
    damping,
)
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, snapshot_of


@pytest.fixture()
def catalogue(tmp_path: Path) -> str:
    return write_catalogue(tmp_path)


#: the arithmetic in these tests uses 80 MB/s (the default is the pull model's, checked below) and,
#: unless a test sets them, only the throughput term (no per-pull or per-layer seconds; the whole
#: model is checked in test_whole_pull_model_*)
BW = 80e6


def plugin_on(catalogue: str, snap: Any, **kw: Any) -> tuple[ImagePullTimeSaved, FakeHandle]:
    """The plugin with exactly ``kw`` as its args, on ``snap``, its clock at 1000 s."""
    handle = FakeHandle(snap)
    handle.clock = VirtualClock(1000.0)  # type: ignore[assignment]
    args = ImagePullTimeSavedArgs(catalogue_path=catalogue, **kw)
    return ImagePullTimeSaved(args, handle), handle  # type: ignore[arg-type]


def plugin(catalogue: str, infos: list[Any], **kw: Any) -> tuple[ImagePullTimeSaved, FakeHandle]:
    kw.setdefault("default_bandwidth_bytes_per_second", BW)
    kw.setdefault("pull_fixed_seconds", 0.0)
    kw.setdefault("layer_latency_seconds", 0.0)
    return plugin_on(catalogue, snapshot_of(infos), **kw)


def run(pl: ImagePullTimeSaved, pod: Any, infos: list[Any]) -> tuple[dict[str, int], dict[str, int]]:
    state = CycleState()
    assert pl.pre_score(state, pod, infos) is None
    raw = []
    for ni in infos:
        s, st = pl.score(state, pod, ni)
        assert st is None
        raw.append(NodeScore(ni.name, s))
    before = {ns.name: ns.score for ns in raw}
    assert pl.normalize_score(state, pod, raw) is None
    return before, {ns.name: ns.score for ns in raw}


def cluster() -> list[Any]:
    return [
        node_info(make_node("n1", images=[(["docker.io/library/app:1"], 2_130_000_000)])),
        node_info(make_node("n2", images=[(["docker.io/library/app:2"], 2_430_000_000)])),
        node_info(make_node("n3")),
        node_info(make_node("n4"), [make_pod("running", image="app:1", node_name="n4")]),
    ]


def test_registered_in_tree() -> None:
    assert (
        IN_TREE["ImagePullTimeSaved"]
        == "kubesched.plugins.imagepulltimesaved.image_pull_time_saved:ImagePullTimeSaved"
    )


def test_shared_layers_and_in_flight_pulls_count(catalogue: str) -> None:
    infos = cluster()
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="app:1"), infos)
    # 2,130,000,000 B / 80e6 B/s = 26.625 s; n2 shares base+cuda: 2,030,000,000 B = 25.375 s;
    # n4 pulls app:1 for its pod (not in status yet): assumed half done, 13.3125 s saved
    assert raw == {"n1": 26625, "n2": 25375, "n3": 0, "n4": 13312}
    assert norm == {"n1": 100, "n2": 95, "n3": 0, "n4": 49}


def test_a_node_busy_pulling_other_images_scores_below_an_idle_one(catalogue: str) -> None:
    infos = cluster()
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="tiny:1"), infos)
    # tiny:1 is nowhere; n4 is still pulling app:1 (2.13 GB, assumed half done): with serialized
    # pulls the pod would wait 13.3125 s behind it. lo = -13312, span = max(0 + 13312, 10000)
    assert raw == {"n1": 0, "n2": 0, "n3": 0, "n4": -13312}
    assert norm == {"n1": 100, "n2": 100, "n3": 100, "n4": 0}
    # parallel pulls: the other pull does not delay the pod
    pl, _ = plugin(catalogue, infos, serialized_pulls=False)
    raw, norm = run(pl, make_pod("p", image="tiny:1"), infos)
    assert raw == {"n1": 0, "n2": 0, "n3": 0, "n4": 0}
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert raw["n4"] == 13312  # 0.5 * 2.13e9 / 80e6
    # a pod of app:2 on n4: shares base + cuda in flight (2.03 GB), waits for all 2.13 GB in flight:
    # (2.03e9 - 0.5 * 2.13e9) / 80e6 = 12.0625 s
    pl, _ = plugin(catalogue, infos, in_flight_progress=0.5)
    raw, _ = run(pl, make_pod("p", image="app:2"), infos)
    assert raw["n4"] == 12062


def test_beats_image_locality_on_names_and_spread(catalogue: str) -> None:
    # ImageLocality sees "app:1" vs "docker.io/library/app:1" as different images -> 0 everywhere
    infos = cluster()
    il = ImageLocality(None, FakeHandle(snapshot_of(infos)))  # type: ignore[arg-type]
    assert [il.score(CycleState(), make_pod("p", image="app:1"), ni)[0] for ni in infos] == [0, 0, 0, 0]


def test_node_bandwidth_annotation(catalogue: str) -> None:
    fast = make_node("fast", images=[(["docker.io/library/app:1"], 2_130_000_000)])
    fast.annotations = {"kubesched.io/image-pull-bytes-per-second": "160e6"}  # type: ignore[misc]
    labelled = make_node(
        "labelled",
        images=[(["docker.io/library/app:1"], 2_130_000_000)],
        labels={"kubesched.io/image-pull-bytes-per-second": "40000000"},
    )
    bad = make_node(
        "bad",
        images=[(["docker.io/library/app:1"], 2_130_000_000)],
        labels={"kubesched.io/image-pull-bytes-per-second": "fast"},
    )
    infos = [node_info(fast), node_info(labelled), node_info(bad)]
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="app:1"), infos)
    assert raw == {"fast": 13312, "labelled": 53250, "bad": 26625}
    assert norm == {"fast": 24, "labelled": 100, "bad": 50}  # 1331200 // 53250 = 24


def test_unknown_image_is_one_opaque_layer_from_node_status(catalogue: str) -> None:
    infos = [
        node_info(
            make_node(
                "n1", images=[(["registry.local/x@sha256:" + "a" * 64, "registry.local/x:1"], 500_000_000)]
            )
        ),
        node_info(make_node("n2")),
    ]
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="registry.local/x:1"), infos)
    # 500 MB / 80 MB/s = 6.25 s, below the 10 s floor: 100 * 6250 // 10000
    assert raw == {"n1": 6250, "n2": 0}
    assert norm == {"n1": 62, "n2": 0}


def test_tiny_saving_stays_near_zero(catalogue: str) -> None:
    infos = [
        node_info(make_node("n1", images=[(["docker.io/library/tiny:1"], 2_000_000)])),
        node_info(make_node("n2")),
    ]
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="tiny:1"), infos)
    assert raw == {"n1": 25, "n2": 0}
    assert norm == {"n1": 0, "n2": 0}


def test_unknown_image_nobody_has_is_skipped(catalogue: str) -> None:
    infos = [node_info(make_node("n1"))]
    pl, _ = plugin(catalogue, infos)
    st = pl.pre_score(CycleState(), make_pod("p", image="registry.local/nobody:1"), infos)
    assert st is not None and st.code == Code.Skip


def test_damping_values() -> None:
    assert [damping(n, 2) for n in range(5)] == [1.0, 1.0, 2 / 3, 0.5, 0.4]
    assert damping(100, 0) == 1.0


def test_piling_guard_damps_recent_placements_and_expires(catalogue: str) -> None:
    infos = cluster()
    pl, handle = plugin(catalogue, infos, recent_burst=2, recent_window_seconds=60.0)
    clock: VirtualClock = handle.clock  # type: ignore[assignment]
    for node in ("n1", "n2"):
        for i in range(3):
            assert pl.reserve(CycleState(), make_pod(f"r{node}{i}", image="app:1"), node) is None
    raw, norm = run(pl, make_pod("p", image="app:1"), infos)
    # 3 recent pods of app:1 on n2, which shares base+cuda but must pull the rest: damping
    # 2 / 4 = 0.5 -> 12.6875 s. n1 holds all of app:1: a pod there pulls nothing, so the same
    # 3 recent pods leave it at full credit
    assert raw == {"n1": 26625, "n2": 12687, "n3": 0, "n4": 13312}
    assert norm == {"n1": 100, "n2": 47, "n3": 0, "n4": 49}
    # another image set is not damped by app:1 placements
    raw2, _ = run(pl, make_pod("q", image="app:2"), infos)
    assert raw2["n1"] == 25375
    # unreserve forgets one placement: 2 recent -> 2 / 3
    pl.unreserve(CycleState(), make_pod("rn20", image="app:1"), "n2")
    pl.unreserve(CycleState(), make_pod("rn20", image="app:1"), "n2")  # idempotent
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert raw["n2"] == 16916
    clock.advance_to(1060.0)
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert raw["n2"] == 25375


def test_a_hit_is_not_penalised_by_the_nodes_other_pulls(catalogue: str) -> None:
    # n1 holds all of app:1 and is pulling tiny:1 (2 MB) for a pod of its own: a pod of app:1
    # pulls nothing there, so it keeps the whole 26.625 s; a pod of app:2, which must pull its
    # top layer, queues behind half of tiny:1: (2.03e9 - 0.5 * 2e6) / 80e6 = 25.3625 s
    infos = [
        node_info(
            make_node("n1", images=[(["docker.io/library/app:1"], 2_130_000_000)]),
            [make_pod("busy", image="tiny:1", node_name="n1")],
        ),
        node_info(make_node("n3")),
    ]
    pl, _ = plugin(catalogue, infos)
    assert run(pl, make_pod("p", image="app:1"), infos)[0] == {"n1": 26625, "n3": 0}
    assert run(pl, make_pod("q", image="app:2"), infos)[0] == {"n1": 25362, "n3": 0}


def test_guard_disabled(catalogue: str) -> None:
    infos = cluster()
    pl, _ = plugin(catalogue, infos, recent_burst=0)
    for i in range(5):
        pl.reserve(CycleState(), make_pod(f"r{i}", image="app:1"), "n1")
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert raw["n1"] == 26625


def test_damping_never_softens_a_penalty(catalogue: str) -> None:
    infos = cluster()
    pl, _ = plugin(catalogue, infos, recent_burst=1)
    for i in range(3):
        pl.reserve(CycleState(), make_pod(f"r{i}", image="tiny:1"), "n4")
    raw, _ = run(pl, make_pod("p", image="tiny:1"), infos)
    assert raw["n4"] == -13312


def test_args_decode_and_validation(catalogue: str) -> None:
    a = decode_args(
        ImagePullTimeSavedArgs,
        {
            "cataloguePath": catalogue,
            "defaultBandwidthBytesPerSecond": 100000000,
            "recentBurst": 4,
            "recentWindowSeconds": 120,
            "scoreScaleFloorSeconds": 5,
        },
        "args",
    )
    assert (
        a.catalogue_path,
        a.default_bandwidth_bytes_per_second,
        a.recent_burst,
        a.recent_window_seconds,
        a.score_scale_floor_seconds,
    ) == (catalogue, 1e8, 4, 120.0, 5.0)
    d = decode_args(ImagePullTimeSavedArgs, None, "args")
    assert (
        d.catalogue_path,
        d.default_bandwidth_bytes_per_second,
        d.bandwidth_key,
        d.score_scale_floor_seconds,
        d.recent_window_seconds,
        d.recent_burst,
        d.in_flight_progress,
        d.serialized_pulls,
    ) == (
        None,
        DEFAULT_PULL_BYTES_PER_SECOND,
        "kubesched.io/image-pull-bytes-per-second",
        10.0,
        300.0,
        8,
        0.5,
        True,
    )
    assert DEFAULT_PULL_BYTES_PER_SECOND == KubeletImageConfig().decompress_bps == 45e6
    with pytest.raises(ConfigError, match="inFlightProgress"):
        decode_args(ImagePullTimeSavedArgs, {"inFlightProgress": 1.5}, "args")
    with pytest.raises(ConfigError, match="defaultBandwidthBytesPerSecond"):
        decode_args(ImagePullTimeSavedArgs, {"defaultBandwidthBytesPerSecond": 0}, "args")
    with pytest.raises(ConfigError, match="unknown|Unexpected|extra"):
        decode_args(ImagePullTimeSavedArgs, {"bogus": 1}, "args")


def test_default_catalogue_matches_layers_between_real_images() -> None:
    infos = [
        node_info(
            make_node(
                "n1", images=[(["docker.io/pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime"], 3_030_000_000)]
            )
        ),
        node_info(make_node("n2")),
    ]
    handle = FakeHandle(snapshot_of(infos))
    pl = ImagePullTimeSaved(None, handle)  # type: ignore[arg-type]
    raw, norm = run(pl, make_pod("p", image="registry.example.com/ml/bert-finetune:v3"), infos)
    # bert-finetune:v3 = the pytorch runtime image's 4 layers (3.03 GB) + a 150 MB app layer;
    # 3.03e9 B / 45e6 B/s (the default throughput) = 67.333 s, plus the default 0.037 s for each of
    # the 4 layers present = 67.481 s (bert-finetune itself is not listed: its pull is still made).
    # Its whole pull: 3.18e9 / 45e6 = 70.667 s + 1 s + 5 x 0.037 s = 71.852 s: 100 * 67481 // 71852
    assert raw == {"n1": 67481, "n2": 0}
    assert norm == {"n1": 93, "n2": 0}


def _cache_snapshot(nodes: list[Any], pods: list[Any]) -> Any:
    from kubesched.cache.cache import Cache
    from kubesched.framework.snapshot import Snapshot

    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert snap.node_table is not None
    return cache, snap


def _batch_vs_per_node(pl: ImagePullTimeSaved, pod: Any, snap: Any) -> tuple[list[int], list[int]]:
    import numpy as np

    table = snap.node_table
    rows = table.order[::-1].copy()  # any visiting order
    infos = [table.infos[r] for r in rows]
    state = CycleState()
    assert pl.pre_score(state, pod, infos) is None
    raw = pl.score_batch(state, pod, table, rows)
    assert raw is not None
    want = [pl.score(state, pod, ni)[0] for ni in infos]
    assert raw.tolist() == want
    ns = [NodeScore(ni.name, v) for ni, v in zip(infos, want, strict=True)]
    pl.normalize_score(state, pod, ns)
    got = pl.normalize_score_batch(state, pod, np.array(raw, dtype=np.int64))
    assert got.tolist() == [x.score for x in ns]
    return raw.tolist(), got.tolist()


def test_batch_form_matches_per_node_and_follows_table_changes(catalogue: str) -> None:
    from kubesched.api.node import Node
    from kubesched.testing import node_manifest

    fast = node_manifest("n5", images=[(["docker.io/library/app:2"], 2_430_000_000)])
    fast["metadata"]["annotations"] = {"kubesched.io/image-pull-bytes-per-second": "160e6"}
    nodes = [n.node for n in cluster()] + [Node.from_manifest(fast)]
    running = make_pod("running", image="app:1", node_name="n4")
    cache, snap = _cache_snapshot(nodes, [running])
    pl, _ = plugin_on(
        catalogue,
        snap,
        recent_burst=2,
        default_bandwidth_bytes_per_second=BW,
        pull_fixed_seconds=0.0,
        layer_latency_seconds=0.0,
    )
    pod = make_pod("p", image="app:1")
    # rows in reverse list order: n5, n4, n3, n2, n1; n5 shares base+cuda at twice the bandwidth
    assert _batch_vs_per_node(pl, pod, snap) == ([12687, 13312, 0, 25375, 26625], [47, 49, 0, 95, 100])
    # three recent app:1 placements on n5 (must pull the top layers): damping 2 / 4; the same on
    # n1 (holds all of app:1, a hit): no damping
    for i in range(3):
        pl.reserve(CycleState(), make_pod(f"r{i}", image="app:1"), "n5")
        pl.reserve(CycleState(), make_pod(f"h{i}", image="app:1"), "n1")
    assert _batch_vs_per_node(pl, pod, snap)[0] == [6343, 13312, 0, 25375, 26625]
    # a pod of app:2 lands on n3: only n3's row is recomputed; it now pulls 2.43 GB (half done
    # assumed), of which the pod shares base + cuda: (2.03e9 - 0.5 * 2.43e9) / 80e6 = 10.1875 s
    cache.add_pod(make_pod("new", image="app:2", node_name="n3"))
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap)[0] == [6343, 13312, 10187, 25375, 26625]
    # a pod of tiny:1: n3 and n4 are busy pulling, everything else is idle
    assert _batch_vs_per_node(pl, make_pod("t", image="tiny:1"), snap) == (
        [0, -13312, -15187, 0, 0],
        [100, 12, 0, 100, 100],
    )
    # the running pod leaves n4 (no status images there): n4 saves nothing any more
    cache.remove_pod(running)
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap)[0] == [6343, 0, 10187, 25375, 26625]


def test_whole_pull_model_counts_fixed_and_layer_seconds(catalogue: str) -> None:
    infos = cluster()
    pl, _ = plugin(catalogue, infos, pull_fixed_seconds=1.0, layer_latency_seconds=0.037)
    raw, norm = run(pl, make_pod("p", image="app:1"), infos)
    # n1 lists app:1: the pull avoided saves 1 s + 3 layers x 0.037 s + 26.625 s = 27.736 s;
    # n2 (app:2) holds base + cuda: 2 layers x 0.037 s + 25.375 s = 25.449 s (the pull is still made);
    # n4 pulls app:1 (3 layers, 1 image) for its pod, half done assumed: 13.3125 s + 3 x 0.037 s
    # - 0.5 x (3 x 0.037 s + 1 s) = 12.868 s
    assert raw == {"n1": 27736, "n2": 25449, "n3": 0, "n4": 12868}
    assert norm == {"n1": 100, "n2": 91, "n3": 0, "n4": 46}  # 2544900 // 27736, 1286800 // 27736
    # a tiny image on a node pulling app:1 queues behind 26.625 s + 3 x 0.037 s + 1 s, half of it left
    assert run(pl, make_pod("t", image="tiny:1"), infos)[0]["n4"] == -13868
    pl, _ = plugin(
        catalogue, infos, pull_fixed_seconds=1.0, layer_latency_seconds=0.037, serialized_pulls=False
    )
    # parallel pulls: n4 saves half its pod's in-flight pull: 0.5 x (26.625 s + 3 x 0.037 s) = 13.368 s
    assert run(pl, make_pod("p", image="app:1"), infos)[0]["n4"] == 13368
    # defaults are the pull model's
    d = decode_args(ImagePullTimeSavedArgs, None, "args")
    assert (d.pull_fixed_seconds, d.layer_latency_seconds) == (1.0, 0.037)
    with pytest.raises(ConfigError, match="pullFixedSeconds"):
        decode_args(ImagePullTimeSavedArgs, {"pullFixedSeconds": -1}, "args")


def test_whole_pull_model_batch_form_matches_per_node(catalogue: str) -> None:
    from kubesched.api.node import Node
    from kubesched.testing import node_manifest

    fast = node_manifest("n5", images=[(["docker.io/library/app:2"], 2_430_000_000)])
    fast["metadata"]["annotations"] = {"kubesched.io/image-pull-bytes-per-second": "160e6"}
    nodes = [n.node for n in cluster()] + [Node.from_manifest(fast)]
    cache, snap = _cache_snapshot(nodes, [make_pod("running", image="app:1", node_name="n4")])
    pl, _ = plugin_on(catalogue, snap, default_bandwidth_bytes_per_second=BW)
    pod = make_pod("p", image="app:1")
    # rows n5, n4, n3, n2, n1 with the default 1 s per pull and 0.037 s per layer: n5 holds base +
    # cuda at 160 MB/s: 12.6875 s + 2 x 0.037 s = 12.761 s; n4, n2, n1 as in the per-node test
    assert _batch_vs_per_node(pl, pod, snap) == ([12761, 12868, 0, 25449, 27736], [46, 46, 0, 91, 100])
    # a pod of app:2 lands on n3: the pod's base + cuda are in flight there (2 layers, half done),
    # behind app:2's 3 layers and 1 pull: 10.1875 s + 2 x 0.037 s - 0.5 x (3 x 0.037 s + 1 s) = 9.706 s
    cache.add_pod(make_pod("new", image="app:2", node_name="n3"))
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap)[0] == [12761, 12868, 9706, 25449, 27736]
    # tiny:1 queues behind n4's and n3's pulls: -(13.3125 s + 0.5555 s) and -(15.1875 s + 0.5555 s)
    assert _batch_vs_per_node(pl, make_pod("t", image="tiny:1"), snap)[0] == [0, -13868, -15743, 0, 0]


def _sized_nodes() -> list[Any]:
    app = [(["docker.io/library/app:1"], 2_130_000_000)]
    return [
        make_node("n1", cpu="4", memory="32Gi", images=app),
        make_node("n2", cpu="8", memory="64Gi", images=app),
        make_node("n3", cpu="16", memory="128Gi", images=app),
        make_node("n4", cpu="4", memory="32Gi"),
    ]


def test_node_share_exponent_gives_the_largest_quarter_of_nodes_less_credit(catalogue: str) -> None:
    infos = [node_info(n) for n in _sized_nodes()]
    pod = make_pod("p", image="app:1", cpu="1", memory="4Gi")
    # off (the default): every holder saves the whole 26.625 s pull
    pl, _ = plugin(catalogue, infos)
    assert run(pl, pod, infos)[1] == {"n1": 100, "n2": 100, "n3": 100, "n4": 0}
    # shares (cpu, memory): n1 and n4 (1/4 + 1/8) / 2 = 0.1875, n2 0.09375, n3 0.046875; lower
    # quartile (linear) 0.046875 + 0.75 * (0.09375 - 0.046875) = 0.08203125: n3 keeps
    # 100 * 0.046875 / 0.08203125 = 57.1 -> 57, n1 and n2 (above the quartile) all of it
    pl, _ = plugin(catalogue, infos, node_share_exponent=1.0)
    raw, norm = run(pl, pod, infos)
    assert raw == {"n1": 26625, "n2": 26625, "n3": 26625, "n4": 0}
    assert norm == {"n1": 100, "n2": 100, "n3": 57, "n4": 0}
    # e = 0.5: n3 keeps 100 * sqrt(4/7) = 75.6 -> 75
    pl, _ = plugin(catalogue, infos, node_share_exponent=0.5)
    assert run(pl, pod, infos)[1] == {"n1": 100, "n2": 100, "n3": 75, "n4": 0}
    # a pod that requests nothing is not scaled
    assert run(pl, make_pod("q", image="app:1"), infos)[1] == {"n1": 100, "n2": 100, "n3": 100, "n4": 0}


def test_node_share_scaling_counts_extended_resources(catalogue: str) -> None:
    app = [(["docker.io/library/app:1"], 2_130_000_000)]
    infos = [
        node_info(
            make_node("small", cpu="8", memory="64Gi", allocatable={"nvidia.com/gpu": "2"}, images=app)
        ),
        node_info(make_node("big", cpu="8", memory="64Gi", allocatable={"nvidia.com/gpu": "8"}, images=app)),
        node_info(make_node("mid", cpu="8", memory="64Gi", allocatable={"nvidia.com/gpu": "4"}, images=app)),
    ]
    pod = make_pod("p", image="app:1", requests={"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "1"})
    pl, _ = plugin(catalogue, infos, node_share_exponent=1.0)
    # shares: small (1/4 + 1/4 + 1/2) / 3 = 1/3, mid (1/4 + 1/4 + 1/4) / 3 = 1/4, big
    # (1/4 + 1/4 + 1/8) / 3 = 5/24; lower quartile 5/24 + 0.5 * (1/4 - 5/24) = 11/48:
    # 100 * (5/24) / (11/48) = 90.9 -> 90
    assert run(pl, pod, infos)[1] == {"small": 100, "big": 90, "mid": 100}


def test_node_share_scaling_batch_form_matches_per_node(catalogue: str) -> None:
    cache, snap = _cache_snapshot(_sized_nodes(), [])
    pl, _ = plugin_on(
        catalogue,
        snap,
        default_bandwidth_bytes_per_second=BW,
        pull_fixed_seconds=0.0,
        layer_latency_seconds=0.0,
        node_share_exponent=1.0,
    )
    # rows in reverse list order: n4, n3, n2, n1
    assert _batch_vs_per_node(pl, make_pod("p", image="app:1", cpu="1", memory="4Gi"), snap) == (
        [0, 26625, 26625, 26625],
        [0, 57, 100, 100],
    )
    pl.args.node_share_exponent = 0.5
    assert _batch_vs_per_node(pl, make_pod("p", image="app:1", cpu="1", memory="4Gi"), snap) == (
        [0, 26625, 26625, 26625],
        [0, 75, 100, 100],
    )


def test_node_share_scaling_arg_decodes() -> None:
    args = decode_args(ImagePullTimeSavedArgs, {"nodeShareExponent": 0.5}, "ImagePullTimeSaved")
    assert args.node_share_exponent == 0.5
    assert ImagePullTimeSavedArgs().node_share_exponent == 0.0
    with pytest.raises(ConfigError):
        decode_args(ImagePullTimeSavedArgs, {"nodeShareExponent": -1}, "args")


def _prepulling(name: str, value: str) -> Any:
    from kubesched.api.node import Node
    from kubesched.testing import node_manifest

    m = node_manifest(name)
    m["metadata"]["annotations"] = {"kubesched.io/prepulls-in-flight": value}
    return Node.from_manifest(m)


def test_prepulls_in_flight_count_as_the_nodes_own_pulls_in_flight(catalogue: str) -> None:
    # n5 has no pods; a pre-pull agent pulls app:1 there: scored exactly as n4, whose pod pulls app:1
    infos = cluster() + [node_info(_prepulling("n5", " app:1 ,"))]
    pl, _ = plugin(catalogue, infos)
    raw, norm = run(pl, make_pod("p", image="app:1"), infos)
    # joined: 0.5 x 2.13e9 / 80e6 = 13.3125 s on n4 and n5
    assert raw == {"n1": 26625, "n2": 25375, "n3": 0, "n4": 13312, "n5": 13312}
    assert norm == {"n1": 100, "n2": 95, "n3": 0, "n4": 49, "n5": 49}
    # another image queues behind the pre-pull as behind n4's pull
    raw, _ = run(pl, make_pod("t", image="tiny:1"), infos)
    assert raw == {"n1": 0, "n2": 0, "n3": 0, "n4": -13312, "n5": -13312}
    # whole pull model: as n4 in test_whole_pull_model_counts_fixed_and_layer_seconds
    pl, _ = plugin(catalogue, infos, pull_fixed_seconds=1.0, layer_latency_seconds=0.037)
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert (raw["n4"], raw["n5"]) == (12868, 12868)
    assert run(pl, make_pod("t", image="tiny:1"), infos)[0]["n5"] == -13868
    # prepullsInFlight: false ignores the annotation
    pl, _ = plugin(catalogue, infos, prepulls_in_flight=False)
    assert run(pl, make_pod("p", image="app:1"), infos)[0]["n5"] == 0
    assert run(pl, make_pod("t", image="tiny:1"), infos)[0]["n5"] == 0
    d = decode_args(ImagePullTimeSavedArgs, {"prepullsInFlight": False}, "args")
    assert d.prepulls_in_flight is False
    assert decode_args(ImagePullTimeSavedArgs, None, "args").prepulls_in_flight is True


def test_a_prepull_and_a_pods_pull_of_one_image_are_one_pull(catalogue: str) -> None:
    # n4's pod pulls app:1 and the agent announces app:1 too: one pull in flight, not two
    n4 = cluster()[3]
    both = node_info(
        _prepulling("n4", "docker.io/library/app:1"), [make_pod("running", image="app:1", node_name="n4")]
    )
    two = node_info(_prepulling("n6", "app:1,app:2"))
    infos = [both, two]
    pl, _ = plugin(catalogue, infos, pull_fixed_seconds=1.0, layer_latency_seconds=0.037)
    raw, _ = run(pl, make_pod("t", image="tiny:1"), infos)
    assert raw["n4"] == run(pl, make_pod("t", image="tiny:1"), [n4])[0]["n4"] == -13868
    # n6 pulls app:1 and app:2 (base + cuda shared): 2.13e9 + 0.4e9 bytes, 4 layers, 2 pulls;
    # half left: -(31.625 s + 4 x 0.037 s + 2 s) / 2 = -16.8865 s
    assert raw["n6"] == -16886


def test_prepulls_in_flight_batch_form_follows_the_annotation(catalogue: str) -> None:
    from kubesched.api.node import Node
    from kubesched.testing import node_manifest

    nodes = [n.node for n in cluster()]
    cache, snap = _cache_snapshot(nodes, [make_pod("running", image="app:1", node_name="n4")])
    pl, _ = plugin_on(catalogue, snap, default_bandwidth_bytes_per_second=BW)
    pod = make_pod("p", image="app:1")
    # rows n4, n3, n2, n1
    assert _batch_vs_per_node(pl, pod, snap)[0] == [12868, 0, 25449, 27736]
    # the agent starts pre-pulling app:1 on n3: n3 now scores as n4
    cache.update_node(nodes[2], _prepulling("n3", "app:1"))
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap)[0] == [12868, 12868, 25449, 27736]
    # the pull is done: status lists app:1 and the annotation is gone, a hit
    done = Node.from_manifest(node_manifest("n3", images=[(["docker.io/library/app:1"], 2_130_000_000)]))
    cache.update_node(_prepulling("n3", "app:1"), done)
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap)[0] == [12868, 27736, 25449, 27736]


def test_a_puller_pod_bound_to_the_node_is_a_pull_in_flight(catalogue: str) -> None:
    # `kubesched run --prepull` without OpenKruise: the puller pod is bound to its node
    # (spec.nodeName), so the scheduler's cache counts its image as the node's pull in flight
    from kubesched.api.pod import Pod
    from kubesched.prepull.puller_pod import puller_pod

    manifest = puller_pod("n5", "uid-n5", ["app:1"], "kube-system", None)
    manifest["metadata"]["name"] = "kubesched-prepull-n5"  # the API server's generateName
    puller = Pod.from_manifest(manifest)
    infos = cluster() + [node_info(make_node("n5"), [puller])]
    pl, _ = plugin(catalogue, infos, prepulls_in_flight=False)
    raw, _ = run(pl, make_pod("p", image="app:1"), infos)
    assert (raw["n4"], raw["n5"]) == (13312, 13312)
    assert run(pl, make_pod("t", image="tiny:1"), infos)[0]["n5"] == -13312


SLIM = """
  - name: slim:1
    class: gpu
    source: test
    confidence: derived
    layers:
      - {id: base, size_bytes: 30000000}
      - {id: slim, size_bytes: 1000000000}
"""


@pytest.fixture()
def slim_catalogue(tmp_path: Path) -> str:
    """The shared test catalogue plus ``slim:1``, which shares only the 30 MB base with app:1."""
    path = Path(write_catalogue(tmp_path))
    path.write_text(path.read_text() + SLIM)
    return str(path)


def test_pod_pull_scale_scores_the_share_of_the_pods_whole_pull(slim_catalogue: str) -> None:
    holder = node_info(make_node("h", images=[(["docker.io/library/app:1"], 2_130_000_000)]))
    slim = node_info(make_node("s", images=[(["docker.io/library/slim:1"], 1_030_000_000)]))
    empty = node_info(make_node("e"))
    pod = make_pod("p", image="app:1")
    whole = {"pull_fixed_seconds": 1.0, "layer_latency_seconds": 0.037}
    # h spares app:1's whole pull, 2.13e9 / 80e6 = 26.625 s + 1 s + 3 x 0.037 s = 27.736 s; s holds
    # only the 30 MB base: 0.375 s + 0.037 s = 0.412 s
    pl, _ = plugin(slim_catalogue, [holder, slim, empty], **whole)
    assert run(pl, pod, [holder, slim, empty]) == ({"h": 27736, "s": 412, "e": 0}, {"h": 100, "s": 1, "e": 0})
    # the holder has no room (not scored): s still scores its share of the pull, 100 * 412 // 27736
    assert run(pl, pod, [slim, empty])[1] == {"s": 1, "e": 0}
    # scoreScale BestNode: the best scored node sets the scale (at least the 10 s floor), so
    # without the holder s scores 100 * 412 // 10000 = 4, and with a 0.1 s floor 100
    pl, _ = plugin(slim_catalogue, [holder, slim, empty], score_scale="BestNode", **whole)
    assert run(pl, pod, [holder, slim, empty])[1] == {"h": 100, "s": 1, "e": 0}
    assert run(pl, pod, [slim, empty])[1] == {"s": 4, "e": 0}
    pl, _ = plugin(
        slim_catalogue, [slim, empty], score_scale="BestNode", score_scale_floor_seconds=0.1, **whole
    )
    assert run(pl, pod, [slim, empty])[1] == {"s": 100, "e": 0}


def test_pod_pull_scale_is_the_pull_on_the_slowest_scored_node(catalogue: str) -> None:
    fast = make_node("fast", images=[(["docker.io/library/app:1"], 2_130_000_000)])
    fast.annotations = {"kubesched.io/image-pull-bytes-per-second": "160e6"}  # type: ignore[misc]
    infos = [node_info(fast), node_info(make_node("slow"))]
    pl, _ = plugin(catalogue, infos)
    # fast spares its own 13.3125 s pull; the most any scored node could save is the 26.625 s pull
    # on slow (80 MB/s): 100 * 13312 // 26625 = 49 (BestNode: 100)
    assert run(pl, make_pod("p", image="app:1"), infos) == (
        {"fast": 13312, "slow": 0},
        {"fast": 49, "slow": 0},
    )
    pl, _ = plugin(catalogue, infos, score_scale="BestNode")
    assert run(pl, make_pod("p", image="app:1"), infos)[1] == {"fast": 100, "slow": 0}
    # a tiny image's whole pull (25 ms) is far below the 10 s floor: the floor stays the scale
    tiny = [node_info(make_node("t", images=[(["docker.io/library/tiny:1"], 2_000_000)]))]
    pl, _ = plugin(catalogue, tiny)
    assert run(pl, make_pod("q", image="tiny:1"), tiny) == ({"t": 25}, {"t": 0})


def test_pod_pull_scale_batch_form_matches_per_node(slim_catalogue: str) -> None:
    from kubesched.api.node import Node
    from kubesched.testing import node_manifest

    fast = node_manifest("f", images=[(["docker.io/library/app:1"], 2_130_000_000)])
    fast["metadata"]["annotations"] = {"kubesched.io/image-pull-bytes-per-second": "160e6"}
    nodes = [
        Node.from_manifest(fast),
        make_node("s", images=[(["docker.io/library/slim:1"], 1_030_000_000)]),
        make_node("e"),
    ]
    _, snap = _cache_snapshot(nodes, [])
    pl, _ = plugin_on(slim_catalogue, snap, default_bandwidth_bytes_per_second=BW)
    # rows e, s, f: f spares 13.3125 s + 1 s + 3 x 0.037 s = 14.423 s, s 0.412 s; the scale is the
    # whole pull on e or s (80 MB/s), 27.736 s: 100 * 14423 // 27736 = 52
    assert _batch_vs_per_node(pl, make_pod("p", image="app:1"), snap) == ([0, 412, 14423], [0, 1, 52])


def test_score_scale_arg_decodes() -> None:
    assert decode_args(ImagePullTimeSavedArgs, None, "args").score_scale == "PodPull"
    assert decode_args(ImagePullTimeSavedArgs, {"scoreScale": "BestNode"}, "args").score_scale == "BestNode"
    with pytest.raises(ConfigError, match="scoreScale"):
        decode_args(ImagePullTimeSavedArgs, {"scoreScale": "Largest"}, "args")


def _started_cluster(phase: str) -> list[Any]:
    """:func:`cluster` with n4's pod of app:1 in ``phase`` (its images are not in n4's status)."""
    infos = cluster()[:3]
    pod = make_pod("running", image="app:1", node_name="n4", status={"phase": phase})
    return [*infos, node_info(make_node("n4"), [pod])]


def test_a_started_pods_images_are_present_before_the_status_lists_them(catalogue: str) -> None:
    # the recommended profile's in-flight rule (inFlightProgress 0) and the whole pull model
    kw: dict[str, Any] = {
        "pull_fixed_seconds": 1.0,
        "layer_latency_seconds": 0.037,
        "in_flight_progress": 0.0,
    }
    pending = _started_cluster("Pending")
    pl, _ = plugin(catalogue, pending, **kw)
    raw, norm = run(pl, make_pod("p", image="app:1"), pending)
    # n4 still pulls app:1 for its pod: joining the pull saves nothing (26.625 s + 3 x 0.037 s
    # - (26.625 s + 3 x 0.037 s + 1 s) = -1 s), so an idle node scores above it
    assert raw == {"n1": 27736, "n2": 25449, "n3": 0, "n4": -1000}
    assert norm == {"n1": 100, "n2": 92, "n3": 3, "n4": 0}  # lo -1000, span 28736: 2644900 // 28736
    started = _started_cluster("Running")
    pl, _ = plugin(catalogue, started, **kw)
    raw, norm = run(pl, make_pod("p", image="app:1"), started)
    # the pod on n4 is Running: app:1 is on n4 for certain, a hit as on n1 (26.625 s + 1 s + 3 x 0.037 s)
    assert raw == {"n1": 27736, "n2": 25449, "n3": 0, "n4": 27736}
    assert norm == {"n1": 100, "n2": 91, "n3": 0, "n4": 100}
    # a pod of app:2 on n4: base + cuda present, no pull in flight to queue behind (as n2)
    assert run(pl, make_pod("q", image="app:2"), started)[0]["n4"] == 25449
    # a pod of another image: n4 is idle, not busy pulling (-(26.625 s + 3 x 0.037 s + 1 s) before)
    assert run(pl, make_pod("t", image="tiny:1"), pending)[0]["n4"] == -27736
    assert run(pl, make_pod("t", image="tiny:1"), started)[0]["n4"] == 0
    # an ended pod is no longer on the node (terminal pods leave the cache): only status counts


def test_batch_form_follows_a_pods_phase_change(catalogue: str) -> None:
    nodes = [ni.node for ni in cluster()]
    pending = make_pod("running", image="app:1", node_name="n4")
    cache, snap = _cache_snapshot(nodes, [pending])
    pl, _ = plugin_on(
        catalogue,
        snap,
        default_bandwidth_bytes_per_second=BW,
        pull_fixed_seconds=1.0,
        layer_latency_seconds=0.037,
        in_flight_progress=0.0,
    )
    pod = make_pod("p", image="app:1")
    # rows in reverse list order: n4, n3, n2, n1
    assert _batch_vs_per_node(pl, pod, snap) == ([-1000, 0, 25449, 27736], [0, 3, 92, 100])
    # the kubelet reports the pod Running: n4's row is recomputed, a hit
    running = make_pod("running", image="app:1", node_name="n4", status={"phase": "Running"})
    cache.update_pod(pending, running)
    cache.update_snapshot(snap)
    assert _batch_vs_per_node(pl, pod, snap) == ([27736, 0, 25449, 27736], [100, 0, 91, 100])
