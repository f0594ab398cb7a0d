"""``kubesched serve`` refuses what a web page could send it: requests for another host name (DNS
rebinding), cross-origin requests, bodies that are not JSON/YAML/patch media types, bodies over
3 MiB; the fault-injection hooks exist only with ``--enable-test-hooks``."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest
from apiserver_support import server_fixture
from serve_support import ServeProcess

from kubesched.embedded.apiserver import ServerHandle
from kubesched.embedded.apiserver.guard import RequestGuard

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "from-a-page"},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}
PODS = "/api/v1/namespaces/default/pods"


server = server_fixture(bookmark_interval=0.2)


def _request(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw
    finally:
        conn.close()


def _pods(server: ServerHandle) -> list[str]:
    return [p["metadata"]["name"] for p in server.cluster.list("Pod").items]


@pytest.mark.parametrize(
    "ctype",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ],
)
def test_bodies_of_other_media_types_are_refused_with_415(server: ServerHandle, ctype: str | None) -> None:
    headers = {"Content-Type": ctype} if ctype else {}
    code, body = _request(server.port, "POST", PODS, json.dumps(POD).encode(), headers)
    assert code == 415 and body["reason"] == "UnsupportedMediaType" and body["kind"] == "Status"
    assert body["message"].startswith(
        "the body of the request was in an unknown format - accepted media types "
        "include: application/apply-patch+yaml, application/cbor, application/json,"
    )
    assert _pods(server) == []


def test_json_and_yaml_bodies_are_still_accepted(server: ServerHandle) -> None:
    assert (
        _request(server.port, "POST", PODS, json.dumps(POD).encode(), {"Content-Type": "application/json"})[0]
        == 201
    )
    yaml_pod = (
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: yaml-pod}\nspec: {containers: [{name: c, image: x}]}\n"
    )
    assert _request(server.port, "POST", PODS, yaml_pod, {"Content-Type": "application/yaml"})[0] == 201
    patch = json.dumps({"metadata": {"labels": {"a": "b"}}}).encode()
    assert (
        _request(
            server.port, "PATCH", PODS + "/yaml-pod", patch, {"Content-Type": "application/merge-patch+json"}
        )[0]
        == 200
    )
    assert _pods(server) == ["from-a-page", "yaml-pod"]


def test_a_browsers_cross_origin_simple_post_is_refused(server: ServerHandle) -> None:
    # what fetch(url, {method: "POST", mode: "no-cors", body}) sends from another origin
    headers = {
        "Content-Type": "text/plain;charset=UTF-8",
        "Origin": "http://evil.example",
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "no-cors",
    }
    code, body = _request(server.port, "POST", PODS, json.dumps(POD).encode(), headers)
    assert (code, body["reason"], body["message"]) == (
        403,
        "Forbidden",
        "cross-origin request from 'http://evil.example' refused",
    )
    # even with a JSON content type (which a page could only send after a CORS preflight)
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{server.port + 1}"):
        code, _ = _request(
            server.port,
            "POST",
            PODS,
            json.dumps(POD).encode(),
            {"Content-Type": "application/json", "Origin": origin},
        )
        assert code == 403, origin
    code, body = _request(
        server.port,
        "POST",
        PODS,
        json.dumps(POD).encode(),
        {"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"},
    )
    assert (code, body["message"]) == (403, "cross-site request refused")
    assert _pods(server) == []
    # a request from the server's own origin passes
    code, _ = _request(
        server.port,
        "POST",
        PODS,
        json.dumps(POD).encode(),
        {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{server.port}"},
    )
    assert code == 201


def test_other_host_names_are_refused_against_dns_rebinding(server: ServerHandle) -> None:
    code, body = _request(server.port, "GET", PODS, headers={"Host": f"rebind.evil.example:{server.port}"})
    assert (code, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        f"host 'rebind.evil.example:{server.port}' is not served (kubesched serve answers "
        "IP addresses, localhost and its --address/--allowed-host names)"
    )
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", f"[::1]:{server.port}", "localhost"):
        assert _request(server.port, "GET", PODS, headers={"Host": host})[0] == 200, host
    guard = RequestGuard.for_address("0.0.0.0", ["build-box"])
    assert guard.host_allowed("build-box:6443") and guard.host_allowed("10.1.2.3:6443")
    assert not guard.host_allowed("other-box:6443") and not guard.host_allowed("localhost.evil.example")
    assert guard.host_allowed("")  # HTTP/1.0 without Host: not a browser
    assert RequestGuard.for_address("my-host").host_allowed("MY-HOST:6443")


def test_bodies_over_3_mib_are_refused_with_413(server: ServerHandle) -> None:
    big = dict(POD, metadata={"name": "big", "annotations": {"a": "x" * (3 * 1024 * 1024)}})
    data = json.dumps(big).encode()
    code, body = _request(server.port, "POST", PODS, data, {"Content-Type": "application/json"})
    assert (code, body["reason"], body["message"]) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    )
    # the same body sent chunked (no Content-Length)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(
            "POST",
            PODS,
            body=iter([data[i : i + 65536] for i in range(0, len(data), 65536)]),
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        resp = conn.getresponse()
        assert resp.status == 413 and json.loads(resp.read())["reason"] == "RequestEntityTooLarge"
    finally:
        conn.close()
    # a 1 MiB annotation still fits
    ok = dict(POD, metadata={"name": "one-mib", "annotations": {"a": "x" * (1024 * 1024)}})
    assert (
        _request(server.port, "POST", PODS, json.dumps(ok).encode(), {"Content-Type": "application/json"})[0]
        == 201
    )
    assert _pods(server) == ["one-mib"]


def test_test_hooks_need_the_flag(server: ServerHandle) -> None:
    fault = json.dumps({"status": 500, "count": 1}).encode()
    assert (
        _request(server.port, "POST", "/kubesched/faults", fault, {"Content-Type": "application/json"})[0]
        == 404
    )
    for method, path in (
        ("POST", "/kubesched/drop-watches"),
        ("POST", "/kubesched/compact"),
        ("GET", "/kubesched/requests"),
        ("GET", "/kubesched/faults"),
    ):
        assert _request(server.port, method, path)[0] == 404, path
    assert _request(server.port, "GET", PODS)[0] == 200  # no fault was injected


def test_serve_cli_serves_hooks_only_with_enable_test_hooks(tmp_path: Path) -> None:
    fault = json.dumps({"status": 503, "count": 1, "paths": "^/api/v1/nodes$"}).encode()
    ctype = {"Content-Type": "application/json"}
    plain = ServeProcess(tmp_path)
    hooked = ServeProcess(tmp_path, "--enable-test-hooks")
    try:
        plain.wait_ready()
        hooked.wait_ready()
        assert _request(plain.port, "POST", "/kubesched/faults", fault, ctype)[0] == 404
        assert _request(plain.port, "GET", "/api/v1/nodes")[0] == 200
        assert _request(hooked.port, "POST", "/kubesched/faults", fault, ctype)[0] == 201
        assert _request(hooked.port, "GET", "/api/v1/nodes")[0] == 503
        assert _request(hooked.port, "GET", "/api/v1/nodes")[0] == 200
        # the hooks are guarded like the API: a page cannot inject faults
        code, _ = _request(
            hooked.port,
            "POST",
            "/kubesched/faults",
            fault,
            {"Content-Type": "text/plain", "Origin": "http://evil.example"},
        )
        assert code == 403
    finally:
        plain.stop()
        hooked.stop()
