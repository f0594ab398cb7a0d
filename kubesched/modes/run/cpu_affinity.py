"""One CPU for the threads of ``kubesched run`` (``--cpu-affinity``).

CPython runs one thread at a time (the GIL). ``run`` has a CPU-bound thread, the scheduling loop,
and I/O threads (binding cycles, watches, event writers) that each need the GIL for a moment per
pod. When the kernel spreads these threads over several CPUs, every hand-over of the GIL wakes
a thread on another CPU and moves the scheduling cycle's working set (the node table's columns,
the cache) between CPU caches; measured with ``kubesched bench --api`` on two CPUs, the process
then makes twice the context switches and spends about a third more CPU per pod at 5,000 nodes
than with every thread on one CPU (docs/performance.md, "Round 7"). Go's kube-scheduler has no
such cost, and no such setting.

:class:`CpuAffinity` keeps every thread of the process on one CPU of the set it may run on
(``sched_getaffinity``; the cgroup's cpuset included):

* ``auto`` (the default): the CPU the process is running on when it starts. Every
  ``interval`` seconds the placement is checked against the CPUs allowed at start: when tasks
  other than this process took more than ``crowded`` (a share, 0.5) of that CPU's time, and the
  idlest other allowed CPU was idle for more than what they left (1 - their share) plus
  ``margin`` (0.2), every thread moves to that CPU (logged). The scheduler does not stay behind
  a busy neighbour.
* a CPU number: that CPU, never moved (e.g. with the kubelet's static CPU manager).
* ``none``: the kernel places the threads.

With one allowed CPU, or where the platform has no ``sched_setaffinity``, nothing is done.
Threads started later inherit their creator's affinity, so pinning the threads that exist once,
at start, pins all of them; a move re-pins every thread listed in ``/proc/self/task``.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kubesched.errors import ConfigError
from kubesched.logs import v_info

__all__ = ["CpuAffinity", "CpuTimes", "parse_cpu_affinity"]

log = logging.getLogger("kubesched.run")

#: ``/proc/stat`` fields counted as idle (idle, iowait)
_IDLE_FIELDS = (3, 4)
_CPU_NUMBER = re.compile(r"[0-9]+")


def parse_cpu_affinity(value: str) -> str | int:
    """``auto``, ``none`` or a CPU number (int, ASCII digits). Raises ConfigError naming
    ``--cpu-affinity``."""
    v = value.strip().lower()
    if v in ("auto", "none"):
        return v
    if _CPU_NUMBER.fullmatch(v):
        return int(v)
    raise ConfigError("--cpu-affinity", f'must be "auto", "none" or a CPU number, got "{value}"')


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on (``sched_getaffinity``, sorted; empty where the platform
    does not tell)."""
    get_affinity = getattr(os, "sched_getaffinity", None)
    return sorted(get_affinity(0)) if get_affinity is not None else []


def check_cpu(mode: str | int, allowed: list[int]) -> None:
    """Raise ConfigError naming ``--cpu-affinity`` when ``mode`` is a CPU number outside ``allowed``
    (a non-empty list; an empty one is not checked)."""
    if isinstance(mode, int) and allowed and mode not in allowed:
        raise ConfigError(
            "--cpu-affinity", f"CPU {mode} is not one this process may run on ({_cpu_list(allowed)})"
        )


@dataclass(frozen=True)
class CpuTimes:
    """One reading: per CPU, the busy and idle clock ticks since boot (``/proc/stat``), and
    the CPU ticks this process used (``/proc/self/stat`` utime + stime), with the monotonic
    time of the reading in seconds."""

    busy: dict[int, int]
    idle: dict[int, int]
    own: int
    at: float


def read_cpu_times() -> CpuTimes:
    """:class:`CpuTimes` from ``/proc``. Raises OSError where ``/proc`` cannot be read."""
    busy: dict[int, int] = {}
    idle: dict[int, int] = {}
    with open("/proc/stat", encoding="ascii") as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *fields = line.split()
            ticks = [int(x) for x in fields[:8]]  # user nice system idle iowait irq softirq steal
            cpu = int(name[3:])
            idle[cpu] = sum(ticks[i] for i in _IDLE_FIELDS)
            busy[cpu] = sum(ticks) - idle[cpu]
    fields = _stat_fields("/proc/self/stat")
    own = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return CpuTimes(busy, idle, own, time.monotonic())


def _stat_fields(path: str) -> list[str]:
    """The fields of a ``/proc/.../stat`` file after the command name: field N of proc(5) is at
    index N - 3. Raises OSError."""
    with open(path, encoding="ascii") as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2 :].split()


def current_cpu() -> int | None:
    """The CPU this thread last ran on (field 39 of ``/proc/thread-self/stat``), or None."""
    try:
        return int(_stat_fields("/proc/thread-self/stat")[36])
    except (OSError, ValueError, IndexError):
        return None


def _thread_ids() -> list[int]:
    return [int(t) for t in os.listdir("/proc/self/task")]


class CpuAffinity:
    """The placement of ``mode`` (``"auto"``, ``"none"`` or a CPU number; see the module
    docstring). The system calls are parameters so that tests can run the policy on recorded
    readings: ``allowed()`` the CPUs the process may use, ``set_affinity(tid, cpus)``,
    ``thread_ids()``, ``read_times()`` a :class:`CpuTimes`, ``here()`` the current CPU."""

    def __init__(
        self,
        mode: str | int,
        *,
        interval: float = 5.0,
        crowded: float = 0.5,
        margin: float = 0.2,
        allowed: Callable[[], Iterable[int]] | None = None,
        set_affinity: Callable[[int, set[int]], None] | None = None,
        thread_ids: Callable[[], list[int]] = _thread_ids,
        read_times: Callable[[], CpuTimes] = read_cpu_times,
        here: Callable[[], int | None] = current_cpu,
        ticks_per_second: float | None = None,
    ) -> None:
        self.mode = mode
        self.interval = interval
        self.crowded = crowded
        self.margin = margin
        self._allowed = allowed or allowed_cpus
        self._set = set_affinity or getattr(os, "sched_setaffinity", None)
        self._thread_ids = thread_ids
        self._read_times = read_times
        self._here = here
        self._hz = ticks_per_second or float(os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
        #: the CPU every thread is on (None: not pinned)
        self.cpu: int | None = None
        #: moves made by :meth:`step`
        self.moves = 0
        self._last: CpuTimes | None = None
        self._original: list[int] = []

    def start(self) -> int | None:
        """Pin every thread to the chosen CPU; returns it (None when nothing was pinned).
        Raises ConfigError for a CPU number outside the allowed set."""
        allowed = sorted(self._allowed())
        self._original = allowed
        if self.mode == "none" or self._set is None or (self.mode == "auto" and len(allowed) < 2):
            v_info(
                log,
                2,
                "Scheduler threads placed by the kernel",
                allowed=_cpu_list(allowed),
                cpuAffinity=str(self.mode),
            )
            return None
        check_cpu(self.mode, allowed)
        if isinstance(self.mode, int):
            cpu = self.mode
        else:
            here = self._here()
            cpu = here if here is not None and here in allowed else allowed[-1]
        self._pin(cpu)
        v_info(
            log,
            2,
            "Scheduler threads kept on one CPU",
            cpu=cpu,
            allowed=_cpu_list(allowed),
            cpuAffinity=str(self.mode),
        )
        try:
            self._last = self._read_times()
        except OSError:
            self._last = None
        return cpu

    def restore(self) -> None:
        """Give every thread the CPUs the process had before :meth:`start` (``run`` called in a
        process that goes on, e.g. a test)."""
        if self.cpu is None:
            return
        self._set_all(set(self._original))
        self.cpu = None

    def step(self) -> int | None:
        """One check of an ``auto`` placement (module docstring): returns the CPU moved to, or
        None when the threads stay."""
        if self.mode != "auto" or self.cpu is None:
            return None
        try:
            now = self._read_times()
        except OSError:
            return None
        last, self._last = self._last, now
        if last is None or now.at <= last.at:
            return None
        span = (now.at - last.at) * self._hz  # ticks of one CPU in the interval
        # the CPUs allowed before start (the pinned threads' own affinity is the one CPU now)
        allowed = set(self._original) & set(now.busy) & set(last.busy)
        if self.cpu not in allowed or len(allowed) < 2:
            return None
        others = (now.busy[self.cpu] - last.busy[self.cpu] - (now.own - last.own)) / span
        if others <= self.crowded:
            return None
        idle = {c: (now.idle[c] - last.idle[c]) / span for c in allowed if c != self.cpu}
        best = max(sorted(idle), key=lambda c: idle[c])
        if idle[best] <= (1.0 - others) + self.margin:  # no more room there than is left here
            return None
        log.info(
            "Moving the scheduler threads to an idler CPU",
            extra={
                "kv": {
                    "from": self.cpu,
                    "othersShare": round(others, 2),
                    "to": best,
                    "idleShare": round(idle[best], 2),
                }
            },
        )
        self._pin(best)
        self.moves += 1
        return best

    def run(self, stop: threading.Event) -> None:
        """:meth:`step` every ``interval`` seconds until ``stop`` is set."""
        while not stop.wait(self.interval):
            self.step()

    def _pin(self, cpu: int) -> None:
        self._set_all({cpu})
        self.cpu = cpu

    def _set_all(self, cpus: set[int]) -> None:
        """Give every thread of the process the affinity ``cpus``."""
        assert self._set is not None
        for tid in self._thread_ids():
            try:
                self._set(tid, cpus)
            except OSError:  # a thread that ended since the listing
                continue


def _cpu_list(cpus: Iterable[int]) -> str:
    """``0-3,6`` (the kernel's cpu-list format)."""
    runs: list[list[int]] = []
    for c in sorted(cpus):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)
