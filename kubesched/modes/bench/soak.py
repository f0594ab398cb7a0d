"""``kubesched bench --soak``: memory of ``kubesched run`` under hostile or sustained load.

Both experiments start ``kubesched serve`` and ``kubesched run`` as subprocesses on loopback (as
``bench --api`` does), with ``nodes`` nodes of 64 CPUs, and sample ``run``'s resident memory
(``VmRSS`` of ``/proc/<pid>/status``, MiB) as they go. Linux only.

* ``idle-connections``: a helper process opens ``connections`` TCP connections to ``run``'s
  secure port, sends nothing (or, with ``tls_hello``, the first 5 bytes of a TLS record, so the
  handshake starts and stalls) and holds them ``hold`` seconds; meanwhile ``pods`` pods are
  created and must all bind, and ``/healthz`` is fetched over HTTPS (its latency is reported).
  Memory is sampled before, at the peak, and ``settle`` seconds after the connections closed.
* ``churn``: for ``duration`` seconds, ``rate`` pods a second are created and every pod bound
  more than ``lifetime`` seconds ago is deleted; a sample (elapsed seconds, RSS, pods created,
  bound and deleted so far) is taken every ``sample_every`` seconds. At the end every pod still
  present must be bound (none lost) and no node may hold more CPU than it has.

Results are plain dataclasses (:class:`IdleResult`, :class:`ChurnResult`); the CLI prints them and
the fault tests assert bounds on them.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.modes.bench.api import _free_port, _process, _sigterm_unwinds, _wait

__all__ = ["ChurnResult", "IdleResult", "rss_mib", "soak_churn", "soak_idle_connections"]

#: the helper that opens and holds the idle connections (argv: port, count, hold seconds, hello)
_FLOOD = """
import resource, socket, sys, time
port, n, hold, hello = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 64)), hard))
socks, failed = [], 0
for _ in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if hello:
            s.send(bytes([0x16, 3, 1, 0, 200]))
        socks.append(s)
    except OSError:
        failed += 1
print(len(socks), failed, flush=True)
time.sleep(hold)
"""


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (``VmRSS``)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class IdleResult:
    """The ``idle-connections`` experiment: connections opened by the helper (``failed`` could not
    connect), ``run``'s RSS (MiB) before, at the peak and after, ``/healthz`` status and seconds
    at the peak, pods created and bound during the flood."""

    connections: int
    tls_hello: bool
    opened: int = 0
    failed: int = 0
    rss_before: float = 0.0
    rss_peak: float = 0.0
    rss_after: float = 0.0
    healthz_status: int = 0
    healthz_seconds: float = 0.0
    pods: int = 0
    bound: int = 0

    def lines(self) -> list[str]:
        """A short report."""
        kind = "stalled TLS handshakes" if self.tls_hello else "bare TCP connections"
        return [
            f"idle connections: {self.opened} {kind} opened ({self.failed} failed) to run's secure port",
            f"run RSS: before {self.rss_before:.0f} MiB, peak {self.rss_peak:.0f} MiB, "
            f"after {self.rss_after:.0f} MiB",
            f"/healthz during the flood: {self.healthz_status} in {self.healthz_seconds * 1000:.0f} ms",
            f"pods bound during the flood: {self.bound} of {self.pods}",
        ]


@dataclass
class ChurnResult:
    """The ``churn`` experiment: ``samples`` of (seconds, RSS MiB, created, bound, deleted), and at
    the end pods left unbound (``lost``) and nodes over their CPU (``over_capacity``)."""

    rate: float
    duration: float
    samples: list[tuple[float, float, int, int, int]] = field(default_factory=list)
    lost: int = 0
    over_capacity: int = 0

    def lines(self) -> list[str]:
        """A short report: the RSS curve."""
        out = [
            f"churn: {self.rate:g} pods/s for {self.duration:g} s",
            f"{'seconds':>8} {'RSS MiB':>8} {'created':>8} {'bound':>8} {'deleted':>8}",
        ]
        out += [f"{t:8.0f} {r:8.0f} {c:8d} {b:8d} {d:8d}" for t, r, c, b, d in self.samples]
        out.append(f"lost {self.lost}, nodes over capacity {self.over_capacity}")
        return out


@contextlib.contextmanager
def _cluster(nodes: int, tmpdir: Path, run_args: tuple[str, ...] = ()) -> Iterator[tuple[Any, Any, int]]:
    """``serve`` with ``nodes`` nodes and ``run`` (secure port on loopback); yields the API client,
    the ``run`` process and its secure port."""
    from kubesched.client.kube import KubeClusterClient
    from kubesched.testing import node_manifest

    kubeconfig = tmpdir / "kubeconfig"
    secure_port = _free_port()
    with (
        _sigterm_unwinds(),
        _process(
            ["serve", "--port", "0", "--write-kubeconfig", str(kubeconfig)], tmpdir / "serve.log"
        ) as serve,
    ):
        _wait(kubeconfig.exists, 120, "kubesched serve to listen", [serve])
        client = KubeClusterClient.from_kubeconfig(str(kubeconfig), qps=-1, burst=1)
        try:
            _wait(lambda: _answers(client), 60, "kubesched serve to answer", [serve])
            for i in range(nodes):
                client.create(node_manifest(f"node-{i:03d}", cpu="64", memory="256Gi", pods=1000))
            run_cmd = [
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--leader-elect=false",
                "--kube-api-qps",
                "5000",
                "--kube-api-burst",
                "5000",
                "--secure-port",
                str(secure_port),
                *run_args,
            ]
            with _process(run_cmd, tmpdir / "run.log") as run:
                _wait(lambda: _healthz(secure_port)[0] == 200, 120, "kubesched run's /healthz", [serve, run])
                yield client, run, secure_port
        finally:
            client.close()


def _answers(client: Any) -> bool:
    try:
        client.list("Namespace")
        return True
    except Exception:  # noqa: BLE001 - not up yet
        return False


def _healthz(port: int, timeout: float = 5.0) -> tuple[int, float]:
    """``(status, seconds)`` of ``GET https://127.0.0.1:<port>/healthz`` (0: no answer)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    start = time.monotonic()
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=ctx, timeout=timeout) as r:
            return r.status, time.monotonic() - start
    except Exception:  # noqa: BLE001 - reported as no answer
        return 0, time.monotonic() - start


def _pod(name: str) -> dict[str, Any]:
    """A pod of 100m and 64Mi that leaves at once when deleted (grace period 0)."""
    from kubesched.testing import pod_manifest

    return pod_manifest(name, cpu="100m", memory="64Mi", spec={"terminationGracePeriodSeconds": 0})


def _bound(client: Any) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in client.list("Pod", "default").items
        if p["spec"].get("nodeName")
    }


def soak_idle_connections(
    connections: int = 10_000,
    *,
    tls_hello: bool = False,
    hold: float = 15.0,
    settle: float = 10.0,
    nodes: int = 10,
    pods: int = 50,
) -> IdleResult:
    """Run the ``idle-connections`` experiment (module docstring). Raises RuntimeError when a
    process fails to start or exits."""
    res = IdleResult(connections, tls_hello, pods=pods)
    with (
        tempfile.TemporaryDirectory(prefix="kubesched-soak-") as tmp,
        _cluster(nodes, Path(tmp)) as (client, run, port),
    ):
        time.sleep(2.0)
        res.rss_before = rss_mib(run.pid)
        flood = subprocess.Popen(
            [sys.executable, "-c", _FLOOD, str(port), str(connections), str(hold), "1" if tls_hello else "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert flood.stdout is not None
            first = flood.stdout.readline().split()
            res.opened, res.failed = (int(first[0]), int(first[1])) if len(first) == 2 else (0, connections)
            for i in range(pods):
                client.create(_pod(f"flood-{i:04d}"))
            end = time.monotonic() + hold / 2
            while time.monotonic() < end:
                res.rss_peak = max(res.rss_peak, rss_mib(run.pid))
                time.sleep(0.25)
            res.healthz_status, res.healthz_seconds = _healthz(port)
            res.rss_peak = max(res.rss_peak, rss_mib(run.pid))
            deadline = time.monotonic() + 60
            while len(_bound(client)) < pods and time.monotonic() < deadline:
                time.sleep(0.25)
            res.bound = len(_bound(client))
        finally:
            flood.kill()
            flood.wait(10)
        time.sleep(settle)
        res.rss_after = rss_mib(run.pid)
    return res


def soak_churn(
    rate: float = 100.0,
    duration: float = 60.0,
    *,
    lifetime: float = 5.0,
    sample_every: float = 10.0,
    nodes: int = 50,
) -> ChurnResult:
    """Run the ``churn`` experiment (module docstring). Raises RuntimeError when a process fails
    to start or exits."""
    from kubesched.errors import NotFoundError

    res = ChurnResult(rate, duration)
    with (
        tempfile.TemporaryDirectory(prefix="kubesched-soak-") as tmp,
        _cluster(nodes, Path(tmp)) as (client, run, _),
    ):
        start = time.monotonic()
        created = deleted = bound_total = 0
        first_bound: dict[str, float] = {}  # bound, not deleted yet: when it was first seen bound
        seen: set[str] = set()  # every pod seen bound
        next_sample = start
        seq = 0
        while True:
            now = time.monotonic()
            if now - start >= duration:
                break
            if run.poll() is not None:
                raise RuntimeError(f"kubesched run exited with code {run.returncode}")
            want = int((now - start) * rate) - created
            for _ in range(max(0, want)):
                client.create(_pod(f"churn-{seq:07d}"))
                seq += 1
                created += 1
            bound = _bound(client)
            for name in bound:
                if name not in seen:
                    seen.add(name)
                    first_bound[name] = now
                    bound_total += 1
            for name, t in list(first_bound.items()):
                if now - t >= lifetime:
                    with contextlib.suppress(NotFoundError):
                        client.delete("Pod", "default", name)
                    deleted += 1
                    del first_bound[name]
            if now >= next_sample:
                res.samples.append((now - start, rss_mib(run.pid), created, bound_total, deleted))
                next_sample += sample_every
            time.sleep(0.05)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pods = client.list("Pod", "default").items
            if all(p["spec"].get("nodeName") for p in pods):
                break
            time.sleep(0.5)
        pods = client.list("Pod", "default").items
        res.lost = sum(1 for p in pods if not p["spec"].get("nodeName"))
        used: dict[str, int] = {}
        for p in pods:
            node = p["spec"].get("nodeName")
            if node:
                used[node] = used.get(node, 0) + 100
        res.over_capacity = sum(1 for m in used.values() if m > 64_000)
        res.samples.append((time.monotonic() - start, rss_mib(run.pid), created, bound_total, deleted))
    return res


def to_json(result: IdleResult | ChurnResult) -> str:
    """The result as JSON (``--output``)."""
    return json.dumps(result.__dict__, indent=2)
