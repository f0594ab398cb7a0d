"""DefaultPreemption: when no node fits, evict lower-priority pods from the best node and
nominate the pod there (``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``).

Follows upstream ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``
(PostFilter, args, eligibility, candidate count) and ``pkg/scheduler/framework/preemption/
preemption.go`` (``Evaluator.Preempt``, ``findCandidates``, ``DryRunPreemption``,
``SelectCandidate``, ``prepareCandidate``). Victim selection and node ranking live in
:mod:`kubesched.plugins.defaultpreemption.victims`.

Differences from upstream v1.35, by design:

* Preparation is **synchronous**: upstream v1.35 (``SchedulerAsyncPreemption``) evicts victims in a
  goroutine and gates the preemptor with PreEnqueue meanwhile; kubesched deletes the victims
  before PostFilter returns, which is what upstream documents for sync preemption. No PreEnqueue.
* Dry runs visit the potential nodes sequentially from the random offset and stop as soon as
  there is a non-violating candidate and enough candidates (upstream's parallel loop cancels at
  the same point but may have checked a few more nodes).
* Extenders (``handle.extenders``) with a preempt verb shrink the candidates as upstream's
  ``callExtenders``; the surviving candidates keep their order instead of Go's random map order.
* ``scheduler_preemption_attempts_total`` / ``scheduler_preemption_victims`` are recorded through
  ``handle.metrics`` when the scheduler runs with metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from pydantic import Field, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.api.timestamps import rfc3339
from kubesched.config.args import ARGS_CONFIG
from kubesched.errors import ManifestError, NotFoundError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import EnqueueExtensions, PostFilterPlugin
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.preemption import Candidate
from kubesched.framework.results import NominatingInfo, NominatingMode, PostFilterResult
from kubesched.framework.status import Code, FrameworkError, Status
from kubesched.plugins.defaultpreemption.victims import (
    CompiledPDB,
    EligibleFn,
    compile_pdbs,
    pick_one_node_for_preemption,
    select_victims_on_node,
)

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

log = logging.getLogger(__name__)

NAME: Final = "DefaultPreemption"
MESSAGE_PREFIX: Final = "preemption: "
NOT_HELPFUL_MSG: Final = "Preemption is not helpful for scheduling"
NEVER_MSG: Final = "not eligible due to preemptionPolicy=Never."
TERMINATING_MSG: Final = "not eligible due to a terminating pod on the nominated node."
DISRUPTION_TARGET: Final = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
#: metric names (``pkg/scheduler/metrics/metrics.go``), recorded through ``handle.metrics`` (a
#: ``QueueMetrics`` recorder) when set
PREEMPTION_ATTEMPTS: Final = "scheduler_preemption_attempts_total"
PREEMPTION_VICTIMS: Final = "scheduler_preemption_victims"


@dataclass(config=ARGS_CONFIG)
class DefaultPreemptionArgs:
    """``DefaultPreemptionArgs``: at least ``max(potential * min_candidate_nodes_percentage // 100,
    min_candidate_nodes_absolute)`` nodes are dry-run (percentage 0..100, absolute >= 0, not both 0;
    ``ValidateDefaultPreemptionArgs``)."""

    min_candidate_nodes_percentage: int = Field(default=10)
    min_candidate_nodes_absolute: int = Field(default=100)

    @field_validator("min_candidate_nodes_percentage")
    @classmethod
    def _percentage_range(cls, v: int) -> int:
        if v < 0 or v > 100:
            raise ValueError("not in valid range [0, 100]")
        return v

    @field_validator("min_candidate_nodes_absolute")
    @classmethod
    def _absolute_range(cls, v: int, info: ValidationInfo) -> int:
        if v < 0:
            raise ValueError("not in valid range [0, inf)")
        if v == 0 and info.data.get("min_candidate_nodes_percentage") == 0:
            raise ValueError("cannot be zero at the same time as minCandidateNodesPercentage")
        return v


def is_schedulable_after_pod_deletion(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Hint of AssignedPod Delete: always QueueSkip (with sync preemption the preemptor is never
    gated by this plugin; other plugins' hints requeue it when victims go)."""
    return QueueingHint.QueueSkip


def pod_terminating_by_preemption(p: Pod) -> bool:
    """``podTerminatingByPreemption``: deletionTimestamp set and the first ``DisruptionTarget``
    condition is ``True`` with reason ``PreemptionByScheduler``."""
    if not p.deletion_timestamp:
        return False
    for c in p.conditions:
        if c.get("type") == DISRUPTION_TARGET:
            return c.get("status") == "True" and c.get("reason") == PREEMPTION_BY_SCHEDULER
    return False


def _aggregate(errs: Sequence[BaseException]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[m1, m2]`` de-duplicated."""
    if len(errs) == 1:
        return str(errs[0])
    seen: list[str] = []
    for e in errs:
        if str(e) not in seen:
            seen.append(str(e))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


class DefaultPreemption(PostFilterPlugin, EnqueueExtensions):
    """PostFilter plugin preempting lower-priority pods (see module docstring)."""

    NAME = NAME
    Args = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or DefaultPreemptionArgs(), handle)
        self.args: DefaultPreemptionArgs

    # ---- hooks (overridable, as upstream's Evaluator interface) ------------------------------

    def is_eligible_pod(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """``IsEligiblePod`` default: every lower-priority pod may be a victim."""
        return True

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """Victim has a lower priority than the preemptor and passes :meth:`is_eligible_pod`."""
        return victim.pod.priority < preemptor.priority and self.is_eligible_pod(node_info, victim, preemptor)

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """``max(num_nodes * percentage // 100, absolute)`` capped at ``num_nodes``."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start offset in ``[0, num_nodes)`` (``handle.rng``) and the candidate count."""
        fh = self._fh()
        return fh.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: ``(ok, message)``."""
        if pod.preemption_policy == "Never":
            return False, NEVER_MSG
        nom = pod.nominated_node_name
        if nom:
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UnschedulableAndUnresolvable
            ):
                return True, ""
            ni = self._fh().snapshot().get(nom)
            if ni is not None:
                for pi in ni.pods:
                    if self.is_preemption_allowed(ni, pi, pod) and pod_terminating_by_preemption(pi.pod):
                        return False, TERMINATING_MSG
        return True, ""

    # ---- EnqueueExtensions ------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """AssignedPod Delete with an always-QueueSkip hint (the plugin's ``EventsToRegister``)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.AssignedPod, ActionType.Delete), is_schedulable_after_pod_deletion
            )
        ]

    # ---- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Upstream ``preemption.Evaluator.Preempt``. Success returns
        ``PostFilterResult(NominatingInfo(node, Override))`` after the
        victims were evicted; every non-empty message is prefixed ``preemption: ``."""
        victims: list[Pod] = []
        try:
            result, status = self._preempt(state, pod, filtered_node_status_map, victims)
        finally:
            m = self.handle.metrics if self.handle is not None else None
            if m is not None:
                m.inc(PREEMPTION_ATTEMPTS, {}, 1)
        if status is not None and not status.is_success():
            msg = status.message()
            if msg:
                status = Status(status.code, MESSAGE_PREFIX + msg)
        rec = state.recorder
        if rec is not None:
            rec.record_post_filter(self.NAME, status, result, victims=[v.key for v in victims])
        return result, status

    def _fh(self) -> Handle:
        if self.handle is None:
            raise FrameworkError("DefaultPreemption needs a framework handle")
        return self.handle

    def _now(self) -> float:
        clock = self._fh().clock
        return float(clock.now()) if clock is not None else time.time()

    def _latest_pod(self, pod: Pod) -> tuple[Pod | None, Status | None]:
        """Re-read the preemptor from the informer cache (``PodLister.Get``)."""
        objects = self._fh().objects
        if objects is None:
            return pod, None
        obj = objects.get("Pod", pod.namespace, pod.name)
        if obj is None:
            return None, Status(Code.Error, f'pod "{pod.name}" not found')
        if obj is pod.raw:
            return pod, None
        try:
            return Pod.from_manifest(obj), None
        except ManifestError as e:
            return None, Status(Code.Error, err=e)

    def _preempt(
        self, state: CycleState, pod: Pod, m: NodeToStatus, victims_out: list[Pod]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``Evaluator.Preempt`` (messages without the ``preemption: `` prefix)."""
        fh = self._fh()
        latest, err = self._latest_pod(pod)
        if latest is None:
            return None, err
        pod = latest
        nominated_status = m.get(pod.nominated_node_name) if pod.nominated_node_name else None
        ok, msg = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.Unschedulable, msg)
        all_nodes = fh.snapshot().list()
        if not all_nodes:
            return None, Status(Code.Error, "no nodes available")
        now = self._now()
        candidates, statuses, errs = self._find_candidates(state, pod, all_nodes, m, now)
        if errs and not candidates:
            return None, Status(Code.Error, _aggregate(errs))
        if not candidates:
            statuses.absent_nodes_status = Status(Code.UnschedulableAndUnresolvable, NOT_HELPFUL_MSG)
            fit_error = FitError(pod.key, len(all_nodes), Diagnosis(node_to_status=statuses))
            return PostFilterResult(NominatingInfo("", NominatingMode.Override)), Status(
                Code.Unschedulable, str(fit_error)
            )
        extenders = fh.extenders
        if extenders:
            from kubesched.extenders.preemption import call_extenders

            candidates, es = call_extenders(extenders, pod, candidates, fh.snapshot().get)
            if es is not None:
                return None, es
        best = (
            (candidates[0] if len(candidates) == 1 else self._select_candidate(candidates, now))
            if candidates
            else None
        )
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, "no candidate node for preemption")
        s = self._prepare_candidate(best, pod)
        if s is not None and not s.is_success():
            return None, s
        victims_out.extend(best.victims)
        return PostFilterResult(NominatingInfo(best.name, NominatingMode.Override)), None

    def _potential_nodes(self, all_nodes: Sequence[NodeInfo], m: NodeToStatus) -> list[NodeInfo]:
        """``NodesForStatusCode(Unschedulable)``: snapshot order when the absent status matches,
        else the explicit statuses' order."""
        if m.absent_nodes_status.code == Code.Unschedulable:
            keep = set(m.nodes_for_status_code([ni.name for ni in all_nodes], Code.Unschedulable))
            return [ni for ni in all_nodes if ni.name in keep]
        # the absent status does not match: only the listed nodes count
        found = m.nodes_for_status_code((), Code.Unschedulable)
        get = self._fh().snapshot().get
        return [ni for n in found if (ni := get(n)) is not None]

    def _find_candidates(
        self, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo], m: NodeToStatus, now: float
    ) -> tuple[list[Candidate], NodeToStatus, list[BaseException]]:
        """``findCandidates`` + ``DryRunPreemption``: candidates (non-violating first), the statuses
        of nodes that gave none, and the errors met."""
        potential = self._potential_nodes(all_nodes, m)
        if not potential:
            self._clear_nominated_node_names([pod])
            return [], NodeToStatus(), []
        objects = self._fh().objects
        pdbs: list[CompiledPDB] = (
            compile_pdbs(objects.list("PodDisruptionBudget")) if objects is not None else []
        )
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates, now)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[CompiledPDB],
        offset: int,
        num_candidates: int,
        now: float,
    ) -> tuple[list[Candidate], NodeToStatus, list[BaseException]]:
        """``DryRunPreemption``: visit ``potential[(offset + i) % n]`` on NodeInfo copies and cloned
        CycleStates until there is a non-violating candidate and ``num_candidates`` in total."""
        fh = self._fh()
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errs: list[BaseException] = []
        n = len(potential)
        extensions = fh.has_pre_filter_extensions(state)
        run_filter = fh.filter_runner(state)
        # the default hooks (``is_preemption_allowed`` = lower priority) are applied by victim
        # selection's own priority test: not called per pod unless a subclass overrides them
        allowed: EligibleFn | None = (
            None
            if type(self).is_preemption_allowed is DefaultPreemption.is_preemption_allowed
            and type(self).is_eligible_pod is DefaultPreemption.is_eligible_pod
            else self.is_preemption_allowed
        )
        for i in range(n):
            ni = potential[(offset + i) % n].snapshot()
            victims, num_violations, s = select_victims_on_node(
                fh, state.clone(), pod, ni, pdbs, allowed, now, extensions, run_filter
            )
            if (s is None or s.is_success()) and victims:
                c = Candidate(ni.name, victims, num_violations)
                (non_violating if num_violations == 0 else violating).append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if s is None or s.is_success():
                s = Status(
                    Code.Error, err=FrameworkError(f'expected at least one victim pod on node "{ni.name}"')
                )
            if s.code == Code.Error:
                errs.append(s.as_error() or FrameworkError(s.message()))
            statuses.set(ni.name, s)
        return non_violating + violating, statuses, errs

    def _select_candidate(self, candidates: Sequence[Candidate], now: float) -> Candidate | None:
        """``SelectCandidate``: the candidate of ``pickOneNodeForPreemption``."""
        name = pick_one_node_for_preemption(candidates, now)
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0] if candidates else None

    # ---- preparation ------------------------------------------------------------------------

    def _prepare_candidate(self, c: Candidate, pod: Pod) -> Status | None:
        """``prepareCandidate`` (synchronous): evict every victim not already terminating, then clear
        the nomination of lower-priority pods nominated to the node. The first API error stops it."""
        m = self.handle.metrics if self.handle is not None else None
        if m is not None:
            m.observe(PREEMPTION_VICTIMS, {}, len(c.victims))
        for victim in c.victims:
            if victim.deletion_timestamp:
                continue
            try:
                self.preempt_pod(c.name, pod, victim)
            except Exception as e:  # noqa: BLE001 - an API error becomes the Error status
                return Status(Code.Error, err=e)
        fh = self._fh()
        nominator = fh.nominator
        if nominator is not None:
            lower = [
                pi.pod for pi in nominator.nominated_pods_for_node(c.name) if pi.pod.priority < pod.priority
            ]
            self._clear_nominated_node_names(lower)
        return None

    def preempt_pod(self, node_name: str, preemptor: Pod, victim: Pod) -> None:
        """``PreemptPod``: reject a victim waiting on Permit (``preempted``), else add the
        ``DisruptionTarget`` condition and delete it; then a ``Preempted`` event on the victim.
        A victim already gone is skipped silently. Raises the client's other errors."""
        fh = self._fh()
        wp = fh.get_waiting_pod(victim.uid)
        if wp is not None:
            wp.reject(self.NAME, "preempted")
        else:
            client = fh.client
            if client is None:
                raise FrameworkError("no cluster client to delete the victims")
            cond = self._disruption_condition(preemptor, victim)
            try:
                if cond is not None:
                    client.patch_status("Pod", victim.namespace, victim.name, {"conditions": [cond]})
                client.delete("Pod", victim.namespace, victim.name)
            except NotFoundError:
                log.debug("victim %s is already deleted", victim.key)
                return
        recorder = fh.event_recorder
        if recorder is not None:
            recorder.eventf(
                victim,
                preemptor,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor.uid} on node {node_name}",
            )

    def _disruption_condition(self, preemptor: Pod, victim: Pod) -> dict[str, Any] | None:
        """The ``DisruptionTarget`` condition to write, or None when the victim already has it
        unchanged (``UpdatePodCondition`` returned false)."""
        gen = (victim.raw.get("metadata") or {}).get("generation")
        cond: dict[str, Any] = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            "lastProbeTime": None,
            "lastTransitionTime": rfc3339(self._now()),
        }
        if isinstance(gen, int) and gen:
            cond["observedGeneration"] = gen
        old: Mapping[str, Any] | None = next(
            (x for x in victim.conditions if x.get("type") == DISRUPTION_TARGET), None
        )
        if old is None:
            return cond
        if old.get("status") == cond["status"]:
            cond["lastTransitionTime"] = old.get("lastTransitionTime")
        same = all(
            old.get(k) == cond.get(k)
            for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")
        )
        if same and (old.get("observedGeneration") or 0) == (cond.get("observedGeneration") or 0):
            return None
        return cond

    def _clear_nominated_node_names(self, pods: Sequence[Pod]) -> None:
        """``util.ClearNominatedNodeName``: patch ``nominatedNodeName`` away for pods that have one;
        errors are only logged."""
        client = self._fh().client
        for p in pods:
            if not p.nominated_node_name or client is None:
                continue
            try:
                client.patch_status("Pod", p.namespace, p.name, {"nominatedNodeName": None})
            except Exception as e:  # noqa: BLE001 - not critical upstream either
                log.warning("could not clear the nominatedNodeName of %s: %s", p.key, e)
