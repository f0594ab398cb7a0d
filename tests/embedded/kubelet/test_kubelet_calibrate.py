"""Kubelet ``Pulled`` events and ``kubesched images calibrate``: parsing, the robust fit, the
written kubelet-model file, and reading the events of a cluster (``kubesched serve``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli.main import main
from kubesched.embedded.kubelet.calibrate import CalibrationError, PullPoint, calibrate, pull_points
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.pulled_events import (
    PulledEvent,
    parse_pulled_message,
    pulled_events,
    pulled_events_in_text,
)
from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
from kubesched.images.catalogue import default_catalogue
from kubesched.units import parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1.2s", 1.2),
        ("890ms", 0.89),
        ("1m53.8s", 113.8),
        ("2h0m1s", 7201.0),
        ("0s", 0.0),
        ("0", 0.0),
        ("1.5µs", 1.5e-6),
        ("3us", 3e-6),
        ("7ns", 7e-9),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1.2", "1.2x", "1s2", "1 s"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ValueError, match="^time: (invalid|missing unit|unknown unit)"):
        parse_go_duration(text)


def test_messages() -> None:
    m = 'Successfully pulled image "registry.example.com/x/tgi:2.4" in 1m53.8s (2m0.1s including waiting). Image size: 5650343354 bytes.'
    assert parse_pulled_message(m, "n1") == PulledEvent(
        "registry.example.com/x/tgi:2.4", 113.8, 120.1, 5650343354, "n1"
    )
    # kubelets before v1.30: no size; older ones: no waiting time either
    assert parse_pulled_message(
        'Successfully pulled image "nginx" in 890ms (890ms including waiting)'
    ) == PulledEvent("nginx", 0.89, 0.89, None)
    assert parse_pulled_message('Successfully pulled image "nginx" in 3.5s') == PulledEvent(
        "nginx", 3.5, None, None
    )
    assert parse_pulled_message('Container image "nginx" already present on machine') is None
    assert parse_pulled_message('Successfully pulled image "nginx" in soon') is None


def test_events_v1_and_events_k8s_io() -> None:
    msg = 'Successfully pulled image "busybox" in 2s (2s including waiting). Image size: 2000000 bytes.'
    events: list[Any] = [
        {"reason": "Pulled", "message": msg, "source": {"component": "kubelet", "host": "n1"}},
        {"reason": "Pulled", "note": msg, "deprecatedSource": {"host": "n2"}},
        {"reason": "Pulled", "note": 'Container image "busybox" already present on machine'},
        {"reason": "Pulling", "message": 'Pulling image "busybox"'},
        "not an event",
    ]
    assert [e.node for e in pulled_events(events)] == ["n1", "n2"]
    text = f"  Normal  Pulled  5s  kubelet  {msg}\n  Normal  Started  4s  kubelet  Started container c\n"
    assert list(pulled_events_in_text(text)) == [PulledEvent("busybox", 2.0, 2.0, 2000000)]


FIXED, BPS, LAYER = 1.0, 45e6, 0.037


def _line(size: int, layers: int = 1) -> float:
    return FIXED + LAYER * layers + size / BPS


def test_fit_recovers_the_line_and_ignores_outliers() -> None:
    points = [
        PullPoint(f"i{k}", size, None, _line(size))
        for k, size in enumerate(
            [50_000_000, 200_000_000, 900_000_000, 2_000_000_000, 5_000_000_000, 8_000_000_000]
        )
    ]
    points.append(PullPoint("r", 300_000_000, 7, _line(300_000_000, 7)))  # layer count known
    points.append(PullPoint("slow", 1_000_000_000, None, 5 * _line(1_000_000_000)))  # a throttled pull
    fit = calibrate(points, LAYER)
    assert fit.fixed_seconds == pytest.approx(FIXED, abs=1e-6)
    assert fit.bytes_per_second == pytest.approx(BPS, rel=1e-6)
    assert (fit.pulls, fit.outliers, fit.layers_known, fit.layer_seconds) == (8, 1, 1, LAYER)
    assert fit.kubelet_settings() == {
        "decompressBytesPerSecond": 45000000,
        "pullFixedSeconds": 1.0,
        "layerLatencySeconds": 0.037,
    }


def test_noise_within_the_huber_cut_is_fitted_as_least_squares() -> None:
    # residuals +e, -e, -e, +e are orthogonal to 1 and x, so least squares gives the line itself;
    # the robust scale is 1.4826 e and the cut 1.345 x that, so every point keeps full weight
    e = 0.25
    sizes = [100_000_000, 200_000_000, 300_000_000, 400_000_000]
    points = [PullPoint("a", s, None, _line(s) + d) for s, d in zip(sizes, [e, -e, -e, e], strict=True)]
    fit = calibrate(points, LAYER)
    assert fit.fixed_seconds == pytest.approx(FIXED, abs=1e-9)
    assert fit.bytes_per_second == pytest.approx(BPS, rel=1e-9)
    assert fit.scale_seconds == pytest.approx(1.4826 * e)
    assert fit.outliers == 0


def test_negative_intercept_is_refitted_through_zero() -> None:
    points = [PullPoint("a", 100_000_000, None, 0.037 + 1.0), PullPoint("b", 300_000_000, None, 0.037 + 5.0)]
    fit = calibrate(points, LAYER)  # the line through them has intercept -1 s
    assert fit.fixed_seconds == 0.0
    # through the origin, least squares: sum(xy) / sum(xx) = (1e8 + 15e8) / (1e16 + 9e16) = 1.6e-8 s/B
    assert fit.bytes_per_second == pytest.approx(62_500_000.0)


def test_fit_errors() -> None:
    with pytest.raises(
        CalibrationError,
        match=r"need pulls of at least two different image sizes, got 1 usable "
        r"pull\(s\) \(2 without a known size\)",
    ):
        calibrate([PullPoint("a", 1, None, 1.0)], skipped=2)
    with pytest.raises(CalibrationError, match="does not grow with the image size in these 2 pulls"):
        calibrate([PullPoint("a", 1_000_000, None, 9.0), PullPoint("b", 9_000_000_000, None, 1.0)])


def test_pull_points_use_the_catalogue() -> None:
    cat = default_catalogue()
    events = [
        PulledEvent("redis", 3.0, None, None),
        PulledEvent("redis", 2.0, None, 123),
        PulledEvent("unknown/x:1", 2.0, None, None),
        PulledEvent("unknown/x:1", 2.0, None, 0),
    ]
    points, skipped = pull_points(events, cat)
    assert points == [PullPoint("redis", 55474442, 7, 3.0), PullPoint("redis", 123, 7, 2.0)]
    assert skipped == 2


def _event(image: str, size: int, seconds: float, node: str = "n1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "reason": "Pulled",
        "type": "Normal",
        "source": {"component": "kubelet", "host": node},
        "message": f'Successfully pulled image "{image}" in {seconds:.3f}s ({seconds + 1:.3f}s including '
        f"waiting). Image size: {size} bytes.",
    }


#: pull times of whole milliseconds at 45 MB/s (the kubelet truncates durations to ms)
SIZES = [45_000_000, 225_000_000, 1_350_000_000, 2_700_000_000, 5_400_000_000]


def test_cli_calibrate_events_file_writes_a_replay_kubelet_file(tmp_path: Path) -> None:
    events = [_event(f"example.com/app{k}:1", s, _line(s)) for k, s in enumerate(SIZES)]
    events.append(_event("example.com/slow:1", 500_000_000, 120.0))
    src = tmp_path / "events.json"
    src.write_text(json.dumps({"apiVersion": "v1", "kind": "EventList", "items": events}))
    base = tmp_path / "base.yaml"
    base.write_text("imageDiskBytes: 100000000000\nlayerLatencySeconds: 0.037\n")
    out = tmp_path / "kubelet.yaml"
    res = CliRunner().invoke(
        main, ["images", "calibrate", "--events", str(src), "--kubelet", str(base), "--output", str(out)]
    )
    assert res.exit_code == 0, res.output
    settings = read_kubelet_settings(str(out))
    assert settings == {
        "imageDiskBytes": 100000000000,
        "layerLatencySeconds": 0.037,
        "decompressBytesPerSecond": 45000000,
        "pullFixedSeconds": 1.0,
    }
    assert out.read_text().splitlines()[1] == (
        "# from 6 pulls (0 with known layer counts, 1 outliers, 0 skipped without a size):"
    )
    assert KubeletImageConfig.from_mapping(settings).pull_model().seconds(SIZES[2]) == pytest.approx(
        _line(SIZES[2])
    )
    # the file is what `replay --kubelet` and `images estimate --kubelet` read
    est = CliRunner().invoke(
        main, ["images", "estimate", "--size", "450000000", "--kubelet", str(out), "-o", "json"]
    )
    assert json.loads(est.output)["seconds"] == 11.037


def test_cli_calibrate_text_and_stdout(tmp_path: Path) -> None:
    src = tmp_path / "describe.txt"
    src.write_text(
        "".join(f"  Normal  Pulled  3s  kubelet  {_event('x', s, _line(s))['message']}\n" for s in SIZES)
    )
    res = CliRunner().invoke(main, ["images", "calibrate", "--events", str(src)])
    assert res.exit_code == 0, res.output
    assert (
        "decompressBytesPerSecond: 45000000\npullFixedSeconds: 1.0\nlayerLatencySeconds: 0.037\n"
        in res.output
    )


def test_cli_calibrate_errors(tmp_path: Path) -> None:
    src = tmp_path / "e.json"
    src.write_text(json.dumps([_event("x", 1_000, 1.0)]))
    res = CliRunner().invoke(main, ["images", "calibrate", "--events", str(src)])
    assert res.exit_code == 2
    assert (
        res.output.strip() == "error: need pulls of at least two different image sizes, got 1 usable pull(s)"
    )
    res = CliRunner().invoke(main, ["images", "calibrate"])
    assert res.exit_code == 2 and "give either --kubeconfig or --events" in res.output
    res = CliRunner().invoke(
        main, ["images", "calibrate", "--events", str(src), "--output", str(tmp_path / "no" / "k.yaml")]
    )
    assert res.exit_code == 2 and "directory" in res.output and "does not exist" in res.output


def test_cli_calibrate_reads_a_clusters_events(cluster: Any, tmp_path: Path) -> None:
    """``--kubeconfig``: the Pulled events of the cluster (here ``kubesched serve``), all namespaces."""
    for k, s in enumerate(SIZES):
        ev = _event(f"example.com/app{k}:1", s, _line(s), node=f"n{k}")
        ev["metadata"] = {"name": f"pulled-{k}", "namespace": cluster.namespace}
        ev["involvedObject"] = {"kind": "Pod", "namespace": cluster.namespace, "name": f"p{k}"}
        cluster.core.create_namespaced_event(cluster.namespace, ev)
    out = tmp_path / "kubelet.yaml"
    res = CliRunner().invoke(
        main, ["images", "calibrate", "--kubeconfig", cluster.kubeconfig, "--output", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert read_kubelet_settings(str(out)) == {
        "decompressBytesPerSecond": 45000000,
        "pullFixedSeconds": 1.0,
        "layerLatencySeconds": 0.037,
    }


@settings(max_examples=60, deadline=None)
@given(
    fixed=st.floats(0.0, 5.0),
    mbps=st.floats(1.0, 500.0),
    sizes=st.lists(st.integers(1_000_000, 20_000_000_000), min_size=3, max_size=12, unique=True),
)
def test_fit_recovers_any_exact_line(fixed: float, mbps: float, sizes: list[int]) -> None:
    """Pulls exactly on a line with a non-negative intercept give back that line."""
    bps = mbps * 1e6
    points = [PullPoint("x", s, None, fixed + LAYER + s / bps) for s in sizes]
    fit = calibrate(points, LAYER)
    assert fit.bytes_per_second == pytest.approx(bps, rel=1e-6)
    assert fit.fixed_seconds == pytest.approx(fixed, abs=1e-6 * max(1.0, max(sizes) / bps))
    assert fit.outliers == 0


@given(h=st.integers(0, 50), m=st.integers(0, 59), ms=st.integers(0, 59_999))
def test_go_duration_of_kubelet_forms(h: int, m: int, ms: int) -> None:
    """Durations as Go prints them (``1h2m3.456s``, ``2m0.5s``, ``890ms``) parse to their value."""
    seconds = ms / 1000
    text = (f"{h}h{m}m" if h else f"{m}m" if m else "") + (
        f"{seconds:g}s" if (h or m or ms >= 1000) else f"{ms}ms"
    )
    assert parse_go_duration(text) == pytest.approx(h * 3600 + m * 60 + seconds)
