"""Invariants of the fault suite (tests/faults/): no pod lost, none bound twice, no node over its
CPU, bounded memory; and the size of a run (quick by default, long with
``KUBESCHED_FAULTS_LONG=1``). Uses the ``kubesched run`` harness of tests/run_support.py."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from run_support import Cluster

from kubesched.api.quantity import milli_value
from kubesched.client.client import WatchEvent

#: the long set (bigger floods, longer churn, more repetitions): ``KUBESCHED_FAULTS_LONG=1``
LONG = os.environ.get("KUBESCHED_FAULTS_LONG", "") == "1"


def size(quick: float, long: float) -> float:
    """``quick`` in the CI set, ``long`` in the long one."""
    return long if LONG else quick


class BindLedger:
    """Every node each pod of the namespace was seen on, from the embedded store's own watch (so
    a pod bound to two nodes in a row is caught even if it ends on one)."""

    def __init__(self, cluster: Cluster) -> None:
        assert cluster.handle is not None, "the ledger watches the embedded store"
        self.namespace = cluster.namespace
        self._lock = threading.Lock()
        self.nodes: dict[str, set[str]] = {}
        store = cluster.handle.cluster
        self._sub = store.watch("Pod", store.resource_version, self._on)

    def _on(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        node = (ev.object.get("spec") or {}).get("nodeName")
        if meta.get("namespace") == self.namespace and node and ev.type != "DELETED":
            with self._lock:
                self.nodes.setdefault(str(meta.get("uid")), set()).add(str(node))

    def double_bound(self) -> dict[str, set[str]]:
        """Pods (by UID) seen on more than one node."""
        with self._lock:
            return {uid: nodes for uid, nodes in self.nodes.items() if len(nodes) > 1}

    def stop(self) -> None:
        self._sub.stop()


@contextmanager
def ledger(cluster: Cluster) -> Iterator[BindLedger]:
    led = BindLedger(cluster)
    try:
        yield led
    finally:
        led.stop()


def over_capacity(cluster: Cluster) -> dict[str, tuple[int, int]]:
    """Nodes whose bound pods request more CPU than the node has: ``{node: (used, allocatable)}``
    in millicores."""
    alloc = {
        n.metadata.name: milli_value(n.status.allocatable["cpu"]) for n in cluster.core.list_node().items
    }
    used: dict[str, int] = {}
    for p in cluster.pods().values():
        node = p["spec"].get("nodeName")
        if node:
            for c in p["spec"]["containers"]:
                used[node] = used.get(node, 0) + milli_value(
                    ((c.get("resources") or {}).get("requests") or {}).get("cpu", "0")
                )
    return {n: (u, alloc.get(n, 0)) for n, u in used.items() if u > alloc.get(n, 0)}


def assert_invariants(cluster: Cluster, led: BindLedger, expected: list[str]) -> None:
    """0 lost (every name in ``expected`` bound), 0 double-bound, 0 over capacity."""
    bound = cluster.bound()
    lost = [n for n in expected if n not in bound]
    assert not lost, f"{len(lost)} pods lost (never bound): {lost[:10]}"
    assert not led.double_bound(), f"pods bound to two nodes: {led.double_bound()}"
    assert not over_capacity(cluster), (
        f"nodes over capacity (used, allocatable millicpu): {over_capacity(cluster)}"
    )


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` (MiB)."""
    from kubesched.modes.bench.soak import rss_mib as rss

    return rss(pid)


def pods_named(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:04d}" for i in range(n)]
