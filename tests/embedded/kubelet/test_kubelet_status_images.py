"""``serve --kubelet``: images a node lists in ``status.images`` that the catalogue lacks are on the
node as one opaque layer of the reported ``sizeBytes``; pulls of them elsewhere use that size.

World: empty catalogue; node n1 reports nginx:1.25 (700 B, tag and digest names), n2 reports
nothing. Pull rate 100 B/s, 0.5 s per layer, no per-pull cost, container start 1.0 s, serialized
pulls, default size of an unknown image 300 B. T0 is a multiple of the 10 s status period; Event
timestamps have whole seconds (pulled at +7.5 shows +7).
"""

from __future__ import annotations

from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.live import LiveKubelets
from kubesched.embedded.kubelet.reported_images import opaque_image, status_image_sizes
from kubesched.embedded.store import MemoryCluster
from kubesched.images.catalogue import ImageCatalogue
from kubesched.testing import node_manifest

T0 = 1_700_000_000.0
DIGEST = "sha256:" + "0f" * 32
NGINX_NAMES = [f"docker.io/library/nginx@{DIGEST}", "docker.io/library/nginx:1.25"]


def _world() -> tuple[VirtualClock, MemoryCluster]:
    clock = VirtualClock(T0)
    mc = MemoryCluster(clock)
    mc.load([node_manifest("n1", images=[(NGINX_NAMES, 700)]), node_manifest("n2")])
    config = KubeletImageConfig(
        node_bandwidth_bps=1000.0,
        decompress_bps=100.0,
        layer_latency_seconds=0.5,
        container_start_seconds=1.0,
        pull_fixed_seconds=0.0,
    )
    LiveKubelets(mc, clock, ImageCatalogue([]), config, unknown_image_bytes=300).start()
    return clock, mc


def _run(mc: MemoryCluster, name: str, image: str, node: str, policy: str | None = None) -> None:
    container = {"name": "main", "image": image}
    if policy is not None:
        container["imagePullPolicy"] = policy
    pod = mc.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [container]},
        }
    )
    mc.bind("default", name, pod["metadata"]["uid"], node)


def _events(mc: MemoryCluster, name: str) -> list[tuple[float, str, str]]:
    from kubesched.api.timestamps import parse_rfc3339

    return [
        (parse_rfc3339(e["firstTimestamp"]) - T0, e["reason"], e["message"])
        for e in mc.events()
        if e.get("involvedObject", {}).get("name") == name
        and e.get("source", {}).get("component") == "kubelet"
    ]


def _status_images(mc: MemoryCluster, node: str) -> list[tuple[list[str], int]]:
    return [(e["names"], e["sizeBytes"]) for e in mc.get("Node", "", node)["status"].get("images") or []]


def test_an_image_in_node_status_is_present_and_its_size_is_used_elsewhere() -> None:
    clock, mc = _world()
    _run(mc, "on-n1", "nginx:1.25", "n1")
    _run(mc, "by-digest", f"nginx@{DIGEST}", "n1")
    _run(mc, "on-n2", "nginx:1.25", "n2")
    _run(mc, "unknown", "redis:7", "n2")
    clock.run_until(T0 + 30)
    assert _events(mc, "on-n1") == [
        (0.0, "Pulled", 'Container image "nginx:1.25" already present on machine'),
        (0.0, "Created", "Container created"),
        (1.0, "Started", "Container started"),
    ]
    assert _events(mc, "by-digest") == [
        (0.0, "Pulled", f'Container image "nginx@{DIGEST}" already present on machine'),
        (0.0, "Created", "Container created"),
        (1.0, "Started", "Container started"),
    ]
    # n2: nginx is pulled at the size n1 reported (0.5 s + 700 B / 100 B/s), then redis, unknown
    # to every node, at the default size behind it (serialized): 7.5 + 0.5 + 3
    assert _events(mc, "on-n2") == [
        (0.0, "Pulling", 'Pulling image "nginx:1.25"'),
        (
            7.0,
            "Pulled",
            'Successfully pulled image "nginx:1.25" in 7.5s (7.5s including waiting). Image size: 700 bytes.',
        ),
        (7.0, "Created", "Container created"),
        (8.0, "Started", "Container started"),
    ]
    assert _events(mc, "unknown") == [
        (0.0, "Pulling", 'Pulling image "redis:7"'),
        (
            11.0,
            "Pulled",
            'Successfully pulled image "redis:7" in 3.5s (11s including waiting). Image size: 300 bytes.',
        ),
        (11.0, "Created", "Container created"),
        (12.0, "Started", "Container started"),
    ]
    # n1 keeps listing nginx under both names and its size; n2 lists what it pulled (the same
    # nginx: its digest too)
    assert _status_images(mc, "n1") == [(NGINX_NAMES, 700)]
    assert _status_images(mc, "n2") == [
        (NGINX_NAMES, 700),
        (["docker.io/library/redis:7"], 300),
    ]


def test_image_pull_policies_as_the_kubelet_applies_them() -> None:
    clock, mc = _world()
    _run(mc, "always", "nginx:1.25", "n1", "Always")
    _run(mc, "if-not-present", "nginx:1.25", "n1", "IfNotPresent")
    _run(mc, "never", "nginx:1.25", "n1", "Never")
    _run(mc, "never-absent", "redis:7", "n1", "Never")
    clock.run_until(T0 + 30)
    # Always pulls a present image anyway: every layer is there, so the pull costs nothing here
    assert _events(mc, "always") == [
        (0.0, "Pulling", 'Pulling image "nginx:1.25"'),
        (
            0.0,
            "Pulled",
            'Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: 700 bytes.',
        ),
        (0.0, "Created", "Container created"),
        (1.0, "Started", "Container started"),
    ]
    for name in ("if-not-present", "never"):
        assert _events(mc, name) == [
            (0.0, "Pulled", 'Container image "nginx:1.25" already present on machine'),
            (0.0, "Created", "Container created"),
            (1.0, "Started", "Container started"),
        ]
    message = 'Container image "redis:7" is not present with pull policy of Never'
    assert _events(mc, "never-absent") == [
        (0.0, "ErrImageNeverPull", message),
        (0.0, "Failed", "Error: ErrImageNeverPull"),
    ]
    status = mc.get("Pod", "default", "never-absent")["status"]
    assert status["phase"] == "Pending"
    assert status["containerStatuses"][0]["state"] == {
        "waiting": {"reason": "ErrImageNeverPull", "message": message}
    }
    # nothing was pulled: n1 still lists only nginx
    assert _status_images(mc, "n1") == [(NGINX_NAMES, 700)]


def test_status_image_sizes_match_names_as_the_runtime_does() -> None:
    nodes = [
        node_manifest("n1", images=[(NGINX_NAMES, 700), (["bad name!"], 5), (["busybox"], 0)]),
        node_manifest("n2", images=[(["nginx:1.25", "redis"], 900)]),
    ]
    assert status_image_sizes(nodes) == {
        f"docker.io/library/nginx@{DIGEST}": 700,
        "docker.io/library/nginx:1.25": 700,
        "docker.io/library/redis:latest": 900,
    }


def test_opaque_image_keeps_the_reported_digest() -> None:
    image = opaque_image("nginx:1.25", 700, "test", digest_name=f"docker.io/library/nginx@{DIGEST}")
    assert (image.name, image.size_bytes, image.digest_name) == (
        "docker.io/library/nginx:1.25",
        700,
        f"docker.io/library/nginx@{DIGEST}",
    )
    assert [(layer.id, layer.size_bytes) for layer in image.layers] == [
        ("image:docker.io/library/nginx:1.25", 700)
    ]
    # a digest of another repository is not this image's
    assert opaque_image("nginx:1.25", 700, "test", digest_name=f"redis@{DIGEST}").digest_name is None
