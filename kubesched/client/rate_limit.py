"""Client-side token bucket for API requests (``k8s.io/client-go/util/flowcontrol``
``NewTokenBucketRateLimiter(qps, burst)``, built on ``golang.org/x/time/rate``).

The bucket holds at most ``burst`` tokens and starts full; it refills at ``qps`` tokens per
second. Every request takes one token, waiting for it when the bucket is empty. Waiters reserve
their token up front (the count may go negative), so concurrent callers are served in arrival
order and the long-run rate never exceeds ``qps`` while no window of length ``t`` sees more than
``burst + qps * t`` requests.

Time comes from a :class:`kubesched.clock.Clock` (seconds), so tests drive it with a
``VirtualClock``.
"""

from __future__ import annotations

import math
import threading

from kubesched.clock import Clock

__all__ = ["TokenBucket"]


class TokenBucket:
    """A thread-safe token bucket.

    ``qps``: tokens per second (float); ``qps < 0`` disables limiting (client-go's ``-1``),
    ``qps == 0`` is rejected (``ValueError``; the configuration defaults 0 to 50 before it gets
    here). ``burst``: bucket size in tokens (int >= 1 when limiting). Raises ValueError otherwise.
    """

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        if qps == 0 or math.isnan(qps):
            raise ValueError(f"qps must be positive (or negative to disable limiting), got {qps}")
        if qps > 0 and burst < 1:
            raise ValueError(f"burst must be at least 1 when qps > 0, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock.now()

    @property
    def unlimited(self) -> bool:
        """True when the bucket never delays (``qps < 0``)."""
        return self.qps < 0

    def _advance(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now

    def tokens(self) -> float:
        """Tokens available now (negative while callers are queued for future tokens)."""
        with self._lock:
            self._advance(self._clock.now())
            return self._tokens

    def reserve(self) -> float:
        """Take one token and return how many seconds the caller must wait before using it
        (0.0 when a token was available)."""
        if self.unlimited:
            return 0.0
        with self._lock:
            now = self._clock.now()
            self._advance(now)
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def try_accept(self) -> bool:
        """Take a token if one is available now, without waiting (client-go ``TryAccept``)."""
        if self.unlimited:
            return True
        with self._lock:
            self._advance(self._clock.now())
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def accept(self) -> float:
        """Take a token, sleeping on the clock until it is due (client-go ``Accept``); returns the
        seconds waited."""
        delay = self.reserve()
        if delay > 0:
            self._clock.sleep(delay)
        return delay
