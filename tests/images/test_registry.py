"""Image layers from a real registry (``docker-registry``, started per module) over the OCI
distribution API: indexes, Docker manifest lists, platform choice, errors, the bearer-token flow,
and background lookups feeding the layer index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from registry_support import PASSWORD, USER, Registry, start_registry

from kubesched.errors import ConfigError
from kubesched.images.layer_index import ImageLayerIndex
from kubesched.images.registry import RegistryClient, RegistryError
from kubesched.images.registry_layers import RegistryLayerSource
from kubesched.images.registry_settings import RegistryHostSettings, RegistrySettings, load_registry_settings
from kubesched.testing import make_node, make_pod, node_info

BASE = b"b" * 3000
APP1 = b"1" * 5000
APP2 = b"2" * 7000
ARM = b"a" * 4000


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    yield from start_registry(tmp_path_factory.mktemp("registry"))


@pytest.fixture(scope="module")
def images(registry: Registry) -> dict[str, Any]:
    """team/app:1 (OCI index: amd64 base+app1, arm64 base+arm), team/app:2 (Docker manifest list,
    amd64 base+app2), team/plain:1 (a Docker v2 manifest, no index)."""
    amd, amd_size, amd_layers = registry.push_image("team/app", [BASE, APP1])
    arm, arm_size, arm_layers = registry.push_image("team/app", [BASE, ARM], arch="arm64")
    index1 = registry.push_index("team/app", "1", [(amd, amd_size, "amd64"), (arm, arm_size, "arm64")])
    amd2, amd2_size, amd2_layers = registry.push_image("team/app", [BASE, APP2], docker=True)
    index2 = registry.push_index("team/app", "2", [(amd2, amd2_size, "amd64")], docker=True)
    plain, _, plain_layers = registry.push_image("team/plain", [APP1], ref="1", docker=True)
    return {
        "index1": index1,
        "amd": amd,
        "amd_layers": amd_layers,
        "arm": arm,
        "arm_layers": arm_layers,
        "index2": index2,
        "amd2": amd2,
        "amd2_layers": amd2_layers,
        "plain": plain,
        "plain_layers": plain_layers,
    }


def _client(registry: Registry, **kw: Any) -> RegistryClient:
    return RegistryClient(
        RegistrySettings(registries={registry.host: RegistryHostSettings(insecure=True)}, **kw)
    )


def test_oci_index_to_platform_manifest(registry: Registry, images: dict[str, Any]) -> None:
    client = _client(registry)
    got = client.image_layers(f"{registry.host}/team/app:1")
    assert (got.digest, got.manifest_digest) == (images["index1"], images["amd"])
    assert got.media_type == "application/vnd.oci.image.manifest.v1+json"
    assert got.layers == tuple(images["amd_layers"]) and [s for _, s in got.layers] == [3000, 5000]
    assert got.size_bytes == 8000
    image = got.to_catalogue_image()
    assert image.name == f"{registry.host}/team/app:1"
    assert [(layer.id, layer.size_bytes) for layer in image.unique_layers] == images["amd_layers"]
    assert image.digest_name == f"{registry.host}/team/app@{images['index1']}"
    arm = _client(registry, platform="linux/arm64").image_layers(f"{registry.host}/team/app:1")
    assert arm.manifest_digest == images["arm"] and [s for _, s in arm.layers] == [3000, 4000]
    client.close()


def test_docker_manifest_list_plain_manifest_and_digest_refs(
    registry: Registry, images: dict[str, Any]
) -> None:
    client = _client(registry)
    got = client.image_layers(f"{registry.host}/team/app:2")
    assert (got.digest, got.manifest_digest) == (images["index2"], images["amd2"])
    assert got.media_type == "application/vnd.docker.distribution.manifest.v2+json"
    assert [s for _, s in got.layers] == [3000, 7000]
    assert got.layers[0] == images["amd_layers"][0]  # the shared base layer: same digest
    plain = client.image_layers(f"{registry.host}/team/plain:1")
    assert plain.digest == plain.manifest_digest == images["plain"] and plain.layers == tuple(
        images["plain_layers"]
    )
    by_digest = client.image_layers(f"{registry.host}/team/app@{images['amd']}")
    assert by_digest.digest == images["amd"] and by_digest.layers == tuple(images["amd_layers"])
    client.close()


def test_errors(registry: Registry, images: dict[str, Any]) -> None:
    client = _client(registry)
    with pytest.raises(RegistryError) as e:
        client.image_layers(f"{registry.host}/team/app:nope")
    assert str(e.value) == (
        f"image {registry.host}/team/app:nope: GET {registry.url}/v2/team/app/manifests/nope: "
        "HTTP 404: MANIFEST_UNKNOWN manifest unknown"
    )
    with pytest.raises(RegistryError) as e:
        _client(registry, platform="linux/s390x").image_layers(f"{registry.host}/team/app:1")
    assert str(e.value) == (
        f"image {registry.host}/team/app:1: no manifest for platform linux/s390x "
        "(index has linux/amd64, linux/arm64)"
    )
    with pytest.raises(RegistryError) as e:
        # not listed as insecure: TLS to a plain-HTTP registry fails; the message names the image and URL
        RegistryClient().image_layers(f"{registry.host}/team/app:1")
    assert str(e.value).startswith(
        f"image {registry.host}/team/app:1: GET https://{registry.host}/v2/team/app/"
        "manifests/1: [SSL: WRONG_VERSION_NUMBER]"
    )
    client.close()


def _mock(handler: Any) -> RegistryClient:
    settings = RegistrySettings(registries={"r.test": RegistryHostSettings(insecure=True)})
    return RegistryClient(settings, transport=httpx.MockTransport(handler))


def test_digest_mismatch_and_unsupported_media_type() -> None:
    body = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "layers": [{"digest": "sha256:" + "a" * 64, "size": 1}],
        }
    ).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/schema1"):
            return httpx.Response(
                200,
                json={
                    "schemaVersion": 1,
                    "mediaType": "application/vnd.docker.distribution.manifest.v1+json",
                },
            )
        return httpx.Response(200, content=body)

    client = _mock(handler)
    wanted = "sha256:" + "b" * 64
    with pytest.raises(RegistryError) as e:
        client.image_layers(f"r.test/x@{wanted}")
    assert str(e.value).startswith(f"image r.test/x@{wanted}: manifest {wanted} has digest sha256:")
    with pytest.raises(RegistryError) as e:
        client.image_layers("r.test/x:schema1")
    assert str(e.value) == (
        "image r.test/x:schema1: unsupported manifest media type "
        "'application/vnd.docker.distribution.manifest.v1+json'"
    )


@pytest.fixture(scope="module")
def token_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    yield from start_registry(tmp_path_factory.mktemp("token-registry"), token_auth=True)


def test_bearer_token_flow(token_registry: Registry, tmp_path: Path) -> None:
    reg = token_registry
    amd, _, layers = reg.push_image("secure/app", [BASE, APP1], ref="1")
    assert reg.tokens is not None
    # anonymous: the registry challenges, the token service refuses without credentials
    with pytest.raises(RegistryError, match=r"token service http://127\.0\.0\.1:\d+/token answered HTTP 401"):
        _client(reg).image_layers(f"{reg.host}/secure/app:1")
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    settings = RegistrySettings(
        registries={reg.host: RegistryHostSettings(insecure=True, username=USER, password_file=str(pw))}
    )
    client = RegistryClient(settings)
    before = len(reg.tokens.requests)
    got = client.image_layers(f"{reg.host}/secure/app:1")
    assert got.digest == amd and got.layers == tuple(layers)
    first = reg.tokens.requests[before]
    assert first["query"] == {"service": "kubesched-test-registry", "scope": "repository:secure/app:pull"}
    # the token is cached for the repository: a second lookup asks the token service nothing
    asked = len(reg.tokens.requests)
    assert client.image_layers(f"{reg.host}/secure/app@{amd}").digest == amd
    assert len(reg.tokens.requests) == asked
    client.close()


def test_background_lookups_feed_the_layer_index(registry: Registry, images: dict[str, Any]) -> None:
    """First sighting: opaque (no network in the cycle); once the lookup is done, the pod's
    team/app:2 shares its base layer with team/app:1 listed in the node's status."""
    source = RegistryLayerSource(_client(registry))
    index = ImageLayerIndex(None, source=source)
    node = make_node("n1", images=[([f"{registry.host}/team/app:1"], 8000)])
    ni = node_info(node)
    pod = make_pod("p", image=f"{registry.host}/team/app:2")
    assert index.sync() is False
    assert index.saved_bytes(pod, ni) == 0  # opaque: team/app:2 is not on the node
    assert source.wait_idle(10.0)
    assert source.lookups == 2 and source.failures == 0
    assert index.sync() is True
    assert index.saved_bytes(pod, ni) == 3000  # the shared base layer
    assert index.missing_bytes(pod, ni) == 7000
    assert index.sync() is False
    source.close()


def test_failed_lookup_is_negative_cached_and_logged_once(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [0.0]
    source = RegistryLayerSource(_client(registry, error_ttl_seconds=60.0), clock=lambda: clock[0])
    ref = f"{registry.host}/team/missing:1"
    assert source.lookup(ref) is None and source.wait_idle(10.0)
    assert source.lookup(ref) is None and source.wait_idle(10.0)
    assert source.lookups == 1  # within the error TTL: not asked again
    clock[0] = 61.0
    assert source.lookup(ref) is None and source.wait_idle(10.0)
    assert source.lookups == 2 and source.generation == 0
    assert "MANIFEST_UNKNOWN" in source.error(ref)
    assert [r.message for r in caplog.records].count(
        f"registry lookup failed (the image counts as one opaque layer): {source.error(ref)}"
    ) == 1
    source.close()


def test_settings_file(tmp_path: Path) -> None:
    f = tmp_path / "registries.yaml"
    f.write_text(
        "platform: linux/arm64/v8\nttlSeconds: 60\nregistries:\n"
        "  r.test:5000: {insecure: true}\n"
        "  corp.test: {endpoint: 'https://mirror.test:8443/', caFile: /ca.pem, username: u, password: p}\n"
    )
    s = load_registry_settings(str(f))
    assert s.platform_parts == ("linux", "arm64", "v8") and s.ttl_seconds == 60.0
    assert s.host("r.test:5000").base_url("r.test:5000") == "http://r.test:5000"
    assert s.host("corp.test").base_url("corp.test") == "https://mirror.test:8443"
    assert s.host("corp.test").credentials() == ("u", "p")
    assert s.host("other.test").base_url("other.test") == "https://other.test"
    f.write_text("registries:\n  r.test: {insecur: true}\n")
    with pytest.raises(ConfigError) as e:
        load_registry_settings(str(f))
    assert str(e.value).startswith(f"{f}: registries.r.test.insecur:")
    f.write_text("platform: linux\n")
    with pytest.raises(ConfigError, match="platform: .*must be os/architecture"):
        load_registry_settings(str(f))


def test_image_pull_time_saved_scores_registry_layers_in_later_cycles(
    registry: Registry, images: dict[str, Any], tmp_path: Path
) -> None:
    from kubesched.clock import VirtualClock
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.status import Code
    from kubesched.images.registry_layers import close_shared_registry_sources
    from kubesched.plugins.imagepulltimesaved.image_pull_time_saved import (
        ImagePullTimeSaved,
        ImagePullTimeSavedArgs,
    )
    from kubesched.testing import FakeHandle, snapshot_of

    f = tmp_path / "registries.yaml"
    f.write_text(f"registries:\n  '{registry.host}': {{insecure: true}}\n")
    infos = [
        node_info(make_node("n1", images=[([f"{registry.host}/team/app:1"], 8000)])),
        node_info(make_node("n2")),
    ]
    handle = FakeHandle(snapshot_of(infos))
    handle.clock = VirtualClock(1000.0)  # type: ignore[assignment]
    args = ImagePullTimeSavedArgs(registry_settings_path=str(f), default_bandwidth_bytes_per_second=1000.0)
    pl = ImagePullTimeSaved(args, handle)  # type: ignore[arg-type]
    pod = make_pod("p", image=f"{registry.host}/team/app:2")
    try:
        # first sighting: both images opaque, the pod's is on no node: nothing to score
        assert pl.pre_score(CycleState(), pod, infos).code == Code.Skip  # type: ignore[union-attr]
        assert pl.index.source is not None and pl.index.source.wait_idle(10.0)  # type: ignore[attr-defined]
        state = CycleState()
        assert pl.pre_score(state, pod, infos) is None
        # n1 holds the 3,000-byte base layer: 3 s saved at 1,000 B/s, plus the default 0.037 s per
        # layer for that layer (the pod's own image is not on n1, so its pull is still made)
        assert [pl.score(state, pod, ni)[0] for ni in infos] == [3037, 0]
    finally:
        close_shared_registry_sources()


def test_cli_layers_and_estimate_from_the_registry(
    registry: Registry, images: dict[str, Any], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    f = tmp_path / "registries.yaml"
    f.write_text(f"registries:\n  '{registry.host}': {{insecure: true}}\n")
    ref = f"{registry.host}/team/app:1"
    res = CliRunner().invoke(main, ["images", "layers", ref, "--registry-settings", str(f), "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == {
        "image": ref,
        "digest": images["index1"],
        "manifestDigest": images["amd"],
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "bytes": 8000,
        "layers": [{"digest": d, "size": n} for d, n in images["amd_layers"]],
    }
    res = CliRunner().invoke(main, ["images", "estimate", ref, "--registry-settings", str(f), "-o", "json"])
    # 1 s + 2 x 0.037 s + 8,000 B / 45 MB/s
    assert json.loads(res.output) == {
        "image": ref,
        "bytes": 8000,
        "layers": 2,
        "seconds": 1.074,
        "source": "registry",
    }
    res = CliRunner().invoke(main, ["images", "estimate", ref, "--registry-settings", str(f)])
    assert res.output.splitlines() == [
        f"IMAGE{' ' * (len(ref) - 5)}           BYTES  LAYERS   SECONDS  SOURCE",
        f"{ref}            8000       2     1.074  registry",
    ]
    # not in the registry either: the kubelet model's opaque layer, and the registry's answer in the note
    res = CliRunner().invoke(
        main,
        ["images", "estimate", f"{registry.host}/team/gone:1", "--registry-settings", str(f), "-o", "json"],
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert (got["bytes"], got["layers"], got["seconds"], got["source"]) == (100_000_000, 1, 3.259, "default")
    assert got["note"].startswith(
        f"not in the image catalogue; registry lookup failed: image {registry.host}/team/"
        f"gone:1: GET {registry.url}/v2/team/gone/manifests/1: HTTP 404: MANIFEST_UNKNOWN"
    )
    res = CliRunner().invoke(
        main, ["images", "layers", f"{registry.host}/team/app:nope", "--registry-settings", str(f)]
    )
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"error: image {ref[:-2]}:nope: GET {registry.url}/v2/team/app/manifests/nope: "
        "HTTP 404: MANIFEST_UNKNOWN manifest unknown"
    )


@pytest.fixture(scope="module")
def tls_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path]]:
    tmp = tmp_path_factory.mktemp("tls-registry")
    for reg in start_registry(tmp, tls=True):
        yield reg, tmp / "ca.pem"


def test_per_registry_tls_settings(tls_registry: tuple[Registry, Path]) -> None:
    reg, ca = tls_registry
    digest, _, layers = reg.push_image("tls/app", [APP2], ref="1")
    ref = f"{reg.host}/tls/app:1"
    with pytest.raises(RegistryError, match=r"CERTIFICATE_VERIFY_FAILED"):
        RegistryClient().image_layers(ref)  # the test CA is not a system CA
    with_ca = RegistryClient(RegistrySettings(registries={reg.host: RegistryHostSettings(ca_file=str(ca))}))
    assert with_ca.image_layers(ref).layers == tuple(layers)
    no_verify = RegistryClient(
        RegistrySettings(registries={reg.host: RegistryHostSettings(insecure_skip_verify=True)})
    )
    assert no_verify.image_layers(ref).digest == digest
    with_ca.close()
    no_verify.close()


def test_cli_calibrate_takes_layer_counts_from_the_registry(
    registry: Registry, images: dict[str, Any], tmp_path: Path
) -> None:
    """Pulls of registry images: 2-layer team/app:1 and team/app:2, 1-layer team/plain:1; the
    per-layer cost (37 ms) is subtracted per layer the registry reports, so the fit is exact."""
    from click.testing import CliRunner

    from kubesched.cli.main import main

    f = tmp_path / "registries.yaml"
    f.write_text(f"registries:\n  '{registry.host}': {{insecure: true}}\n")
    events = []
    for ref, layers, size in (
        (f"{registry.host}/team/app:1", 2, 45_000_000),
        (f"{registry.host}/team/app:2", 2, 450_000_000),
        (f"{registry.host}/team/plain:1", 1, 900_000_000),
        (f"{registry.host}/team/missing:1", 1, 2_250_000_000),
    ):
        seconds = 1.0 + 0.037 * layers + size / 45e6
        events.append(
            {
                "reason": "Pulled",
                "message": f'Successfully pulled image "{ref}" in {seconds:.3f}s '
                f"({seconds:.3f}s including waiting). Image size: {size} bytes.",
            }
        )
    src = tmp_path / "events.json"
    src.write_text(json.dumps({"items": events}))
    out = tmp_path / "kubelet.yaml"
    res = CliRunner().invoke(
        main,
        ["images", "calibrate", "--events", str(src), "--registry-settings", str(f), "--output", str(out)],
    )
    assert res.exit_code == 0, res.output
    assert f"warning: layers of {registry.host}/team/missing:1 unknown: " in res.output
    text = out.read_text()
    assert "# from 4 pulls (3 with known layer counts, 0 outliers, 0 skipped without a size):" in text
    assert "decompressBytesPerSecond: 45000000\npullFixedSeconds: 1.0\n" in text


def test_prepull_planner_takes_layers_from_the_registry(registry: Registry, images: dict[str, Any]) -> None:
    """``kubesched run --prepull``'s controller with the registry lookups the plugins use: team/app:2
    (not in the catalogue) is pre-pulled on ``sharing``, which lists team/app:1 and so holds their
    common base layer, rather than on ``big`` with more room (1 pending 3-cpu pod: demand 2 pods)."""
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry

    from kubesched.images.catalogue import default_catalogue
    from kubesched.prepull.controller import PrePullController
    from kubesched.prepull.image_facts import ImageFacts
    from kubesched.prepull.metrics import PrePullMetrics

    app1, app2 = f"{registry.host}/team/app:1", f"{registry.host}/team/app:2"
    nodes = [
        node_info(make_node("sharing", cpu="16", images=[([app1], 8000)])),
        node_info(make_node("big", cpu="32")),
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "d", "uid": "ua"},
        "spec": {
            "schedulerName": "s",
            "containers": [{"name": "c", "image": app2, "resources": {"requests": {"cpu": "3"}}}],
        },
    }
    started: list[tuple[str, tuple[str, ...]]] = []
    mechanism = SimpleNamespace(
        name="fake",
        pulls=lambda: [],
        delete=lambda pull: None,
        start=lambda node, uid, imgs: started.append((node, tuple(imgs))) or "p",
    )
    source = RegistryLayerSource(_client(registry))
    controller = PrePullController(
        SimpleNamespace(create_event=lambda ev: None),  # type: ignore[arg-type]
        SimpleNamespace(
            objects=lambda kind, ns=None: [pod] if kind == "Pod" else [],  # the scheduler's surface
            node_info_copies=lambda: list(nodes),
            add_event_handlers=lambda kind, h: None,
            profile_name_for=lambda p: p.scheduler_name if p.scheduler_name == "s" else None,
        ),
        ImageFacts(default_catalogue(), source, wait_seconds=10.0),
        SimpleNamespace(now=lambda: 1000.0),  # type: ignore[arg-type]
        metrics=PrePullMetrics(CollectorRegistry()),
        mechanism=mechanism,
    )  # type: ignore[arg-type]
    try:
        controller._pod_add(pod)
        assert controller.tick() == [("sharing", [app2])]
        assert started == [("sharing", (app2,))]
        assert source.lookups == 2 and source.failures == 0
        # from the registry's layers: the 3,000-byte base is there, app:2's own 7,000 bytes are coming
        assert controller.view.layer_bytes("sharing", app2) == (3000, 7000)
    finally:
        source.close()


def test_trickling_registry_ends_at_the_timeout_and_large_manifest_is_refused() -> None:
    import time

    from extender_support import http_answer, trickling_server

    with trickling_server(http_answer(b"{}"), interval=0.2) as srv:
        host = srv.url.removeprefix("http://")
        client = RegistryClient(
            RegistrySettings(timeout_seconds=1.0, registries={host: RegistryHostSettings(insecure=True)})
        )
        start = time.monotonic()
        with pytest.raises(RegistryError) as e:
            client.image_layers(f"{host}/team/app:1")
        took = time.monotonic() - start
        client.close()
    assert str(e.value) == (
        f"image {host}/team/app:1: GET {srv.url}/v2/team/app/manifests/1: "
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    )
    assert 1.0 <= took < 1.6
    big = b"{" + b" " * (4 * 1024 * 1024) + b"}"
    with trickling_server(http_answer(big), trickle_from=1 << 30) as srv:
        host = srv.url.removeprefix("http://")
        client = RegistryClient(RegistrySettings(registries={host: RegistryHostSettings(insecure=True)}))
        with pytest.raises(RegistryError) as e:
            client.image_layers(f"{host}/team/app:1")
        client.close()
    assert str(e.value) == f"image {host}/team/app:1: manifest 1 is larger than 4 MiB"


def test_docker_hub_api_host() -> None:
    """``docker.io`` references are fetched from ``registry-1.docker.io``; a configured endpoint
    (a mirror) replaces it; other registries are asked under their own name."""
    from kubesched.images.registry_settings import default_api_host

    assert [
        default_api_host(h) for h in ("docker.io", "registry-1.docker.io", "quay.io", "127.0.0.1:5000")
    ] == ["registry-1.docker.io", "registry-1.docker.io", "quay.io", "127.0.0.1:5000"]
    assert RegistryHostSettings().base_url("docker.io") == "https://registry-1.docker.io"
    assert RegistryHostSettings(insecure=True).base_url("docker.io") == "http://registry-1.docker.io"
    assert (
        RegistryHostSettings(endpoint="https://mirror.corp/").base_url("docker.io") == "https://mirror.corp"
    )
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(
            404, json={"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}
        )

    client = RegistryClient(transport=httpx.MockTransport(handler))
    for ref in (
        "nginx:1.25",
        "docker.io/nginx:1.25",
        "index.docker.io/library/nginx:1.25",
        "user/app",
        "quay.io/a/b:1",
    ):
        with pytest.raises(RegistryError, match="HTTP 404: MANIFEST_UNKNOWN manifest unknown"):
            client.image_layers(ref)
    assert asked == ["https://registry-1.docker.io/v2/library/nginx/manifests/1.25"] * 3 + [
        "https://registry-1.docker.io/v2/user/app/manifests/latest",
        "https://quay.io/v2/a/b/manifests/1",
    ]
    client.close()


@pytest.fixture(scope="module")
def hub_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    yield from start_registry(tmp_path_factory.mktemp("hub-registry"), token_auth=True, anonymous_tokens=True)


def test_docker_hub_references_against_a_registry(hub_registry: Registry) -> None:
    """Docker Hub as a runtime reaches it: ``nginx:1.25`` -> ``registry-1.docker.io/v2/library/nginx``
    (here routed to the local registry), anonymous token from the Bearer challenge's realm."""
    from registry_support import RoutedTransport

    reg = hub_registry
    assert reg.tokens is not None
    nginx, _, nginx_layers = reg.push_image("library/nginx", [BASE, APP1], ref="1.25")
    app, _, app_layers = reg.push_image("user/app", [BASE, APP2], ref="latest")
    transport = RoutedTransport("registry-1.docker.io", reg)
    client = RegistryClient(transport=transport)
    before = len(reg.tokens.requests)
    got = client.image_layers("nginx:1.25")
    assert (got.ref.canonical, got.digest, got.layers) == (
        "docker.io/library/nginx:1.25",
        nginx,
        tuple(nginx_layers),
    )
    assert client.image_layers("index.docker.io/library/nginx:1.25").digest == nginx
    got = client.image_layers("user/app")
    assert (got.ref.canonical, got.digest, got.layers) == (
        "docker.io/user/app:latest",
        app,
        tuple(app_layers),
    )
    # each repository asked once anonymously for a pull token; the 401 challenges were answered
    assert [(r["query"], r["auth"]) for r in reg.tokens.requests[before:]] == [
        ({"service": "kubesched-test-registry", "scope": "repository:library/nginx:pull"}, ""),
        ({"service": "kubesched-test-registry", "scope": "repository:user/app:pull"}, ""),
    ]
    assert (
        transport.urls
        == ["https://registry-1.docker.io/v2/library/nginx/manifests/1.25"] * 3
        + ["https://registry-1.docker.io/v2/user/app/manifests/latest"] * 2
    )
    client.close()
