"""``kubesched serve`` decodes request bodies through the bounded YAML/JSON loader: an alias bomb
or a deeply nested body is refused with 400 at once, nothing is stored, and the server keeps
answering."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from apiserver_support import server_fixture

from kubesched.embedded.apiserver import ServerHandle
from kubesched.errors import NotFoundError

BOMB = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb, namespace: default}\n"
    "spec:\n  containers: [{name: c, image: x}]\n  a: &a ["
    + ",".join(['"lol"'] * 9)
    + "]\n"
    + "".join(
        f"  {c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


server = server_fixture()


def _post(h: ServerHandle, body: bytes, ctype: str) -> tuple[int, dict]:
    req = urllib.request.Request(
        h.url + "/api/v1/namespaces/default/pods", data=body, method="POST", headers={"Content-Type": ctype}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_alias_bomb_body_is_refused_quickly(server: ServerHandle) -> None:
    start = time.monotonic()
    code, body = _post(server, BOMB.encode(), "application/yaml")
    assert time.monotonic() - start < 5
    assert code == 400
    assert body["message"].startswith(
        "the body of the request could not be decoded: document contains excessive aliasing"
    )
    with pytest.raises(NotFoundError):
        server.cluster.get("Pod", "default", "bomb")


def test_deep_json_body_is_refused(server: ServerHandle) -> None:
    code, body = _post(server, b"[" * 100_000 + b"]" * 100_000, "application/json")
    assert code == 400
    assert body["message"] == "the body of the request could not be decoded: exceeded max depth of 256"
    with urllib.request.urlopen(server.url + "/healthz", timeout=5) as r:
        assert r.status == 200
