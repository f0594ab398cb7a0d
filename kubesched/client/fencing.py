"""Write fencing for a leader-elected scheduler: no API write of the scheduling path (binding,
status patch, victim deletion, nomination, event) leaves a replica whose lease may have passed
to another replica -- e.g. after the process was paused (SIGSTOP, a long GC or VM stall) with
bindings queued.

:class:`LeaseFence` is the :class:`WriteGuard` of :class:`kubesched.client.kube.KubeClusterClient`:
the client consults it immediately before sending each mutating request (every method but GET;
the Lease's own requests are exempt so that the elector can renew). As client-go's elector
(``tools/leaderelection/leaderelection.go``: ``renew``), a leader keeps leading while the
renewal round due ``retry_period`` after its last success is within its ``renew_deadline``; the
lease counts as fresh until ``min(retry_period + renew_deadline, lease_duration)`` seconds after
the *start* of the last successful acquire/renew, on the monotonic clock
(``LeaderElector.valid_until``): a replica cannot know when another replica saw its last renewal,
only that it was not before that request was sent, and another candidate takes over
``lease_duration`` after it saw it. So a pause shorter than the renew deadline is survived (the
writes after it go out, the next renewal succeeds), and after a longer one no write goes out once
the lease could have passed to another replica. A replica that finds its lease stale refuses the
write with :class:`LeaseLostError` and calls ``on_stale`` once, which stops scheduling (the
binding cycles in flight fail, forget their assumed pods, and the process exits as on a lost
lease). client-go itself does not fence writes; kube-scheduler relies on the renew deadline alone.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Protocol

from kubesched.errors import KubeschedError

__all__ = ["LeaseFence", "LeaseLostError", "WriteGuard"]

log = logging.getLogger(__name__)

#: The Lease requests of leader election itself (never fenced).
_LEASE_PATH = re.compile(r"^/apis/coordination\.k8s\.io/v1/(namespaces/[^/]+/)?leases(/[^/]+)?$")


class LeaseLostError(KubeschedError):
    """A write was refused because this replica's lease is not fresh any more."""


class WriteGuard(Protocol):
    """Consulted immediately before a mutating API request is sent."""

    def check(self, method: str, path: str) -> None:
        """Return to let ``method path`` go out; raise LeaseLostError to refuse it."""
        ...


class LeaseFence:
    """``valid_until()``: monotonic seconds until which the lease is fresh (``-inf`` when not
    leading). ``on_stale()``: called once, on the first refused write (must not block)."""

    def __init__(
        self,
        valid_until: Callable[[], float],
        on_stale: Callable[[], None],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._valid_until = valid_until
        self._on_stale = on_stale
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self.stale = False
        #: writes refused so far
        self.refused = 0

    def check(self, method: str, path: str) -> None:
        if _LEASE_PATH.match(path):
            return
        now = self._monotonic()
        until = self._valid_until()
        if now < until and not self.stale:
            return
        with self._lock:
            first = not self.stale
            self.stale = True
            self.refused += 1
        if first:
            late = now - until
            log.error(
                "lease not renewed within the renew deadline (%s): refusing %s %s and every later write; "
                "stopping",
                f"{late:.3f}s past it" if late != float("inf") else "not leading",
                method,
                path,
            )
            self._on_stale()
        raise LeaseLostError(
            f"{method} {path}: refused, this replica's lease is not fresh (not renewed within "
            "the renew deadline)"
        )
