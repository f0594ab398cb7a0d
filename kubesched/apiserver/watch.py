"""Watch streams: store watch handlers bridged into the server's event loop.

``MemoryCluster`` calls watch handlers synchronously, under its lock, on whichever thread wrote.
Each HTTP watch owns a :class:`WatchStream` whose handler only hands the event to the event loop
(``loop.call_soon_threadsafe`` into an ``asyncio.Queue``), so the store's lock is never held
across network I/O. The loop side filters events (selectors), writes them as newline-delimited
JSON (``{"type": "ADDED", "object": {...}}``, as ``watch.Encoder`` in
``staging/src/k8s.io/apimachinery/pkg/watch`` streams them) and sends BOOKMARKs.

Selector filtering follows the watch cache (``staging/src/k8s.io/apiserver/pkg/storage/cacher/
cache_watcher.go``, ``convertToWatchEvent``): a MODIFIED object that starts matching is sent as
ADDED, one that stops matching as DELETED (with its new state).

Bookmark resourceVersions are read under the store's lock and queued behind every event already
handed to the loop, so a BOOKMARK at R means every event <= R was sent before it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubesched.apiserver.status import failure
from kubesched.cluster.client import WatchEvent
from kubesched.cluster.memory import MemoryCluster
from kubesched.errors import GoneError

__all__ = ["WatchHub", "WatchParams", "serve_watch"]

_log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Annotation of the bookmark that ends the initial events of a ``sendInitialEvents`` watch.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class _Close:
    """Queue sentinel: end the stream."""


_CLOSE = _Close()


@dataclass(frozen=True, slots=True)
class _Bookmark:
    resource_version: str
    initial_events_end: bool = False


_Item = WatchEvent | _Bookmark | _Close


class WatchStream:
    """One open watch: the queue between the store's handler and the HTTP writer."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()

    def handler(self, ev: WatchEvent) -> None:
        """Store watch handler: called under the store's lock on any thread; never blocks."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, ev)
        except RuntimeError:  # loop closed: the server is gone
            pass

    def close(self) -> None:
        """End the stream after the events already queued (thread-safe)."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, _CLOSE)
        except RuntimeError:
            pass


class WatchHub:
    """The open watches, so a test hook (or shutdown) can close them all."""

    def __init__(self) -> None:
        self._streams: set[WatchStream] = set()

    def add(self, stream: WatchStream) -> None:
        self._streams.add(stream)

    def discard(self, stream: WatchStream) -> None:
        self._streams.discard(stream)

    def __len__(self) -> int:
        return len(self._streams)

    def drop_all(self) -> int:
        """Close every open watch stream; returns how many were open."""
        streams = list(self._streams)
        for s in streams:
            s.close()
        return len(streams)


@dataclass(frozen=True, slots=True)
class WatchParams:
    """What one watch request asks for.

    ``resource_version``: None/""/"0" start with ADDED for every existing object, else changes
    after it. ``view`` turns a stored object into the served version (identity for most kinds).
    ``matches`` applies namespace, label and field selectors. ``timeout`` in seconds (None: until
    the client or the server closes). ``bookmark_interval`` seconds between BOOKMARKs when
    ``bookmarks`` is set. ``kind``/``api_version`` label BOOKMARK objects.
    """

    store_kind: str
    kind: str
    api_version: str
    resource_version: str | None
    view: Callable[[Obj], Obj]
    matches: Callable[[Obj], bool]
    timeout: float | None
    bookmarks: bool
    bookmark_interval: float
    send_initial_events: bool = False
    max_queue: int = 100_000


def _line(type_: str, obj: Obj) -> bytes:
    return (json.dumps({"type": type_, "object": obj}, separators=(",", ":")) + "\n").encode()


def _convert(ev: WatchEvent, params: WatchParams) -> bytes | None:
    """Filtered, versioned watch line of a store event, or None when the watcher must not see it."""
    new_ok = params.matches(params.view(ev.object))
    if ev.type == "ADDED":
        return _line("ADDED", params.view(ev.object)) if new_ok else None
    old_ok = new_ok if ev.old_object is None else params.matches(params.view(ev.old_object))
    if ev.type == "DELETED":
        return _line("DELETED", params.view(ev.object)) if (old_ok or new_ok) else None
    if new_ok and old_ok:
        return _line("MODIFIED", params.view(ev.object))
    if new_ok:
        return _line("ADDED", params.view(ev.object))
    if old_ok:
        return _line("DELETED", params.view(ev.object))
    return None


def _bookmark_line(bm: _Bookmark, params: WatchParams) -> bytes:
    meta: Obj = {"resourceVersion": bm.resource_version}
    if bm.initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return _line("BOOKMARK", {"kind": params.kind, "apiVersion": params.api_version, "metadata": meta})


async def _start(resp: web.StreamResponse, request: web.Request) -> None:
    resp.content_type = "application/json"
    resp.enable_chunked_encoding()
    await resp.prepare(request)


async def serve_watch(
    request: web.Request, cluster: MemoryCluster, hub: WatchHub, params: WatchParams
) -> web.StreamResponse:
    """Answer a watch request with a stream of events until the timeout, the client leaves, or the
    hub drops it. A compacted resourceVersion gives one ``ERROR`` event whose object is a
    ``Status`` (code 410, reason ``Expired``), then the end of the stream, as kube-apiserver does."""
    loop = asyncio.get_running_loop()
    stream = WatchStream(loop)
    resp = web.StreamResponse(status=200)
    start_rv = params.resource_version
    if params.send_initial_events:
        start_rv = None
    try:
        sub = cluster.watch(params.store_kind, start_rv, stream.handler)
    except GoneError as e:
        await _start(resp, request)
        await resp.write(_line("ERROR", failure(410, str(e), "Expired")))
        await resp.write_eof()
        return resp
    except ValueError as e:
        await _start(resp, request)
        details = {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]}
        code, reason = (504, "Timeout") if "Too large" in str(e) else (400, "BadRequest")
        await resp.write(_line("ERROR", failure(code, str(e), reason, details if code == 504 else None)))
        await resp.write_eof()
        return resp
    hub.add(stream)
    try:
        if params.bookmarks:
            # Queued behind the replayed events (call_soon keeps FIFO order with call_soon_threadsafe).
            first = _Bookmark(cluster.resource_version, params.send_initial_events)
            loop.call_soon(stream.queue.put_nowait, first)
        await _start(resp, request)
        await _pump(resp, cluster, stream, params)
        await resp.write_eof()
    except ConnectionError:  # the client went away; a cancelled handler (same cause) propagates
        pass
    finally:
        sub.stop()
        hub.discard(stream)
    return resp


async def _pump(resp: web.StreamResponse, cluster: MemoryCluster, stream: WatchStream, params: WatchParams) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + params.timeout if params.timeout is not None else math.inf
    interval = params.bookmark_interval
    next_bookmark = loop.time() + interval if params.bookmarks else math.inf
    queue = stream.queue
    while True:
        now = loop.time()
        if now >= deadline:
            return
        if now >= next_bookmark:
            loop.call_soon(queue.put_nowait, _Bookmark(cluster.resource_version))
            next_bookmark = now + interval
        wait = min(deadline, next_bookmark) - now
        try:
            item = await asyncio.wait_for(queue.get(), timeout=None if math.isinf(wait) else wait)
        except TimeoutError:
            continue
        chunk: list[bytes] = []
        while True:
            if isinstance(item, _Close):
                if chunk:
                    await resp.write(b"".join(chunk))
                return
            if isinstance(item, _Bookmark):
                chunk.append(_bookmark_line(item, params))
            else:
                line = _convert(item, params)
                if line is not None:
                    chunk.append(line)
            if queue.empty() or len(chunk) >= 256:
                break
            item = queue.get_nowait()
        if queue.qsize() > params.max_queue:
            _log.warning("closing a watch of %s: client too slow (%d events queued)", params.kind, queue.qsize())
            return
        if chunk:
            await resp.write(b"".join(chunk))
