"""Metrics of the Kubernetes client libraries that kube-scheduler exports next to its own: the
REST client's (``k8s.io/component-base/metrics/prometheus/restclient/metrics.go``) and
leader election's (``.../clientgo/leaderelection/metrics.go``).

* ``rest_client_requests_total{code, host, method}``: requests by HTTP status code (``<error>``
  when no response came back);
* ``rest_client_request_duration_seconds{verb, host}``: request latency, seconds;
* ``rest_client_rate_limiter_duration_seconds{verb, host}``: time spent waiting on the client-side
  rate limiter, seconds;
* ``leader_election_master_status{name}``: 1 while this replica holds the lease ``name``, else 0.

Buckets are upstream's (0.005 .. 60 s). :class:`ComponentMetrics` registers them once per registry.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["LATENCY_BUCKETS", "ComponentMetrics"]

LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

_LOCK = threading.Lock()
_REGISTERED: weakref.WeakKeyDictionary[CollectorRegistry, ComponentMetrics] = weakref.WeakKeyDictionary()


class ComponentMetrics:
    """The REST-client and leader-election collectors of one registry (``None``: the default one).
    Use :meth:`for_registry` so that every client of a process shares them."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "rest_client_requests_total",
            "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.",
            ("code", "host", "method"),
            registry=registry,
        )
        self.request_duration = Histogram(
            "rest_client_request_duration_seconds",
            "[ALPHA] Request latency in seconds. Broken down by verb, and host.",
            ("verb", "host"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.rate_limiter_duration = Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "[ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.",
            ("verb", "host"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master. 'name' is the string used to identify the lease. Please "
            "make sure to group by name.",
            ("name",),
            registry=registry,
        )
        #: the labelled children of (method, host, code), made once
        self._children: dict[tuple[str, str, int | None], tuple[Any, Any, Any]] = {}

    @classmethod
    def for_registry(cls, registry: CollectorRegistry | None = None) -> ComponentMetrics:
        reg = registry if registry is not None else prometheus_client.REGISTRY
        with _LOCK:
            got = _REGISTERED.get(reg)
            if got is None:
                got = cls(reg)
                _REGISTERED[reg] = got
            return got

    def request(self, method: str, host: str, code: int | None, seconds: float, waited: float) -> None:
        """One finished request: its status ``code`` (None: no response), latency and rate-limiter wait."""
        key = (method, host, code)
        children = self._children.get(key)
        if children is None:  # prometheus_client's labels() costs more than the observations
            children = self._children[key] = (
                self.requests.labels("<error>" if not code else str(code), host, method),
                self.request_duration.labels(method, host),
                self.rate_limiter_duration.labels(method, host),
            )
        requests, duration, limiter = children
        requests.inc()
        duration.observe(seconds)
        limiter.observe(waited)

    def leading(self, name: str, leading: bool) -> None:
        self.leader.labels(name).set(1 if leading else 0)
