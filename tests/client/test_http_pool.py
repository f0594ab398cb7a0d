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

from kubesched.client.http_pool import ConnectionPool, ssl_context_for
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
    return SimpleNamespace(
        ssl_ca_cert=str(ca) if ca else None,
        cert_file=None,
        key_file=None,
        assert_hostname=None,
        verify_ssl=verify,
    )


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


class _Canned:
    """A server answering each request with the next canned response bytes; records requests
    and connections."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                buf = b""
                while self.answers:
                    while b"\r\n\r\n" not in buf:
                        data = conn.recv(65536)
                        if not data:
                            break
                        buf += data
                    if b"\r\n\r\n" not in buf:
                        break
                    head, buf = buf.split(b"\r\n\r\n", 1)
                    length = next(
                        (
                            int(line.split(b":")[1])
                            for line in head.split(b"\r\n")
                            if line.lower().startswith(b"content-length:")
                        ),
                        0,
                    )
                    while len(buf) < length:
                        buf += conn.recv(65536)
                    self.requests.append(head + b"\r\n\r\n" + buf[:length])
                    buf = buf[length:]
                    answer = self.answers.pop(0)
                    conn.sendall(answer)
                    if (
                        b"Connection: close" in answer
                        or b"Content-Length" not in answer
                        and b"chunked" not in answer
                    ):
                        break

    def close(self) -> None:
        self.sock.close()


def test_the_request_is_written_as_http_client_writes_it() -> None:
    srv = _Canned([b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"])
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}/base")
    r = pool.request(
        "POST",
        "/api/v1/x",
        b'{"a":1}',
        {"Authorization": "Bearer t", "Content-Type": "application/json"},
        (5, 5),
    )
    assert (r.status, r.data, r.headers.get("CONTENT-TYPE")) == (201, b"{}", "application/json")
    assert srv.requests == [
        b"POST /base/api/v1/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer t\r\n"
        b'Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}' % srv.port
    ]
    pool.close()
    srv.close()


def test_chunked_answers_interim_answers_and_connection_close() -> None:
    srv = _Canned(
        [
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"4;ext=1\r\nWiki\r\n6\r\npedia \r\n0\r\nTrailer: x\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nnop",
            b"HTTP/1.0 200 OK\r\n\r\nuntil the end",
        ]
    )
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}")
    r = pool.request("GET", "/a", None, {}, (5, 5))
    assert (r.status, r.data) == (200, b"Wikipedia ")
    assert len(pool._idle) == 1  # kept alive
    r = pool.request("GET", "/b", None, {}, (5, 5))
    assert (r.status, r.data) == (404, b"nop")
    assert pool._idle == []  # the server asked to close
    r = pool.request("GET", "/c", None, {}, (5, 5))
    assert (r.status, r.data) == (200, b"until the end")
    assert pool._idle == [] and srv.connections == 2
    assert b"Content-Length" not in srv.requests[0]  # no body, no length (as http.client for GET)
    srv.close()


def test_line_breaks_in_a_header_or_the_target_are_refused_before_sending() -> None:
    srv = _Canned([b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}")
    with pytest.raises(ValueError, match="line break"):
        pool.request("GET", "/a", None, {"X-Evil": "a\r\nInjected: 1"}, (5, 5))
    with pytest.raises(ValueError, match="request line"):
        pool.request("GET", "/a HTTP/1.1\r\nX: y", None, {}, (5, 5))
    assert pool.request("GET", "/ok", None, {}, (5, 5)).status == 200
    assert len(srv.requests) == 1 and srv.requests[0].startswith(b"GET /ok HTTP/1.1\r\n")
    srv.close()


def test_a_truncated_answer_is_an_incomplete_read() -> None:
    import http.client

    srv = _Canned([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nshort"])
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}")
    with pytest.raises(http.client.IncompleteRead):
        pool.request("GET", "/a", None, {}, (5, 5))
    assert pool._idle == []
    srv.close()


def _post(i: int) -> tuple[str, str, bytes, dict[str, str]]:
    return ("POST", f"/events/{i}", b'{"i":%d}' % i, {"Content-Type": "application/json"})


def test_pipelined_requests_go_out_in_one_write_and_answers_come_back_in_order() -> None:
    ok = b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n%s"
    srv = _Canned(
        [ok % (3, b"one"), ok % (3, b"two"), b"HTTP/1.1 409 Conflict\r\nContent-Length: 5\r\n\r\nthree"]
    )
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}")
    out = pool.request_pipelined([_post(1), _post(2), _post(3)], (5, 5))
    assert [(r.status, r.data) for r in out if not isinstance(r, Exception)] == [
        (201, b"one"),
        (201, b"two"),
        (409, b"three"),
    ]
    assert srv.connections == 1 and len(pool._idle) == 1
    assert [r.split(b" ")[1] for r in srv.requests] == [b"/events/1", b"/events/2", b"/events/3"]
    assert srv.requests[2].endswith(b'\r\n\r\n{"i":3}')
    pool.close()
    srv.close()


def test_pipelined_requests_left_unanswered_by_a_closing_server_are_sent_again_one_by_one() -> None:
    srv = _Canned(
        [
            b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\na",
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 1\r\nConnection: close\r\n\r\nb",
            b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nc",
            b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nd",
        ]
    )
    pool = ConnectionPool(f"http://127.0.0.1:{srv.port}")
    out = pool.request_pipelined([_post(1), _post(2), _post(3), _post(4)], (5, 5))
    assert [(r.status, r.data) for r in out if not isinstance(r, Exception)] == [
        (201, b"a"),
        (503, b"b"),
        (201, b"c"),
        (201, b"d"),
    ]
    assert srv.connections == 2  # the third and fourth went again, on a new connection
    assert [r.split(b" ")[1] for r in srv.requests] == [
        b"/events/1",
        b"/events/2",
        b"/events/3",
        b"/events/4",
    ]
    pool.close()
    srv.close()


def test_pipelined_requests_to_a_server_that_is_gone_fail_one_by_one() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    pool = ConnectionPool(f"http://127.0.0.1:{port}")
    out = pool.request_pipelined([_post(1), _post(2)], (1, 1))
    assert [type(e) for e in out] == [ConnectionRefusedError, ConnectionRefusedError]
    with pytest.raises(ValueError, match="line break"):
        pool.request_pipelined([_post(1), ("POST", "/x", None, {"X": "a\r\nB: c"})], (1, 1))


def test_a_trickling_answer_ends_at_the_total_deadline() -> None:
    import time

    from extender_support import http_answer, trickling_server

    from kubesched.client.http_pool import ResponseTooLarge

    answer = http_answer(b'{"kind":"Status"}')
    for trickle_from in (0, answer.index(b"\r\n\r\n") + 4):  # the head, then the body, a byte each 0.2 s
        with trickling_server(answer, trickle_from=trickle_from, interval=0.2) as srv:
            pool = ConnectionPool(srv.url)
            start = time.monotonic()
            with pytest.raises(TimeoutError):
                pool.request("POST", "/x", b"{}", {}, (1.0, 1.0))
            took = time.monotonic() - start
            pool.close()
        assert 1.0 <= took < 1.5
    for chunked in (False, True):
        with trickling_server(http_answer(b"x" * 2000, chunked=chunked), trickle_from=1 << 30) as srv:
            pool = ConnectionPool(srv.url, max_body=1000)
            with pytest.raises(ResponseTooLarge, match="^answer larger than 1000 bytes$"):
                pool.request("GET", "/x", None, {}, (1.0, 1.0))
            pool.close()
