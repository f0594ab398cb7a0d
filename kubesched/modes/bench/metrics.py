"""What ``kubesched bench`` measures, shaped like upstream ``scheduler_perf``'s data items
(``test/integration/scheduler_perf/util.go`` ``throughputCollector``): scheduling throughput
sampled once per second of wall time, attempt latency percentiles and peak RSS.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100) of ascending ``sorted_values``; 0.0 when empty."""
    if not sorted_values:
        return 0.0
    k = max(0, min(len(sorted_values) - 1, math.ceil(pct / 100.0 * len(sorted_values)) - 1))
    return float(sorted_values[k])


def peak_rss_bytes() -> int:
    """Peak resident set size of this process in bytes (``getrusage`` ``ru_maxrss``)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


@dataclass
class ThroughputCollector:
    """Counts scheduled pods and closes a sample (pods/s) at every whole second of wall time since
    :meth:`start`. The last, partial second is kept only when no full second was observed."""

    samples: list[float] = field(default_factory=list)
    scheduled: int = 0
    _t0: float = 0.0
    _last_t: float = 0.0
    _last_count: int = 0
    _next: float = 0.0
    _end: float = 0.0

    def start(self) -> None:
        """Start the clock."""
        self._t0 = self._last_t = time.perf_counter()
        self._next = self._t0 + 1.0

    def add(self, n: int = 1) -> None:
        """Record ``n`` more scheduled pods; closes samples for elapsed seconds."""
        self.scheduled += n
        now = time.perf_counter()
        if now >= self._next:
            self.samples.append((self.scheduled - self._last_count) / (now - self._last_t))
            self._last_t, self._last_count = now, self.scheduled
            self._next = now + 1.0

    def stop(self) -> None:
        """Stop the clock (keeps a final partial sample if there is no other)."""
        self._end = time.perf_counter()
        if not self.samples and self._end > self._last_t:
            self.samples.append((self.scheduled - self._last_count) / (self._end - self._last_t))

    @property
    def elapsed(self) -> float:
        """Seconds between :meth:`start` and :meth:`stop`."""
        return self._end - self._t0

    def summary(self) -> dict[str, float]:
        """``average`` (mean of the samples, as upstream) and ``perc50/90/99`` in pods/s."""
        s = sorted(self.samples)
        avg = sum(s) / len(s) if s else 0.0
        return {
            "average": avg,
            "perc50": percentile(s, 50),
            "perc90": percentile(s, 90),
            "perc99": percentile(s, 99),
        }
