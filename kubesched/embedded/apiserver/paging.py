"""``limit``/``continue`` paging of list requests.

kube-apiserver serves every page of a paged list from the same etcd revision, and a continue token
whose revision was compacted answers ``410 Expired``
(``staging/src/k8s.io/apiserver/pkg/storage/continue.go``, ``etcd3/store.go``). The embedded store
keeps no old revisions, so the first page's full (filtered) result is kept here as a snapshot and
later pages are cut from it: every page of one list shows the same resourceVersion and the same
objects. Snapshots expire after ``ttl`` seconds, beyond ``max_snapshots`` (oldest first) and on
:meth:`Pager.compact`; their tokens then answer 410.

The token is opaque to clients: base64url of ``{"v": 1, "rv": R, "id": I, "start": N}``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import threading
from collections import OrderedDict
from typing import Any

from kubesched.embedded.apiserver.status import ApiError

__all__ = ["EXPIRED_MESSAGE", "Page", "Pager"]

Obj = dict[str, Any]

#: Message of a 410 for an expired continue token (``storage.ErrResourceExpired`` text upstream).
EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - "
    "objects that were created, modified, or deleted between the time the first chunk was returned and "
    "now may show up in the list."
)


class Page:
    """One page: ``items``, the list's ``resource_version``, the ``continue`` token ("" on the last
    page) and ``remaining`` (items after this page)."""

    __slots__ = ("items", "resource_version", "token", "remaining")

    def __init__(self, items: list[Obj], resource_version: str, token: str, remaining: int) -> None:
        self.items = items
        self.resource_version = resource_version
        self.token = token
        self.remaining = remaining


class Pager:
    """Holds list snapshots for continue tokens (thread-safe). ``now`` gives seconds (a clock)."""

    def __init__(self, now: Any, *, ttl: float = 300.0, max_snapshots: int = 64) -> None:
        self._now = now
        self._ttl = ttl
        self._max = max_snapshots
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._snapshots: OrderedDict[int, tuple[float, str, list[Obj]]] = OrderedDict()

    def first(self, items: list[Obj], resource_version: str, limit: int) -> Page:
        """First page of ``items`` (already filtered and sorted); ``limit`` <= 0 means everything."""
        if limit <= 0 or len(items) <= limit:
            return Page(items, resource_version, "", 0)
        with self._lock:
            ident = next(self._ids)
            self._snapshots[ident] = (self._now(), resource_version, items)
            while len(self._snapshots) > self._max:
                self._snapshots.popitem(last=False)
        return Page(
            items[:limit], resource_version, _token(resource_version, ident, limit), len(items) - limit
        )

    def next(self, token: str, limit: int) -> Page:
        """The page a continue ``token`` points at. Raises ApiError 400 for a malformed token and
        410 Expired when its snapshot is gone."""
        rv, ident, start = _parse(token)
        with self._lock:
            entry = self._snapshots.get(ident)
            if entry is not None and self._now() - entry[0] > self._ttl:
                del self._snapshots[ident]
                entry = None
        if entry is None or entry[1] != rv:
            raise ApiError(410, EXPIRED_MESSAGE, "Expired")
        items = entry[2]
        end = len(items) if limit <= 0 else min(len(items), start + limit)
        if end >= len(items):
            with self._lock:
                self._snapshots.pop(ident, None)
            return Page(items[start:], rv, "", 0)
        return Page(items[start:end], rv, _token(rv, ident, end), len(items) - end)

    def compact(self) -> None:
        """Forget every snapshot (their tokens answer 410 from now on)."""
        with self._lock:
            self._snapshots.clear()


def _token(rv: str, ident: int, start: int) -> str:
    raw = json.dumps({"v": 1, "rv": rv, "id": ident, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _parse(token: str) -> tuple[str, int, int]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        rv, ident, start = str(data["rv"]), int(data["id"]), int(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise ApiError(400, f"continue key is not valid: {token}", "BadRequest") from None
    if start < 0:
        raise ApiError(400, f"continue key is not valid: {token}", "BadRequest")
    return rv, ident, start
