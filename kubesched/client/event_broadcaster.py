"""Event broadcaster: ``events.k8s.io/v1`` Events written off the caller's thread, with isomorphic
events folded into one Event with a ``series`` (``k8s.io/client-go/tools/events``
``event_broadcaster.go``: ``recordToSink``, ``recordEvent``, ``finishSeries``,
``refreshExistingEventSeries``, ``getKey``).

:meth:`EventBroadcaster.record` only puts the event into a bounded queue (``maxQueuedEvents`` =
1000; when full the event is dropped with a rate-limited warning, as upstream's
``watch.DropIfChannelFull``) and returns. Worker threads take events from the queue and write
them through an :class:`EventSink` that has its own client-side token bucket (upstream's
scheduler builds a separate events client), so events never take tokens from bindings.

Aggregation follows upstream exactly. Two events are isomorphic when type, action, reason,
reportingController, reportingInstance, regarding and related are equal (``note`` is not part of
the key: the Event keeps the first note):

* the first one is created (``POST``) and cached;
* the second one gives the cached Event ``series = {count: 2, lastObservedTime: now}`` and is
  written by ``PATCH`` (strategic merge patch of the ``series`` field; ``404`` -> created again);
* later ones only increment the cached count and ``lastObservedTime``; the count is written when
  the series ends (no new occurrence for ``finish_time``, 6 minutes), every ``refresh_time``
  (30 minutes) while it lasts, and when the broadcaster stops.

Singleton events leave the cache ``finish_time`` after their ``eventTime``. The cache is also
bounded by count, as client-go's event correlator (``tools/record/events_cache.go``,
``maxLruCacheEntries``): at most :data:`MAX_CACHED_EVENTS` entries, the least recently seen one
leaving first (a series whose count was not written yet is written as it leaves, so no
occurrence is lost; a later isomorphic event starts a new Event). An entry keeps only what a
series patch and a re-creation need beyond its key: the Event's name and namespace, its note and
``eventTime`` (and any other top-level field, as compact JSON) -- about 1 KiB instead of the whole
Event. A write that fails
with a transport error or 5xx is retried up to 12 times, ``sleep`` (10 s, 25 % jitter) apart;
other API errors drop the event with a log line, as upstream does.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kubesched.api.timestamps import rfc3339_micro
from kubesched.client.json_codec import dumps, loads
from kubesched.client.throttled_log import ThrottledLog
from kubesched.clock import Clock
from kubesched.errors import AlreadyExistsError, NotFoundError

__all__ = ["BatchEventSink", "EventBroadcaster", "EventSink", "event_key"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

MAX_TRIES_PER_EVENT = 12
FINISH_TIME = 6 * 60.0
REFRESH_TIME = 30 * 60.0
MAX_QUEUED_EVENTS = 1000
#: most Events in the aggregation cache (client-go ``maxLruCacheEntries``)
MAX_CACHED_EVENTS = 4096
#: most queued events a writer takes at once (their creations are pipelined on one connection)
MAX_BATCH = 64
DEFAULT_SLEEP = 10.0


class EventSink(Protocol):
    """Where events go (``EventSinkImpl``): ``create_event`` POSTs, ``patch_event`` sends a
    strategic merge patch. Both raise the client's errors (NotFoundError for a missing Event)."""

    def create_event(self, event: Obj) -> Any: ...

    def patch_event(self, namespace: str, name: str, patch: Obj) -> Any: ...


@runtime_checkable
class BatchEventSink(EventSink, Protocol):
    """A sink that also creates several Events in one go (``KubeClusterClient.create_events``:
    pipelined on one connection); the result per event is None or the error ``create_event``
    would have raised."""

    def create_events(self, events: list[Obj]) -> list[Exception | None]: ...


def _ref(r: Any) -> tuple[Any, ...]:
    if not isinstance(r, dict):
        return ()
    return (
        r.get("kind"),
        r.get("namespace"),
        r.get("name"),
        r.get("uid"),
        r.get("apiVersion"),
        r.get("resourceVersion"),
        r.get("fieldPath"),
    )


def event_key(ev: Obj) -> tuple[Any, ...]:
    """``getKey``: the isomorphism key of an Event."""
    return (
        ev.get("type"),
        ev.get("action"),
        ev.get("reason"),
        ev.get("reportingController"),
        ev.get("reportingInstance"),
        _ref(ev.get("regarding")),
        _ref(ev.get("related")),
    )


#: fields rebuilt from the key and the entry; everything else goes to ``_Cached.rest``
_REBUILT = frozenset(
    {
        "apiVersion",
        "kind",
        "metadata",
        "eventTime",
        "note",
        "type",
        "action",
        "reason",
        "reportingController",
        "reportingInstance",
        "regarding",
        "related",
    }
)
_REF_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _unref(t: tuple[Any, ...]) -> Obj | None:
    """The object reference of a :func:`_ref` tuple (None for ``()``)."""
    if not t:
        return None
    return {k: v for k, v in zip(_REF_FIELDS, t, strict=True) if v is not None}


@dataclass(slots=True)
class _Cached:
    """One aggregation-cache entry: what rebuilds the Event together with its key (name,
    namespace, note, ``eventTime`` text, other top-level fields as compact JSON or None; the key
    holds type, action, reason, reporting controller and instance, regarding and related), when
    it was first and last seen, its series (None until an isomorphic event arrived) and whether
    the series count changed since it was written."""

    name: str
    namespace: str | None
    note: Any
    event_time_text: Any
    rest: bytes | None
    event_time: float
    last_observed: float
    series: dict[str, Any] | None = None
    dirty: bool = False

    @classmethod
    def of(cls, ev: Obj, now: float) -> _Cached:
        meta = ev.get("metadata") or {}
        rest = {k: v for k, v in ev.items() if k not in _REBUILT}
        for k in ("regarding", "related"):  # a reference with fields beyond the key's is kept whole
            ref = ev.get(k)
            if isinstance(ref, dict) and not ref.keys() <= set(_REF_FIELDS):
                rest[k] = ref
        extra_meta = {k: v for k, v in meta.items() if k not in ("name", "namespace", "resourceVersion")}
        if extra_meta:
            rest["metadata"] = extra_meta
        return cls(
            str(meta.get("name") or ""),
            meta.get("namespace"),
            ev.get("note"),
            ev.get("eventTime"),
            dumps(rest) if rest else None,
            now,
            now,
        )

    def event(self, key: tuple[Any, ...]) -> Obj:
        """The Event this entry stands for (with its current series)."""
        typ, action, reason, controller, instance, regarding, related = key
        ev: Obj = loads(self.rest) if self.rest is not None else {}
        meta: Obj = {**(ev.get("metadata") or {}), "name": self.name}
        if self.namespace is not None:
            meta["namespace"] = self.namespace
        out: Obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta}
        for k, v in (
            ("eventTime", self.event_time_text),
            ("reportingController", controller),
            ("reportingInstance", instance),
            ("action", action),
            ("reason", reason),
            ("type", typ),
            ("note", self.note),
            ("regarding", _unref(regarding)),
            ("related", _unref(related)),
        ):
            if v is not None:
                out[k] = v
        ev.pop("metadata", None)
        out.update(ev)
        if self.series is not None:
            out["series"] = dict(self.series)
        return out


def _create_body(ev: Obj) -> Obj:
    """The body that creates ``ev``: the cached Event without its ``resourceVersion``."""
    meta = ev.get("metadata") or {}
    return {**ev, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}


def _log_failure(ev: Obj, e: Exception) -> bool:
    """Log a failed write of ``ev`` as ``recordEvent`` classifies it; True when it is worth
    retrying (a transport failure, code 0, or a 5xx answer), False when the server rejected it
    (an Event that already exists only at debug level)."""
    code = getattr(e, "code", None)
    if not isinstance(e, AlreadyExistsError) and (
        code == 0 or (isinstance(code, int) and code >= 500) or isinstance(e, OSError)
    ):
        log.warning("unable to write event %s (may retry after sleeping): %s", ev.get("reason"), e)
        return True
    if isinstance(e, AlreadyExistsError):
        log.debug("server rejected event (will not retry): %s", e)
    else:
        log.error("server rejected event %s (will not retry): %s", ev.get("reason"), e)
    return False


class _Retry(Exception):
    """The write failed in a way worth retrying (transport error, 5xx, create racing a patch)."""


class EventBroadcaster:
    """Queue + workers writing events to ``sink`` (see the module docstring).

    ``clock``: time source (seconds). ``workers``: writer threads (events of one isomorphism key
    are written by one worker, in order). ``finish_time``/``refresh_time``/``sleep``: seconds
    (upstream 6 min / 30 min / 10 s). ``max_cached``: most entries in the aggregation cache
    (least recently seen leave first). Call :meth:`start` before :meth:`record`, :meth:`stop` at
    shutdown (writes the pending series counts)."""

    def __init__(
        self,
        sink: EventSink,
        clock: Clock,
        *,
        workers: int = 2,
        finish_time: float = FINISH_TIME,
        refresh_time: float = REFRESH_TIME,
        sleep: float = DEFAULT_SLEEP,
        max_queued: int = MAX_QUEUED_EVENTS,
        max_cached: int = MAX_CACHED_EVENTS,
        rng: random.Random | None = None,
    ) -> None:
        self.sink = sink
        #: the sink's batch form, resolved once (None: events are created one by one)
        self._batch_sink = sink if isinstance(sink, BatchEventSink) else None
        self.clock = clock
        self.finish_time = finish_time
        self.refresh_time = refresh_time
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._queues: list[queue.Queue[tuple[tuple[Any, ...], Obj] | None]] = [
            queue.Queue(max_queued) for _ in range(max(1, workers))
        ]
        self._lock = threading.Lock()
        #: isomorphism key -> the cached Event (as last written or to be written), least recently
        #: seen first
        self._cache: OrderedDict[tuple[Any, ...], _Cached] = OrderedDict()
        self.max_cached = max(1, max_cached)
        #: final series counts of entries pushed out of the full cache, written by the next worker
        self._evicted: list[Obj] = []
        #: entries pushed out of the full cache so far
        self.evicted = 0
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._warn = ThrottledLog(log, 30.0)
        self.dropped = 0
        self.written = 0

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> EventBroadcaster:
        """Start the writer threads and the series timer."""
        for i, q in enumerate(self._queues):
            t = threading.Thread(target=self._work, args=(q,), name=f"event-writer-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._timer, name="event-series", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Write what is queued, then the pending series counts, and stop the threads."""
        for q in self._queues:
            try:
                q.put(None, timeout=timeout)
            except queue.Full:
                pass
        for t in self._threads[:-1]:
            t.join(timeout)
        self._stop.set()
        if self._threads:
            self._threads[-1].join(timeout)
        self._write_series(lambda ev: True)

    # ---- recording ----------------------------------------------------------------------------

    def record(self, event: Obj) -> None:
        """Queue ``event`` (an ``events.k8s.io/v1`` Event dict, which the broadcaster keeps: not
        to be changed afterwards) for writing; never blocks."""
        key = event_key(event)
        q = self._queues[hash(key) % len(self._queues)]
        try:
            q.put_nowait((key, event))
        except queue.Full:
            self.dropped += 1
            self._warn.log(
                "full",
                logging.WARNING,
                "event queue full: dropped %s event for %s (%d dropped so far)",
                event.get("reason"),
                (event.get("regarding") or {}).get("name"),
                self.dropped,
            )

    def _work(self, q: queue.Queue[tuple[tuple[Any, ...], Obj] | None]) -> None:
        """Take the next event (with a batch sink: what is queued, up to :data:`MAX_BATCH`
        events), fold each, and write: new Events created together through the batch sink,
        series patches one by one, in queue order (a patch waits for the creations queued
        before it)."""
        while True:
            items = [q.get()]
            while self._batch_sink is not None and len(items) < MAX_BATCH:
                try:
                    items.append(q.get_nowait())
                except queue.Empty:
                    break
            creates: list[Obj] = []
            for item in items:
                if item is None:
                    self._write_creates(creates)
                    return
                key, ev = item
                try:
                    to_write = self._fold(ev, key)
                    if to_write is None:
                        continue
                    if self._batch_sink is not None and to_write.get("series") is None:
                        creates.append(to_write)
                        continue
                    self._write_creates(creates)
                    creates = []
                    self._attempt(to_write)
                except Exception:  # noqa: BLE001 - an event never kills its writer
                    log.exception("writing event %s failed", ev.get("reason"))
            self._write_creates(creates)
            self._write_evicted()

    def _write_evicted(self) -> None:
        """Write the final counts of series that left the full cache."""
        if not self._evicted:
            return
        with self._lock:
            evs, self._evicted = self._evicted, []
        for ev in evs:
            self._attempt(ev)

    def _write_creates(self, events: list[Obj]) -> None:
        """Create ``events`` through the batch sink; one that failed in a way worth retrying goes
        through :meth:`_attempt` (retries with sleeps), other failures are logged and dropped."""
        if not events:
            return
        assert self._batch_sink is not None
        try:
            results = self._batch_sink.create_events([_create_body(ev) for ev in events])
        except Exception:  # noqa: BLE001 - e.g. the lease is lost: nothing was sent
            log.exception("writing %d events failed", len(events))
            return
        for ev, err in zip(events, results, strict=True):
            if err is None:
                self.written += 1
            elif _log_failure(ev, err):
                self._attempt(ev)

    def _fold(self, ev: Obj, key: tuple[Any, ...] | None = None) -> Obj | None:
        """``recordToSink``'s cache step: what to write now for ``ev`` (None: only counted);
        ``key``: its :func:`event_key` when already known."""
        if key is None:
            key = event_key(ev)
        now = self.clock.now()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                cached.last_observed = now
                if cached.series is not None:
                    cached.series["count"] += 1
                    cached.series["lastObservedTime"] = rfc3339_micro(now)
                    cached.dirty = True
                    return None
                cached.series = {"count": 2, "lastObservedTime": rfc3339_micro(now)}
                return cached.event(key)
            self._cache[key] = _Cached.of(ev, now)
            while len(self._cache) > self.max_cached:
                old_key, old = self._cache.popitem(last=False)
                self.evicted += 1
                if old.series is not None and old.dirty:
                    self._evicted.append(old.event(old_key))
            return ev  # written as it is (never changed: the writer builds its own body)

    def _attempt(self, ev: Obj) -> None:
        """``attemptRecording``: retry a retryable failure up to 12 times."""
        tries = 0
        while True:
            try:
                self._record(ev)
                self.written += 1
                return
            except _Retry as e:
                tries += 1
                if tries >= MAX_TRIES_PER_EVENT:
                    log.error(
                        "unable to write event %s for %s (retry limit exceeded): %s",
                        ev.get("reason"),
                        (ev.get("regarding") or {}).get("name"),
                        e,
                    )
                    return
                if self._stop.wait(self.sleep * (1 + 0.25 * self.rng.random())):
                    return

    def _record(self, ev: Obj) -> None:
        """``recordEvent``: PATCH a series (create when it is gone), else create."""
        series = ev.get("series")
        meta = ev.get("metadata") or {}
        try:
            if series is not None:
                try:
                    self.sink.patch_event(
                        str(meta.get("namespace") or "default"), str(meta.get("name")), {"series": series}
                    )
                    return
                except NotFoundError:
                    pass
            self.sink.create_event(_create_body(ev))
        except AlreadyExistsError as e:
            if series is not None:
                raise _Retry(str(e)) from None
            _log_failure(ev, e)
        except Exception as e:  # noqa: BLE001 - classified as upstream does
            if _log_failure(ev, e):
                raise _Retry(str(e)) from None

    # ---- series -------------------------------------------------------------------------------

    def _timer(self) -> None:
        """``wait.Until(finishSeries, finishTime)`` and ``wait.Until(refreshExistingEventSeries,
        refreshTime)``: one pass over the cache per period, not per event (the cache holds every
        event of the last ``finish_time``)."""
        last_finish = last_refresh = self.clock.now()
        while not self._stop.wait(max(0.05, min(self.finish_time, self.refresh_time))):
            now = self.clock.now()
            if now - last_finish >= self.finish_time:
                last_finish = now
                self.finish_series(now)
            if now - last_refresh >= self.refresh_time:
                last_refresh = now
                self._write_series(lambda ev: True, only_dirty=False)

    def finish_series(self, now: float) -> None:
        """``finishSeries``: write the final count of series idle for ``finish_time`` and forget
        them; forget singleton events older than ``finish_time``."""
        done: list[Obj] = []
        with self._lock:
            for key, c in list(self._cache.items()):
                if c.series is not None:
                    if c.last_observed < now - self.finish_time:
                        if c.dirty:
                            done.append(c.event(key))
                        del self._cache[key]
                elif c.event_time < now - self.finish_time:
                    del self._cache[key]
        for ev in done:
            self._attempt(ev)

    def _write_series(self, select: Callable[[_Cached], bool], only_dirty: bool = True) -> None:
        with self._lock:
            evs, self._evicted = self._evicted, []
            for key, c in self._cache.items():
                if c.series is not None and select(c) and (c.dirty or not only_dirty):
                    evs.append(c.event(key))
                    c.dirty = False
        for ev in evs:
            self._attempt(ev)

    def cached(self) -> int:
        """Events in the aggregation cache."""
        with self._lock:
            return len(self._cache)
