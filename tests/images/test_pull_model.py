"""The pull model: calibrated defaults shared by the kubelet model and the image plugins, the
presets in examples/kubelet/, and ``kubesched images estimate``."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from image_plugin_support import CATALOGUE

from kubesched.cli.main import main
from kubesched.clock import VirtualClock
from kubesched.config.args import decode_args
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.model import KubeletModel
from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
from kubesched.errors import ConfigError
from kubesched.images.catalogue import parse_catalogue
from kubesched.images.pull_model import (
    DEFAULT_LAYER_SECONDS,
    DEFAULT_PULL_BYTES_PER_SECOND,
    DEFAULT_PULL_FIXED_SECONDS,
    PullModel,
)
from kubesched.plugins.imagecachewait.image_cache_wait import ImageCacheWaitArgs
from kubesched.plugins.imagepulltimesaved.image_pull_time_saved import ImagePullTimeSavedArgs

REPO = Path(__file__).resolve().parents[2]
PRESETS = REPO / "examples" / "kubelet"


def test_defaults_are_the_published_figures_and_shared() -> None:
    assert (DEFAULT_PULL_FIXED_SECONDS, DEFAULT_LAYER_SECONDS, DEFAULT_PULL_BYTES_PER_SECOND) == (
        1.0,
        0.037,
        45e6,
    )
    k = KubeletImageConfig()
    assert (k.pull_fixed_seconds, k.layer_latency_seconds, k.decompress_bps) == (1.0, 0.037, 45e6)
    assert k.pull_model() == PullModel()
    assert decode_args(ImagePullTimeSavedArgs, None, "a").default_bandwidth_bytes_per_second == 45e6
    assert decode_args(ImageCacheWaitArgs, None, "a").default_bandwidth_bytes_per_second == 45e6
    assert k.to_mapping()["pullFixedSeconds"] == 1.0
    with pytest.raises(ConfigError, match="kubelet.pullFixedSeconds: must be >= 0, got -1"):
        KubeletImageConfig.from_mapping({"pullFixedSeconds": -1})


def test_seconds() -> None:
    m = PullModel()
    # 1 s + 10 x 0.037 s + 5,650,343,354 B / 45e6 B/s
    assert m.seconds(5_650_343_354, 10) == pytest.approx(1.0 + 0.37 + 125.56318564444444)
    assert m.seconds(0) == pytest.approx(1.037)
    assert PullModel(0.0, 0.0, 100.0).seconds(250, 3) == 2.5
    with pytest.raises(ValueError, match="at least one layer"):
        m.seconds(1, 0)
    with pytest.raises(ValueError, match="bytes_per_second must be > 0"):
        PullModel(bytes_per_second=0)


def test_pull_model_throughput_is_the_slowest_of_the_kubelet_limits() -> None:
    k = KubeletImageConfig(node_bandwidth_bps=30e6, registry_bandwidth_bps=40e6)
    assert k.pull_model().bytes_per_second == 30e6
    assert KubeletImageConfig(registry_bandwidth_bps=20e6).pull_model().bytes_per_second == 20e6


@pytest.mark.parametrize("preset", [None, "tuned-node.yaml", "slow-registry.yaml"])
def test_kubelet_model_idle_pull_equals_the_estimate(preset: str | None) -> None:
    """The replay's kubelet and the estimator are one model: an idle node's pull of a 3-layer image
    (``app:1`` of the shared test catalogue: 30 MB + 2 GB + 100 MB) takes exactly ``PullModel.seconds``."""
    settings = read_kubelet_settings(str(PRESETS / preset) if preset else None)
    config = KubeletImageConfig.from_mapping(settings)
    clock = VirtualClock(0.0)
    model = KubeletModel(clock, parse_catalogue(yaml.safe_load(CATALOGUE)), config)
    record = model.pod_bound("n1", "default/p", ["app:1"], now=0.0)
    clock.run_until()
    assert record.pull_seconds == pytest.approx(config.pull_model().seconds(2_130_000_000, 3))


def test_presets() -> None:
    tuned = KubeletImageConfig.from_mapping(read_kubelet_settings(str(PRESETS / "tuned-node.yaml")))
    slow = KubeletImageConfig.from_mapping(read_kubelet_settings(str(PRESETS / "slow-registry.yaml")))
    assert (tuned.serialize_image_pulls, tuned.max_parallel_image_pulls, tuned.decompress_bps) == (
        False,
        3,
        190e6,
    )
    assert (slow.serialize_image_pulls, slow.decompress_bps, slow.pull_fixed_seconds) == (True, 15e6, 1.0)


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["images", "estimate", *args])
    return res.exit_code, res.output


def test_estimate_catalogue_image_table_and_json() -> None:
    # redis:latest in the shipped catalogue: 7 layers, 55,474,442 B -> 1 + 0.259 + 1.23277 s
    code, out = _cli("redis")
    assert code == 0, out
    assert out.splitlines() == [
        "IMAGE                                    BYTES  LAYERS   SECONDS  SOURCE",
        "docker.io/library/redis:latest        55474442       7     2.492  catalogue",
    ]
    code, out = _cli("docker.io/library/redis:latest", "-o", "json")
    assert json.loads(out) == {
        "image": "docker.io/library/redis:latest",
        "bytes": 55474442,
        "layers": 7,
        "seconds": 2.492,
        "source": "catalogue",
    }


def test_estimate_size_and_kubelet_file(tmp_path: Path) -> None:
    code, out = _cli("--size", "5650343354", "--layers", "10", "-o", "json")
    assert json.loads(out) == {
        "image": None,
        "bytes": 5650343354,
        "layers": 10,
        "seconds": 126.933,
        "source": "size",
    }
    code, out = _cli(
        "--size",
        "3000000000",
        "--layers",
        "5",
        "--kubelet",
        str(PRESETS / "slow-registry.yaml"),
        "-o",
        "json",
    )
    assert json.loads(out)["seconds"] == 201.185  # 1 + 0.185 + 200
    k = tmp_path / "k.yaml"
    k.write_text("decompressBytesPerSecond: 100\npullFixedSeconds: 0\nlayerLatencySeconds: 0\n")
    code, out = _cli("--size", "250", "--kubelet", str(k))
    assert code == 0 and out.splitlines()[1].split() == ["-", "250", "1", "2.500", "size"]


def test_estimate_unknown_image_falls_back_to_the_kubelet_models_opaque_layer(tmp_path: Path) -> None:
    """An image neither in the catalogue nor resolvable in its registry is estimated as the one
    100 MB layer ``serve --kubelet`` models it as, and the output says so."""
    from kubesched.embedded.kubelet.live import UNKNOWN_IMAGE_BYTES

    assert UNKNOWN_IMAGE_BYTES == 100_000_000
    code, out = _cli("no-such/image:1", "--no-registry", "-o", "json")
    assert code == 0, out
    # 1 s + 0.037 s + 100 MB / 45 MB/s
    assert json.loads(out) == {
        "image": "docker.io/no-such/image:1",
        "bytes": 100_000_000,
        "layers": 1,
        "seconds": 3.259,
        "source": "default",
        "note": "not in the image catalogue; registry lookup disabled. Modelled as one opaque layer of 100000000 "
        "bytes, as `kubesched serve --kubelet` models it; give --size SIZE [--layers N] for a better estimate",
    }
    # a registry that does not answer: the lookup error is named
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: connections are refused
    f = tmp_path / "registries.yaml"
    f.write_text(f"timeoutSeconds: 2\nregistries:\n  'r.test': {{endpoint: 'http://127.0.0.1:{port}'}}\n")
    code, out = _cli("r.test/team/app:1", "--registry-settings", str(f))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[:2] == [
        "IMAGE                       BYTES  LAYERS   SECONDS  SOURCE",
        "r.test/team/app:1       100000000       1     3.259  default",
    ]
    assert lines[2].startswith(
        "note: not in the image catalogue; registry lookup failed: image r.test/team/app:1: "
        f"GET http://127.0.0.1:{port}/v2/team/app/manifests/1: "
    )
    assert lines[2].endswith(
        ". Modelled as one opaque layer of 100000000 bytes, as `kubesched serve --kubelet` "
        "models it; give --size SIZE [--layers N] for a better estimate"
    )
    assert len(lines) == 3


def test_estimate_errors(tmp_path: Path) -> None:
    code, out = _cli("Bad//Name:1", "--no-registry")
    assert code == 2 and out.startswith("error: image 'Bad//Name:1': "), out
    code, out = _cli("redis", "--no-registry", "--registry-settings", str(PRESETS / "tuned-node.yaml"))
    assert code == 2 and "--no-registry and --registry-settings exclude each other" in out
    code, out = _cli()
    assert (code, out) == (2, "error: give either IMAGE (one or more) or --size SIZE\n")
    code, out = _cli("redis", "--size", "1")
    assert (code, out) == (2, "error: give either IMAGE (one or more) or --size SIZE\n")
    code, out = _cli("redis", "--layers", "2")
    assert code == 2 and "--layers goes with --size" in out
    k = tmp_path / "k.yaml"
    k.write_text("pullFixedSecond: 1\n")
    code, out = _cli("--size", "1", "--kubelet", str(k))
    assert code == 2 and out.startswith(f"error: {k}: kubelet.pullFixedSecond: unknown field")


def test_estimate_takes_several_images_and_sizes_as_quantities() -> None:
    code, out = _cli("busybox:latest", "alpine:latest", "--no-registry")
    assert code == 0, out
    assert out.splitlines()[0].split() == ["IMAGE", "BYTES", "LAYERS", "SECONDS", "SOURCE"]
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(r[0], r[4]) for r in rows] == [
        ("docker.io/library/busybox:latest", "catalogue"),
        ("docker.io/library/alpine:latest", "catalogue"),
    ]
    code, out = _cli("busybox:latest", "alpine:latest", "--no-registry", "-o", "json")
    assert [json.loads(line)["image"] for line in out.splitlines()] == [
        "docker.io/library/busybox:latest",
        "docker.io/library/alpine:latest",
    ]
    for size, expected in (
        ("5Gi", 5 * 2**30),
        ("5GiB", 5 * 2**30),
        ("5GB", 5_000_000_000),
        ("500M", 500_000_000),
        ("1048576", 1048576),
    ):
        code, out = _cli("--size", size, "-o", "json")
        assert (code, json.loads(out)["bytes"]) == (0, expected), size
    code, out = _cli("--size", "5XB")
    assert (code, out) == (
        2,
        "error: Invalid value for '--size': '5XB' is not a size: use a quantity such as 5Gi, "
        "500MB or 1048576\n",
    )
