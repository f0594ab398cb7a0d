"""Test hooks of ``kubesched serve``: injected faults and per-second request counts.

These exist for integration tests of API clients (``kubesched run``'s retries, backoff, QPS limits);
a real API server has nothing like them. They are served under ``/kubesched/`` (see
:mod:`kubesched.embedded.apiserver.app`):

* ``POST /kubesched/faults`` ``{"status": 500, "count": 3, "paths": "/pods", "methods": ["POST"],
  "retryAfterSeconds": 1}`` -- the next ``count`` API requests whose path matches the regular
  expression ``paths`` (searched; missing = every path) and whose method is in ``methods`` (missing
  = any) fail with ``status`` and a ``Status`` body. 429 answers carry ``Retry-After``
  (default 1 s). ``GET`` lists the active rules, ``DELETE`` clears them.
* ``GET /kubesched/requests`` -- request counts per wall-clock second (from the server's clock),
  method and path: ``{"requests": [{"second": 1717000000, "method": "GET", "path": "/api/v1/pods",
  "watch": false, "count": 3}, ...]}`` oldest first; ``DELETE`` resets them. Admin requests under
  ``/kubesched/`` are not counted.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FaultRule", "Faults", "RequestLog"]

Obj = dict[str, Any]


@dataclass(slots=True)
class FaultRule:
    """Fail the next ``count`` matching requests with HTTP ``status``."""

    status: int
    count: int
    paths: str = ""
    methods: frozenset[str] = frozenset()
    retry_after: int = 1
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.paths)

    @classmethod
    def from_json(cls, body: Any) -> FaultRule:
        """Parse a ``POST /kubesched/faults`` body. Raises ValueError with the offending field."""
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        status = body.get("status")
        if not isinstance(status, int) or not 400 <= status <= 599:
            raise ValueError(f"status: must be an HTTP error code (400-599), got {status!r}")
        count = body.get("count", 1)
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count: must be a positive integer, got {count!r}")
        paths = body.get("paths") or ""
        if not isinstance(paths, str):
            raise ValueError("paths: must be a regular expression string")
        try:
            re.compile(paths)
        except re.error as e:
            raise ValueError(f"paths: invalid regular expression: {e}") from None
        methods = body.get("methods") or []
        if isinstance(methods, str):
            methods = [methods]
        if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
            raise ValueError("methods: must be a list of HTTP methods")
        retry_after = body.get("retryAfterSeconds", 1)
        if not isinstance(retry_after, int) or retry_after < 0:
            raise ValueError("retryAfterSeconds: must be a non-negative integer")
        return cls(status, count, paths, frozenset(m.upper() for m in methods), retry_after)

    def matches(self, method: str, path: str) -> bool:
        """Whether a request ``method`` ``path`` is subject to this rule (count not considered)."""
        return (not self.methods or method in self.methods) and self._pattern.search(path) is not None

    def to_json(self) -> Obj:
        """The rule as ``GET /kubesched/faults`` shows it (``count`` = failures still to come)."""
        return {
            "status": self.status,
            "count": self.count,
            "paths": self.paths,
            "methods": sorted(self.methods),
            "retryAfterSeconds": self.retry_after,
        }


class Faults:
    """Active fault rules, consumed first-added first (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []

    def add(self, rule: FaultRule) -> None:
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def take(self, method: str, path: str) -> FaultRule | None:
        """The first rule matching the request, with its count decremented (removed at 0), or None."""
        with self._lock:
            for i, rule in enumerate(self._rules):
                if rule.matches(method, path):
                    rule.count -= 1
                    if rule.count <= 0:
                        del self._rules[i]
                    return rule
        return None


class RequestLog:
    """Request counts per (second, method, path, watch); keeps the last ``max_seconds`` seconds."""

    def __init__(self, max_seconds: int = 3600) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[int, str, str, bool]] = Counter()
        self._max_seconds = max_seconds
        self._newest = 0

    def record(self, second: int, method: str, path: str, watch: bool) -> None:
        with self._lock:
            self._counts[(second, method, path, watch)] += 1
            if second > self._newest:
                self._newest = second
                cutoff = second - self._max_seconds
                if any(k[0] < cutoff for k in self._counts):
                    for k in [k for k in self._counts if k[0] < cutoff]:
                        del self._counts[k]

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()

    def to_json(self) -> Obj:
        with self._lock:
            items = sorted(self._counts.items())
        return {
            "requests": [
                {"second": s, "method": m, "path": p, "watch": w, "count": c} for (s, m, p, w), c in items
            ]
        }
