"""Victim selection and candidate ranking of DefaultPreemption
(``pkg/scheduler/framework/preemption/preemption.go`` ``SelectVictimsOnNode`` and
``pickOneNodeForPreemption``).

Follows upstream ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``
(``SelectVictimsOnNode``, ``filterPodsWithPDBViolation``) and
``pkg/scheduler/framework/preemption/preemption.go`` (``pickOneNodeForPreemption``), plus
``pkg/scheduler/util/utils.go`` (``MoreImportantPod``, ``GetPodStartTime``,
``GetEarliestPodStartTime``).

Times are epoch seconds (float); a pod without ``status.startTime`` counts as started ``now``
(upstream: ``time.Now()``), ``now`` being fixed once per PostFilter call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from kubesched.api.labels import LabelSelector, parse_label_selector
from kubesched.api.pod import Pod
from kubesched.api.shape import check_shape
from kubesched.errors import ManifestError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.preemption import Candidate
from kubesched.framework.status import Code, Status

NO_VICTIMS_MSG: Final = "No preemption victims found for incoming pod"

#: ``math.MaxInt32 + 1``: added to every victim priority in the sum criterion so all terms are >= 0
_PRIORITY_OFFSET: Final = 2**31

#: ``IsEligiblePod(node_info, victim, preemptor) -> bool``: extra filter on lower-priority pods
EligibleFn = Callable[[NodeInfo, PodInfo, Pod], bool]


class FilterRunner(Protocol):
    """The part of the framework handle victim selection uses."""

    def has_pre_filter_extensions(self, state: CycleState) -> bool: ...

    def filter_runner(self, state: CycleState) -> Callable[[CycleState, Pod, NodeInfo], Status | None]: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


@dataclass(slots=True)
class CompiledPDB:
    """The parts of a ``policy/v1`` PodDisruptionBudget preemption reads: namespace, compiled
    ``spec.selector`` (``None`` for a nil or invalid selector: matches nothing),
    ``status.disruptionsAllowed`` and the names in ``status.disruptedPods``."""

    namespace: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def compile_pdbs(objs: Iterable[Mapping[str, Any]]) -> list[CompiledPDB]:
    """Compile PodDisruptionBudget dicts (``getPodDisruptionBudgets``); a PDB whose selector does
    not parse is kept with a selector that matches nothing, as upstream skips it. A PDB with a field
    of the wrong type (one the API server would never have stored) is left out."""
    out: list[CompiledPDB] = []
    for o in objs:
        try:
            check_shape(o, "PodDisruptionBudget")
        except ManifestError:
            continue
        meta = o.get("metadata") or {}
        spec = o.get("spec") or {}
        status = o.get("status") or {}
        try:
            sel = parse_label_selector(spec.get("selector"), "spec.selector")
        except ManifestError:
            sel = None
        allowed = status.get("disruptionsAllowed") or 0
        disrupted = status.get("disruptedPods") or {}
        out.append(
            CompiledPDB(
                str(meta.get("namespace") or "default"),
                sel,
                int(allowed) if isinstance(allowed, int) else 0,
                frozenset(str(k) for k in disrupted) if isinstance(disrupted, Mapping) else frozenset(),
            )
        )
    return out


def pod_start_time(pod: Pod, now: float) -> float:
    """``GetPodStartTime``: ``status.startTime`` or ``now`` when unset (seconds)."""
    return pod.start_time if pod.start_time is not None else now


def importance_key(now: float) -> Callable[[Pod], tuple[int, float]]:
    """Sort key putting the more important pod first (``MoreImportantPod``): higher priority,
    then earlier start time."""

    def key(p: Pod) -> tuple[int, float]:
        return (-p.priority, pod_start_time(p, now))

    return key


def more_important_pod(a: Pod, b: Pod, now: float) -> bool:
    """``MoreImportantPod(a, b)``: ``a`` has a higher priority, or the same one and an earlier start."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return pod_start_time(a, now) < pod_start_time(b, now)


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[CompiledPDB]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pod_infos`` (order kept) into ``(violating, non_violating)``: every matching PDB
    (same namespace, non-empty selector matching the pod's labels, pod not already in
    ``disruptedPods``) has its budget decremented; a pod that drives any budget below 0 violates."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                sel = pdb.selector
                if sel is None or sel.empty or not sel.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def _as_error(s: Status | None, default: str) -> Status | None:
    if s is None or s.is_success():
        return None
    return Status(Code.Error, s.message() or default)


def select_victims_on_node(
    fh: FilterRunner,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    pdbs: Sequence[CompiledPDB],
    is_eligible: EligibleFn | None,
    now: float,
    extensions: bool | None = None,
    run_filter: Callable[[CycleState, Pod, NodeInfo], Status | None] | None = None,
) -> tuple[list[Pod], int, Status | None]:
    """``SelectVictimsOnNode``: the fewest lower-priority pods of ``node_info`` (mutated: pass a
    copy, with a cloned ``state``) whose removal lets ``pod`` pass the filters. ``is_eligible``
    further restricts the lower-priority pods (``IsEligiblePod``; None: all of them are).

    ``extensions``: whether ``fh.has_pre_filter_extensions(state)``, and ``run_filter``:
    ``fh.filter_runner(state)`` (``RunFilterPluginsWithNominatedPods``); asked when None, a dry run
    asks once for all its nodes. Without extensions the AddPod/RemovePod runs are skipped: they
    would do nothing.

    Returns ``(victims most important first, number of PDB-violating victims, status)``; status is
    ``None`` on success, ``UnschedulableAndUnresolvable("No preemption victims found for incoming
    pod")`` when the node has no eligible pod, the filter rejection when removing them all does
    not help, or an Error.
    """
    if extensions is None:
        extensions = fh.has_pre_filter_extensions(state)
    remove_pod = node_info.remove_pod
    add_pod_info = node_info.add_pod_info
    if run_filter is None:
        run_filter = fh.filter_runner(state)

    def remove(pi: PodInfo) -> Status | None:
        try:
            remove_pod(pi.pod)
            if not extensions:
                return None
            s = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
        except Exception as e:  # noqa: BLE001 - surfaced as an Error status, as upstream's AsStatus(err)
            return Status(Code.Error, err=e)
        return _as_error(s, "RemovePod failed")

    def add(pi: PodInfo) -> Status | None:
        try:
            add_pod_info(pi)
            if not extensions:
                return None
            s = fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
        except Exception as e:  # noqa: BLE001
            return Status(Code.Error, err=e)
        return _as_error(s, "AddPod failed")

    priority = pod.priority
    if is_eligible is None:
        potential = [pi for pi in node_info.pods if pi.pod.priority < priority]
    else:
        potential = [
            pi for pi in node_info.pods if pi.pod.priority < priority and is_eligible(node_info, pi, pod)
        ]
    for pi in potential:
        err = remove(pi)
        if err is not None:
            return [], 0, err
    if not potential:
        return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS_MSG)
    s = run_filter(state, pod, node_info)
    if s is not None and s.code != Code.Success:
        return [], 0, s
    potential.sort(key=lambda pi: (-pi.pod.priority, pod_start_time(pi.pod, now)))
    if pdbs:
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    else:
        violating, non_violating = [], potential
    victims: list[PodInfo] = []
    num_violating = 0
    # reprieve: give each pod back, most important first; it stays when the pod still fits
    for group in (violating, non_violating):
        counts = group is violating
        for pi in group:
            err = add(pi)
            if err is not None:
                return [], 0, err
            st = run_filter(state, pod, node_info)
            if st is None or st.code == Code.Success:
                continue
            err = remove(pi)
            if err is not None:
                return [], 0, err
            victims.append(pi)
            if counts:
                num_violating += 1
    if violating and non_violating:
        victims.sort(key=lambda pi: (-pi.pod.priority, pod_start_time(pi.pod, now)))
    return [pi.pod for pi in victims], num_violating, None


def earliest_pod_start_time(victims: Sequence[Pod], now: float) -> float | None:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    if not victims:
        return None
    earliest = pod_start_time(victims[0], now)
    max_prio = victims[0].priority
    for p in victims:
        if p.priority == max_prio:
            t = pod_start_time(p, now)
            if t < earliest:
                earliest = t
        elif p.priority > max_prio:
            max_prio = p.priority
            earliest = pod_start_time(p, now)
    return earliest


def pick_one_node_for_preemption(candidates: Sequence[Candidate], now: float) -> str:
    """``pickOneNodeForPreemption``: keep the best nodes by each criterion in turn, stopping when
    one remains: (1) fewest PDB violations, (2) lowest highest-victim priority, (3) smallest
    sum of ``priority + 2^31`` over victims, (4) fewest victims, (5) latest earliest start among
    the highest-priority victims, (6) the first remaining in candidate order ("" if none)."""
    if not candidates:
        return ""

    def latest_start(c: Candidate) -> float:
        t = earliest_pod_start_time(c.victims, now)
        return float("-inf") if t is None else t

    criteria: list[Callable[[Candidate], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority if c.victims else 0,
        lambda c: -sum(p.priority + _PRIORITY_OFFSET for p in c.victims),
        lambda c: -len(c.victims),
        latest_start,
    ]
    remaining = list(candidates)
    for score in criteria:
        # each candidate's score once per criterion (upstream's scoreFuncs loop computes it once too)
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, v in zip(remaining, scores, strict=True) if v == best]
        if len(remaining) == 1:
            return remaining[0].name
    return remaining[0].name
