"""``kubesched serve`` writes the events of one store batch (the writes of one event-loop turn) to
an idle watch connection as one HTTP chunk, in order; a batch over 1 MiB is split, and nothing is
lost or reordered."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from apiserver_support import server_fixture
from run_support import wait_for

from kubesched.embedded.apiserver import ServerHandle

server = server_fixture(bookmark_interval=60.0)


def _pod(name: str, pad: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if pad:
        meta["annotations"] = {"pad": "x" * pad}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


class _ChunkedWatch:
    """A raw watch connection that keeps the HTTP chunks of the response apart."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(f"GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower()

    def _recv(self) -> None:
        data = self.sock.recv(1 << 16)
        assert data, "the server closed the watch"
        self.buf += data

    def chunk(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._recv()
        size_line, rest = self.buf.split(b"\r\n", 1)
        size = int(size_line, 16)
        while len(rest) < size + 2:
            self._recv()
            size_line, rest = self.buf.split(b"\r\n", 1)
        self.buf = rest[size + 2 :]
        return rest[:size]

    def close(self) -> None:
        self.sock.close()


def _names(chunk: bytes) -> list[tuple[str, str]]:
    out = []
    for line in chunk.split(b"\n"):
        if line:
            ev = json.loads(line)
            out.append((ev["type"], ev["object"]["metadata"]["name"]))
    return out


def _create_in_one_turn(server: ServerHandle, pods: list[dict[str, Any]]) -> None:
    cluster = server.state.cluster
    server._loop.call_soon_threadsafe(lambda: [cluster.create(p) for p in pods])


def test_a_batch_of_events_is_one_chunk_in_order(server: ServerHandle) -> None:
    w = _ChunkedWatch(server.port)
    try:
        wait_for(lambda: len(server.state.hub) == 1, 10, "the watch registered")
        _create_in_one_turn(server, [_pod("p0")])
        assert _names(w.chunk()) == [("ADDED", "p0")]  # a batch of one: one chunk, as before
        _create_in_one_turn(server, [_pod(f"b{i}") for i in range(5)])
        assert _names(w.chunk()) == [("ADDED", f"b{i}") for i in range(5)]
    finally:
        w.close()


def test_a_batch_over_one_mebibyte_is_split_and_keeps_its_order(server: ServerHandle) -> None:
    w = _ChunkedWatch(server.port)
    try:
        wait_for(lambda: len(server.state.hub) == 1, 10, "the watch registered")
        _create_in_one_turn(server, [_pod(f"big{i}", pad=400_000) for i in range(4)] + [_pod("last")])
        got: list[tuple[str, str]] = []
        chunks = 0
        deadline = time.monotonic() + 20
        while len(got) < 5 and time.monotonic() < deadline:
            got += _names(w.chunk())
            chunks += 1
        assert got == [
            ("ADDED", "big0"),
            ("ADDED", "big1"),
            ("ADDED", "big2"),
            ("ADDED", "big3"),
            ("ADDED", "last"),
        ]
        assert chunks >= 2  # 3 events of 400 kB reach 1 MiB: written before the rest of the batch
    finally:
        w.close()
