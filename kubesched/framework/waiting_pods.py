"""Pods parked by Permit (``pkg/scheduler/framework/runtime/waiting_pods_map.go``).

One timer per waiting plugin on the scheduler's clock. The outcome is delivered once, to
callbacks registered with :meth:`WaitingPod.on_done` (the binding cycle), so the same code
works on a real clock (threads) and on a virtual clock (simulation).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from kubesched.api.pod import Pod
from kubesched.framework.status import Code, Status


def format_duration(seconds: float) -> str:
    """Go ``time.Duration.String()`` for whole and fractional seconds (``10s``, ``1m30s``, ``500ms``)."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms" if ms >= 1 else f"{seconds * 1e6:g}µs"
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    out = ""
    if h:
        out += f"{int(h)}h"
    if h or m:
        out += f"{int(m)}m"
    out += f"{s:g}s"
    return out


class WaitingPod:
    """A pod waiting for every pending plugin to allow it, or for one to reject it."""

    def __init__(self, pod: Pod, plugin_timeouts: dict[str, float], clock: object) -> None:
        self.pod = pod
        self._lock = threading.Lock()
        self._pending: dict[str, object] = {}
        self._result: Status | None = None
        self._done = False
        self._callbacks: list[Callable[[Status | None], None]] = []
        self._event = threading.Event()
        for plugin, timeout in plugin_timeouts.items():
            msg = f"rejected due to timeout after waiting {format_duration(timeout)} at plugin {plugin}"
            self._pending[plugin] = clock.call_later(timeout, lambda p=plugin, m=msg: self.reject(p, m))  # type: ignore[attr-defined]

    def get_pod(self) -> Pod:
        """The waiting pod."""
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet."""
        with self._lock:
            return list(self._pending)

    def allow(self, plugin_name: str) -> None:
        """``plugin_name`` allows the pod; Success is delivered once no plugin is pending."""
        with self._lock:
            timer = self._pending.pop(plugin_name, None)
            if timer is not None:
                timer.cancel()  # type: ignore[attr-defined]
            if self._pending or self._done:
                return
        self._deliver(None)

    def reject(self, plugin_name: str, msg: str) -> None:
        """Reject with ``Unschedulable(msg)`` attributed to ``plugin_name``."""
        with self._lock:
            if self._done:
                return
            for t in self._pending.values():
                t.cancel()  # type: ignore[attr-defined]
            self._pending.clear()
        self._deliver(Status(Code.Unschedulable, msg, plugin=plugin_name))

    def _deliver(self, s: Status | None) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._result = s
            callbacks = list(self._callbacks)
        self._event.set()
        for cb in callbacks:
            cb(s)

    def on_done(self, cb: Callable[[Status | None], None]) -> None:
        """Call ``cb(status)`` when the outcome is known (at once if it already is)."""
        with self._lock:
            if not self._done:
                self._callbacks.append(cb)
                return
            s = self._result
        cb(s)

    def wait(self, timeout: float | None = None) -> Status | None:
        """Block (real clock only) until the outcome is known and return it."""
        self._event.wait(timeout)
        return self._result


class WaitingPodsMap:
    """Thread-safe ``uid -> WaitingPod``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        """Register a waiting pod."""
        with self._lock:
            self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        """Forget a waiting pod."""
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        """The waiting pod with ``uid``."""
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))
