"""``httpTimeout`` bounds a whole extender call (connect, headers and body), as Go's
``http.Client.Timeout``; answers have a size cap. A trickling extender on 127.0.0.1 (one byte a
second) holds one scheduling cycle for ``httpTimeout``, and the loop goes on binding other pods."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from extender_support import http_answer, trickling_server

from kubesched.clock import VirtualClock
from kubesched.config.types import (
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.extenders import ExtenderError
from kubesched.extenders.transport import Transport
from kubesched.scheduler.factory import new_scheduler
from kubesched.testing import node_manifest, pod_manifest

FILTER_OK = json.dumps({"NodeNames": ["n1"], "FailedNodes": {}, "Error": ""}).encode()
GPU = "example.com/gpu"
#: how much longer than httpTimeout a call may take (one trickled byte and the thread switch)
MARGIN = 0.6


def send(url: str, timeout: float = 1.0, max_bytes: int = 1 << 20) -> Any:
    t = Transport(Extender(url_prefix=url, filter_verb="filter", http_timeout=timeout), max_bytes=max_bytes)
    try:
        return t.send("filter", {"Pod": None})
    finally:
        t.close()


def test_trickled_headers_end_at_the_deadline_with_gos_message() -> None:
    with trickling_server(http_answer(FILTER_OK), interval=0.2) as srv:
        start = time.monotonic()
        with pytest.raises(ExtenderError) as e:
            send(srv.url)
        took = time.monotonic() - start
    assert str(e.value) == (
        f'Post "{srv.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )
    assert 1.0 <= took < 1.0 + MARGIN


def test_trickled_body_ends_at_the_deadline_with_gos_body_message() -> None:
    answer = http_answer(FILTER_OK)
    with trickling_server(answer, trickle_from=answer.index(b"\r\n\r\n") + 4, interval=0.2) as srv:
        start = time.monotonic()
        with pytest.raises(ExtenderError) as e:
            send(srv.url)
        took = time.monotonic() - start
    assert (
        str(e.value)
        == "context deadline exceeded (Client.Timeout or context cancellation while reading body)"
    )
    assert 1.0 <= took < 1.0 + MARGIN


def test_an_answer_within_the_deadline_is_read() -> None:
    answer = http_answer(FILTER_OK)
    with trickling_server(answer, trickle_from=len(answer) - 20, interval=0.01, step=5) as srv:
        assert send(srv.url) == {"NodeNames": ["n1"], "FailedNodes": {}, "Error": ""}


@pytest.mark.parametrize("chunked", [False, True])
def test_answer_over_the_cap_is_an_error(chunked: bool) -> None:
    body = json.dumps({"NodeNames": ["n" * 2000], "Error": ""}).encode()
    with trickling_server(http_answer(body, chunked=chunked), trickle_from=1 << 30) as srv:
        with pytest.raises(ExtenderError) as e:
            send(srv.url, max_bytes=1000)
    assert str(e.value) == f'Post "{srv.url}/filter": answer larger than 1000 bytes'


def profile() -> KubeSchedulerProfile:
    names = ["PrioritySort", "NodeResourcesFit", "DefaultBinder"]
    return KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            multi_point=PluginSet(enabled=[Plugin(name=n) for n in names], disabled=[Plugin(name="*")])
        ),
    )


def run_with(ext: Extender, pods: list[dict[str, Any]]) -> tuple[MemoryCluster, list[float]]:
    """Schedule ``pods`` on n1..n3 with ``ext``; returns the cluster and the wall-clock seconds of
    each scheduling attempt."""
    clock = VirtualClock(1_700_000_000.0)
    mc = MemoryCluster(clock)
    for i in (1, 2, 3):
        mc.create(node_manifest(f"n{i}", allocatable={GPU: "4"}))
    for p in pods:
        mc.create(p)
    sched = new_scheduler(
        mc,
        KubeSchedulerConfiguration(profiles=[profile()], extenders=[ext]),
        clock=clock,
        seed=0,
        record=True,
    )
    sched.start()
    took = []
    while True:
        t0 = time.monotonic()
        if not sched.schedule_next():
            break
        took.append(time.monotonic() - t0)
    return mc, took


def test_trickling_ignorable_extender_is_skipped_and_the_loop_binds_every_pod() -> None:
    with trickling_server(http_answer(FILTER_OK), interval=1.0) as srv:
        ext = Extender(
            url_prefix=srv.url,
            filter_verb="filter",
            http_timeout=1.0,
            ignorable=True,
            managed_resources=[ExtenderManagedResource(name=GPU)],
        )
        pods = [
            pod_manifest("gpu-0", cpu="1", limits={GPU: "1"}),
            *(pod_manifest(f"web-{i}", cpu="1") for i in range(3)),
            pod_manifest("gpu-1", cpu="1", limits={GPU: "1"}),
        ]
        mc, took = run_with(ext, pods)
    bound = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in mc.list("Pod").items}
    assert sorted(bound) == ["gpu-0", "gpu-1", "web-0", "web-1", "web-2"]
    assert all(bound.values())
    assert len(took) == 5
    assert max(took) < 1.0 + MARGIN
    assert srv.requests == 2  # one call per gpu pod, each ended at the deadline and skipped


def test_trickling_non_ignorable_extender_fails_the_cycle_with_upstreams_message() -> None:
    with trickling_server(http_answer(FILTER_OK), interval=1.0) as srv:
        ext = Extender(url_prefix=srv.url, filter_verb="filter", http_timeout=1.0)
        mc, took = run_with(ext, [pod_manifest("web", cpu="1")])
    assert mc.get("Pod", "default", "web")["spec"].get("nodeName") is None
    notes = [(e["reason"], e["note"]) for e in mc.events()]
    assert notes == [
        (
            "FailedScheduling",
            f'Post "{srv.url}/filter": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)",
        )
    ]
    assert took and max(took) < 1.0 + MARGIN
