"""``kubesched serve`` answers as kube-apiserver on the edges: a read at a resourceVersion the store
has not reached waits up to 3 s for it (the watch cache's ``blockTimeout``) and is then served,
or answered ``504 Too large resource version`` (``Retry-After: 1``, cause
``ResourceVersionTooLarge``); ``timeoutSeconds=0`` is the server's default and a negative one
ends the watch at once; ``limit`` <= 0 lists everything; URLs longer than 8 KiB are served."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from typing import Any

import pytest
from apiserver_support import core_fixture, server_fixture
from kubernetes import client as k8s

from kubesched.embedded.apiserver import ServerHandle

POD = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}


server = server_fixture(bookmark_interval=0.2, enable_test_hooks=True)
core = core_fixture()


def get(server: ServerHandle, path: str, timeout: float = 15) -> tuple[int, dict[str, str], bytes, float]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    start = time.monotonic()
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body, time.monotonic() - start
    finally:
        conn.close()


def too_large(rv: int, current: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Too large resource version: {rv}, current: {current}",
        "reason": "Timeout",
        "details": {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
        "code": 504,
    }


def test_list_and_watch_at_a_future_version_wait_3s_then_answer_504(
    server: ServerHandle, core: k8s.CoreV1Api
) -> None:
    current = core.list_namespaced_pod("default").metadata.resource_version
    future = int(current) + 1000
    code, headers, body, took = get(server, f"/api/v1/namespaces/default/pods?resourceVersion={future}")
    assert (code, headers["retry-after"], json.loads(body)) == (504, "1", too_large(future, current))
    assert 2.9 <= took < 5
    code, _, body, took = get(server, f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={future}")
    assert code == 200
    assert [json.loads(line) for line in body.splitlines()] == [
        {"type": "ERROR", "object": too_large(future, current)}
    ]
    assert 2.9 <= took < 5


def test_a_version_reached_while_waiting_is_served(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    current = int(core.list_namespaced_pod("default").metadata.resource_version)
    timer = threading.Timer(0.5, lambda: core.create_namespaced_pod("default", POD))
    timer.start()
    try:
        code, _, body, took = get(server, f"/api/v1/namespaces/default/pods?resourceVersion={current + 1}")
    finally:
        timer.join()
    assert code == 200 and [p["metadata"]["name"] for p in json.loads(body)["items"]] == ["web"]
    assert 0.4 <= took < 2.5


def test_negative_timeout_ends_the_watch_at_once_and_zero_is_the_default(
    server: ServerHandle, core: k8s.CoreV1Api
) -> None:
    core.create_namespaced_pod("default", POD)
    code, _, body, took = get(server, "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=-1")
    assert (code, body) == (200, b"") and took < 1
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=0")
        resp = conn.getresponse()
        first = json.loads(resp.readline())
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "web")
        assert conn.sock is not None
        conn.sock.settimeout(1.0)  # still open after a second: the default timeout, not 0
        with pytest.raises(TimeoutError):
            resp.readline()
    finally:
        conn.close()


def test_negative_or_zero_limit_lists_everything(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    for i in range(3):
        core.create_namespaced_pod("default", {**POD, "metadata": {"name": f"p{i}"}})
    for limit in ("-1", "0"):
        code, _, body, _ = get(server, f"/api/v1/namespaces/default/pods?limit={limit}")
        doc = json.loads(body)
        assert code == 200 and [p["metadata"]["name"] for p in doc["items"]] == ["p0", "p1", "p2"]
        assert "continue" not in doc["metadata"]


def test_urls_longer_than_8_kib_are_served(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    core.create_namespaced_pod("default", {**POD, "metadata": {"name": "web", "labels": {"app": "web"}}})
    selector = "app in (web," + ",".join(f"v{i:05d}" for i in range(2000)) + ")"  # ~14 KB
    code, _, body, _ = get(
        server, "/api/v1/namespaces/default/pods?labelSelector=" + urllib.parse.quote(selector)
    )
    assert code == 200 and [p["metadata"]["name"] for p in json.loads(body)["items"]] == ["web"]
