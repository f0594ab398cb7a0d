"""A small thread-safe cache whose entries expire after a per-entry TTL (seconds on a monotonic
clock), bounded in size (oldest entries dropped first), as the caches in front of upstream's
webhook token authenticator (``k8s.io/apiserver/pkg/authentication/token/cache``) and webhook
authorizer (``k8s.io/apiserver/plugin/pkg/authorizer/webhook``, ``utilcache.LRUExpireCache``)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["TTLCache"]

K = TypeVar("K")
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """``get(key)`` returns the value set less than its TTL ago, else None. ``max_entries`` bounds
    the memory (least recently set entries go first)."""

    def __init__(self, max_entries: int = 4096, now: Callable[[], float] = time.monotonic) -> None:
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._now = now

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            expires, value = item
            if self._now() >= expires:
                del self._items[key]
                return None
            return value

    def set(self, key: K, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            self._items[key] = (self._now() + ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
