"""The Linux scheduling policy of ``kubesched run``'s threads (``--thread-policy``).

CPython runs one thread at a time (the GIL). While ``run`` schedules a backlog, its scheduling
loop is CPU-bound, and every pod also wakes its I/O threads: a binding thread (the ``POST`` of
the Binding and its answer), an Event writer and the pod watch (the bind's confirmation). Under
``SCHED_OTHER`` (``SCHED_NORMAL``) the kernel lets a waking thread preempt the running one on its
CPU (wake-up preemption): each such wake-up stops the scheduling loop, the woken thread finds the
GIL held and sleeps again, and the loop resumes with its working set (node-table columns, cache)
partly pushed out of the CPU's caches. With every thread on one CPU (``--cpu-affinity``) that is
several pairs of context switches per pod.

``batch`` (the default) gives every thread of the process ``SCHED_BATCH`` (sched(7)): the same fair
share of the CPU as ``SCHED_OTHER`` and the same nice value, but a waking thread does not preempt a
running one; it runs when the running thread blocks or at the next scheduler tick. The I/O threads
then take the GIL in bursts while the scheduling loop waits (for the next pod, or for a binding
slot when ``--parallel-bindings`` x 16 binding cycles are in flight) instead of a few microseconds
at a time. ``kubesched bench --api`` on 2,000 nodes measured 10-18 % less CPU per pod in ``run``, fewer
than half of its context switches, and a third to two fifths less CPU in ``serve``, whose requests then
arrive in bursts (docs/performance.md, "Round 14"). What it costs: while the loop is busy with a
backlog, a binding cycle waits longer for its turn (attempt latency up to the in-flight binding
cycles' share of the backlog); with no backlog the loop sleeps and the I/O threads run at once.
``normal`` leaves the policy as it was. No privilege is needed for either (``SCHED_BATCH`` is a
non-real-time policy). Threads started later inherit their creator's policy (``pthread_create``'s
default ``PTHREAD_INHERIT_SCHED``), so setting the threads that exist once, at start, sets all of
them. Where the platform has no ``sched_setscheduler`` or no ``SCHED_BATCH``, nothing is done.

Go's kube-scheduler has no such setting: its goroutines hand work over without a global lock.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from kubesched.errors import ConfigError
from kubesched.logs import v_info

__all__ = ["THREAD_POLICIES", "ThreadPolicy", "parse_thread_policy"]

log = logging.getLogger("kubesched.run")

#: the values of ``--thread-policy``
THREAD_POLICIES = ("batch", "normal")


def parse_thread_policy(value: str) -> str:
    """``batch`` or ``normal`` (ASCII, any case, surrounding blanks ignored). Raises ConfigError
    naming ``--thread-policy``."""
    v = value.strip().lower()
    if v in THREAD_POLICIES:
        return v
    raise ConfigError("--thread-policy", f'must be "batch" or "normal", got "{value}"')


def _thread_ids() -> list[int]:
    return [int(t) for t in os.listdir("/proc/self/task")]


class ThreadPolicy:
    """The policy of ``mode`` (``"batch"`` or ``"normal"``; see the module docstring) for every
    thread of the process. The system calls are parameters so that tests can check what is set:
    ``set_policy(tid, policy)``, ``get_policy(tid) -> policy``, ``thread_ids()``; ``batch`` and
    ``other`` are the policy numbers (``os.SCHED_BATCH``, ``os.SCHED_OTHER``)."""

    def __init__(
        self,
        mode: str,
        *,
        set_policy: Callable[[int, int], None] | None = None,
        get_policy: Callable[[int], int] | None = None,
        thread_ids: Callable[[], list[int]] = _thread_ids,
        batch: int | None = None,
        other: int | None = None,
    ) -> None:
        self.mode = mode
        self._batch = batch if batch is not None else getattr(os, "SCHED_BATCH", None)
        self._other = other if other is not None else getattr(os, "SCHED_OTHER", None)
        setter = getattr(os, "sched_setscheduler", None)
        self._set = set_policy or (
            (lambda tid, policy: setter(tid, policy, os.sched_param(0))) if setter is not None else None
        )
        self._get = get_policy or getattr(os, "sched_getscheduler", None)
        self._thread_ids = thread_ids
        #: the policy the threads had before :meth:`start` (None: nothing was set)
        self._original: int | None = None

    @property
    def applied(self) -> bool:
        """True while :meth:`start` has set ``SCHED_BATCH`` and :meth:`restore` has not undone it."""
        return self._original is not None

    def start(self) -> bool:
        """Give every thread ``SCHED_BATCH`` when the mode is ``batch`` and the platform has it;
        returns whether it did. A thread whose policy cannot be changed (it ended since the
        listing, or the system refuses) is left as it is."""
        if self.mode != "batch" or self._set is None or self._batch is None or self._other is None:
            v_info(log, 2, "Scheduler threads keep their scheduling policy", threadPolicy=self.mode)
            return False
        try:
            original = self._get(0) if self._get is not None else self._other
        except OSError:
            original = self._other
        if original != self._other:  # e.g. a real-time or idle policy chosen by the operator
            v_info(log, 2, "Scheduler threads keep their scheduling policy", threadPolicy="unchanged")
            return False
        self._original = original
        self._set_all(self._batch)
        v_info(log, 2, "Scheduler threads use SCHED_BATCH", threadPolicy=self.mode)
        return True

    def restore(self) -> None:
        """Give every thread the policy it had before :meth:`start` (``run`` called in a process
        that goes on, e.g. a test)."""
        if self._original is None:
            return
        self._set_all(self._original)
        self._original = None

    def _set_all(self, policy: int) -> None:
        assert self._set is not None
        for tid in self._thread_ids():
            try:
                self._set(tid, policy)
            except OSError:  # a thread that ended since the listing
                continue
