"""``kubesched bench --api``: a workload through ``kubesched serve`` + ``kubesched run`` over HTTP.

The workload's objects are written to one JSON ``List`` that ``serve -f`` loads at start: its
nodes, namespaces and the pods of every ``createPods`` op, pending (the measured op's pods can be
cut to ``measure_pods``). Then ``kubesched run`` (default profile, ``--leader-elect=false``, the
given QPS/burst) lists them and schedules them in queue order: the pods of earlier ops first
(their namespaces sort first, as ``namespace-<op index>``), so the init pods are placed before the
measured ones, as ``scheduler_perf``'s barrier does. Pod creation is not part of the measurement.

The benchmark process watches pods on the API (its own client) and stamps each bind of a measured
pod as the watch delivers it: **throughput = measured pods / (last bind - first bind)**, sampled
per second as well. CPU seconds of both processes (``/proc/<pid>/stat``, user + system) are taken
at the first and at the last measured bind; peak RSS is ``VmHWM`` at the end. Attempt latency comes
from ``run``'s ``scheduler_scheduling_attempt_duration_seconds`` histogram (``result=scheduled``),
quantiles interpolated within buckets as Prometheus' ``histogram_quantile`` does; the share of
Filter evaluations per attempt shows which path ran.

Ops up to the first ``churn`` or ``sleep`` are loaded by ``serve`` as above; from there on the
benchmark process runs them through the API while ``run`` schedules, in order, as upstream's
workload executor (:mod:`kubesched.modes.bench.api_ops`): ``sleep`` waits wall time, ``churn``
creates and deletes objects every ``intervalMilliseconds`` until the end
(:mod:`kubesched.modes.bench.churn`), later ``createPods`` create their pods then (so their
creation is part of the measurement, as in ``scheduler_perf``). Linux only (``/proc``). Everything
listens on loopback.

The DRA ops load with the rest (:mod:`kubesched.modes.bench.dra_ops`): the slices of
``createResourceDriver`` for the nodes created so far, the objects of ``createAny``, and the claims
of ``allocResourceClaims`` with their allocation; ``serve``'s ResourceClaim controller creates the
claims of the pods from their templates. A steady-state ``createPods`` is not run through the API
(the workload fails with that reason): its replacement loop runs in-process only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.modes.bench.api_ops import OP_LABEL, LiveOps, ObjectBuilder, live_start
from kubesched.modes.bench.dra_ops import allocate_claims, any_objects, driver_slices
from kubesched.modes.bench.metrics import percentile
from kubesched.modes.bench.simulate_fixture import SimulateFixture, spreading_cluster
from kubesched.modes.bench.workloads import BenchWorkload

__all__ = [
    "OP_LABEL",
    "ApiResult",
    "WorkloadPlan",
    "fixture_plan",
    "histogram_quantile",
    "run_api_workload",
    "workload_objects",
    "workload_plan",
]

_CLI = 'from kubesched.cli.main import main; main(prog_name="kubesched")'


@dataclass
class ProcessStats:
    """CPU seconds and context switches (voluntary and involuntary, summed over the process's
    threads) over the measurement, and peak RSS (bytes) of one process."""

    cpu_seconds: float = 0.0
    peak_rss: int = 0
    context_switches: int = 0


@dataclass
class ApiResult:
    """Outcome of one API-mode workload; :meth:`to_json` gives the ``--output`` entry."""

    name: str
    nodes: int
    measured_pods: int
    qps: float
    burst: int
    status: str = "ok"
    error: str = ""
    scheduled_pods: int = 0
    duration_seconds: float = 0.0
    throughput: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    run: ProcessStats = field(default_factory=ProcessStats)
    serve: ProcessStats = field(default_factory=ProcessStats)
    filter_evaluations_per_attempt: float = 0.0
    startup_seconds: float = 0.0
    #: objects the churn ops created / deleted / failed to (empty without churn)
    churn: dict[str, int] = field(default_factory=dict)
    #: the ops run live, with their start (seconds since the benchmark began) and duration
    live_ops: list[dict[str, Any]] = field(default_factory=list)
    #: the flags ``kubesched run`` got beyond the benchmark's own (``--run-flag``)
    run_flags: list[str] = field(default_factory=list)

    @property
    def pods_per_second(self) -> float:
        """Measured pods per second, first to last bind."""
        return self.scheduled_pods / self.duration_seconds if self.duration_seconds > 0 else 0.0

    def pods_per_cpu_second(self) -> float:
        """Measured pods per CPU second of ``run`` + ``serve``."""
        cpu = self.run.cpu_seconds + self.serve.cpu_seconds
        return self.scheduled_pods / cpu if cpu > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON shape of a result row (times in seconds, sizes in bytes)."""
        return {
            "name": self.name,
            "mode": "api",
            "nodes": self.nodes,
            "measuredPods": self.measured_pods,
            "qps": self.qps,
            "burst": self.burst,
            "status": self.status,
            "error": self.error,
            "scheduledPods": self.scheduled_pods,
            "durationSeconds": self.duration_seconds,
            "podsPerSecond": self.pods_per_second,
            "throughput": self.throughput,
            "attemptLatencySeconds": self.latency,
            "run": {
                "cpuSeconds": self.run.cpu_seconds,
                "peakRssBytes": self.run.peak_rss,
                "contextSwitches": self.run.context_switches,
            },
            "serve": {
                "cpuSeconds": self.serve.cpu_seconds,
                "peakRssBytes": self.serve.peak_rss,
                "contextSwitches": self.serve.context_switches,
            },
            "podsPerCpuSecond": self.pods_per_cpu_second(),
            "filterEvaluationsPerAttempt": self.filter_evaluations_per_attempt,
            "startupSeconds": self.startup_seconds,
            "churn": self.churn,
            "liveOps": self.live_ops,
            "runFlags": self.run_flags,
        }


@dataclass
class WorkloadPlan:
    """How a workload runs in API mode: ``objects`` ``serve`` loads at start (the ops before
    ``live_start``), the tags and number of the measured pods, the pod counts of the loaded
    createPods ops (``expected``), and the builder that names the objects of the later ops."""

    objects: list[dict[str, Any]]
    measured: set[str]
    n_measured: int
    live_start: int
    expected: dict[str, int]
    builder: ObjectBuilder


def workload_plan(w: BenchWorkload, measure_pods: int | None = None) -> WorkloadPlan:
    """The :class:`WorkloadPlan` of ``w``: ops up to the first ``churn`` or ``sleep`` are loaded
    by ``serve`` (nodes, namespaces, pending pods in op order); the rest run live
    (:class:`kubesched.modes.bench.api_ops.LiveOps`)."""
    builder = ObjectBuilder(measure_pods)
    start = live_start(w)
    objs: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    namespaces: dict[str, None] = {}
    measured: set[str] = set()
    expected: dict[str, int] = {}
    n_measured = 0
    for i, op in enumerate(w.ops):
        if op.opcode == "createPods" and op.collect_metrics:
            measured.add(str(i))
            n_measured += builder.pod_count(op)
        if i >= start:
            continue
        if op.opcode == "createNodes":
            objs.extend(builder.nodes(op))
        elif op.opcode == "createResourceDriver":
            objs.extend(driver_slices(op, [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]))
        elif op.opcode == "createAny":
            if op.namespace:
                namespaces[op.namespace] = None
            objs.extend(any_objects(op, op.namespace))
        elif op.opcode == "allocResourceClaims":
            claims = {
                o["metadata"]["name"]: o
                for o in objs
                if o["kind"] == "ResourceClaim" and o["metadata"].get("namespace") == op.namespace
            }
            slices = [o for o in objs if o["kind"] == "ResourceSlice"]
            for name, allocation in allocate_claims(claims.values(), slices):
                claims[name]["status"] = {**(claims[name].get("status") or {}), "allocation": allocation}
        elif op.opcode == "createNamespaces":
            namespaces.update(dict.fromkeys(builder.namespaces(op)))
        elif op.opcode == "createPods":
            ns, op_pods = builder.pods(i, op)
            namespaces[ns] = None
            expected[str(i)] = len(op_pods)
            pods.extend(op_pods)
    ns_objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        for ns in namespaces
        if ns != "default"
    ]
    return WorkloadPlan(ns_objs + objs + pods, measured, n_measured, start, expected, builder)


#: the tag :class:`_BindWatch` gives pods without :data:`OP_LABEL` (a simulate fixture's pods)
UNTAGGED = ""


def fixture_plan(fx: SimulateFixture, measure_pods: int | None = None) -> WorkloadPlan:
    """The :class:`WorkloadPlan` of a ``bench --simulate`` cluster file: ``serve`` loads its nodes
    and pending pods exactly as the file has them (the first ``measure_pods`` pods when given), and
    every pod is measured. Raises ValueError for a negative ``measure_pods``."""
    if measure_pods is not None and measure_pods < 0:
        raise ValueError("measure_pods must not be negative")
    objs: list[dict[str, Any]] = []
    n_pods = 0
    for obj in spreading_cluster(fx.nodes, fx.pods, fx.apps, fx.spread_every):
        if obj["kind"] == "Pod":
            if measure_pods is not None and n_pods >= measure_pods:
                break
            n_pods += 1
        objs.append(obj)
    return WorkloadPlan(objs, {UNTAGGED}, n_pods, 0, {}, ObjectBuilder())


def workload_objects(
    w: BenchWorkload, measure_pods: int | None = None
) -> tuple[list[dict[str, Any]], set[str], int]:
    """The objects ``serve`` loads for ``w``, the op tags of the measured pods and their number
    (see :func:`workload_plan`)."""
    plan = workload_plan(w, measure_pods)
    return plan.objects, plan.measured, plan.n_measured


def histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus ``histogram_quantile``: ``buckets`` are cumulative ``(upper bound, count)``
    sorted by bound (the last one ``+Inf``); linear interpolation inside the bucket."""
    if not buckets or buckets[-1][1] <= 0:
        return 0.0
    rank = q * buckets[-1][1]
    prev_bound, prev_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf"):
                return prev_bound
            if count == prev_count:
                return bound
            return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count)
        prev_bound, prev_count = bound, count
    return prev_bound


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def _context_switches(pid: int) -> int:
    """Voluntary + involuntary context switches of every thread of ``pid`` so far
    (``/proc/<pid>/task/*/status``; threads that ended are not counted)."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
        except OSError:  # the thread ended
            continue
    return total


def _process_sample(pid: int) -> tuple[float, int]:
    """``(CPU seconds, context switches)`` of process ``pid`` so far."""
    return _cpu_seconds(pid), _context_switches(pid)


def _peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(cond: Callable[[], bool], timeout: float, what: str, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: a benchmark process exited with code {p.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM (``timeout``, a CI runner, ``kill``) unwinds the benchmark like Ctrl-C does, so the
    ``finally`` blocks of :func:`_process` stop ``serve`` and ``run``: they run in sessions of
    their own and would otherwise outlive the benchmark. Only the main thread can take signals;
    elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, unwind)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _process(args: list[str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log_path, "wb") as log:
        p = subprocess.Popen(
            [sys.executable, "-c", _CLI, *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield p
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)


class _BindWatch:
    """Stamps the first bind of each measured pod (``spec.nodeName`` newly set) as the watch
    delivers it, and samples both processes' CPU and context switches at the first and the last
    one."""

    def __init__(self, measured: set[str], expected: int, pids: Callable[[], list[int]]) -> None:
        self.measured = measured
        self.expected = expected
        self.pids = pids
        self.bound: set[str] = set()
        self.all_bound = 0
        self.times: list[float] = []
        #: per process, (CPU seconds, context switches) at the first and the last measured bind
        self.first: list[tuple[float, int]] = []
        self.last: list[tuple[float, int]] = []
        self.done = threading.Event()
        #: bound pods per createPods op tag
        self.per_op: dict[str, int] = {}
        self._seen: set[str] = set()

    def __call__(self, ev: Any) -> None:
        if ev.type not in ("ADDED", "MODIFIED"):
            return
        obj = ev.object
        if not (obj.get("spec") or {}).get("nodeName"):
            return
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        if key in self._seen:
            return
        self._seen.add(key)
        self.all_bound += 1
        tag = (meta.get("labels") or {}).get(OP_LABEL, UNTAGGED)
        self.per_op[tag] = self.per_op.get(tag, 0) + 1
        if tag not in self.measured:
            return
        now = time.monotonic()
        if not self.times:
            self.first = [_process_sample(p) for p in self.pids()]
        self.times.append(now)
        self.bound.add(key)
        if len(self.bound) >= self.expected:
            self.last = [_process_sample(p) for p in self.pids()]
            self.done.set()


def _scrape(port: int, token: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 - loopback
        text = r.read().decode()
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((dict(s.labels), float(s.value)))
    return out


def run_api_workload(
    w: BenchWorkload | SimulateFixture,
    *,
    qps: float = 5000.0,
    burst: int = 5000,
    measure_pods: int | None = None,
    timeout: float = 600.0,
    run_args: tuple[str, ...] = (),
    progress: Callable[[int, int], None] | None = None,
) -> ApiResult:
    """Run ``w`` (a workload, or a ``bench --simulate`` cluster file: :func:`fixture_plan`) through
    ``serve`` + ``run`` subprocesses (module docstring). Failures become a ``failed`` result with
    the reason (and the tail of the processes' logs), never a crash."""
    plan = fixture_plan(w, measure_pods) if isinstance(w, SimulateFixture) else workload_plan(w, measure_pods)
    objs = plan.objects
    result = ApiResult(w.name, w.nodes, plan.n_measured, qps, burst, run_flags=list(run_args))
    ops = w.ops if isinstance(w, BenchWorkload) else []
    if any(op.steady_state for op in ops):
        result.status = "failed"
        result.error = (
            "steady-state createPods (steadyState: true) runs in-process only: use kubesched bench "
            "without --api"
        )
        return result
    with tempfile.TemporaryDirectory(prefix="kubesched-bench-api-") as tmp:
        tmpdir = Path(tmp)
        manifest = tmpdir / "cluster.json"
        manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
        del objs
        plan.objects = []
        kubeconfig = tmpdir / "kubeconfig"
        metrics_port = _free_port()
        try:
            _run_processes(
                w,
                result,
                tmpdir,
                manifest,
                kubeconfig,
                metrics_port,
                plan,
                qps,
                burst,
                timeout,
                run_args,
                progress,
            )
        except Exception as e:  # noqa: BLE001 - a failing workload is a result row
            result.status = "failed"
            tails = []
            for name in ("serve.log", "run.log"):
                p = tmpdir / name
                if p.exists():
                    lines = p.read_text(errors="replace").splitlines()[-8:]
                    tails.append(f"--- {name}\n" + "\n".join(lines))
            result.error = f"{type(e).__name__}: {e}\n" + "\n".join(tails)
    return result


def _run_processes(
    w: BenchWorkload | SimulateFixture,
    result: ApiResult,
    tmpdir: Path,
    manifest: Path,
    kubeconfig: Path,
    metrics_port: int,
    plan: WorkloadPlan,
    qps: float,
    burst: int,
    timeout: float,
    run_args: tuple[str, ...],
    progress: Callable[[int, int], None] | None,
) -> None:
    from kubesched.client.kube import KubeClusterClient

    measured, n_measured = plan.measured, plan.n_measured

    t0 = time.monotonic()
    # the scrape of run's /metrics is authenticated and authorised through serve, as a
    # Prometheus scraper's is through the API server (TokenReview + SubjectAccessReview)
    token = secrets.token_hex(16)
    (tmpdir / "tokens.csv").write_text(f"{token},kubesched-bench,uid-bench\n")
    (tmpdir / "policy.jsonl").write_text(
        json.dumps(
            {
                "apiVersion": "abac.authorization.kubernetes.io/v1beta1",
                "kind": "Policy",
                "spec": {"user": "kubesched-bench", "nonResourcePath": "/metrics", "readonly": True},
            }
        )
        + "\n"
    )
    serve_args = [
        "serve",
        "-f",
        str(manifest),
        "--port",
        "0",
        "--write-kubeconfig",
        str(kubeconfig),
        "--token-auth-file",
        str(tmpdir / "tokens.csv"),
        "--authorization-policy-file",
        str(tmpdir / "policy.jsonl"),
    ]
    with _sigterm_unwinds(), _process(serve_args, tmpdir / "serve.log") as serve:
        _wait(kubeconfig.exists, 300, "kubesched serve to listen", [serve])
        client = KubeClusterClient.from_kubeconfig(str(kubeconfig), qps=-1, burst=1)
        try:
            _wait(lambda: _ready(client), 60, "kubesched serve to answer", [serve])
            rv = client.list("Namespace").resource_version
            pids: list[int] = [serve.pid]
            watch = _BindWatch(measured, n_measured, lambda: list(pids))
            sub = client.watch("Pod", rv, watch)
            try:
                run_cmd = [
                    "run",
                    "--kubeconfig",
                    str(kubeconfig),
                    "--leader-elect=false",
                    "--kube-api-qps",
                    str(qps),
                    "--kube-api-burst",
                    str(burst),
                    "--secure-port",
                    "0",
                    "--port",
                    str(metrics_port),
                    *run_args,
                ]
                with _process(run_cmd, tmpdir / "run.log") as run:
                    pids.insert(0, run.pid)
                    live = None
                    if isinstance(w, BenchWorkload) and plan.live_start < len(w.ops):
                        live = LiveOps(
                            client,
                            w,
                            plan.live_start,
                            plan.builder,
                            lambda t: watch.per_op.get(t, 0),
                            plan.expected,
                            timeout,
                            origin=t0,
                        ).begin()
                    try:
                        _measure(result, watch, live, serve, run, n_measured, timeout, progress, t0)
                    finally:
                        if live is not None:
                            live.stop()
                            result.churn = {
                                "created": sum(c.created for c in live.churns),
                                "deleted": sum(c.deleted for c in live.churns),
                                "failed": sum(c.failures for c in live.churns),
                            }
                            result.live_ops = list(live.timings)
                    _collect(result, watch, run.pid, serve.pid, metrics_port, token)
            finally:
                sub.stop()
        finally:
            client.close()


def _measure(
    result: ApiResult,
    watch: _BindWatch,
    live: LiveOps | None,
    serve: subprocess.Popen[bytes],
    run: subprocess.Popen[bytes],
    n_measured: int,
    timeout: float,
    progress: Callable[[int, int], None] | None,
    started: float,
) -> None:
    """Wait for the first bind (``startup_seconds`` counts from ``started``), then for every
    measured pod's; raises when a process exits, a live op fails or ``timeout`` passes."""

    def check() -> None:
        for p in (serve, run):
            if p.poll() is not None:
                raise RuntimeError(f"a benchmark process exited with code {p.returncode}")
        if live is not None and live.error is not None:
            raise RuntimeError(f"a workload op failed: {live.error}")

    def first_bind() -> bool:
        check()
        return bool(watch.times) or watch.all_bound > 0

    _wait(first_bind, timeout, "the first bind", [serve, run])
    result.startup_seconds = time.monotonic() - started
    deadline = time.monotonic() + timeout
    while not watch.done.wait(0.5):
        if progress is not None:
            progress(len(watch.bound), n_measured)
        check()
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{n_measured - len(watch.bound)} of {n_measured} measured pods unbound after {timeout:.0f}s"
            )
    if progress is not None:
        progress(len(watch.bound), n_measured)


def _ready(client: Any) -> bool:
    try:
        client.list("Namespace")
        return True
    except Exception:  # noqa: BLE001 - not up yet
        return False


def _collect(
    result: ApiResult, watch: _BindWatch, run_pid: int, serve_pid: int, metrics_port: int, token: str
) -> None:
    times = watch.times
    result.scheduled_pods = len(times)
    result.duration_seconds = times[-1] - times[0] if len(times) > 1 else 0.0
    per_second: dict[int, int] = {}
    for t in times:
        sec = int(t - times[0])
        per_second[sec] = per_second.get(sec, 0) + 1
    samples = sorted(float(v) for k, v in per_second.items() if k < max(per_second))  # last second is partial
    if samples:
        result.throughput = {
            "average": sum(samples) / len(samples),
            "perc50": percentile(samples, 50),
            "perc90": percentile(samples, 90),
            "perc99": percentile(samples, 99),
        }
    (run_cpu, run_cs), (serve_cpu, serve_cs) = (
        (b[0] - a[0], b[1] - a[1]) for a, b in zip(watch.first, watch.last, strict=True)
    )
    result.run = ProcessStats(run_cpu, _peak_rss(run_pid), run_cs)
    result.serve = ProcessStats(serve_cpu, _peak_rss(serve_pid), serve_cs)
    m = _scrape(metrics_port, token)
    buckets = sorted(
        (float(lab["le"]), v)
        for lab, v in m.get("scheduler_scheduling_attempt_duration_seconds_bucket", [])
        if lab.get("result") == "scheduled"
    )
    result.latency = {f"perc{q}": histogram_quantile(q / 100, buckets) for q in (50, 90, 99)}
    evals = sum(
        v
        for lab, v in m.get("scheduler_plugin_evaluation_total", [])
        if lab.get("extension_point") == "Filter" and lab.get("plugin") == "NodeResourcesFit"
    )
    attempts = sum(v for _lab, v in m.get("scheduler_schedule_attempts_total", []))
    result.filter_evaluations_per_attempt = evals / attempts if attempts else 0.0
