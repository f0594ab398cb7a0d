"""Lease-based leader election (client-go leaderelection) on the embedded store and a virtual clock."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.client.leader_election import LeaderElectionConfig, LeaderElector, lease_expired
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster


class _Flaky:
    """A ClusterClient wrapper whose writes/reads fail while ``down`` is set."""

    def __init__(self, inner: MemoryCluster) -> None:
        self.inner = inner
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("get", "create", "update") and callable(attr):

            def wrapped(*a: Any, **k: Any) -> Any:
                if self.down:
                    raise ConnectionError("apiserver unreachable")
                return attr(*a, **k)

            return wrapped
        return attr


def _elector(client: Any, clock: VirtualClock, ident: str, log: list[str]) -> LeaderElector:
    cfg = LeaderElectionConfig(name="kubesched", namespace="kube-system", identity=ident)
    return LeaderElector(
        client,
        cfg,
        clock,
        rng=random.Random(1),
        on_started_leading=lambda: log.append(f"{ident} started"),
        on_stopped_leading=lambda: log.append(f"{ident} stopped"),
        on_new_leader=lambda who: log.append(f"{ident} sees {who}"),
    )


def test_defaults_follow_upstream() -> None:
    cfg = LeaderElectionConfig(identity="x")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)
    assert (cfg.namespace, cfg.name) == ("kube-system", "kube-scheduler")
    with pytest.raises(ValueError, match="leaseDuration must be greater than renewDeadline"):
        LeaderElectionConfig(identity="x", lease_duration=10, renew_deadline=10).validate()
    with pytest.raises(ValueError, match="renewDeadline must be greater than retryPeriod\\*JitterFactor"):
        LeaderElectionConfig(identity="x", renew_deadline=2.4, retry_period=2).validate()


def test_first_candidate_creates_the_lease_second_waits_for_expiry() -> None:
    clock = VirtualClock(1_700_000_000.0)
    store = MemoryCluster(clock)
    log: list[str] = []
    a = _elector(store, clock, "a", log)
    b = _elector(store, clock, "b", log)
    assert a.step() == 2.0
    assert a.is_leader() and log == ["a sees a", "a started"]
    lease = store.get("Lease", "kube-system", "kubesched")
    assert lease["spec"]["holderIdentity"] == "a"
    assert lease["spec"]["leaseDurationSeconds"] == 15
    assert lease["spec"]["leaseTransitions"] == 0
    assert lease["spec"]["renewTime"] == "2023-11-14T22:13:20.000000Z"

    delay = b.step()
    assert not b.is_leader() and 2.0 <= delay <= 2.0 * 2.2
    assert b.leader() == "a"
    # a stops renewing (killed); b only takes over once the record has been unchanged for 15 s
    # as b itself observed it.
    clock.advance_to(clock.now() + 14.0)
    b.step()
    assert not b.is_leader()
    clock.advance_to(clock.now() + 1.5)
    b.step()
    assert b.is_leader()
    lease = store.get("Lease", "kube-system", "kubesched")
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    assert log[-2:] == ["b sees b", "b started"]


def test_renewal_keeps_the_lease_and_moves_renew_time() -> None:
    clock = VirtualClock(1000.0)
    store = MemoryCluster(clock)
    a = _elector(store, clock, "a", [])
    b = _elector(store, clock, "b", [])
    a.step()
    for _ in range(20):
        clock.advance_to(clock.now() + 2.0)
        a.step()
        b.step()
    assert a.is_leader() and not b.is_leader()
    assert (
        store.get("Lease", "kube-system", "kubesched")["spec"]["renewTime"] == "1970-01-01T00:17:20.000000Z"
    )


def test_leader_that_cannot_renew_steps_down_after_the_renew_deadline() -> None:
    clock = VirtualClock(0.0)
    flaky = _Flaky(MemoryCluster(clock))
    log: list[str] = []
    a = _elector(flaky, clock, "a", log)
    a.step()
    assert a.is_leader()
    flaky.down = True
    clock.advance_to(8.0)
    a.step()
    assert a.is_leader()
    clock.advance_to(11.9)  # the round due at 2 s still has until 2 + 10 s (client-go's renew)
    a.step()
    assert a.is_leader()
    clock.advance_to(12.0)
    a.step()
    assert not a.is_leader()
    assert log == ["a sees a", "a started", "a stopped"]


def test_release_hands_over_without_waiting() -> None:
    clock = VirtualClock(50.0)
    store = MemoryCluster(clock)
    log: list[str] = []
    a = _elector(store, clock, "a", log)
    b = _elector(store, clock, "b", log)
    a.step()
    b.step()
    assert a.release() is True
    lease = store.get("Lease", "kube-system", "kubesched")
    assert lease["spec"].get("holderIdentity") in (None, "")
    assert lease["spec"]["leaseDurationSeconds"] == 1
    assert lease_expired(lease, clock.now() + 2)
    b.step()
    assert b.is_leader() and not a.is_leader()
    assert "a stopped" in log and log[-1] == "b started"


def test_lost_lease_detected_by_run_returns() -> None:
    import threading

    clock = VirtualClock(0.0)
    flaky = _Flaky(MemoryCluster(clock))
    log: list[str] = []
    a = _elector(flaky, clock, "a", log)

    class _Stop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            clock.advance_to(clock.now() + (timeout or 0))
            if clock.now() >= 4.0:
                flaky.down = True
            return self.is_set()

    a.run(_Stop())
    assert log == ["a sees a", "a started", "a stopped"]
    assert clock.now() == pytest.approx(14.0)  # last renewal at 2 s, its round due at 4 s has 10 s
