"""``serve --kubelet``'s kubelets (:class:`kubesched.embedded.kubelet.live.LiveKubelets`) on an embedded
cluster and a virtual clock, against hand-computed timelines.

World: layers ``base`` 400 B (shared), ``a-top`` 100 B, ``b-top`` 200 B; images a = [base, a-top]
(500 B), b = [base, b-top] (600 B). Pull rate 100 B/s, 0.5 s per layer, no per-pull cost, container start 1.0 s,
serialized pulls. T0 is a multiple of the 10 s node status period.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.timestamps import rfc3339
from kubesched.clock import VirtualClock
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.events import go_duration
from kubesched.embedded.kubelet.live import RUN_SECONDS_ANNOTATION, LiveKubelets, run_seconds_text
from kubesched.embedded.store import MemoryCluster
from kubesched.images.catalogue import ImageCatalogue, parse_catalogue
from kubesched.testing import node_manifest

T0 = 1_700_000_000.0


def _catalogue() -> ImageCatalogue:
    def image(name: str, layers: list[tuple[str, int]]) -> dict[str, Any]:
        return {
            "name": name,
            "class": "cpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": i, "size_bytes": s} for i, s in layers],
        }

    return parse_catalogue(
        {
            "images": [
                image("a", [("base", 400), ("a-top", 100)]),
                image("b", [("base", 400), ("b-top", 200)]),
            ]
        },
        "test",
    )


def _pod(name: str, image: str, run_seconds: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if run_seconds is not None:
        meta["annotations"] = {RUN_SECONDS_ANNOTATION: run_seconds}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def _world() -> tuple[VirtualClock, MemoryCluster, LiveKubelets]:
    clock = VirtualClock(T0)
    mc = MemoryCluster(clock)
    mc.load([node_manifest("n1")])
    config = KubeletImageConfig(
        node_bandwidth_bps=1000.0,
        decompress_bps=100.0,
        layer_latency_seconds=0.5,
        container_start_seconds=1.0,
        pull_fixed_seconds=0.0,
    )
    kl = LiveKubelets(mc, clock, _catalogue(), config)
    kl.start()
    return clock, mc, kl


def _bind(mc: MemoryCluster, name: str) -> None:
    pod = mc.get("Pod", "default", name)
    mc.bind("default", name, pod["metadata"]["uid"], "n1")


def _events(mc: MemoryCluster, name: str) -> list[tuple[float, str, str]]:
    from kubesched.api.timestamps import parse_rfc3339

    return [
        (parse_rfc3339(e["firstTimestamp"]) - T0, e["reason"], e["message"])
        for e in mc.events()
        if e.get("involvedObject", {}).get("name") == name
        and e.get("source", {}).get("component") == "kubelet"
    ]


def test_go_duration() -> None:
    assert [go_duration(s) for s in (0, 0.0005, 0.313, 1.0, 1.594, 7.5, 113.8, 7205.0)] == [
        "0s",
        "0s",
        "313ms",
        "1s",
        "1.594s",
        "7.5s",
        "1m53.8s",
        "2h0m5s",
    ]


def test_pods_pull_start_run_and_succeed() -> None:
    clock, mc, _ = _world()
    mc.create(_pod("p1", "a", run_seconds="30"))
    mc.create(_pod("p2", "b"))
    _bind(mc, "p1")
    clock.run_until(T0 + 1)
    _bind(mc, "p2")
    clock.run_until(T0 + 6.5)
    p1 = mc.get("Pod", "default", "p1")
    # p1 pulled 2 layers (1.0 s) + 500 B at 100 B/s: ready at +6, created, started at +7
    assert p1["status"]["phase"] == "Pending"
    assert p1["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    clock.run_until(T0 + 12)
    assert _events(mc, "p1") == [
        (0.0, "Pulling", 'Pulling image "a"'),
        (6.0, "Pulled", 'Successfully pulled image "a" in 6s (6s including waiting). Image size: 500 bytes.'),
        (6.0, "Created", "Container created"),
        (7.0, "Started", "Container started"),
    ]
    # p2 waited behind p1's pull (serialized) until +6, then pulled only b-top: 0.5 s + 2 s
    assert _events(mc, "p2") == [
        (1.0, "Pulling", 'Pulling image "b"'),
        (
            8.0,
            "Pulled",
            'Successfully pulled image "b" in 2.5s (7.5s including waiting). Image size: 600 bytes.',
        ),
        (8.0, "Created", "Container created"),
        (9.0, "Started", "Container started"),
    ]
    status = mc.get("Pod", "default", "p1")["status"]
    assert status["phase"] == "Running"
    assert status["startTime"] == rfc3339(T0)
    assert status["containerStatuses"][0]["state"] == {"running": {"startedAt": rfc3339(T0 + 7)}}
    assert status["containerStatuses"][0]["ready"] is True
    conds = {c["type"]: (c["status"], c["lastTransitionTime"]) for c in status["conditions"]}
    assert conds == {
        "PodScheduled": ("True", rfc3339(T0)),
        "PodReadyToStartContainers": ("True", rfc3339(T0)),
        "Initialized": ("True", rfc3339(T0)),
        "ContainersReady": ("True", rfc3339(T0 + 7)),
        "Ready": ("True", rfc3339(T0 + 7)),
    }
    # no init containers: Initialized was True at admission; Ready lost the reason it had while Pending
    assert [
        (c["type"], c.get("reason"), c.get("message"))
        for c in status["conditions"]
        if c["type"] in ("Ready", "ContainersReady")
    ] == [("Ready", None, None), ("ContainersReady", None, None)]
    assert all(
        "reason" not in c and "message" not in c for c in status["conditions"] if c["status"] == "True"
    )
    # status.images written at the first 10 s tick after a pull completed (+6 and +8.5)
    images = mc.get("Node", "", "n1")["status"]["images"]
    assert [(e["names"][-1], e["sizeBytes"]) for e in images] == [
        ("docker.io/library/b:latest", 600),
        ("docker.io/library/a:latest", 500),
    ]
    # a third pod of image a finds it present
    mc.create(_pod("p3", "a"))
    _bind(mc, "p3")
    clock.run_until(T0 + 40)
    assert _events(mc, "p3") == [
        (12.0, "Pulled", 'Container image "a" already present on machine'),
        (12.0, "Created", "Container created"),
        (13.0, "Started", "Container started"),
    ]
    # p1 succeeds 30 s after its start
    status = mc.get("Pod", "default", "p1")["status"]
    assert status["phase"] == "Succeeded"
    assert status["containerStatuses"][0]["state"] == {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": rfc3339(T0 + 7),
            "finishedAt": rfc3339(T0 + 37),
        }
    }
    assert mc.get("Pod", "default", "p2")["status"]["phase"] == "Running"


def test_a_run_time_of_many_digits_ends_exactly_then() -> None:
    """``kubesched load`` writes 12345.75 s as ``12345.75`` (not ``12345.8``): the pod succeeds
    12345.75 s after its start (+7), not a moment later."""
    clock, mc, _ = _world()
    mc.create(_pod("p1", "a", run_seconds=run_seconds_text(12345.75)))
    _bind(mc, "p1")
    clock.run_until(T0 + 7 + 12345.7)
    assert mc.get("Pod", "default", "p1")["status"]["phase"] == "Running"
    clock.run_until(T0 + 7 + 12345.75)
    assert mc.get("Pod", "default", "p1")["status"]["phase"] == "Succeeded"


def test_bad_input_is_reported_and_other_pods_run() -> None:
    clock, mc, _ = _world()
    mc.create(_pod("bad", "UPPER/Case"))
    mc.create(_pod("odd", "a", run_seconds="soon"))
    mc.create(_pod("unknown", "example.com/team/tool:1"))
    for name in ("bad", "odd", "unknown"):
        _bind(mc, name)
    clock.run_until(T0 + 30)
    bad = mc.get("Pod", "default", "bad")["status"]
    assert bad["containerStatuses"][0]["state"]["waiting"]["reason"] == "InvalidImageName"
    [(t, reason, message)] = _events(mc, "bad")
    assert (t, reason) == (0.0, "InspectFailed")
    assert message.startswith('Failed to apply default image tag "UPPER/Case": couldn\'t parse image name')
    assert mc.get("Pod", "default", "odd")["status"]["phase"] == "Running"
    assert ("Warning", "InvalidAnnotation") in [
        (e["type"], e["reason"]) for e in mc.events() if e["involvedObject"]["name"] == "odd"
    ]
    # an image missing from the catalogue: one opaque 100 MB layer (queued behind a: 6 s)
    pulled = [m for _, r, m in _events(mc, "unknown") if r == "Pulled"]
    assert pulled == []  # 100 MB at 100 B/s is still pulling
    assert mc.get("Pod", "default", "unknown")["status"]["phase"] == "Pending"


def test_deleted_pod_releases_its_images() -> None:
    clock, mc, kl = _world()
    mc.create(_pod("p1", "a"))
    _bind(mc, "p1")
    clock.run_until(T0 + 10)
    assert mc.get("Pod", "default", "p1")["status"]["phase"] == "Running"
    mc.delete("Pod", "default", "p1")
    clock.run_until(T0 + 11)
    assert kl.model.has_image("n1", "a")
    store = kl.model.store("n1")
    assert store.in_use.get("docker.io/library/a:latest") is None
    assert store.images["docker.io/library/a:latest"].last_used == T0 + 10


def test_active_deadline_seconds_fails_the_pod() -> None:
    clock, mc, _ = _world()
    pod = _pod("p1", "a", run_seconds="60")
    pod["spec"]["activeDeadlineSeconds"] = 20
    mc.create(pod)
    _bind(mc, "p1")
    clock.run_until(T0 + 19)
    assert mc.get("Pod", "default", "p1")["status"]["phase"] == "Running"  # started at +7
    clock.run_until(T0 + 20)
    status = mc.get("Pod", "default", "p1")["status"]
    assert (status["phase"], status["reason"], status["message"]) == (
        "Failed",
        "DeadlineExceeded",
        "Pod was active on the node longer than the specified deadline",
    )
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert _events(mc, "p1")[-1] == (
        20.0,
        "DeadlineExceeded",
        "Pod was active on the node longer than the specified deadline",
    )
    clock.run_until(T0 + 100)  # the run-seconds timer does not fire on a failed pod
    assert mc.get("Pod", "default", "p1")["status"]["phase"] == "Failed"


def test_exit_code_annotation_fails_the_pod_and_a_bad_value_exits_zero() -> None:
    from kubesched.embedded.kubelet.live import EXIT_CODE_ANNOTATION

    clock, mc, _ = _world()
    for name, code in (("bad", "3"), ("odd", "x")):
        pod = _pod(name, "a", run_seconds="5")
        pod["metadata"]["annotations"][EXIT_CODE_ANNOTATION] = code
        mc.create(pod)
        _bind(mc, name)
    clock.run_until(T0 + 20)  # pulled at +6, started at +7, exit at +12
    bad = mc.get("Pod", "default", "bad")["status"]
    assert bad["phase"] == "Failed"
    assert bad["containerStatuses"][0]["state"] == {
        "terminated": {
            "exitCode": 3,
            "reason": "Error",
            "startedAt": "2023-11-14T22:13:27Z",
            "finishedAt": "2023-11-14T22:13:32Z",
        }
    }
    assert [(c["type"], c["status"], c.get("reason")) for c in bad["conditions"] if c["type"] == "Ready"] == [
        ("Ready", "False", "PodFailed")
    ]
    assert mc.get("Pod", "default", "odd")["status"]["phase"] == "Succeeded"
    assert _events(mc, "odd")[-1] == (
        12.0,
        "InvalidAnnotation",
        "metadata.annotations[kubesched.io/exit-code]: invalid value 'x': must be an integer from 0 to 255; "
        "the containers exit 0",
    )
