"""Decoding of Kubernetes protobuf request bodies (``kubesched.embedded.apiserver.protobuf``)."""

from __future__ import annotations

import pytest

from kubesched.embedded.apiserver.protobuf import MAGIC, ProtobufError, decode_object


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, value: bytes | int | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return MAGIC + _field(1, type_meta) + _field(2, raw) + _field(3, "") + _field(4, "")


def test_deployment_as_kubectl_create_sends_it() -> None:
    labels = _field(11, _field(1, "app") + _field(2, "web"))
    meta = _field(1, "web") + _field(2, "") + _field(3, "default") + _field(7, 0) + _field(8, b"") + labels
    container = (
        _field(1, "nginx")
        + _field(2, "nginx:1.25")
        + _field(8, _field(2, _field(1, "cpu") + _field(2, _field(1, "100m"))))
    )
    pod_spec = _field(2, container) + _field(3, "") + _field(11, 0)
    template = _field(1, labels) + _field(2, pod_spec)
    rolling = _field(1, _field(1, 1) + _field(3, "25%")) + _field(2, _field(2, 0))
    spec = (
        _field(1, 50)
        + _field(2, _field(1, _field(1, "app") + _field(2, "web")))
        + _field(3, template)
        + _field(4, _field(1, "RollingUpdate") + _field(2, rolling))
        + _field(5, 0)
        + _field(7, 0)
    )
    status = _field(1, 0)
    body = _envelope("apps/v1", "Deployment", _field(1, meta) + _field(2, spec) + _field(3, status))
    assert decode_object(body) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 50,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25", "resources": {"requests": {"cpu": "100m"}}}
                    ]
                },
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}},
            "minReadySeconds": 0,
        },
        "status": {"observedGeneration": 0},
    }


def test_times_negative_numbers_and_repeated_fields() -> None:
    meta = (
        _field(1, "n")
        + _field(8, _field(1, 1_700_000_000))
        + _field(14, "a")
        + _field(14, "b")
        + _field(10, -5)
    )
    body = _envelope("v1", "Namespace", _field(1, meta) + _field(2, _field(1, "kubernetes")))
    assert decode_object(body) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "n",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "finalizers": ["a", "b"],
            "deletionGracePeriodSeconds": -5,
        },
        "spec": {"finalizers": ["kubernetes"]},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"kind": "Pod"}', "the body does not start with the Kubernetes protobuf prefix"),
        (MAGIC + b"\x0a\x05ab", "truncated length-delimited field"),
        (_envelope("example.com/v1", "Widget", b""), "no protobuf decoding for Widget in example.com/v1"),
    ],
)
def test_malformed_bodies_are_refused(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=f"^{message}$"):
        decode_object(body)
