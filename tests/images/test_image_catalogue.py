"""Image catalogue loading/validation, the shipped default catalogue, and ImageAssigner."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kubesched.errors import ConfigError
from kubesched.images.assign import ImageAssigner, zipf_cdf
from kubesched.images.catalogue import default_catalogue, load_catalogue, parse_catalogue

TRIXIE = "sha256:6b37362b3da78869050b894b799ad4df04f1f3b52774087db0d81151570244c8"


def _doc() -> dict[str, Any]:
    return {
        "version": 1,
        "images": [
            {
                "name": "a",
                "class": "cpu",
                "size_bytes": 500,
                "source": "test",
                "confidence": "derived",
                "layers": [
                    {"id": "base", "size_bytes": 400, "note": "shared"},
                    {"id": "a-top", "size_bytes": 100},
                ],
            },
            {
                "name": "example.com/b:v1",
                "class": "gpu",
                "source": "test",
                "confidence": "verified",
                "layers_derived": True,
                "layers": [
                    {"id": "base", "size_bytes": 400},
                    {"digest": "sha256:" + "c" * 64, "size_bytes": 200},
                ],
            },
        ],
    }


def test_parse_small_catalogue() -> None:
    cat = parse_catalogue(_doc(), "t.yaml")
    assert cat.names == ["docker.io/library/a:latest", "example.com/b:v1"]
    a = cat["a"]
    assert a.size_bytes == 500 and a.image_class == "cpu" and a.layers_derived is False
    assert [layer.id for layer in a.layers] == ["base", "a-top"]
    assert cat.get("docker.io/library/a") is a
    assert cat.get("missing") is None and cat.get("Bad Ref") is None
    assert "example.com/b:v1" in cat and "nope" not in cat
    assert cat.layers["base"].size_bytes == 400
    assert [i.name for i in cat.of_class("gpu")] == ["example.com/b:v1"]
    with pytest.raises(KeyError):
        cat["nope"]


def _error(mutate: Any) -> str:
    doc = _doc()
    mutate(doc)
    with pytest.raises(ConfigError) as info:
        parse_catalogue(doc, "t.yaml")
    return str(info.value)


def test_validation_errors_name_file_and_field() -> None:
    assert _error(lambda d: d["images"][0].update(name="Bad")) == (
        "t.yaml: images[0].name: invalid reference format: repository name (library/Bad) must be lowercase"
    )
    assert _error(lambda d: d["images"][0]["layers"][1].update(size_bytes=0)) == (
        "t.yaml: images[0].layers[1].size_bytes: must be a positive integer, got 0"
    )
    assert _error(lambda d: d["images"][0].update(size_bytes=501)) == (
        "t.yaml: images[0].size_bytes: is 501 but the layers add up to 500"
    )
    assert _error(lambda d: d["images"][1]["layers"][0].update(size_bytes=401)) == (
        "t.yaml: images[1].layers[0].size_bytes: layer base is 401 bytes here but 400 at images[0].layers[0]"
    )
    assert _error(lambda d: d["images"][1].update(name="docker.io/library/a:latest")) == (
        "t.yaml: images[1].name: duplicate image docker.io/library/a:latest (also images[0])"
    )
    assert _error(lambda d: d["images"][0].update(klass="x")) == (
        "t.yaml: images[0].klass: unknown field (allowed: class, confidence, layers, layers_derived, "
        "manifest_digest, name, note, size_bytes, source)"
    )
    assert _error(lambda d: d["images"][0].update({"class": "tpu"})) == (
        "t.yaml: images[0].class: must be one of gpu, cpu, got 'tpu'"
    )
    assert _error(lambda d: d["images"][0].update(confidence="maybe")) == (
        "t.yaml: images[0].confidence: must be one of verified, secondary, derived, got 'maybe'"
    )
    assert _error(lambda d: d["images"][0].pop("source")) == "t.yaml: images[0].source: required"
    assert _error(lambda d: d["images"][0]["layers"][0].update(digest="sha256:1")) == (
        "t.yaml: images[0].layers[0]: exactly one of digest or id is required"
    )
    assert _error(lambda d: d["images"][1]["layers"][1].update(digest="sha256:xyz")) == (
        "t.yaml: images[1].layers[1].digest: must be sha256:<64 lowercase hex>, got 'sha256:xyz'"
    )
    assert (
        _error(lambda d: d["images"][0].update(layers=[]))
        == "t.yaml: images[0].layers: must be a non-empty list"
    )
    assert _error(lambda d: d.update(version=2)) == "t.yaml: version: unsupported version 2 (supported: 1)"
    assert _error(lambda d: d.update(images=None)) == "t.yaml: images: must be a non-empty list"


def test_load_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "cat.yaml"
    bad.write_text("images: [\n")
    with pytest.raises(ConfigError, match=r"^.*cat\.yaml: invalid YAML"):
        load_catalogue(bad)
    with pytest.raises(ConfigError, match="cannot read: No such file or directory"):
        load_catalogue(tmp_path / "missing.yaml")
    import yaml

    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(copy.deepcopy(_doc())))
    assert len(load_catalogue(good)) == 2


def test_default_catalogue_real_layers() -> None:
    cat = load_catalogue(None)
    assert cat is default_catalogue()
    assert len(cat) == 32
    official = [
        "busybox:latest",
        "alpine:latest",
        "debian:bookworm-slim",
        "python:3.12-slim-bookworm",
        "debian:bookworm",
        "redis:latest",
        "nginx:latest",
        "node:lts-slim",
        "eclipse-temurin:21-jre",
        "postgres:latest",
        "golang:latest",
    ]
    totals = [
        2226327,
        3849738,
        28232590,
        45437565,
        48497091,
        55474442,
        63110572,
        80451137,
        121136054,
        162473560,
        312305560,
    ]
    layers = [1, 1, 1, 4, 1, 7, 7, 5, 6, 13, 7]
    for ref, total, n in zip(official, totals, layers, strict=True):
        image = cat[ref]
        assert (image.size_bytes, len(image.layers), image.confidence, image.layers_derived) == (
            total,
            n,
            "verified",
            False,
        ), ref
        assert all(layer.id.startswith("sha256:") for layer in image.layers)
    assert sum(len(cat[r].layers) for r in official) == 53
    # redis and postgres share the debian-trixie base layer
    assert cat["redis"].layers[0].id == TRIXIE == cat["postgres"].layers[0].id
    # python 3.10 and 3.12 slim share the bookworm-slim blob
    a, b = cat["python:3.10-slim-bookworm"].layers[0], cat["python:3.12-slim-bookworm"].layers[0]
    assert (
        (a.id, a.size_bytes)
        == (b.id, b.size_bytes)
        == ("sha256:a8ac7f6c67abc236e4c745052c404112b8fab6fe8ac3a329d1ef3b867ad67c71", 28232655)
    )


def test_default_catalogue_ml_images() -> None:
    cat = default_catalogue()
    sourced = {
        "pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime": 3_030_000_000,
        "pytorch/pytorch:2.7.1-cuda11.8-cudnn9-devel": 6_660_000_000,
        "nvidia/cuda:11.0-cudnn8-runtime-ubuntu18.04": 1_660_000_000,
        "nvidia/cuda:11.0-cudnn8-devel-ubuntu18.04": 2_990_000_000,
        "nvidia/cuda:9.0-cudnn7-runtime-ubuntu16.04": 1_148_000_000,
        "nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04": 2_584_000_000,
        "nvcr.io/nvidia/tritonserver:24.03-trtllm-python-py3": 8_380_000_000,
        "nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3": 18_480_000_000,
        "ghcr.io/huggingface/text-generation-inference:main-2025-01": 5_650_343_354,
        "ghcr.io/nvidia/jax-toolbox-internal:11074498143-jax-amd64": 6_493_040_000,
        "rayproject/ray-ml:2.30.0-gpu": 10 * 2**30,
        "pytorch/torchserve:latest-gpu": 3_420_000_000,
        "waggle/plugin-tensorflow:2.0.0-cuda": 1_510_000_000,
    }
    for ref, total in sourced.items():
        image = cat[ref]
        assert image.size_bytes == total, ref
        assert image.image_class == "gpu" and image.layers_derived
    runtime = {layer.id for layer in cat["nvidia/cuda:11.0-cudnn8-runtime-ubuntu18.04"].layers}
    devel = {layer.id for layer in cat["nvidia/cuda:11.0-cudnn8-devel-ubuntu18.04"].layers}
    assert runtime & devel == {"ubuntu-18.04-rootfs", "cuda-11.0-base-ubuntu18.04", "cuda-11.0-runtime-libs"}
    # the in-house app images sit on the pytorch runtime layers
    pt = [layer.id for layer in cat["pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime"].layers]
    assert [layer.id for layer in cat["registry.example.com/ml/bert-finetune:v3"].layers][:4] == pt
    assert all(i.image_class == "cpu" and i.size_bytes < 10**9 for i in cat.of_class("cpu"))


def test_zipf_cdf() -> None:
    cdf = zipf_cdf(3, 1.0)
    assert cdf == [1 / (1 + 0.5 + 1 / 3), (1 + 0.5) / (1 + 0.5 + 1 / 3), 1.0]


def test_assigner_deterministic_and_order_independent() -> None:
    cat = default_catalogue()
    names = [f"openb-pod-{i:04d}" for i in range(400)]
    a = ImageAssigner(cat, seed=7, mode="per-job")
    b = ImageAssigner(cat, seed=7, mode="per-job")
    forward = [a.image_for(n, True).name for n in names]
    backward = [b.image_for(n, True).name for n in reversed(names)][::-1]
    assert forward == backward
    assert ImageAssigner(cat, seed=8, mode="per-job").image_for(names[0], True) is not None
    gpu_names = {i.name for i in cat.of_class("gpu")}
    cpu_names = {i.name for i in cat.of_class("cpu")}
    assert set(forward) <= gpu_names
    assert {a.image_for(n, False).name for n in names} <= cpu_names
    # Zipf popularity: rank 1 is the most frequent image
    counts = Counter(forward)
    assert counts.most_common(1)[0][0] == cat.of_class("gpu")[0].name


def test_assigner_per_app_shares_images() -> None:
    cat = default_catalogue()
    a = ImageAssigner(cat, seed=3, mode="per-app", apps=5)
    names = [f"p{i}" for i in range(300)]
    apps = {n: a.app_of(n, True) for n in names}
    assert set(apps.values()) <= set(range(5))
    for n in names:
        same_app = [m for m in names if apps[m] == apps[n]]
        assert {a.image_for(m, True).name for m in same_app} == {a.image_for(n, True).name}


def test_assigner_explicit_pools_and_errors() -> None:
    cat = default_catalogue()
    a = ImageAssigner(
        cat, seed=1, gpu_images=["pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime"], cpu_images=["nginx"]
    )
    assert a.image_for("x", True).name == "docker.io/pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime"
    assert a.image_for("x", False).name == "docker.io/library/nginx:latest"
    with pytest.raises(
        ConfigError, match=r"imageAssignment.cpuImages\[1\]: image 'nope' is not in the catalogue"
    ):
        ImageAssigner(cat, cpu_images=["nginx", "nope"])
    with pytest.raises(ConfigError, match="imageAssignment.mode: must be per-job or per-app"):
        ImageAssigner(cat, mode="per-pod")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="imageAssignment.apps"):
        ImageAssigner(cat, apps=0)
    with pytest.raises(ConfigError, match="imageAssignment.zipfS"):
        ImageAssigner(cat, zipf_s=0)
