"""LeaseFence refuses every write once the lease is not fresh, calls on_stale once, and lets the
Lease's own requests through; LeaderElector.valid_until counts from the start of the last
successful renewal."""

from __future__ import annotations

import pytest

from kubesched.client.fencing import LeaseFence, LeaseLostError
from kubesched.client.leader_election import LeaderElectionConfig, LeaderElector
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster


class Mono:
    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


def test_fence_refuses_after_the_deadline_and_stays_closed() -> None:
    mono = Mono()
    until = [60.0]
    stale: list[int] = []
    fence = LeaseFence(lambda: until[0], lambda: stale.append(1), mono)
    fence.check("POST", "/api/v1/namespaces/a/pods/p/binding")
    mono.t = 60.0
    with pytest.raises(LeaseLostError, match="POST /api/v1/namespaces/a/pods/p/binding: refused"):
        fence.check("POST", "/api/v1/namespaces/a/pods/p/binding")
    fence.check("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched")
    fence.check("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
    with pytest.raises(LeaseLostError):  # a pod named "leases" is no Lease
        fence.check("POST", "/api/v1/namespaces/leases/pods/leases/binding")
    until[0] = 100.0  # a later renewal does not reopen it: the replica is stopping
    with pytest.raises(LeaseLostError):
        fence.check("PATCH", "/api/v1/namespaces/a/pods/p/status")
    assert (stale, fence.refused) == ([1], 3)


def test_elector_valid_until_is_renew_deadline_after_the_attempt_started() -> None:
    clock = VirtualClock()
    mono = Mono()
    cluster = MemoryCluster(clock)
    cfg = LeaderElectionConfig(identity="me", lease_duration=15, renew_deadline=10, retry_period=2)
    el = LeaderElector(cluster, cfg, clock, monotonic=mono)
    assert el.valid_until() == float("-inf")
    el.step()
    assert el.is_leader() and el.valid_until() == 60.0
    mono.t = 58.0
    el.step()
    assert el.valid_until() == 68.0
    el.release()
    assert el.valid_until() == float("-inf")


def test_kube_client_consults_the_guard_before_sending_writes() -> None:
    """Refused writes never reach the transport; reads and the Lease's own requests do."""
    import http.client

    from kubesched.client.http_pool import Response
    from kubesched.client.kube import KubeClusterClient

    sent: list[tuple[str, str]] = []

    class ApiClient:
        configuration = None
        default_headers: dict[str, str] = {}

        def update_params_for_auth(self, headers: object, querys: object, auth_settings: object) -> None: ...

    class Transport:
        def request(self, method: str, path: str, body: object, headers: object, timeout: object) -> Response:
            sent.append((method, path))
            return Response(200, http.client.HTTPMessage(), b"{}")

    client = KubeClusterClient(ApiClient(), transport=Transport())  # type: ignore[arg-type]
    stale: list[int] = []
    client.write_guard = LeaseFence(lambda: float("-inf"), lambda: stale.append(1))
    with pytest.raises(LeaseLostError):
        client.bind("a", "p", "u", "n1")
    with pytest.raises(LeaseLostError):
        client.delete("Pod", "a", "victim")
    client.get("Pod", "a", "p")
    client.update({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                   "metadata": {"name": "l", "namespace": "kube-system"}, "spec": {}})
    assert sent == [("GET", "/api/v1/namespaces/a/pods/p"),
                    ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l")]
    assert stale == [1]
