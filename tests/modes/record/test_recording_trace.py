"""A recording read back as a trace (synthetic records): the clock map, which pods are replayed and
how, the node image caches and status phases, image sizes from status.images / Pulled events / the
registry cache, and the pulls calibration uses (joined ones left out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.images.catalogue import parse_catalogue
from kubesched.modes.record.log import RecordWriter
from kubesched.modes.record.recording import (
    REGISTRY_CACHE,
    RegistryCache,
    read_recording,
    recorded_pulls,
    recording_catalogue,
    recording_workload,
    status_phase,
)

T0 = 1_700_000_000.0  # recorder wall clock at the start
C0 = 1_800_000_000.0  # the cluster's clock at the start (it runs 2x: serve --speed 2)


def _ts(c: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(c, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node(name: str, images: list[tuple[list[str], int]], hb: str = "a") -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": "z"}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": hb}],
            "images": [{"names": n, "sizeBytes": s} for n, s in images],
        },
    }


def _pod(
    name: str,
    created: float,
    *,
    node: str | None = None,
    started: float | None = None,
    finished: float | None = None,
    image: str = "example.com/app:1",
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending"}
    if started is not None:
        state = (
            {"running": {"startedAt": _ts(started)}}
            if finished is None
            else {"terminated": {"startedAt": _ts(started), "finishedAt": _ts(finished), "exitCode": 0}}
        )
        status = {
            "phase": "Running" if finished is None else "Succeeded",
            "containerStatuses": [{"name": "c", "state": state}],
        }
    spec: dict[str, Any] = {
        "schedulerName": "kubesched",
        "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "team",
            "uid": f"u-{name}",
            "creationTimestamp": _ts(created),
            "labels": {"app": "x"},
        },
        "spec": spec,
        "status": status,
    }


def _pulled(pod: str, at: float, pull: str, size: int, image: str = "example.com/app:1") -> dict[str, Any]:
    return {
        "kind": "Event",
        "metadata": {"name": f"e-{pod}-{at}", "uid": f"e-{pod}-{at}"},
        "reason": "Pulled",
        "regarding": {"kind": "Pod", "uid": f"u-{pod}", "namespace": "team", "name": pod},
        "eventTime": _ts(at).replace("Z", ".000000Z"),
        "reportingController": "kubelet",
        "note": f'Successfully pulled image "{image}" in {pull} ({pull} including waiting). Image size: {size} bytes.',
    }


def _record(tmp: Path) -> Path:
    """Cluster time c = C0 + 2 * (t - T0). n1 starts holding img0; `old` exists before the start;
    `a` runs 20 s and succeeds; `b` and `c` (n2) share one pull of app:1; `gone` is deleted pending;
    `late` is still running at the end."""
    w = RecordWriter(tmp / "rec", clock=lambda: T0)
    rec: list[dict[str, Any]] = [{"op": "session", "t": T0}]

    def add(op: str, t: float, obj: dict[str, Any]) -> None:
        rec.append({"op": op, "t": t, "kind": obj["kind"], "object": obj})

    add("add", T0, _node("n1", [(["example.com/img0:1", "example.com/img0@sha256:" + "0" * 64], 300)]))
    add("add", T0, _node("n2", []))
    add("add", T0, _pod("old", C0 - 100, node="n1", started=C0 - 90))
    rec.append({"op": "synced", "t": T0})
    c = lambda t: C0 + 2 * (t - T0)  # noqa: E731
    add("add", T0 + 5, _pod("a", c(T0 + 5)))
    add("update", T0 + 6, _pod("a", c(T0 + 5), node="n2", started=c(T0 + 9)))
    add("add", T0 + 10, _pod("b", c(T0 + 10)))
    add("add", T0 + 10.5, _pod("c", c(T0 + 10.5)))
    add("add", T0 + 20, _pulled("b", c(T0 + 20), "18s", 1000))
    add("add", T0 + 20, _pulled("c", c(T0 + 20), "17s", 1000))
    add("update", T0 + 20.2, _node("n2", [(["example.com/app:1"], 1000)]))  # status at cluster C0+40.4
    add("update", T0 + 25, _node("n2", [(["example.com/app:1"], 1000)], hb="b"))  # heartbeat only: no change
    add(
        "update", T0 + 25.2, _node("n2", [(["example.com/app:1"], 1000), (["example.com/b:1"], 50)])
    )  # C0+50.4
    add("update", T0 + 21, _pod("b", c(T0 + 10), node="n2", started=c(T0 + 21)))
    add("update", T0 + 21, _pod("c", c(T0 + 10.5), node="n2", started=c(T0 + 21)))
    add("update", T0 + 30, _pod("a", c(T0 + 5), node="n2", started=c(T0 + 9), finished=c(T0 + 19)))
    add("delete", T0 + 31, _pod("a", c(T0 + 5), node="n2", started=c(T0 + 9), finished=c(T0 + 19)))
    add("add", T0 + 32, _pod("gone", c(T0 + 32)))
    add("delete", T0 + 33, _pod("gone", c(T0 + 32)))
    add("add", T0 + 34, _pod("late", c(T0 + 34), image="example.com/unknown:1"))
    add("add", T0 + 35, _pod("x", c(T0 + 35), image="example.com/img0:1"))
    add("update", T0 + 40, _pod("x", c(T0 + 35), node="n1", started=c(T0 + 36)))
    rec.append({"op": "synced", "t": T0 + 50})
    for r in rec:
        w.append(r)
    w.close()
    return tmp / "rec"


def test_recording_to_workload(tmp_path: Path) -> None:
    path = _record(tmp_path)
    recording = read_recording(path)
    assert recording.clock(T0 + 10) == pytest.approx(C0 + 20, abs=1.0)
    assert (recording.start, recording.end) == (pytest.approx(C0, abs=1.0), pytest.approx(C0 + 100, abs=1.0))
    base = parse_catalogue(
        {
            "images": [
                {
                    "name": "example.com/img0:1",
                    "class": "cpu",
                    "source": "t",
                    "confidence": "derived",
                    "layers": [{"id": "l0", "size_bytes": 300}],
                }
            ]
        },
        "t",
    )
    images = ["example.com/app:1", "example.com/img0:1", "example.com/unknown:1"]
    catalogue, notes = recording_catalogue(recording, base, images)
    assert catalogue["example.com/app:1"].size_bytes == 1000
    assert catalogue["example.com/app:1"].layers_derived
    assert notes == [
        "image example.com/unknown:1: size unknown (not in the catalogue, the registry cache, "
        "status.images or a Pulled event)"
    ]
    wl = recording_workload(recording, catalogue)
    by = {p.name: p for p in wl.pods}
    assert sorted(by) == ["a", "b", "c", "x"]
    off = C0 - recording.start
    assert (by["a"].arrival, by["a"].duration) == (pytest.approx(10 + off, abs=1.0), 20.0)
    assert (by["b"].duration, by["c"].duration, by["x"].duration) == (None, None, None)
    assert by["a"].manifest == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "team", "labels": {"app": "x"}},
        "spec": {
            "containers": [
                {"name": "c", "image": "example.com/app:1", "resources": {"requests": {"cpu": "1"}}}
            ]
        },
    }
    assert set(wl.notes) == {
        "1 pods running at the start hold their nodes and images (not measured)",
        "1 pods deleted before they started are left out",
        "1 pods with images of unknown size are left out",
    }
    [old] = wl.running
    assert (old.key, old.arrival, old.duration, old.manifest["spec"]["nodeName"]) == (
        "team/old",
        0.0,
        None,
        "n1",
    )
    assert wl.images == {"n1": ("example.com/img0:1",), "n2": ()}
    assert [n["metadata"] for n in wl.nodes] == [
        {"name": "n1", "labels": {"zone": "z"}},
        {"name": "n2", "labels": {"zone": "z"}},
    ]
    assert "images" not in wl.nodes[0]["status"]
    # n2's status.images changed at cluster C0+40.4 and C0+50.4 (the heartbeat-only update is no change)
    assert recording.image_updates["n2"] == [
        pytest.approx(C0 + 40.4, abs=1.0),
        pytest.approx(C0 + 50.4, abs=1.0),
    ]
    assert wl.status_phases["n2"] == pytest.approx((C0 + 0.4 - recording.start) % 10, abs=1.0)
    # b and c shared one pull: calibration keeps one (the longer), the joined one is left out
    pulls, joined = recorded_pulls(recording)
    assert ([(p.image, p.seconds, p.size_bytes, p.node) for p in pulls], joined) == (
        [("example.com/app:1", 18.0, 1000, "n2")],
        1,
    )


def test_pods_running_at_the_start_hold_room_in_the_replay(tmp_path: Path) -> None:
    """The replay of the recording: `old` (1 cpu on n1 from second 0) is no arrival and has no
    timeline, but holds its cpu: the mean allocated cpu is higher than without it."""
    import dataclasses

    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.modes.replay.run import run_replay

    recording = read_recording(_record(tmp_path))
    base = parse_catalogue(
        {
            "images": [
                {
                    "name": "example.com/img0:1",
                    "class": "cpu",
                    "source": "t",
                    "confidence": "derived",
                    "layers": [{"id": "l0", "size_bytes": 300}],
                }
            ]
        },
        "t",
    )
    catalogue, _ = recording_catalogue(recording, base, ["example.com/app:1", "example.com/img0:1"])
    wl = recording_workload(recording, catalogue)
    with_old = run_replay(wl, None, catalogue=catalogue, kubelet_config=KubeletImageConfig())
    without = run_replay(
        dataclasses.replace(wl, running=()), None, catalogue=catalogue, kubelet_config=KubeletImageConfig()
    )
    assert [tl.key for tl in with_old.timelines] == ["team/a", "team/b", "team/c", "team/x"]
    assert with_old.scheduled == 4
    # 1 cpu of 8 for the whole horizon
    assert with_old.mean_allocated_fraction["cpu"] - without.mean_allocated_fraction["cpu"] == pytest.approx(
        1 / 8, abs=1e-6
    )


def test_status_phase_is_circular() -> None:
    assert status_phase([], 0.0, 10.0) is None
    assert status_phase([100.2, 110.4, 120.3], 100.0, 10.0) == pytest.approx(0.3, abs=0.01)
    assert status_phase([109.9, 120.1], 100.0, 10.0) == pytest.approx(0.0, abs=0.01) or status_phase(
        [109.9, 120.1], 100.0, 10.0
    ) == pytest.approx(10.0, abs=0.01)


def test_registry_cache_answers_without_the_network(tmp_path: Path) -> None:
    path = _record(tmp_path)
    recording = read_recording(path)
    asked: list[str] = []

    def fetch(ref: str) -> tuple[str, list[tuple[str, int]]] | None:
        asked.append(ref)
        return ("sha256:" + "1" * 64, [("sha256:" + "2" * 64, 600), ("sha256:" + "3" * 64, 400)])

    from kubesched.images.catalogue import ImageCatalogue

    base = ImageCatalogue([], "t")
    catalogue, _ = recording_catalogue(
        recording, base, ["example.com/app:1"], RegistryCache(path / REGISTRY_CACHE, fetch)
    )
    assert asked == ["example.com/app:1"]
    assert [layer.size_bytes for layer in catalogue["example.com/app:1"].layers] == [600, 400]
    assert (
        json.loads((path / REGISTRY_CACHE).read_text())["example.com/app:1"]["digest"] == "sha256:" + "1" * 64
    )
    # a later replay: no lookup, same layers
    catalogue, _ = recording_catalogue(
        recording, base, ["example.com/app:1"], RegistryCache(path / REGISTRY_CACHE, None)
    )
    assert [layer.size_bytes for layer in catalogue["example.com/app:1"].layers] == [600, 400]


def test_images_calibrate_reads_a_recording(tmp_path: Path) -> None:
    """Three pulls of different sizes at 1 s + bytes / 50 MB/s on three nodes, one more joining the
    first: the fit finds 50 MB/s and 1 s per pull, and says one joined pull was left out."""
    from click.testing import CliRunner

    from kubesched.cli.main import main

    w = RecordWriter(tmp_path / "rec", clock=lambda: T0)
    w.append({"op": "session", "t": T0})
    w.append({"op": "synced", "t": T0})
    for i, size in enumerate([100_000_000, 500_000_000, 1_000_000_000]):
        node, name = f"n{i}", f"p{i}"
        seconds = 1.0 + size / 50e6
        w.append(
            {
                "op": "add",
                "t": T0 + 1,
                "kind": "Pod",
                "object": _pod(
                    name, C0 + 1, node=node, started=C0 + 2 + seconds, image=f"example.com/i{i}:1"
                ),
            }
        )
        w.append(
            {
                "op": "add",
                "t": T0 + 2,
                "kind": "Event",
                "object": _pulled(name, C0 + 2 + seconds, f"{seconds:g}s", size, image=f"example.com/i{i}:1"),
            }
        )
    w.append(
        {
            "op": "add",
            "t": T0 + 1,
            "kind": "Pod",
            "object": _pod("j", C0 + 1, node="n0", started=C0 + 5, image="example.com/i0:1"),
        }
    )
    w.append(
        {
            "op": "add",
            "t": T0 + 2,
            "kind": "Event",
            "object": _pulled("j", C0 + 3, "1s", 100_000_000, image="example.com/i0:1"),
        }
    )
    w.close()
    r = CliRunner().invoke(main, ["images", "calibrate", "--events", str(tmp_path / "rec")])
    assert r.exit_code == 0, r.output
    assert "fitted 3 pulls: throughput 50.0 MB/s, per-pull cost 0.963 s" in r.output
    assert "; 1 joined pulls left out" in r.output
