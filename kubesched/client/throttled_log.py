"""Rate-limited logging for retry loops (watch and list retries of informers), so an API server
that keeps failing yields a few lines a minute instead of a flood (client-go logs such retries
through klog with its own backoff; kube-scheduler never prints dozens of lines a second)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["ThrottledLog"]


class ThrottledLog:
    """Logs at most one record per ``key`` every ``interval`` seconds; the next record that gets
    through says how many were suppressed in between (``(12 similar messages suppressed)``).

    ``now`` is a monotonic clock in seconds (injectable for tests). Thread-safe.
    """

    def __init__(
        self, logger: logging.Logger, interval: float = 30.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.now = now
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(self, key: str, level: int, msg: str, *args: object) -> bool:
        """Log ``msg % args`` at ``level`` unless ``key`` was logged less than ``interval`` seconds
        ago; returns True when the record was emitted."""
        t = self.now()
        with self._lock:
            last = self._last.get(key)
            if last is not None and t - last < self.interval:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return False
            self._last[key] = t
            suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            msg += f" ({suppressed} similar message{'s' if suppressed != 1 else ''} suppressed)"
        self.logger.log(level, msg, *args)
        return True

    def reset(self, key: str) -> None:
        """Forget ``key`` (after a recovery), so its next failure is logged at once."""
        with self._lock:
            self._last.pop(key, None)
            self._suppressed.pop(key, None)
