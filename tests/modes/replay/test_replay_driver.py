"""The replay runs on the scheduler's virtual-time lifecycle (``Scheduler.start`` with the queue's
own flushes, ``run_until_quiet``, ``stop``): its results equal those of a discrete-event loop that
drives ``schedule_one`` itself and runs the queue's flushes by hand at the times the 1 s backoff
loop and the 30 s unschedulable loop would (the reference below), on random workloads with
contention, long-unschedulable pods, scheduling time (``attempt_seconds``) and a pre-pull
planner."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from replay_support import PodSpec, two_node_workload

from kubesched.api.pod import Pod
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay import run as replay_run
from kubesched.modes.replay.run import ConfigSpec, run_replay
from kubesched.modes.report.result import ReplayResult
from kubesched.prepull.hook import PlannerContext
from kubesched.queue.scheduling_queue import UNSCHEDULABLE_FLUSH_PERIOD
from kubesched.scheduler import new_scheduler
from kubesched.trace.workload import Workload

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CATALOGUE = load_catalogue(FIX / "catalogue.yaml")


class _ReferenceRun(replay_run._Run):
    """One replay run as an explicit loop: arrivals, planner ticks, one ``schedule_one`` per
    poppable pod, otherwise a jump to the next event, with ``flush_backoff_q_completed`` at the
    first whole second after the earliest backoff expiry and ``flush_unschedulable_pods_leftover``
    on the 30 s grid from the origin while unschedulable pods exist."""

    def _attempt(self) -> bool:
        sched = self.scheduler
        qpi = sched.queue.pop()
        if qpi is None:
            return False
        key = qpi.pod.key
        tl = self.timelines.get(key)
        t = self.t()
        if tl is not None:
            if tl.first_attempt is None:
                tl.first_attempt = t
            tl.attempts += 1
        self.attempts += 1
        self.current = key
        try:
            sched.schedule_one(qpi)
        finally:
            self.current = None
        if tl is not None and tl.bound is None and sched.cache.is_assumed_pod(qpi.pod):
            tl.assumed = t
        return True

    def run(self) -> ReplayResult:
        wl = self.workload
        self.cluster.load([dict(n) for n in wl.nodes])
        for obj in wl.nodes:
            self.model.add_node(str((obj.get("metadata") or {}).get("name")))
        self.scheduler = new_scheduler(
            self.cluster, self.spec.config, clock=self.clock, seed=self.seed, record=False
        )
        self.scheduler.start()
        self.cluster.watch("Pod", self.cluster.resource_version, self._on_pod_event)
        ctx = PlannerContext(
            self.model, self.cluster, self.scheduler, self.clock, self.catalogue, self.origin
        )
        ticks = []
        for planner in self.planners:
            planner.attach(ctx)
            ticks.append(float(planner.tick_seconds))
        origin, clock, queue = self.origin, self.clock, self.scheduler.queue
        next_tick = [origin for _ in self.planners]
        pods = wl.pods
        arrivals = [origin + p.arrival for p in pods]
        i, total = 0, len(pods)
        busy_until = last_leftover = -math.inf
        period = UNSCHEDULABLE_FLUSH_PERIOD
        while True:
            now = clock.now()
            while i < total and arrivals[i] <= now:
                self._create(pods[i])
                i += 1
            for j, planner in enumerate(self.planners):
                if next_tick[j] <= now:
                    planner.tick(now - origin)
                    next_tick[j] = origin + (math.floor((now - origin) / ticks[j]) + 1) * ticks[j]
            if now >= busy_until and self._attempt():
                if self.attempt_seconds > 0:
                    busy_until = now + self.attempt_seconds
                continue
            hard: list[float] = []
            if i < total:
                hard.append(arrivals[i])
            # daemon timers (the nodes' status reports) fire when time passes them but keep no run going
            nt = clock.next_timer_time() if clock.has_pending_work() else None
            if nt is not None:
                hard.append(nt)
            backoff_at = None
            if queue.len_backoff() > 0:
                expiry = queue.next_backoff_expiry()
                tick = math.floor(expiry) + 1 if expiry is not None else math.floor(now) + 1
                backoff_at = float(max(tick, math.floor(now) + 1))
                hard.append(backoff_at)
            if now < busy_until and queue.len_active() > 0:
                hard.append(busy_until)
            if not hard:
                break
            nxt = min(hard)
            leftover_at = None
            if queue.len_unschedulable() > 0:
                k = math.ceil((now - origin) / period)
                if origin + k * period <= last_leftover:
                    k += 1
                leftover_at = origin + k * period
                nxt = min(nxt, leftover_at)
            nxt = max(min([nxt, *next_tick]), now)
            self._samples_before(nxt)
            clock.advance_to(nxt)
            if backoff_at is not None and nxt >= backoff_at:
                queue.flush_backoff_q_completed()
            if leftover_at is not None and nxt >= leftover_at:
                last_leftover = leftover_at
                queue.flush_unschedulable_pods_leftover()
        end = self.t()
        self._samples_before(math.inf)
        return ReplayResult(
            config=self.spec.name,
            profiles=list(self.scheduler.profiles),
            workload=wl.description,
            seed=self.seed,
            horizon=wl.horizon,
            timelines=[self.timelines[wp.key] for wp in pods],
            pull_metrics=self.model.metrics,
            mean_allocated_fraction=self.tracker.mean_fractions(),
            series=self.series,
            attempts=self.attempts,
            end_time=end,
            wall_seconds=0.0,
            planners=[type(p).__name__ for p in self.planners],
        )


class _Planner:
    """Pre-pulls the image of each pending pod on the node with the fewest pulls at its ticks;
    records every callback, and schedules an event for the current instant from each (these fire
    after the instant's scheduling cycles)."""

    tick_seconds = 7.0

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.wanted: list[str] = []
        self.ctx: PlannerContext | None = None

    def attach(self, ctx: PlannerContext) -> None:
        self.ctx = ctx

    def _same_instant(self, what: str) -> None:
        # what a pull that ends at once would do: an event for this very instant
        assert self.ctx is not None
        clock = self.ctx.clock
        clock.call_at(
            clock.now(), lambda: self.calls.append(("same instant", what, clock.now() - self.ctx.origin))
        )

    def on_pod_pending(self, pod: Pod, t: float) -> None:
        self.calls.append(("pending", pod.name, t))
        self.wanted.extend(pod.images)
        self._same_instant(pod.name)

    def on_pod_bound(self, pod: Pod, node: str, t: float) -> None:
        self.calls.append(("bound", pod.name, node, t))

    def tick(self, t: float) -> None:
        assert self.ctx is not None
        self.calls.append(("tick", t))
        self._same_instant("tick")
        for image in self.wanted:
            node = min(("n0", "n1"), key=self.ctx.model.pending_pulls)
            self.calls.append(("prepull", node, image, self.ctx.model.prepull(node, image)))
        self.wanted.clear()


_POD = st.tuples(
    st.integers(0, 700),
    st.one_of(st.none(), st.integers(0, 900)),
    st.integers(1, 5),
    st.sampled_from(["example.com/app-a:1", "example.com/app-b:1", "example.com/base:1"]),
)


def _workload(specs: list[PodSpec]) -> Workload:
    """Two nodes; arrivals in quarter seconds, a 200 s horizon."""
    return two_node_workload(specs, horizon=200.0, steps_per_second=4)


def _outcome(r: ReplayResult) -> tuple[Any, ...]:
    s = r.summary()
    s.pop("wallSeconds")
    return s, [t.to_dict() for t in r.timelines], r.series


@settings(max_examples=30, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=14), st.sampled_from([0.0, 0.25, 1.5]), st.booleans())
def test_replay_on_the_driver_equals_the_reference_loop(
    specs: list[tuple[int, int | None, int, str]], attempt_seconds: float, prepull: bool
) -> None:
    wl = _workload(specs)
    spec = ConfigSpec("upstream-default", None)
    kubelet = KubeletImageConfig()
    planners = ([_Planner()], [_Planner()]) if prepull else ([], [])
    reference = _ReferenceRun(
        wl,
        spec,
        CATALOGUE,
        kubelet,
        3,
        planners[0],
        attempt_seconds,
        replay_run.STATUS_UPDATE_SECONDS,
        50,
        None,
    ).run()
    result = run_replay(
        wl,
        spec,
        catalogue=CATALOGUE,
        kubelet_config=kubelet,
        seed=3,
        planners=planners[1],
        attempt_seconds=attempt_seconds,
        sample_points=50,
    )
    assert _outcome(result) == _outcome(reference)
    if prepull:
        assert planners[1][0].calls == planners[0][0].calls


def test_a_long_unschedulable_pod_is_retried_by_the_queue_flush() -> None:
    """p2 needs a whole node; p0 holds one for 400 s after its start, p1 the other for ever. p2 is
    retried by the queue's unschedulable flush (UnschedulableTimeout: more than 300 s without an
    event, on the 30 s grid: 330 s) and, at p0's deletion, by the AssignedPodDelete event."""
    wl = _workload(
        [
            (0, 400, 6, "example.com/base:1"),
            (0, None, 6, "example.com/base:1"),
            (0, None, 6, "example.com/base:1"),
        ]
    )
    r = run_replay(wl, None, catalogue=CATALOGUE, seed=0)
    p0, p2 = r.timelines[0], r.timelines[2]
    assert p0.finished is not None and 400.0 < p0.finished < 430.0
    assert (p2.first_attempt, p2.attempts, p2.bound, p2.node) == (0.0, 3, p0.finished, p0.node)
    assert r.summary()["neverScheduled"] == 0 and r.attempts == 5


def test_order_within_an_instant_arrivals_before_planner_ticks() -> None:
    """A pod arriving at a tick instant is pending for that tick (the instant's order: events, the
    queue's flushes, arrivals, ticks, then scheduling cycles, then the events these scheduled for
    the same instant)."""
    planner = _Planner()
    wl = _workload([(28, 5, 1, "example.com/app-a:1")])  # arrives at 7.0 s, the planner's second tick
    r = run_replay(wl, None, catalogue=CATALOGUE, seed=0, planners=[planner])
    assert planner.calls[:8] == [
        ("tick", 0.0),
        ("same instant", "tick", 0.0),
        ("pending", "p0", 7.0),
        ("tick", 7.0),
        ("prepull", "n0", "example.com/app-a:1", True),
        ("bound", "p0", "n0", 7.0),
        ("same instant", "p0", 7.0),
        ("same instant", "tick", 7.0),
    ]
    assert r.timelines[0].first_attempt == 7.0 and r.timelines[0].bound == 7.0
