"""A sped-up embedded cluster keeps one timeline: the times clients write into Events and the
condition times they change in a status are replaced by the cluster's clock when the server receives
them (``start_server(server_client_times=True)``, what ``kubesched serve --speed X`` sets for
X != 1); without it they are kept, as a real API server does."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import ServerHandle, start_server
from kubesched.embedded.apiserver.client_times import restamp_conditions, restamp_event

T = 1_800_000_000.5  # 2027-01-15T08:00:00.5Z
EVENT = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "web.1"},
    "eventTime": "2024-05-01T12:00:00.000000Z",
    "reportingController": "kubesched",
    "reportingInstance": "kubesched-1",
    "action": "Binding",
    "reason": "Scheduled",
    "type": "Normal",
    "note": "Successfully assigned default/web to n1",
    "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
}


def _call(server: ServerHandle, method: str, path: str, body: Any, ctype: str = "application/json") -> Any:
    req = urllib.request.Request(
        server.url + path, data=json.dumps(body).encode(), method=method, headers={"Content-Type": ctype}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture(params=[True, False], ids=["server-times", "client-times"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[ServerHandle, bool]]:
    handle = start_server(clock=VirtualClock(T), server_client_times=request.param)
    yield handle, request.param
    handle.stop()


def test_client_event_times_follow_the_cluster_clock(server: tuple[ServerHandle, bool]) -> None:
    handle, restamped = server
    created = _call(handle, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", EVENT)
    series = {"series": {"count": 2, "lastObservedTime": "2024-05-01T12:00:09.000000Z"}}
    patched = _call(
        handle,
        "PATCH",
        "/apis/events.k8s.io/v1/namespaces/default/events/web.1",
        series,
        "application/merge-patch+json",
    )
    core = _call(
        handle,
        "POST",
        "/api/v1/namespaces/default/events",
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "web.2"},
            "reason": "Pulled",
            "message": "m",
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
            "firstTimestamp": "2024-05-01T12:00:00Z",
            "lastTimestamp": "2024-05-01T12:00:01Z",
            "eventTime": None,
        },
    )
    if restamped:
        assert created["eventTime"] == "2027-01-15T08:00:00.500000Z"
        assert patched["series"] == {"count": 2, "lastObservedTime": "2027-01-15T08:00:00.500000Z"}
        assert (core["firstTimestamp"], core["lastTimestamp"], core["eventTime"]) == (
            "2027-01-15T08:00:00Z",
            "2027-01-15T08:00:00Z",
            None,
        )
    else:
        assert created["eventTime"] == "2024-05-01T12:00:00.000000Z"
        assert patched["series"] == {"count": 2, "lastObservedTime": "2024-05-01T12:00:09.000000Z"}
        assert (core["firstTimestamp"], core["lastTimestamp"]) == (
            "2024-05-01T12:00:00Z",
            "2024-05-01T12:00:01Z",
        )
    assert (
        created["note"] == EVENT["note"]
        and created["metadata"]["creationTimestamp"] == "2027-01-15T08:00:00Z"
    )


def test_restamp_event_touches_only_set_times() -> None:
    assert restamp_event({"reason": "x", "eventTime": None, "series": None}, T) == {
        "reason": "x",
        "eventTime": None,
        "series": None,
    }
    assert restamp_event(
        {
            "deprecatedFirstTimestamp": "2024-05-01T12:00:00Z",
            "deprecatedLastTimestamp": "",
            "series": {"count": 3},
        },
        T,
    ) == {
        "deprecatedFirstTimestamp": "2027-01-15T08:00:00Z",
        "deprecatedLastTimestamp": "",
        "series": {"count": 3},
    }


def test_client_condition_times_follow_the_cluster_clock(server: tuple[ServerHandle, bool]) -> None:
    """The scheduler's ``PodScheduled=False`` (its wall clock) is stamped with the cluster's time; a
    status write that leaves a condition's time as stored keeps it."""
    handle, restamped = server
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    _call(handle, "POST", "/api/v1/namespaces/default/pods", pod)
    failed = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/0 nodes",
        "lastProbeTime": None,
        "lastTransitionTime": "2024-05-01T12:00:00Z",
    }
    got = _call(
        handle,
        "PATCH",
        "/api/v1/namespaces/default/pods/web/status",
        {"status": {"conditions": [failed]}},
        "application/strategic-merge-patch+json",
    )
    [cond] = got["status"]["conditions"]
    assert cond["lastTransitionTime"] == ("2027-01-15T08:00:00Z" if restamped else "2024-05-01T12:00:00Z")
    assert cond.get("lastProbeTime") is None and cond["reason"] == "Unschedulable"
    # the same condition written back with its stored time, plus another: only the new one is stamped
    ready = {"type": "Ready", "status": "False", "lastTransitionTime": "2024-05-01T12:00:05Z"}
    got = _call(
        handle,
        "PATCH",
        "/api/v1/namespaces/default/pods/web/status",
        {"status": {"conditions": [cond, ready]}},
        "application/strategic-merge-patch+json",
    )
    times = {c["type"]: c["lastTransitionTime"] for c in got["status"]["conditions"]}
    assert times == (
        {"PodScheduled": "2027-01-15T08:00:00Z", "Ready": "2027-01-15T08:00:00Z"}
        if restamped
        else {"PodScheduled": "2024-05-01T12:00:00Z", "Ready": "2024-05-01T12:00:05Z"}
    )


def test_restamp_conditions_only_changed_times() -> None:
    current = {"conditions": [{"type": "A", "status": "True", "lastTransitionTime": "2024-05-01T12:00:00Z"}]}
    patch = {
        "phase": "Pending",
        "conditions": [
            {"type": "A", "status": "True", "lastTransitionTime": "2024-05-01T12:00:00Z"},
            {
                "type": "B",
                "status": "False",
                "lastTransitionTime": "2024-05-01T12:00:01Z",
                "lastProbeTime": None,
            },
            {"type": "C", "$patch": "delete"},
        ],
    }
    assert restamp_conditions(patch, current, T) == {
        "phase": "Pending",
        "conditions": [
            {"type": "A", "status": "True", "lastTransitionTime": "2024-05-01T12:00:00Z"},
            {
                "type": "B",
                "status": "False",
                "lastTransitionTime": "2027-01-15T08:00:00Z",
                "lastProbeTime": None,
            },
            {"type": "C", "$patch": "delete"},
        ],
    }
    assert restamp_conditions({"phase": "Running"}, current, T) == {"phase": "Running"}
