"""``kubesched run --thread-policy``: every thread of the process under ``SCHED_BATCH`` (threads
started later inherit it), or the policy left as it was; undone by ``restore``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from run_support import Cluster, Replica, scheduler_config

from kubesched.cli.main import main
from kubesched.modes.run.thread_policy import ThreadPolicy, parse_thread_policy

OTHER, BATCH, IDLE = 0, 3, 5

linux_only = pytest.mark.skipif(
    not hasattr(os, "sched_setscheduler") or not hasattr(os, "SCHED_BATCH"), reason="needs SCHED_BATCH"
)


class Fake:
    """Recorded system calls: ``sets`` is every ``(tid, policy)`` set; ``current`` the calling
    thread's policy read back; a tid in ``gone`` raises OSError (a thread that ended)."""

    def __init__(
        self, current: int = OTHER, tids: tuple[int, ...] = (10, 11, 12), gone: tuple[int, ...] = ()
    ):
        self.current = current
        self.tids = list(tids)
        self.gone = set(gone)
        self.sets: list[tuple[int, int]] = []

    def set_policy(self, tid: int, policy: int) -> None:
        if tid in self.gone:
            raise ProcessLookupError(3, "No such process")
        self.sets.append((tid, policy))

    def policy(self, mode: str) -> ThreadPolicy:
        return ThreadPolicy(
            mode,
            set_policy=self.set_policy,
            get_policy=lambda tid: self.current,
            thread_ids=lambda: self.tids,
            batch=BATCH,
            other=OTHER,
        )


def test_batch_sets_every_thread_and_restore_undoes_it() -> None:
    f = Fake()
    p = f.policy("batch")
    assert p.start() is True
    assert p.applied is True
    assert f.sets == [(10, BATCH), (11, BATCH), (12, BATCH)]
    f.tids.append(13)  # a thread started since (it inherited SCHED_BATCH)
    p.restore()
    assert f.sets[3:] == [(10, OTHER), (11, OTHER), (12, OTHER), (13, OTHER)]
    assert p.applied is False
    p.restore()  # twice: nothing more
    assert len(f.sets) == 7


def test_normal_sets_nothing() -> None:
    f = Fake()
    p = f.policy("normal")
    assert p.start() is False
    p.restore()
    assert f.sets == []


def test_an_operator_chosen_policy_is_kept() -> None:
    f = Fake(current=IDLE)  # e.g. started under chrt --idle
    p = f.policy("batch")
    assert p.start() is False
    p.restore()
    assert f.sets == []


def test_a_thread_that_ended_is_skipped() -> None:
    f = Fake(gone=(11,))
    assert f.policy("batch").start() is True
    assert f.sets == [(10, BATCH), (12, BATCH)]


def test_a_platform_without_the_policy_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "SCHED_BATCH", raising=False)
    f = Fake()
    p = ThreadPolicy("batch", set_policy=f.set_policy, get_policy=lambda tid: OTHER)
    assert p.start() is False
    assert f.sets == []


@pytest.mark.parametrize(
    ("value", "parsed"), [("batch", "batch"), ("Normal", "normal"), (" batch ", "batch")]
)
def test_flag_values(value: str, parsed: str) -> None:
    assert parse_thread_policy(value) == parsed


@pytest.mark.parametrize("value", ["fifo", "", "idle", "batch,normal"])
def test_bad_flag_value_is_refused_by_name(value: str) -> None:
    res = CliRunner().invoke(main, ["run", f"--thread-policy={value}"])
    assert res.exit_code == 2
    assert res.output == f'error: --thread-policy: must be "batch" or "normal", got "{value}"\n'


@linux_only
def test_threads_started_later_inherit_batch_and_restore_returns_them() -> None:
    """In a process of its own (the policy is process-wide): the thread started after ``start``
    runs under SCHED_BATCH without being set, and ``restore`` gives it SCHED_OTHER back."""
    script = textwrap.dedent(
        """
        import json, os, threading
        from kubesched.modes.run.thread_policy import ThreadPolicy
        before = os.sched_getscheduler(0)
        p = ThreadPolicy("batch")
        started = p.start()
        seen = {}
        go = threading.Event(); done = threading.Event()
        def later():
            seen["started"] = os.sched_getscheduler(0)
            go.wait(); seen["restored"] = os.sched_getscheduler(0); done.set()
        t = threading.Thread(target=later); t.start()
        while "started" not in seen: pass
        main_batch = os.sched_getscheduler(0)
        p.restore(); go.set(); done.wait(); t.join()
        print(json.dumps([before, started, main_batch, seen["started"], seen["restored"], os.sched_getscheduler(0)]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == [OTHER, True, BATCH, BATCH, OTHER, OTHER]


def _policies(pid: int) -> set[int]:
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out.add(os.sched_getscheduler(int(tid)))
        except OSError:
            continue
    return out


@linux_only
@pytest.mark.parametrize(
    ("flag", "policies"), [("--thread-policy=batch", {BATCH}), ("--thread-policy=normal", {OTHER})]
)
def test_run_threads_policy(cluster: Cluster, replicas: list[Replica], flag: str, policies: set[int]) -> None:
    cluster.add_nodes(1)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--leader-elect=false", flag)
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("p")
    assert cluster.wait_bound(["p"]) == {"p": "node-0"}
    assert _policies(r.proc.pid) == policies
