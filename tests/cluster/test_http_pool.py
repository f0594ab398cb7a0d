"""The API client's keep-alive pool: plain HTTP and TLS (CA from the kubeconfig, hostname checked),
connection reuse, and the one retry of a stale keep-alive connection."""

from __future__ import annotations

import http.server
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from kubesched.cluster.http_pool import ConnectionPool, ssl_context_for
from kubesched.serving.tls import self_signed_pem


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections: set[tuple[str, int]] = set()

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Handler.connections.add(self.client_address)
        out = b'{"got":' + body + b',"path":"' + self.path.encode() + b'"}'
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path | None]]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    cert_path: Path | None = None
    scheme = "http"
    if getattr(request, "param", "http") == "https":
        cert, key = self_signed_pem("127.0.0.1")
        cert_path, key_path = tmp_path / "c.pem", tmp_path / "k.pem"
        cert_path.write_bytes(cert)
        key_path.write_bytes(key)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert_path, key_path)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        scheme = "https"
    _Handler.connections = set()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"{scheme}://127.0.0.1:{srv.server_address[1]}", cert_path
    srv.shutdown()
    srv.server_close()


def _cfg(ca: Path | None, verify: bool = True) -> SimpleNamespace:
    return SimpleNamespace(ssl_ca_cert=str(ca) if ca else None, cert_file=None, key_file=None,
                           assert_hostname=None, verify_ssl=verify)


@pytest.mark.parametrize("server", ["http", "https"], indirect=True)
def test_requests_reuse_one_connection(server: tuple[str, Path | None]) -> None:
    url, ca = server
    pool = ConnectionPool(url + "/prefix", ssl_context=ssl_context_for(_cfg(ca)) if ca else None)
    for i in range(3):
        r = pool.request("POST", f"/x?i={i}", b'{"n":%d}' % i, {"Content-Type": "application/json"}, (5, 5))
        assert (r.status, r.data) == (201, b'{"got":{"n":%d},"path":"/prefix/x?i=%d"}' % (i, i))
        assert r.headers.get("content-type") == "application/json"
    assert len(_Handler.connections) == 1
    pool.close()


@pytest.mark.parametrize("server", ["https"], indirect=True)
def test_tls_without_the_cluster_ca_is_refused(server: tuple[str, Path | None]) -> None:
    url, _ = server
    pool = ConnectionPool(url, ssl_context=ssl_context_for(_cfg(None)))
    with pytest.raises(ssl.SSLCertVerificationError):
        pool.request("POST", "/x", b"{}", {}, (5, 5))
    insecure = ConnectionPool(url, ssl_context=ssl_context_for(_cfg(None, verify=False)))
    assert insecure.request("POST", "/x", b"{}", {}, (5, 5)).status == 201


def test_a_stale_keep_alive_connection_is_replaced(server: tuple[str, Path | None]) -> None:
    url, _ = server
    pool = ConnectionPool(url)
    assert pool.request("POST", "/a", b"1", {}, (5, 5)).status == 201
    (idle,) = pool._idle
    assert idle.sock is not None
    idle.sock.close()
    ours, theirs = socket.socketpair()
    theirs.close()  # as if the server had closed the idle connection: the answer never comes
    idle.sock = ours
    assert pool.request("POST", "/b", b"2", {}, (5, 5)).data == b'{"got":2,"path":"/b"}'
    assert len(_Handler.connections) == 2
