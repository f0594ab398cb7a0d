"""Watch streams: one store subscription per kind, fanned out on the server's event loop.

``MemoryCluster`` calls watch handlers synchronously, under its lock, on whichever thread wrote.
The :class:`WatchHub` holds one store subscription per watched kind (a :class:`_KindFeed`, like
kube-apiserver's ``Cacher`` in ``staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go``),
whose handler only appends the event to a buffer and, once per batch, schedules a dispatch on the
event loop; the store's lock is never held across network I/O, and a write costs the same whatever
the number of watchers. The dispatch hands each event to the watchers that may want it: those of
the object's namespace and those of all namespaces (``Cacher.dispatchEvent``; watchers of other
namespaces cost nothing). Each event is serialized once per served version, whatever the number of
watchers (``cachingObject`` in the same package); the bytes are shared by every watcher's buffer.

Each HTTP watch is a :class:`WatchStream`: filtering (selectors), a bounded buffer of encoded
lines and a writer task sending them as newline-delimited JSON (``{"type": "ADDED", "object":
{...}}``, as ``watch.Encoder`` in ``staging/src/k8s.io/apimachinery/pkg/watch`` streams them) and
BOOKMARKs. A watcher that falls behind is closed, as ``cacheWatcher`` is when its input channel
stays full (``cache_watcher.go: add``): when its buffer holds ``buffer_events`` events or
``buffer_bytes`` bytes, or when one write to the client does not complete within
``write_timeout`` seconds. The client then re-watches from the last resourceVersion it saw (or
re-lists on 410), as client-go's reflector does; the server's memory per slow client stays bounded.

Selector filtering follows the watch cache (``cache_watcher.go: convertToWatchEvent``): a MODIFIED
object that starts matching is sent as ADDED, one that stops matching as DELETED (with its new
state).

A BOOKMARK at R means every event <= R was sent before it: its version is read from the store
after every event handed to the feed has been dispatched to the watchers' buffers, and buffered
events are written first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubesched.client.client import WatchEvent
from kubesched.client.json_codec import dumps
from kubesched.embedded.apiserver.status import failure
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import GoneError

__all__ = [
    "WatchHub",
    "WatchLimits",
    "WatchParams",
    "WatchStream",
    "encode_object",
    "index_key",
    "serve_watch",
]

_log = logging.getLogger(__name__)

Obj = dict[str, Any]
View = Callable[[Obj], Obj]

#: Annotation of the bookmark that ends the initial events of a ``sendInitialEvents`` watch.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

#: Most lines and bytes written to a watch client in one write.
_CHUNK_LINES = 256
_CHUNK_BYTES = 1 << 20


def encode_object(obj: Obj) -> bytes:
    """Compact JSON of a served object (the one serialization per event and served version)."""
    return dumps(obj)


def _line(type_: str, obj_json: bytes) -> bytes:
    return b'{"type":"' + type_.encode() + b'","object":' + obj_json + b"}\n"


class _Encoded:
    """One store event with its served views and encoded lines, computed once and shared by every
    watcher (keys: the watcher's view function)."""

    __slots__ = ("event", "rv", "direct", "_views", "_old_views", "_json", "_lines", "_framed")

    def __init__(
        self, event: WatchEvent, rv: int, direct: dict[WatchStream, list[bytes]] | None = None
    ) -> None:
        self.event = event
        self.rv = rv
        #: the chunks of this event's batch for idle connections, by watcher (None: write at once)
        self.direct = direct
        self._views: dict[View, Obj] = {}
        self._old_views: dict[View, Obj | None] = {}
        self._json: dict[View, bytes] = {}
        self._lines: dict[tuple[str, View], bytes] = {}
        self._framed: dict[tuple[str, View], bytes] = {}

    def view(self, view: View) -> Obj:
        v = self._views.get(view)
        if v is None:
            v = self._views[view] = view(self.event.object)
        return v

    def old_view(self, view: View) -> Obj | None:
        if view not in self._old_views:
            old = self.event.old_object
            self._old_views[view] = None if old is None else view(old)
        return self._old_views[view]

    def line(self, type_: str, view: View) -> bytes:
        key = (type_, view)
        b = self._lines.get(key)
        if b is None:
            data = self._json.get(view)
            if data is None:
                data = self._json[view] = encode_object(self.view(view))
            b = self._lines[key] = _line(type_, data)
        return b

    def framed(self, type_: str, view: View) -> bytes:
        """:meth:`line` as one HTTP/1.1 chunk (``<hex length>\\r\\n<line>\\r\\n``)."""
        key = (type_, view)
        b = self._framed.get(key)
        if b is None:
            line = self.line(type_, view)
            b = self._framed[key] = b"%x\r\n" % len(line) + line + b"\r\n"
        return b


@dataclass(frozen=True, slots=True)
class WatchLimits:
    """Bounds of one watch: ``buffer_events`` events or ``buffer_bytes`` bytes waiting to be
    written (more: the watch is closed), ``write_timeout`` seconds for one write to the client
    (longer: the connection is closed)."""

    buffer_events: int = 10_000
    buffer_bytes: int = 64 * 1024 * 1024
    write_timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class WatchParams:
    """What one watch request asks for, and its limits.

    ``resource_version``: None/""/"0" start with ADDED for every existing object, else changes
    after it. ``view`` turns a stored object into the served version (identity for most kinds).
    ``matches`` applies namespace, label and field selectors; ``index`` (see :func:`index_key`)
    lets the hub skip the watch for events of other namespaces or nodes. ``timeout`` in seconds (None: until the client
    or the server closes). ``bookmark_interval`` seconds between BOOKMARKs when ``bookmarks`` is
    set. ``kind``/``api_version`` label BOOKMARK objects. ``limits``: see :class:`WatchLimits`.
    """

    store_kind: str
    kind: str
    api_version: str
    resource_version: str | None
    view: View
    matches: Callable[[Obj], bool]
    timeout: float | None
    bookmarks: bool
    bookmark_interval: float
    send_initial_events: bool = False
    index: tuple[str, str] | None = None
    limits: WatchLimits = WatchLimits()


def _event_type(enc: _Encoded, params: WatchParams) -> str | None:
    """Type of the watch event a store event is for this watcher, or None when it must not see it."""
    ev = enc.event
    new_ok = params.matches(enc.view(params.view))
    if ev.type == "ADDED":
        return "ADDED" if new_ok else None
    old = enc.old_view(params.view)
    old_ok = new_ok if old is None else params.matches(old)
    if ev.type == "DELETED":
        return "DELETED" if (old_ok or new_ok) else None
    if new_ok and old_ok:
        return "MODIFIED"
    if new_ok:
        return "ADDED"
    if old_ok:
        return "DELETED"
    return None


def _convert(enc: _Encoded, params: WatchParams) -> bytes | None:
    """Filtered, versioned watch line of a store event, or None when the watcher must not see it."""
    type_ = _event_type(enc, params)
    return None if type_ is None else enc.line(type_, params.view)


class WatchStream:
    """One open watch: its filter, its bounded buffer of encoded lines (filled by the hub's
    dispatch, drained by the writer), on the event loop thread only."""

    def __init__(self, params: WatchParams, start_rv: int) -> None:
        self.params = params
        self.start_rv = start_rv  # live events with rv <= start_rv were replayed
        self.pending: deque[bytes] = deque()
        self.pending_bytes = 0
        #: largest ``pending_bytes`` seen (for tests and diagnostics)
        self.peak_bytes = 0
        self.closed = False
        self.overflowed = False
        #: loop time a write to the client started, while it is in progress (see WatchHub's watchdog)
        self.writing_since: float | None = None
        #: the connection, once the replay is written: events then go straight to it while its
        #: write buffer is empty and nothing waits in ours
        self.transport: asyncio.WriteTransport | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._direct_bytes = 0  # bytes of the lines collected in a batch's ``direct`` and not written yet

    def wake(self) -> None:
        """Wake the writer if it waits (event loop thread)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, loop: asyncio.AbstractEventLoop, until: float) -> None:
        """Wait until :meth:`wake` or loop time ``until`` (``math.inf``: no timer)."""
        waiter = self._waiter = loop.create_future()
        timer = None if math.isinf(until) else loop.call_at(until, self.wake)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def offer(self, enc: _Encoded) -> None:
        """Buffer the line of ``enc`` for this watcher (if it wants it); close on overflow. When
        the connection is idle the line goes straight to it, as one chunk of the chunked response;
        when ``enc`` is part of a batch (``enc.direct``) the line is added to ``enc.direct[self]``
        instead, for the feed to write the lines of the whole batch as one chunk
        (:meth:`write_direct`)."""
        if self.closed or enc.rv <= self.start_rv:
            return
        type_ = _event_type(enc, self.params)
        if type_ is None:
            return
        transport = self.transport
        if (
            transport is not None
            and not self.pending
            and self.writing_since is None
            and not transport.get_write_buffer_size()
            and not transport.is_closing()
        ):
            direct = enc.direct
            if direct is None:
                transport.write(enc.framed(type_, self.params.view))  # one chunk of the chunked response
                return
            line = enc.line(type_, self.params.view)
            lines = direct.get(self)
            if lines is None:
                lines = direct[self] = []
            lines.append(line)
            self._direct_bytes += len(line)
            if self._direct_bytes >= _CHUNK_BYTES:  # a big batch: write it 1 MiB at a time
                self.write_direct(direct.pop(self))
            return
        line = enc.line(type_, self.params.view)
        size = self.pending_bytes + len(line)
        if len(self.pending) >= self.params.limits.buffer_events or size > self.params.limits.buffer_bytes:
            self.overflowed = True
            self.close()
            return
        self.pending.append(line)
        self.pending_bytes = size
        if size > self.peak_bytes:
            self.peak_bytes = size
        self.wake()

    def write_direct(self, lines: list[bytes]) -> None:
        """Write the lines :meth:`offer` collected for this watcher as one chunk of the chunked
        response (still in order: nothing was buffered meanwhile), unless the stream closed since."""
        size, self._direct_bytes = self._direct_bytes, 0
        transport = self.transport
        if transport is not None and not self.closed:
            transport.write(b"%x\r\n" % size + b"".join(lines) + b"\r\n")

    def take_chunk(self) -> bytes:
        """Up to 256 lines / 1 MiB of the buffer, removed from it."""
        out: list[bytes] = []
        size = 0
        pending = self.pending
        while pending and len(out) < _CHUNK_LINES and size < _CHUNK_BYTES:
            line = pending.popleft()
            out.append(line)
            size += len(line)
        self.pending_bytes -= size
        return b"".join(out)

    def close(self) -> None:
        """End the stream (its buffer is dropped; the client re-watches from what it received)."""
        self.closed = True
        self.transport = None
        self.pending.clear()
        self.pending_bytes = 0
        self.wake()


def index_key(kind: str, namespace: str | None, field_selector: str | None) -> tuple[str, str] | None:
    """The index bucket of a watch: ``("node", N)`` for a Pod watch whose field selector requires
    ``spec.nodeName=N`` (what kubelets watch; kube-apiserver indexes pods by node name the same
    way, ``pkg/registry/core/pod/storage: NodeNameTriggerFunc``), else ``("namespace", NS)`` for a
    watch in one namespace, else None (the watch sees every event of its kind)."""
    if kind == "Pod" and field_selector:
        for term in field_selector.split(","):
            key, sep, value = term.partition("==") if "==" in term else term.partition("=")
            if sep and not key.endswith("!") and key.strip() == "spec.nodeName":
                return ("node", value.strip())
    if namespace is not None:
        return ("namespace", namespace)
    return None


def _event_keys(ev: WatchEvent) -> set[tuple[str, str]]:
    """Index buckets a store event concerns: its namespace and, for pods, the old and new node."""
    meta = ev.object.get("metadata") or {}
    keys: set[tuple[str, str]] = set()
    if meta.get("namespace"):
        keys.add(("namespace", meta["namespace"]))
    if ev.kind == "Pod":
        keys.add(("node", (ev.object.get("spec") or {}).get("nodeName") or ""))
        if ev.old_object is not None:
            keys.add(("node", (ev.old_object.get("spec") or {}).get("nodeName") or ""))
    return keys


class _KindFeed:
    """The store subscription of one kind and the watchers it feeds, indexed by
    :func:`index_key` so that an event costs nothing for watchers of other namespaces/nodes."""

    def __init__(self, hub: WatchHub, cluster: MemoryCluster, kind: str) -> None:
        self.hub = hub
        self.cluster = cluster
        self.kind = kind
        self.unindexed: set[WatchStream] = set()
        self.indexed: dict[tuple[str, str], set[WatchStream]] = {}
        self._lock = threading.Lock()
        self._buffer: list[tuple[int, WatchEvent]] = []
        self._scheduled = False
        self._sub = cluster.watch(kind, cluster.resource_version, self._on_event)

    def __len__(self) -> int:
        return len(self.unindexed) + sum(len(s) for s in self.indexed.values())

    def add(self, stream: WatchStream) -> None:
        key = stream.params.index
        if key is None:
            self.unindexed.add(stream)
        else:
            self.indexed.setdefault(key, set()).add(stream)

    def discard(self, stream: WatchStream) -> None:
        key = stream.params.index
        if key is None:
            self.unindexed.discard(stream)
        else:
            group = self.indexed.get(key)
            if group is not None:
                group.discard(stream)
                if not group:
                    del self.indexed[key]

    def streams(self) -> list[WatchStream]:
        out = list(self.unindexed)
        for group in self.indexed.values():
            out.extend(group)
        return out

    def stop(self) -> None:
        self._sub.stop()

    def _on_event(self, ev: WatchEvent) -> None:
        """Store handler: under the store's lock, on the writer's thread; never blocks."""
        rv = int((ev.object.get("metadata") or {}).get("resourceVersion") or 0)
        with self._lock:
            self._buffer.append((rv, ev))
            if self._scheduled:
                return
            self._scheduled = True
        loop = self.hub.loop
        try:
            if threading.get_ident() == self.hub.loop_thread:
                loop.call_soon(self.flush)
            else:
                loop.call_soon_threadsafe(self.flush)
        except RuntimeError:  # loop closed: the server is gone
            pass

    def flush(self) -> None:
        """Dispatch the buffered events to the watchers' buffers (event loop thread)."""
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._scheduled = False
        indexed = self.indexed
        # the events of a batch (store writes of one event loop turn) reach an idle connection
        # as one chunk: one send for the server, one read and one chunk to decode for the
        # client, not one per event
        direct: dict[WatchStream, list[bytes]] | None = {} if len(batch) > 1 else None
        for rv, ev in batch:
            enc = _Encoded(ev, rv, direct)
            for stream in self.unindexed:
                stream.offer(enc)
            if indexed:
                for key in _event_keys(ev):
                    group = indexed.get(key)
                    if group:
                        for stream in group:
                            stream.offer(enc)
        if direct:
            for stream, lines in direct.items():
                stream.write_direct(lines)

    def bookmark_version(self) -> str:
        """A resourceVersion R such that every event <= R of this kind is in the watchers'
        buffers (event loop thread)."""
        while True:
            self.flush()
            rv = self.cluster.resource_version
            with self._lock:
                if not self._buffer:
                    return rv


class WatchHub:
    """The open watches of one server: one :class:`_KindFeed` per watched kind (created with its
    first watch, stopped with its last), used from the server's event loop thread."""

    def __init__(self) -> None:
        self._feeds: dict[str, _KindFeed] = {}
        self._requests: dict[WatchStream, web.Request] = {}
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set on first use
        self.loop_thread = 0
        self._watchdog: asyncio.TimerHandle | None = None
        #: watches closed because a write took longer than the write timeout
        self.slow_writes = 0

    def feed(self, cluster: MemoryCluster, kind: str) -> _KindFeed:
        """The feed of ``kind``, subscribed to the store (created if needed). Take it before
        reading the replay of a new watch, so no event falls between the two."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
            self.loop_thread = threading.get_ident()
        feed = self._feeds.get(kind)
        if feed is None:
            feed = self._feeds[kind] = _KindFeed(self, cluster, kind)
        return feed

    def add(self, feed: _KindFeed, stream: WatchStream, request: web.Request) -> None:
        """Register ``stream`` (served on ``request``) for the live events of ``feed`` after
        ``stream.start_rv``."""
        self._requests[stream] = request
        if self._watchdog is None:
            self._watchdog = self.loop.call_later(1.0, self._check_writes)
        feed.add(stream)

    def release(self, kind: str) -> None:
        """Stop the feed of ``kind`` if no watch uses it."""
        feed = self._feeds.get(kind)
        if feed is not None and not len(feed):
            feed.stop()
            del self._feeds[kind]

    def _check_writes(self) -> None:
        """Every second: abort the connections whose current write started more than the write
        timeout ago (the writer then gets ConnectionError and ends the watch)."""
        self._watchdog = None
        now = self.loop.time()
        for stream, request in list(self._requests.items()):
            since = stream.writing_since
            if since is not None and now - since > stream.params.limits.write_timeout:
                _log.warning(
                    "closing a watch of %s: a write to the client took more than %.0f s",
                    stream.params.kind,
                    stream.params.limits.write_timeout,
                )
                self.slow_writes += 1
                stream.close()
                stream.writing_since = None
                _abort(request)
        if self._requests:
            self._watchdog = self.loop.call_later(1.0, self._check_writes)

    def discard(self, stream: WatchStream) -> None:
        self._requests.pop(stream, None)
        kind = stream.params.store_kind
        feed = self._feeds.get(kind)
        if feed is not None:
            feed.discard(stream)
            self.release(kind)

    def streams(self) -> list[WatchStream]:
        """The open watch streams."""
        return [s for feed in self._feeds.values() for s in feed.streams()]

    def __len__(self) -> int:
        return sum(len(f) for f in self._feeds.values())

    def drop_all(self) -> int:
        """Close every open watch stream; returns how many were open (any thread)."""
        loop = self.loop
        if loop is None:
            return 0
        if threading.get_ident() == self.loop_thread:
            return self._drop_all()
        if not loop.is_running():
            return 0
        done: concurrent.futures.Future[int] = concurrent.futures.Future()
        loop.call_soon_threadsafe(lambda: done.set_result(self._drop_all()))
        return done.result(timeout=10)

    def _drop_all(self) -> int:
        streams = self.streams()
        for s in streams:
            s.close()
        return len(streams)


@dataclass(frozen=True, slots=True)
class _Bookmark:
    resource_version: str
    initial_events_end: bool = False


def _bookmark_line(bm: _Bookmark, params: WatchParams) -> bytes:
    meta: Obj = {"resourceVersion": bm.resource_version}
    if bm.initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return _line(
        "BOOKMARK", encode_object({"kind": params.kind, "apiVersion": params.api_version, "metadata": meta})
    )


async def _start(resp: web.StreamResponse, request: web.Request) -> None:
    resp.content_type = "application/json"
    resp.enable_chunked_encoding()
    await resp.prepare(request)


async def _write(resp: web.StreamResponse, stream: WatchStream, data: bytes) -> None:
    """Write ``data``; the hub's watchdog aborts the connection if this takes longer than the write
    timeout (the write then raises ConnectionError)."""
    stream.writing_since = asyncio.get_running_loop().time()
    try:
        await resp.write(data)
    finally:
        stream.writing_since = None


async def serve_watch(
    request: web.Request, cluster: MemoryCluster, hub: WatchHub, params: WatchParams
) -> web.StreamResponse:
    """Answer a watch request with a stream of events until the timeout, the client leaves, the
    hub drops it, or the client falls behind (see the module docstring). A compacted
    resourceVersion gives one ``ERROR`` event whose object is a ``Status`` (code 410, reason
    ``Expired``), a version the store has not reached (the caller waited for it) one whose code
    is 504 (``Too large resource version``, cause ``ResourceVersionTooLarge``,
    ``retryAfterSeconds`` 1), then the end of the stream, as kube-apiserver does. A timeout of 0
    or less (``timeoutSeconds`` < 0) ends the stream at once with no event."""
    resp = web.StreamResponse(status=200)
    if params.timeout is not None and params.timeout <= 0:  # a deadline already passed: no event
        await _start(resp, request)
        await resp.write_eof()
        return resp
    start_rv = params.resource_version
    if params.send_initial_events:
        start_rv = None
    feed = hub.feed(cluster, params.store_kind)  # subscribed before the replay is read
    try:
        replay, now = cluster.replay(params.store_kind, start_rv)
    except GoneError as e:
        hub.release(params.store_kind)
        await _start(resp, request)
        await resp.write(_line("ERROR", encode_object(failure(410, str(e), "Expired"))))
        await resp.write_eof()
        return resp
    except ValueError as e:
        hub.release(params.store_kind)
        await _start(resp, request)
        details = {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        }
        code, reason = (504, "Timeout") if "Too large" in str(e) else (400, "BadRequest")
        body = failure(code, str(e), reason, details if code == 504 else None)
        await resp.write(_line("ERROR", encode_object(body)))
        await resp.write_eof()
        return resp
    # no await between the replay and the registration: live events start right after ``now``
    # (the feed's buffered events up to ``now`` are dropped by the stream's start_rv)
    stream = WatchStream(params, int(now))
    hub.add(feed, stream, request)
    try:
        await _start(resp, request)
        chunk: list[bytes] = []
        for ev in replay:
            line = _convert(_Encoded(ev, 0), params)
            if line is not None:
                chunk.append(line)
                if len(chunk) >= _CHUNK_LINES:
                    await _write(resp, stream, b"".join(chunk))
                    chunk = []
        if chunk:
            await _write(resp, stream, b"".join(chunk))
        del replay, chunk
        if params.bookmarks:
            await _flush_and_bookmark(resp, stream, feed, params, initial=params.send_initial_events)
        stream.transport = request.transport  # type: ignore[assignment]
        await _pump(resp, stream, feed, params)
        if stream.overflowed:
            _log.warning(
                "closing a watch of %s: client too slow (more than %d events or %d bytes waiting)",
                params.kind,
                params.limits.buffer_events,
                params.limits.buffer_bytes,
            )
            _abort(request)
        else:
            stream.writing_since = asyncio.get_running_loop().time()
            await resp.write_eof()
    except ConnectionError:  # the client went away or was too slow (watchdog); a cancelled handler propagates
        pass
    finally:
        stream.close()
        hub.discard(stream)
    return resp


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


async def _flush_and_bookmark(
    resp: web.StreamResponse, stream: WatchStream, feed: _KindFeed, params: WatchParams, initial: bool = False
) -> None:
    rv = feed.bookmark_version()
    while stream.pending and not stream.closed:
        await _write(resp, stream, stream.take_chunk())
    if not stream.closed:
        await _write(resp, stream, _bookmark_line(_Bookmark(rv, initial), params))


async def _pump(resp: web.StreamResponse, stream: WatchStream, feed: _KindFeed, params: WatchParams) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + params.timeout if params.timeout is not None else math.inf
    interval = params.bookmark_interval
    next_bookmark = loop.time() + interval if params.bookmarks else math.inf
    while True:
        if stream.closed:
            return
        if stream.pending:
            await _write(resp, stream, stream.take_chunk())
            continue
        now = loop.time()
        if now >= deadline:
            return
        if now >= next_bookmark:
            await _flush_and_bookmark(resp, stream, feed, params)
            next_bookmark = loop.time() + interval
            continue
        await stream.wait(loop, min(deadline, next_bookmark))
