"""A real HTTP(S) scheduler extender for the extender tests: a ``ThreadingHTTPServer`` on
127.0.0.1 (ephemeral port) whose verbs are plain Python functions ``body -> (status, answer)``.
Every request is recorded as ``(path, decoded JSON body)``."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Verb = Callable[[Any], tuple[int, Any]]


class ExtenderServer:
    """The running server: ``url`` (``http://127.0.0.1:<port>`` or https), ``requests``, ``verbs``."""

    def __init__(self, verbs: dict[str, Verb], tls: ssl.SSLContext | None = None) -> None:
        self.verbs = dict(verbs)
        self.requests: list[tuple[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"null")
                path = self.path.lstrip("/")
                server.requests.append((path, body))
                server.headers.append(dict(self.headers.items()))
                fn = server.verbs.get(path)
                status, answer = fn(body) if fn is not None else (404, {"Error": "no such verb"})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def paths(self) -> list[str]:
        """The verbs called, in order."""
        return [p for p, _ in self.requests]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


@contextmanager
def extender_server(verbs: dict[str, Verb], tls: ssl.SSLContext | None = None) -> Iterator[ExtenderServer]:
    """Run an :class:`ExtenderServer` for the duration of the block."""
    s = ExtenderServer(verbs, tls)
    try:
        yield s
    finally:
        s.stop()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TricklingServer:
    """A hostile HTTP peer on 127.0.0.1: for every connection it reads the request head and body,
    then sends ``answer`` (complete response bytes) ``step`` bytes every ``interval`` seconds
    (``trickle_from``: bytes sent at once before the trickle starts). ``requests``: requests
    received."""

    def __init__(self, answer: bytes, trickle_from: int = 0, interval: float = 1.0, step: int = 1) -> None:
        self.answer = answer
        self.trickle_from = trickle_from
        self.interval = interval
        self.step = step
        self.requests = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)
        self._accept.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            conn.sendall(self.answer[: self.trickle_from])
            for i in range(self.trickle_from, len(self.answer), self.step):
                if self._stop.wait(self.interval):
                    return
                conn.sendall(self.answer[i : i + self.step])
            conn.settimeout(30)
            conn.recv(1)  # until the client closes
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._accept.join(timeout=5)
        self._sock.close()


def http_answer(body: bytes, status: str = "200 OK", chunked: bool = False) -> bytes:
    """The bytes of a complete HTTP/1.1 response carrying ``body`` (JSON)."""
    if chunked:
        framed = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        return (
            f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            + framed
        )
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


@contextmanager
def trickling_server(
    answer: bytes, trickle_from: int = 0, interval: float = 1.0, step: int = 1
) -> Iterator[TricklingServer]:
    """Run a :class:`TricklingServer` for the duration of the block."""
    s = TricklingServer(answer, trickle_from, interval, step)
    try:
        yield s
    finally:
        s.stop()
