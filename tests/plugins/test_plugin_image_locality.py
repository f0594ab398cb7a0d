"""ImageLocality (``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``): spread-scaled image
sizes, clamped to [23 MiB, 1000 MiB x containers]."""

from __future__ import annotations

from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.imagelocality.image_locality import ImageLocality, normalized_image_name
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, snapshot_of

MB = 1024 * 1024


def scores(nodes: list[Any], pod: Any) -> dict[str, int]:
    infos = [node_info(n) for n in nodes]
    snap = snapshot_of(infos)
    pl = ImageLocality(None, FakeHandle(snap))  # type: ignore[arg-type]
    out = {}
    for ni in snap.list():
        s, st = pl.score(CycleState(), pod, ni)
        assert st is None
        out[ni.name] = s
    return out


def test_normalized_image_name() -> None:
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("nginx:1.27") == "nginx:1.27"
    assert normalized_image_name("localhost:5000/app") == "localhost:5000/app:latest"
    assert normalized_image_name("localhost:5000/app:v1") == "localhost:5000/app:v1"
    assert normalized_image_name("docker.io/library/nginx") == "docker.io/library/nginx:latest"


def test_small_image_on_one_of_three_nodes_scores_zero() -> None:
    nodes = [make_node("n1", images=[(["app:v1"], 76 * MB)]), make_node("n2"), make_node("n3")]
    # 76 MiB * 1/3 = 25.3 MiB -> 100 * 2.3 / 977 = 0.24 -> 0
    assert scores(nodes, make_pod("p", image="app:v1")) == {"n1": 0, "n2": 0, "n3": 0}


def test_image_on_every_node() -> None:
    nodes = [make_node(f"n{i}", images=[(["app:v1"], 76 * MB)]) for i in (1, 2, 3)]
    # 100 * (76 - 23) // 977 = 5
    assert scores(nodes, make_pod("p", image="app:v1")) == {"n1": 5, "n2": 5, "n3": 5}


def test_large_image_and_container_count() -> None:
    nodes = [make_node("n1", images=[(["big:1"], 500 * MB)])]
    assert scores(nodes, make_pod("p", image="big:1")) == {"n1": 48}  # 100*477//977
    two = make_pod("q", images=["big:1", "other:2"])
    assert scores(nodes, two) == {"n1": 24}  # 100*477//1977


def test_clamped_at_max() -> None:
    nodes = [make_node("n1", images=[(["huge:1"], 1500 * MB)])]
    assert scores(nodes, make_pod("p", image="huge:1")) == {"n1": 100}


def test_nginx_matches_nginx_latest() -> None:
    nodes = [
        make_node("n1", images=[(["nginx:latest"], 500 * MB)]),
        make_node("n2", images=[(["docker.io/library/nginx:latest"], 500 * MB)]),
    ]
    # each image name is on 1 of 2 nodes: 250 MiB -> 100*227//977 = 23; no docker.io defaulting
    assert scores(nodes, make_pod("p", image="nginx")) == {"n1": 23, "n2": 0}
    assert scores(nodes, make_pod("p", image="nginx:latest")) == {"n1": 23, "n2": 0}
    assert scores(nodes, make_pod("p", image="docker.io/library/nginx")) == {"n1": 0, "n2": 23}


def test_init_containers_count() -> None:
    nodes = [make_node("n1", images=[(["init:1"], 300 * MB), (["app:1"], 300 * MB)])]
    pod = make_pod(
        "p",
        image="app:1",
        spec={
            "initContainers": [{"name": "i", "image": "init:1"}],
            "containers": [{"name": "c", "image": "app:1"}],
        },
    )
    # 600 MiB over 2 containers: 100 * 577 // 1977 = 29
    assert scores(nodes, pod) == {"n1": 29}
