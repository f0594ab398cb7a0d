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


def test_elector_valid_until_is_the_renewal_round_deadline_after_the_attempt_started() -> None:
    clock = VirtualClock()
    mono = Mono()
    cluster = MemoryCluster(clock)
    cfg = LeaderElectionConfig(identity="me", lease_duration=15, renew_deadline=10, retry_period=2)
    el = LeaderElector(cluster, cfg, clock, monotonic=mono)
    assert el.valid_until() == float("-inf")
    el.step()
    assert el.is_leader() and el.valid_until() == 62.0  # retry 2 + renew deadline 10
    mono.t = 58.0
    el.step()
    assert el.valid_until() == 70.0
    el.release()
    assert el.valid_until() == float("-inf")


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "window"),
    [
        (15, 10, 2, 12),  # kube-scheduler's defaults: the round due at 2 s has 10 s
        (4, 3, 1, 4),  # capped at the lease: another replica may take it 4 s after it saw the renewal
        (4, 3, 2, 4),
        (40, 10, 2, 12),
    ],
)
def test_leading_window(lease: float, renew: float, retry: float, window: float) -> None:
    cfg = LeaderElectionConfig(identity="me", lease_duration=lease, renew_deadline=renew, retry_period=retry)
    assert cfg.leading_window() == window


def _paused(pause: float, at: float, other_candidate: bool) -> tuple[list[str], list[str], bool]:
    """A leader (lease 4 s, renew deadline 3 s, retry 1 s) renews at t=0, is paused ``at`` s later
    for ``pause`` s, then (as after SIGCONT) its binding thread writes once and its elector steps.
    ``other_candidate``: a second replica campaigns every retry period meanwhile. Returns the
    writes that went out, the events, and whether the leader still leads."""
    clock = VirtualClock(0.0)
    mono = Mono()
    mono.t = 0.0
    cluster = MemoryCluster(clock)
    events: list[str] = []
    cfg = LeaderElectionConfig(
        name="l", namespace="kube-system", identity="a", lease_duration=4, renew_deadline=3, retry_period=1
    )
    a = LeaderElector(
        cluster, cfg, clock, monotonic=mono, on_stopped_leading=lambda: events.append("a stopped")
    )
    b = LeaderElector(
        cluster,
        LeaderElectionConfig(
            name="l",
            namespace="kube-system",
            identity="b",
            lease_duration=4,
            renew_deadline=3,
            retry_period=1,
        ),
        clock,
        monotonic=mono,
        on_started_leading=lambda: events.append("b started"),
    )
    fence = LeaseFence(a.valid_until, lambda: events.append("a fenced"), mono)
    a.step()
    if other_candidate:
        b.step()
    written: list[str] = []
    t = 0.0
    while t + 1 <= at + pause:  # the other replica campaigns while a is paused
        t += 1
        clock.advance_to(t)
        mono.t = t
        if other_candidate:
            b.step()
    clock.advance_to(at + pause)
    mono.t = at + pause
    try:
        fence.check("POST", "/api/v1/namespaces/d/pods/p/binding")
        written.append("binding")
    except LeaseLostError:
        pass
    a.step()
    return written, events, a.is_leader()


@pytest.mark.parametrize("at", [0.0, 0.4, 0.99])
def test_a_pause_shorter_than_the_renew_deadline_is_survived(at: float) -> None:
    written, events, leading = _paused(2.5, at, other_candidate=True)
    assert (written, events, leading) == (["binding"], [], True)


@pytest.mark.parametrize("at", [0.0, 0.5, 0.99])
def test_a_long_pause_writes_nothing_after_the_lease_could_have_passed(at: float) -> None:
    written, events, leading = _paused(10.0, at, other_candidate=True)
    assert written == []
    assert events == ["b started", "a fenced", "a stopped"]
    assert not leading


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
    client.update(
        {
            "kind": "Lease",
            "apiVersion": "coordination.k8s.io/v1",
            "metadata": {"name": "l", "namespace": "kube-system"},
            "spec": {},
        }
    )
    assert sent == [
        ("GET", "/api/v1/namespaces/a/pods/p"),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l"),
    ]
    assert stale == [1]
