"""Run one benchmark workload end to end: embedded cluster, real informers, queue, scheduling and
binding cycles (``Scheduler.run_until_quiet`` with inline binding), virtual clock.

Pods of an op are created first (``cluster.create``; creation time is reported, not part of the
throughput, as upstream creates pods from other goroutines), then the scheduler runs until they
are all bound. When nothing is poppable the virtual clock moves to the next timer (the queue's
backoff and unschedulable flushes run on it), at most to the next whole second (the backoff
loop's tick); an op whose pods make no progress for 15 virtual minutes ends the workload as
``incomplete``. Any exception becomes a ``failed`` result, never a crash.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.modes.bench.api_ops import ObjectBuilder
from kubesched.modes.bench.churn import Churn
from kubesched.modes.bench.dra_ops import allocate_claims, any_objects, driver_slices
from kubesched.modes.bench.metrics import ThroughputCollector, peak_rss_bytes, percentile
from kubesched.modes.bench.workloads import BenchWorkload, Op

#: virtual seconds without a newly bound pod after which an op is given up
STALL_VIRTUAL_SECONDS = 900.0

Progress = Callable[[int, int], None]


def _stay(next_timer: float | None) -> float | None:
    """The idle hook that never moves the clock: stop as soon as nothing is poppable."""
    return None


@dataclass
class WorkloadResult:
    """Outcome of one workload; :meth:`to_json` gives the ``--output`` entry."""

    name: str
    nodes: int
    measured_pods: int
    threshold: float | None
    status: str = "ok"
    error: str = ""
    scheduled_pods: int = 0
    duration_seconds: float = 0.0
    create_seconds: float = 0.0
    #: CPU seconds (user + system) of this process while the measured pods were scheduled
    cpu_seconds: float = 0.0
    attempts: int = 0
    throughput: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    peak_rss: int = 0
    skipped_plugins: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """One ``--json`` result entry (name, nodes, measured pods, throughput, latency percentiles,
        RSS, threshold) plus ``status``/``error``/bookkeeping fields."""
        return {
            "name": self.name,
            "nodes": self.nodes,
            "measuredPods": self.measured_pods,
            "throughput": self.throughput,
            "attemptLatencySeconds": self.latency,
            "peakRssBytes": self.peak_rss,
            "upstreamThreshold": self.threshold,
            "status": self.status,
            "error": self.error,
            "scheduledPods": self.scheduled_pods,
            "durationSeconds": self.duration_seconds,
            "createSeconds": self.create_seconds,
            "cpuSeconds": self.cpu_seconds,
            "podsPerCpuSecond": self.scheduled_pods / self.cpu_seconds if self.cpu_seconds > 0 else 0.0,
            "attempts": self.attempts,
            "skippedPlugins": self.skipped_plugins,
        }


class _Run:
    def __init__(self, w: BenchWorkload, seed: int, progress: Progress | None, freeze_gc: bool) -> None:
        from kubesched.clock import VirtualClock
        from kubesched.embedded.store import MemoryCluster
        from kubesched.scheduler import new_scheduler

        self.w = w
        self.progress = progress
        self.freeze_gc = freeze_gc
        self.result = WorkloadResult(w.name, w.nodes, w.measured_pods, w.threshold)
        self.clock = VirtualClock(0.0)
        self.cluster = MemoryCluster(self.clock)
        skipped: list[str] = []
        self.sched = new_scheduler(
            self.cluster,
            None,
            clock=self.clock,
            seed=seed,
            on_skipped_plugins=lambda _p, names: skipped.extend(names),
        )
        self.result.skipped_plugins = skipped
        self.sched.start(queue_flushes=True)
        if w.uses_dra:
            from kubesched.embedded.controllers.garbagecollector import GarbageCollector
            from kubesched.embedded.controllers.resourceclaim import ResourceClaimController

            ResourceClaimController(self.cluster, clock_now=self.clock.now).start()
            GarbageCollector(self.cluster, self.clock).start()
        self.bound: dict[str, int] = {}
        #: steady-state ops: names of their pods bound and not yet replaced
        self.steady_bound: dict[str, list[tuple[str, str]]] = {}
        self.cluster.watch("Pod", self.cluster.resource_version, self._on_pod)
        self.builder = ObjectBuilder()  # node names continue across createNodes ops
        self.namespaces: set[str] = set()
        #: churn ops started, with the wall time of their last tick
        self.churns: list[tuple[Churn, float]] = []
        self.done_measured = 0

    def _on_pod(self, ev: Any) -> None:
        if ev.type != "MODIFIED" or ev.old_object is None:
            return
        if (ev.object.get("spec") or {}).get("nodeName") and not (ev.old_object.get("spec") or {}).get(
            "nodeName"
        ):
            meta = ev.object["metadata"]
            tag = (meta.get("labels") or {}).get(_OP_LABEL)
            if tag is not None:
                self.bound[tag] = self.bound.get(tag, 0) + 1
                if tag in self.steady_bound:
                    self.steady_bound[tag].append((meta["namespace"], meta["name"]))

    # ---- ops --------------------------------------------------------------------------------

    def run(self) -> WorkloadResult:
        for i, op in enumerate(self.w.ops):
            if self.result.status != "ok":
                break
            getattr(self, "_op_" + op.opcode)(i, op)
        return self.result

    def _op_createNodes(self, i: int, op: Op) -> None:
        self.cluster.load(self.builder.nodes(op))
        self._settle()

    def _op_createNamespaces(self, i: int, op: Op) -> None:
        for k in range(op.count):
            self._ensure_namespace(f"{op.prefix}-{k}")

    def _ensure_namespace(self, ns: str) -> None:
        if ns in self.namespaces:
            return
        self.namespaces.add(ns)
        if ns != "default":
            self.cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    def _op_createResourceDriver(self, i: int, op: Op) -> None:
        names = [n["metadata"]["name"] for n in self.cluster.list("Node").items]
        for obj in driver_slices(op, names):
            self.cluster.create(obj)
        self._settle()

    def _op_createAny(self, i: int, op: Op) -> None:
        if op.namespace:
            self._ensure_namespace(op.namespace)
        for obj in any_objects(op, op.namespace):
            self.cluster.create(obj)
        self._settle()

    def _op_allocResourceClaims(self, i: int, op: Op) -> None:
        claims = self.cluster.list("ResourceClaim", op.namespace).items
        for name, allocation in allocate_claims(claims, self.cluster.list("ResourceSlice").items):
            self.cluster.patch_status("ResourceClaim", op.namespace, name, {"allocation": allocation})
        self._settle()

    def _op_createPods(self, i: int, op: Op) -> None:
        assert op.template is not None
        ns = op.namespace or f"namespace-{i}"
        self._ensure_namespace(ns)
        tmpl = op.template
        meta = tmpl.get("metadata") or {}
        prefix = f"{meta.get('generateName', 'pod-')}{i}-"
        labels = {**(meta.get("labels") or {}), _OP_LABEL: str(i)}
        spec = tmpl.get("spec") or {}
        if op.collect_metrics and self.freeze_gc:
            gc.collect()
            gc.freeze()
        t0 = time.perf_counter()
        create = self.cluster.create
        for k in range(op.count):
            create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"{prefix}{k}", "namespace": ns, "labels": labels},
                    "spec": spec,
                }
            )
        if op.collect_metrics:
            self.result.create_seconds = time.perf_counter() - t0
        if not op.steady_state:
            self._schedule_until(str(i), op.count, op.collect_metrics)
            return
        tag = str(i)
        self.steady_bound[tag] = []
        next_index = op.count
        deadline = time.perf_counter() + op.duration_seconds

        def replace() -> bool:
            """Delete and replace the bound pods; True once the duration is over."""
            nonlocal next_index
            done = time.perf_counter() >= deadline
            bound, self.steady_bound[tag] = self.steady_bound[tag], []
            for pns, pname in bound:
                self.cluster.delete("Pod", pns, pname)
                if not done:
                    create(
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "metadata": {"name": f"{prefix}{next_index}", "namespace": ns, "labels": labels},
                            "spec": spec,
                        }
                    )
                    next_index += 1
            return done

        self._schedule_until(tag, None, op.collect_metrics, replace)

    def _op_barrier(self, i: int, op: Op) -> None:
        self._settle()

    def _op_sleep(self, i: int, op: Op) -> None:
        self.clock.advance_to(self.clock.now() + op.duration_seconds)
        self._settle()

    def _op_churn(self, i: int, op: Op) -> None:
        churn = Churn(i, op)
        self._ensure_namespace(churn.namespace)
        self.churns.append((churn, time.perf_counter()))

    # ---- scheduling -------------------------------------------------------------------------

    def _settle(self) -> None:
        """Schedule whatever is poppable now (no clock jumps)."""
        self.sched.run_until_quiet(idle=_stay)

    def _churn(self) -> None:
        """Tick every churn op whose interval (wall time, as upstream's ticker) has passed."""
        now = time.perf_counter()
        for j, (churn, last) in enumerate(self.churns):
            if churn.finished or now - last < churn.interval_seconds:
                continue
            self.churns[j] = (churn, now)
            churn.tick(self.cluster.create, self.cluster.delete)

    def _schedule_until(
        self, tag: str, count: int | None, measure: bool, steady: Callable[[], bool] | None = None
    ) -> None:
        """Schedule until ``count`` pods of op ``tag`` are bound, or, with ``steady`` (count None),
        until ``steady()`` (called when pods got bound and when nothing is poppable) says the
        steady state is over."""
        sched, clock = self.sched, self.clock
        collector = ThroughputCollector()
        latencies: list[float] = []
        attempts = 0
        last_bound = 0
        stall_since = clock.now()
        progress = self.progress if measure else None
        if measure:
            collector.start()
            cpu0 = time.process_time()
        perf = time.perf_counter
        t0 = 0.0

        def until() -> bool:
            if steady is not None:
                if self.steady_bound[tag] and steady():
                    return True
            elif self.bound.get(tag, 0) >= count:  # type: ignore[operator]
                return True
            if self.churns:
                self._churn()
            return False

        def before(qpi: QueuedPodInfo) -> None:
            nonlocal t0
            t0 = perf()

        def after(qpi: QueuedPodInfo) -> None:
            nonlocal attempts, last_bound, stall_since
            attempts += 1
            done = self.bound.get(tag, 0)
            if measure:
                latencies.append(perf() - t0)
                if done != last_bound:
                    collector.add(done - last_bound)
                    if progress is not None and (done % 256 == 0 or (count is not None and done >= count)):
                        progress(done, count if count is not None else done)
            if done != last_bound:
                last_bound = done
                stall_since = clock.now()

        def idle(next_timer: float | None) -> float | None:
            if steady is not None and steady():
                return None
            if clock.now() - stall_since > STALL_VIRTUAL_SECONDS:
                done = self.bound.get(tag, 0)
                self.result.status = "incomplete"
                missing = f"{count - done} of {count} pods" if count is not None else "the steady-state pods"
                self.result.error = (
                    f"{missing} still unscheduled after "
                    f"{STALL_VIRTUAL_SECONDS:.0f} virtual seconds without progress"
                )
                return None
            whole = float(math.floor(clock.now() + 1e-6) + 1)
            return whole if next_timer is None else min(next_timer, whole)

        sched.run_until_quiet(until=until, before_attempt=before, after_attempt=after, idle=idle)
        if measure:
            collector.stop()
            self.result.cpu_seconds = time.process_time() - cpu0
            latencies.sort()
            r = self.result
            r.scheduled_pods = self.bound.get(tag, 0)
            r.duration_seconds = collector.elapsed
            r.attempts = attempts
            r.throughput = collector.summary()
            r.latency = {
                "perc50": percentile(latencies, 50),
                "perc90": percentile(latencies, 90),
                "perc99": percentile(latencies, 99),
            }
            if progress is not None:
                progress(r.scheduled_pods, count if count is not None else r.scheduled_pods)


#: label put on bench pods: index of the createPods op that made them (counts bound pods per op)
_OP_LABEL = "kubesched.bench/op"


def run_workload(
    w: BenchWorkload, *, seed: int = 0, progress: Progress | None = None, freeze_gc: bool = True
) -> WorkloadResult:
    """Run ``w`` in this process. ``progress(done, total)`` is called while measured pods get bound.
    ``freeze_gc``: ``gc.freeze()`` the loaded objects before the measured op (fewer GC passes)."""
    result = WorkloadResult(w.name, w.nodes, w.measured_pods, w.threshold)
    try:
        run = _Run(w, seed, progress, freeze_gc)
        result = run.run()
    except Exception as e:  # noqa: BLE001 - a failing workload is a result row, not a crash
        result.status = "failed"
        result.error = f"{type(e).__name__}: {e}"
        result.error += "\n" + "".join(traceback.format_exc(limit=3))
    finally:
        gc.unfreeze()
    result.peak_rss = peak_rss_bytes()
    return result


def _child(conn: Any, w: BenchWorkload, seed: int, freeze_gc: bool) -> None:
    # Ctrl-C reaches the whole process group: the parent handles it and stops this process
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    res = run_workload(w, seed=seed, progress=lambda d, t: conn.send(("progress", d, t)), freeze_gc=freeze_gc)
    conn.send(("result", res))
    conn.close()


def run_isolated(
    w: BenchWorkload, *, seed: int = 0, progress: Progress | None = None, freeze_gc: bool = True
) -> WorkloadResult:
    """Run ``w`` in a forked child process, so that its peak RSS and heap are its own. An
    interrupt of this process (KeyboardInterrupt, or SIGTERM as the CLI raises it) terminates the
    child at once and is re-raised."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return run_workload(w, seed=seed, progress=progress, freeze_gc=freeze_gc)
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, w, seed, freeze_gc), daemon=True)
    result: WorkloadResult | None = None
    try:
        proc.start()  # inside the try: an interrupt right after the fork still stops the child
        child.close()
        while True:
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg[0] == "progress" and progress is not None:
                progress(msg[1], msg[2])
            elif msg[0] == "result":
                result = msg[1]
    except BaseException:
        if proc.pid is not None:
            proc.terminate()
        raise
    finally:
        if proc.pid is not None:
            proc.join()
    if result is None:
        result = WorkloadResult(
            w.name,
            w.nodes,
            w.measured_pods,
            w.threshold,
            status="failed",
            error=f"benchmark process exited with code {proc.exitcode}",
        )
    return result
