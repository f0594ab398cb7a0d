"""Leader election on a ``coordination.k8s.io/v1`` Lease
(``k8s.io/client-go/tools/leaderelection/leaderelection.go`` with ``resourcelock.LeaseLock``).

A candidate tries to acquire the Lease every ``retry_period`` seconds (jittered by a factor 1.2,
``wait.JitterUntil``). It takes a Lease that does not exist, has no holder, is its own, or whose
record has not changed for ``lease_duration`` seconds *as observed locally* (client-go never
compares the remote ``renewTime`` with its own clock). While leading it renews every
``retry_period``; each renewal round starts ``retry_period`` after the last success and has
``renew_deadline`` seconds to succeed (client-go's ``renew``: ``wait.Until`` with a
``context.WithTimeout(RenewDeadline)`` round). When the round's deadline passes the candidate has
lost the lease and ``on_stopped_leading`` runs at once. The window after the start of the last
successful attempt is therefore ``retry_period + renew_deadline``, capped here at
``lease_duration`` (:meth:`LeaderElectionConfig.leading_window`): another candidate may take the
Lease ``lease_duration`` after it observed the last renewal, never earlier than that renewal was
sent. A pause shorter than the renew deadline (a GC, a SIGSTOP) is survived as in client-go: the
first renewal after it succeeds and leadership goes on. On :meth:`LeaderElector.release` (graceful
shutdown, ``ReleaseOnCancel``) the leader empties ``holderIdentity`` and sets
``leaseDurationSeconds: 1`` so another candidate takes over without waiting.

Upstream defaults (kube-scheduler ``leaderElection``): lease 15 s, renew deadline 10 s, retry
2 s, Lease ``kube-system/kube-scheduler``; the identity is ``<hostname>_<uuid>``. All times are
seconds on a :class:`kubesched.clock.Clock`.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339_micro
from kubesched.client.client import ClusterClient
from kubesched.clock import Clock
from kubesched.errors import AlreadyExistsError, ConflictError, NotFoundError

__all__ = ["JITTER_FACTOR", "LeaderElectionConfig", "LeaderElector", "default_identity"]

log = logging.getLogger(__name__)

#: ``JitterFactor`` of client-go's acquire loop.
JITTER_FACTOR = 1.2


def default_identity() -> str:
    """``<hostname>_<uuid4>`` as kube-scheduler builds it."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Lease location and timing (seconds). ``renew_deadline`` must be below ``lease_duration``
    and above ``JITTER_FACTOR * retry_period`` (client-go's checks; ValueError otherwise)."""

    name: str = "kube-scheduler"
    namespace: str = "kube-system"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def validate(self) -> None:
        """Raise ValueError for inconsistent timings (``leaderelection.NewLeaderElector``)."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.lease_duration < 1 or self.retry_period <= 0:
            raise ValueError("leaseDuration must be at least 1s and retryPeriod positive")
        if not self.identity:
            raise ValueError("Lock identity is empty")

    def leading_window(self) -> float:
        """Seconds after the start of the last successful acquire/renew during which this
        candidate still leads: ``min(retry_period + renew_deadline, lease_duration)``."""
        return min(self.retry_period + self.renew_deadline, self.lease_duration)


class LeaderElector:
    """Campaign for and hold one Lease.

    Callbacks: ``on_started_leading()`` once the lease is acquired, ``on_stopped_leading()`` once
    it is lost or released, ``on_new_leader(identity)`` whenever the observed holder changes. They
    run on the elector's thread (:meth:`run`) and must not block for long.
    """

    def __init__(
        self,
        client: ClusterClient,
        config: LeaderElectionConfig,
        clock: Clock,
        *,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        config.validate()
        self.client = client
        self.config = config
        self.clock = clock
        self.rng = rng or random.Random()
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self._lock = threading.Lock()
        self._observed_record: dict[str, Any] | None = None
        self._observed_raw: Any = None
        self._observed_time = 0.0
        self._observed_rv = ""
        self._leading = False
        self._last_renew = 0.0
        self._reported_leader = ""
        self._monotonic = monotonic
        self._valid_until = float("-inf")

    # ------------------------------------------------------------------ state

    @property
    def identity(self) -> str:
        """This candidate's holder identity."""
        return self.config.identity

    def is_leader(self) -> bool:
        """True while this candidate holds the lease (last renewal within the leading window)."""
        with self._lock:
            return self._leading

    def leader(self) -> str:
        """The holder identity last observed (``""`` when none)."""
        with self._lock:
            rec = self._observed_record
            return str(rec.get("holderIdentity") or "") if rec else ""

    def valid_until(self) -> float:
        """Monotonic seconds until which this candidate's lease is fresh:
        :meth:`LeaderElectionConfig.leading_window` after the start of the last successful
        acquire/renew while leading, ``-inf`` otherwise (see :mod:`kubesched.client.fencing`)."""
        with self._lock:
            return self._valid_until if self._leading else float("-inf")

    def last_renew(self) -> float:
        """Clock time of the last successful acquire or renew (0 before)."""
        with self._lock:
            return self._last_renew

    # ------------------------------------------------------------------ one attempt

    def try_acquire_or_renew(self) -> bool:
        """One ``tryAcquireOrRenew``: True when this candidate holds the lease afterwards. API
        errors count as failure (logged)."""
        cfg = self.config
        now = self.clock.now()
        now_s = rfc3339_micro(now)
        try:
            lease = self.client.get("Lease", cfg.namespace, cfg.name)
        except NotFoundError:
            init_spec = {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(round(cfg.lease_duration)),
                "acquireTime": now_s,
                "renewTime": now_s,
                "leaseTransitions": 0,
            }
            try:
                created = self.client.create(
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                        "spec": init_spec,
                    }
                )
            except (AlreadyExistsError, ConflictError):
                return False
            except Exception as e:  # noqa: BLE001
                log.warning("error initially creating lease %s/%s: %s", cfg.namespace, cfg.name, e)
                return False
            self._observe(created, now)
            return True
        except Exception as e:  # noqa: BLE001
            log.warning("error retrieving lease %s/%s: %s", cfg.namespace, cfg.name, e)
            return False
        spec: dict[str, Any] = dict(lease.get("spec") or {})
        self._observe(lease, now)
        holder = str(spec.get("holderIdentity") or "")
        duration = float(spec.get("leaseDurationSeconds") or 0)
        with self._lock:
            observed_time = self._observed_time
        if holder and holder != self.identity and observed_time + duration > now:
            return False
        new_spec: dict[str, Any] = dict(spec)
        if holder == self.identity:
            new_spec["renewTime"] = now_s
            new_spec.setdefault("acquireTime", now_s)
        else:
            new_spec.update(
                {
                    "holderIdentity": self.identity,
                    "acquireTime": now_s,
                    "renewTime": now_s,
                    "leaseTransitions": int(spec.get("leaseTransitions") or 0) + 1,
                }
            )
        new_spec["leaseDurationSeconds"] = int(round(self.config.lease_duration))
        try:
            updated = self.client.update({**lease, "spec": new_spec})
        except Exception as e:  # noqa: BLE001 - conflicts mean someone else wrote first
            log.info("failed to update lease %s/%s: %s", cfg.namespace, cfg.name, e)
            return False
        self._observe(updated, now)
        return True

    def _observe(self, lease: dict[str, Any], now: float) -> None:
        spec = lease.get("spec") or {}
        rv = str((lease.get("metadata") or {}).get("resourceVersion") or "")
        record = {
            k: spec.get(k)
            for k in (
                "holderIdentity",
                "leaseDurationSeconds",
                "acquireTime",
                "renewTime",
                "leaseTransitions",
            )
        }
        with self._lock:
            if record != self._observed_record:
                self._observed_record = record
                self._observed_time = now
            self._observed_raw = lease
            self._observed_rv = rv
        holder = str(record.get("holderIdentity") or "")
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            if self.on_new_leader is not None:
                self.on_new_leader(holder)

    # ------------------------------------------------------------------ loop

    def step(self) -> float:
        """One iteration of the acquire/renew loop; returns the seconds to wait before the next.

        Not leading: try to acquire; on success become leader (``on_started_leading``). Leading:
        try to renew; if the last success is the leading window or more ago, stop leading
        (``on_stopped_leading``) -- the caller must stop scheduling at once.
        """
        cfg = self.config
        attempt_started = self._monotonic()
        ok = self.try_acquire_or_renew()
        now = self.clock.now()
        started = stopped = False
        with self._lock:
            if ok:
                self._last_renew = now
                self._valid_until = attempt_started + cfg.leading_window()
                if not self._leading:
                    self._leading = True
                    started = True
            elif self._leading and now - self._last_renew >= cfg.leading_window():
                self._leading = False
                stopped = True
            leading = self._leading
        if started:
            log.info("successfully acquired lease %s/%s as %s", cfg.namespace, cfg.name, self.identity)
            if self.on_started_leading is not None:
                self.on_started_leading()
        if stopped:
            log.error(
                "leader election lost: failed to renew lease %s/%s within %gs",
                cfg.namespace,
                cfg.name,
                cfg.leading_window(),
            )
            if self.on_stopped_leading is not None:
                self.on_stopped_leading()
        if leading:
            return cfg.retry_period
        return cfg.retry_period * (1 + self.rng.random() * JITTER_FACTOR)

    def run(self, stop: threading.Event) -> None:
        """Campaign until ``stop`` is set or the lease is lost (then returns). Blocking."""
        while not stop.is_set():
            was_leading = self.is_leader()
            delay = self.step()
            if was_leading and not self.is_leader():
                return
            stop.wait(delay)

    def release(self) -> bool:
        """Give the lease up if held (empty holder, ``leaseDurationSeconds: 1``); True on success.
        Calls ``on_stopped_leading`` when this candidate was leading."""
        with self._lock:
            was_leading = self._leading
            self._leading = False
            raw = self._observed_raw
        if not was_leading or raw is None:
            return False
        now_s = rfc3339_micro(self.clock.now())
        spec = dict(raw.get("spec") or {})
        ok = False
        if spec.get("holderIdentity") == self.identity:
            spec.update(
                {"holderIdentity": None, "leaseDurationSeconds": 1, "acquireTime": now_s, "renewTime": now_s}
            )
            try:
                self.client.update({**raw, "spec": spec})
                ok = True
            except Exception as e:  # noqa: BLE001
                log.warning("failed to release lease %s/%s: %s", self.config.namespace, self.config.name, e)
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()
        return ok


def lease_expired(lease: dict[str, Any], now: float) -> bool:
    """Whether ``lease``'s ``renewTime + leaseDurationSeconds`` is before ``now`` (for display and
    tests; the elector itself uses locally observed times)."""
    spec = lease.get("spec") or {}
    renew = spec.get("renewTime")
    if not renew or not spec.get("holderIdentity"):
        return True
    return parse_rfc3339(str(renew)) + float(spec.get("leaseDurationSeconds") or 0) < now
