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
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
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
