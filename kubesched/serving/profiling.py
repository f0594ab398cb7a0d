"""CPU profiles of the running process for ``/debug/pprof/profile?seconds=N``.

Go's pprof format has no Python producer worth the name, so kubesched answers with what Python
profile viewers open: a **pstats file** (the ``marshal``-ed statistics ``cProfile`` writes with
``dump_stats``), covering every thread of the process (the scheduling loop, binding workers,
informer watches, timers) -- collected with ``yappi`` on the CPU clock. Open it with
``python -m pstats profile.pstats``, ``snakeviz profile.pstats`` or ``gprof2dot -f pstats``.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time

__all__ = ["MAX_PROFILE_SECONDS", "ProfilerBusyError", "cpu_profile"]

#: Longest profile a request may ask for (seconds).
MAX_PROFILE_SECONDS = 300.0

_busy = threading.Lock()


class ProfilerBusyError(RuntimeError):
    """Another CPU profile is being taken (one at a time, as Go's ``StartCPUProfile``)."""


def _profiled_interval(sleep: object, seconds: float) -> None:
    """The profiling thread's own wait, as a Python function: a profile always has at least this
    entry (pstats cannot load an empty profile, which an idle process would otherwise give)."""
    sleep(seconds)  # type: ignore[operator]


def cpu_profile(seconds: float, *, sleep: object = time.sleep) -> bytes:
    """Profile every thread's CPU time for ``seconds`` (clamped to 0..:data:`MAX_PROFILE_SECONDS`)
    and return the pstats file's bytes. Raises ProfilerBusyError when a profile is running."""
    import yappi

    seconds = max(0.0, min(float(seconds), MAX_PROFILE_SECONDS))
    if not _busy.acquire(blocking=False):
        raise ProfilerBusyError("cpu profiling already in use")
    try:
        yappi.clear_stats()
        yappi.set_clock_type("cpu")
        yappi.start(builtins=False, profile_threads=True)
        try:
            _profiled_interval(sleep, seconds)
        finally:
            yappi.stop()
        stats = yappi.get_func_stats()
        fd, path = tempfile.mkstemp(prefix="kubesched-profile-", suffix=".pstats")
        os.close(fd)
        try:
            stats.save(path, type="pstat")
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(path)
            yappi.clear_stats()
    finally:
        _busy.release()
