"""``kubesched startup``'s analysis over what ``serve --kubelet``'s kubelets write (embedded
cluster, virtual clock; world of tests/embedded/kubelet/test_kubelet_live.py: 100 B/s, 0.5 s per layer,
1 s container start; images a = 500 B, b = 600 B sharing a 400 B base)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.live import LiveKubelets
from kubesched.embedded.store import MemoryCluster
from kubesched.images.catalogue import parse_catalogue
from kubesched.modes.startup.analysis import StartupData, analyse, parse_pulled
from kubesched.modes.startup.report import startup_report
from kubesched.testing import node_manifest
from kubesched.units import parse_go_duration

T0 = 1_700_000_000.0


def _pod(name: str, image: str, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "main", "image": image, "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _cluster() -> tuple[VirtualClock, MemoryCluster]:
    def image(name: str, layers: list[tuple[str, int]]) -> dict[str, Any]:
        return {
            "name": name,
            "class": "cpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": i, "size_bytes": s} for i, s in layers],
        }

    catalogue = parse_catalogue(
        {
            "images": [
                image("a", [("base", 400), ("a-top", 100)]),
                image("b", [("base", 400), ("b-top", 200)]),
            ]
        },
        "test",
    )
    clock = VirtualClock(T0)
    mc = MemoryCluster(clock)
    mc.load([node_manifest("n1", cpu="4")])
    LiveKubelets(
        mc,
        clock,
        catalogue,
        KubeletImageConfig(
            node_bandwidth_bps=1000.0,
            decompress_bps=100.0,
            layer_latency_seconds=0.5,
            container_start_seconds=1.0,
            pull_fixed_seconds=0.0,
        ),
    ).start()
    return clock, mc


def _bind(mc: MemoryCluster, name: str) -> None:
    mc.bind("default", name, mc.get("Pod", "default", name)["metadata"]["uid"], "n1")


def test_parsers() -> None:
    assert [
        parse_go_duration(t) for t in ("0s", "313ms", "1.594s", "1m53.8s", "2h0m5s", "1.5us")
    ] == pytest.approx([0.0, 0.313, 1.594, 113.8, 7205.0, 1.5e-6])
    with pytest.raises(ValueError):
        parse_go_duration("1.2 s")
    p = parse_pulled(
        'Successfully pulled image "x" in 796ms (1.594s including waiting). Image size: 543804759 bytes.'
    )
    assert p is not None and (p.image, p.pulled, p.pull_seconds, p.total_seconds, p.size_bytes) == (
        "x",
        True,
        0.796,
        1.594,
        543804759,
    )
    p = parse_pulled('Container image "nginx:1.27" already present on machine')
    assert p is not None and (p.image, p.pulled, p.size_bytes) == ("nginx:1.27", False, None)
    assert parse_pulled("Created container: web") is None


def test_startup_decomposed_per_scheduler() -> None:
    clock, mc = _cluster()
    mc.create(_pod("p1", "a"))
    mc.create(_pod("p2", "b", scheduler="image-aware"))
    _bind(mc, "p1")
    clock.run_until(T0 + 1)
    _bind(mc, "p2")
    clock.run_until(T0 + 12)
    mc.create(_pod("p3", "a"))
    _bind(mc, "p3")
    clock.run_until(T0 + 20)
    data = StartupData(mc.list("Pod").items, mc.list("Node").items, mc.events(), source="test")
    runs = analyse(data, now=T0 + 20)
    assert [r.result.config for r in runs] == ["default-scheduler", "image-aware"]
    default, aware = (r.result for r in runs)
    # p1: bound at once, 6 s pull, started at +7; p3: created at +12, image present, started at +13
    t1, t3 = default.timelines
    assert (t1.key, t1.scheduling, t1.pull, t1.pull_wait, t1.container_start, t1.startup) == (
        "default/p1",
        0.0,
        6.0,
        0.0,
        1.0,
        7.0,
    )
    assert (t3.arrival, t3.scheduling, t3.pull, t3.pull_wait, t3.startup, t3.bytes_cache_hit) == (
        12.0,
        0.0,
        0.0,
        0.0,
        1.0,
        500,
    )
    # p2: bound 1 s after creation, queued 5 s behind p1's pull, pulled 2.5 s, started at +9
    [t2] = aware.timelines
    assert (t2.scheduling, t2.pull, t2.pull_wait, t2.container_start, t2.startup) == (1.0, 2.5, 5.0, 0.5, 9.0)
    assert (default.pull_metrics.bytes_pulled, default.pull_metrics.bytes_cache_hit) == (500, 500)
    assert default.pull_metrics.cache_hit_ratio == 0.5
    assert aware.pull_metrics.cache_hit_ratio == 0.0
    report = startup_report(runs, {"kubeconfig": "k"})
    entry = report["runs"][0]
    assert [r["scheduler"] for r in report["runs"]] == ["default-scheduler", "image-aware"]
    assert "config" not in entry and list(entry)[0] == "scheduler"
    assert entry["startupLatencySeconds"]["p50"] == 4.0
    assert entry["topImages"] == [
        {
            "image": "a",
            "pulls": 1,
            "cacheHits": 1,
            "joins": 0,
            "pullSeconds": 6.0,
            "pullSecondsIncludingWaiting": 6.0,
            "bytesPulled": 500,
        }
    ]
    # mean allocated cpu over [0, 20]: p1 1 cpu from 0, p3 1 cpu from 12, of 4 cpus
    assert entry["meanAllocatedFraction"]["cpu"] == pytest.approx((20 * 1 + 8 * 1) / 20 / 4)


def test_report_is_labelled_by_scheduler(tmp_path: Path) -> None:
    """The startup report has its own title and a ``scheduler`` column where the replay's has ``config``;
    every other key of a run is the replay's."""
    from rich.console import Console

    from kubesched.modes.report.report_json import report_dict
    from kubesched.modes.report.report_table import summary_table
    from kubesched.modes.startup.report import LABEL, TITLE, write_startup_report

    clock, mc = _cluster()
    mc.create(_pod("p1", "a"))
    _bind(mc, "p1")
    clock.run_until(T0 + 10)
    runs = analyse(StartupData(mc.list("Pod").items, mc.list("Node").items, mc.events()), now=T0 + 10)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(summary_table([r.result for r in runs], title=TITLE, label=LABEL, wall=False))
    text = console.export_text()
    assert text.splitlines()[0].strip() == "kubesched startup"
    header = text.splitlines()[2]
    assert header.split("┃")[1].strip() == "scheduler" and "wall s" not in header and "config" not in header
    assert "default-scheduler" in text
    paths = write_startup_report(tmp_path, runs, {"kubeconfig": "k"}, html=False)
    assert [p.name for p in paths] == ["report.json", "pods.csv"]
    report = json.loads(paths[0].read_text())
    replay_keys = set(report_dict([r.result for r in runs])["runs"][0])
    assert set(report["runs"][0]) == replay_keys - {"config"} | {"scheduler", "topImages"}
    assert report["runs"][0]["scheduler"] == "default-scheduler"
    assert paths[1].read_text().splitlines()[0].split(",")[:2] == ["scheduler", "pod"]
    pytest.importorskip("plotly")
    html = write_startup_report(tmp_path, runs, {"kubeconfig": "k"})[2].read_text()
    assert "<h1>kubesched startup</h1>" in html and "<th>scheduler</th>" in html
    assert "<th>config</th>" not in html and "<th>wall s</th>" not in html and "Seed" not in html


def test_since_durations() -> None:
    from kubesched.cli.startup import _since_seconds
    from kubesched.errors import ConfigError

    assert [_since_seconds(t) for t in ("1h", "30m", "1h30m", "2d", "1d12h", "all")] == [
        3600.0,
        1800.0,
        5400.0,
        172800.0,
        129600.0,
        None,
    ]
    for bad in ("5x", "0s", "d", "-1h"):
        with pytest.raises(ConfigError, match="--since"):
            _since_seconds(bad)


def test_joined_pulls_count_once() -> None:
    """Five pods share two pulls of a 3.03 GB image (three on n1, two on n2): 6.06 GB pulled, the
    other three requests joined; a later pull of the image on n1 (after GC) counts again."""
    size = 3_030_000_000

    def pod(name: str, node: str, created: int, started: int) -> dict[str, Any]:
        return {
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": f"u-{name}",
                "creationTimestamp": f"2026-01-01T00:{created // 60:02d}:{created % 60:02d}Z",
            },
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "img"}]},
            "status": {
                "phase": "Running",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "True",
                        "lastTransitionTime": f"2026-01-01T00:{created // 60:02d}:{created % 60:02d}Z",
                    }
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "state": {
                            "running": {"startedAt": f"2026-01-01T00:{started // 60:02d}:{started % 60:02d}Z"}
                        },
                    }
                ],
            },
        }

    def pulled(name: str, at: int, pull: str, total: str) -> dict[str, Any]:
        return {
            "involvedObject": {"kind": "Pod", "uid": f"u-{name}", "namespace": "default", "name": name},
            "reason": "Pulled",
            "source": {"component": "kubelet"},
            "firstTimestamp": f"2026-01-01T00:{at // 60:02d}:{at % 60:02d}Z",
            "message": f'Successfully pulled image "img" in {pull} ({total} including waiting). '
            f"Image size: {size} bytes.",
        }

    pods = [
        pod("p1", "n1", 0, 68),
        pod("p2", "n1", 2, 68),
        pod("p3", "n1", 5, 69),
        pod("p4", "n2", 1, 70),
        pod("p5", "n2", 3, 70),
        pod("p6", "n1", 600, 668),
    ]
    events = [
        pulled("p1", 67, "1m7s", "1m7s"),
        pulled("p2", 67, "1m5s", "1m5s"),
        # a serialized kubelet: p3's request ran after p1's pull, the runtime had the content
        pulled("p3", 68, "150ms", "1m3s"),
        pulled("p4", 69, "1m8s", "1m8s"),
        pulled("p5", 69, "1m6s", "1m6s"),
        pulled("p6", 667, "1m7s", "1m7s"),
    ]
    [run] = analyse(StartupData(pods[:5], [], events[:5]))
    m = run.result.pull_metrics
    assert (
        m.bytes_requested,
        m.bytes_pulled,
        m.bytes_joined,
        m.bytes_cache_hit,
        m.pulls_completed,
        m.pulls_joined,
    ) == (5 * size, 2 * size, 3 * size, 0, 2, 3)
    assert (m.cache_hit_ratio, m.image_bytes_pulled) == (0.0, 2 * size)
    [img] = run.images
    assert (img.pulls, img.joins, img.hits, img.bytes_pulled) == (2, 3, 0, 2 * size)
    assert [(tl.key, tl.bytes_pulled) for tl in run.result.timelines] == [
        ("default/p1", size),
        ("default/p4", size),
        ("default/p2", 0),
        ("default/p5", 0),
        ("default/p3", 0),
    ]
    [run] = analyse(StartupData(pods, [], events))
    assert (run.result.pull_metrics.bytes_pulled, run.result.pull_metrics.bytes_joined) == (
        3 * size,
        3 * size,
    )


def test_joined_pull_of_the_live_kubelet() -> None:
    """Two pods bound together to n1 share one pull of ``a`` (500 B); a third finds it present."""
    clock, mc = _cluster()
    for name in ("p1", "p2"):
        mc.create(_pod(name, "a"))
        _bind(mc, name)
    clock.run_until(T0 + 10)
    mc.create(_pod("p3", "a"))
    _bind(mc, "p3")
    clock.run_until(T0 + 20)
    [run] = analyse(StartupData(mc.list("Pod").items, mc.list("Node").items, mc.events()), now=T0 + 20)
    m = run.result.pull_metrics
    assert (m.bytes_requested, m.bytes_pulled, m.bytes_joined, m.bytes_cache_hit) == (1500, 500, 500, 500)
    # the kubelet's Pulled Event gives the whole image: the replay's imageBytesPulled basis
    assert (m.image_bytes_pulled, run.result.summary()["imageBytesPulled"]) == (500, 500)
    assert m.cache_hit_ratio == pytest.approx(1 / 3)
    assert [(tl.key, tl.startup) for tl in run.result.timelines] == [
        ("default/p1", 7.0),
        ("default/p2", 7.0),
        ("default/p3", 1.0),
    ]
