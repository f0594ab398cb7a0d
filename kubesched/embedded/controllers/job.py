"""The Job controller: runs a Job's pods to ``completions`` successes, ``parallelism`` at a time,
as ``pkg/controller/job/job_controller.go`` does (``syncJob``, ``manageJob``,
``getStatus``/``trackJobStatusAndRemoveFinalizers`` in outcome, ``indexed_job_utils.go``).

* Pods are the Job's by controller reference (matching orphans adopted). A Job without a selector
  gets upstream's generated one: ``batch.kubernetes.io/controller-uid: <uid>``, with the template
  labels ``batch.kubernetes.io/controller-uid``, ``controller-uid``, ``batch.kubernetes.io/job-name``
  and ``job-name`` (the API server's ``generateSelector``).
* Defaults: ``parallelism`` 1; ``completions`` 1 when neither is set, else none (work queue: the
  Job completes once any pod succeeded and the others ended); ``backoffLimit`` 6;
  ``completionMode`` ``NonIndexed``.
* Each sync creates pods up to ``min(parallelism, completions - succeeded)`` active
  (``generateName: <job>-``). ``Indexed`` Jobs create the lowest missing completion indexes:
  ``generateName: <job>-<index>-``, annotation and label ``batch.kubernetes.io/job-completion-index``,
  ``hostname: <job>-<index>``; ``status.completedIndexes`` lists the succeeded ones (``0-2,5``).
* Failed pods go through ``spec.podFailurePolicy`` (:mod:`kubesched.embedded.controllers.job_policies`):
  the first rule matching a container's exit code (``onExitCodes``) or a pod condition
  (``onPodConditions``) decides: ``Ignore`` (not counted), ``Count``, ``FailJob``, ``FailIndex``.
  With ``backoffLimitPerIndex`` (Indexed Jobs; ``backoffLimit`` then defaults to the largest
  int32) an index whose counted failures exceed it, or whose pod matched ``FailIndex``, is failed
  (``status.failedIndexes``) and not retried; a retried index's pod carries the annotations
  ``batch.kubernetes.io/job-index-failure-count`` and ``job-index-ignored-failure-count``.
* Outcome, in ``syncJob``'s order: a ``FailJob`` rule -> ``FailureTarget`` and ``Failed``
  (``PodFailurePolicy``, ``Container main for pod ns/p failed with exit code 42 matching FailJob
  rule at index 0``); ``failed`` beyond ``backoffLimit`` -> (``BackoffLimitExceeded``, ``Job has
  reached the specified backoff limit``); running longer than ``activeDeadlineSeconds`` ->
  (``DeadlineExceeded``, ``Job was active longer than specified deadline``); more failed indexes
  than ``maxFailedIndexes`` -> (``MaxFailedIndexesExceeded``, ``Job has exceeded the specified
  maximal number of failed indexes``); every index ended with some failed -> (``FailedIndexes``,
  ``Job has failed indexes``); a ``successPolicy`` rule met -> ``SuccessCriteriaMet`` and
  ``Complete`` (``SuccessPolicy``, ``Matched rules at index N``); ``succeeded`` reaching
  ``completions`` -> (``CompletionsReached``, ``Reached expected number of succeeded pods``). A
  finished Job's active pods are deleted; a complete one gets ``completionTime``.
* Pods end when their kubelet ends them: under ``serve --kubelet`` (and in ``replay``) a pod
  annotated ``kubesched.io/run-seconds`` ends that long after it started, ``Succeeded``, or
  ``Failed`` with the exit code of ``kubesched.io/exit-code`` when that is not 0.

Succeeded and failed pods are counted from the pods that exist (upstream tracks them with
finalizers, so deleting a finished pod does not change its Job's counts there). The terminal
condition (``Failed``, ``Complete``) is written with ``FailureTarget``/``SuccessCriteriaMet`` in
the same sync, not once the deleted pods have terminated. Not modelled: backoff delays between
failed pods, ``suspend``, ``podReplacementPolicy`` (terminating pods are replaced at once),
``restartPolicy: OnFailure`` restart counts, TTL after finished.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import (
    PodAdmission,
    PodIndex,
    WorkQueue,
    controller_ref,
    is_pod_active,
    is_pod_ready,
    mapping_field,
    new_controller_ref,
    owner_refs,
    pod_from_template,
)
from kubesched.embedded.controllers.job_policies import (
    PolicyMatch,
    match_pod_failure_policy,
    match_success_policy,
)
from kubesched.embedded.controllers.replicaset import label_selector_matcher
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["COMPLETION_INDEX", "JobController", "default_job", "format_indexes"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"


def default_job(job: Obj) -> Obj:
    """``job`` with the API server's defaults (``SetDefaults_Job``) and generated selector
    (``generateSelector``; needs ``metadata.uid``)."""
    meta = job.get("metadata") or {}
    spec = dict(job.get("spec") or {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    # with backoffLimitPerIndex the global limit is the largest int32 (``SetDefaults_Job``)
    spec.setdefault("backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if not spec.get("manualSelector") and not spec.get("selector") and meta.get("uid"):
        uid, name = str(meta["uid"]), str(meta.get("name"))
        spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}
        template = dict(spec.get("template") or {})
        tmeta = dict(template.get("metadata") or {})
        tmeta["labels"] = {
            **(tmeta.get("labels") or {}),
            CONTROLLER_UID: uid,
            "controller-uid": uid,
            JOB_NAME: name,
            "job-name": name,
        }
        template["metadata"] = tmeta
        spec["template"] = template
    return {**job, "spec": spec}


def format_indexes(indexes: set[int]) -> str:
    """Completed indexes as upstream writes them: sorted, runs as ``a-b`` (``0-2,5``)."""
    out: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def _index(pod: Mapping[str, Any]) -> int | None:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _failed_indexes(
    matches: list[tuple[Obj, PolicyMatch]], per_index: int, completions: int, succeeded: set[int]
) -> set[int]:
    """``calculateFailedIndexes``: indexes (not succeeded) whose counted failures exceed
    ``backoffLimitPerIndex`` or whose failed pod matched a ``FailIndex`` rule."""
    counts: dict[int, int] = {}
    out: set[int] = set()
    for pod, m in matches:
        index = _index(pod)
        if index is None or index >= completions or index in succeeded:
            continue
        if m.count_failed:
            counts[index] = counts.get(index, 0) + 1
        if m.action == "FailIndex" or counts.get(index, 0) > per_index:
            out.add(index)
    return out


def _phase(pod: Mapping[str, Any]) -> str | None:
    return (pod.get("status") or {}).get("phase")


def _finished(job: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


class JobController:
    """Runs Jobs of ``cluster`` on ``clock`` (module docstring); ``admit`` is applied to every pod
    it creates. :meth:`start` watches Jobs and pods; :meth:`stop` ends it."""

    def __init__(self, cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.admit: PodAdmission = admit or (lambda pod: pod)
        self.queue = WorkQueue(clock, self.sync, "job")
        self._subs: list[Subscription] = []
        self.pods = PodIndex(cluster)

    def start(self) -> JobController:
        self.pods.start(self._on_pod)
        self._subs = [self.cluster.watch("Job", None, self._on_job)]
        return self

    def stop(self) -> None:
        self.queue.closed = True
        self.pods.stop()
        for sub in self._subs:
            sub.stop()
        self._subs = []

    def _on_job(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        if ev.type != "DELETED":
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(self, ev: WatchEvent) -> None:
        ref = controller_ref(ev.object)
        if ref is not None and ref.get("kind") == "Job":
            self.queue.add(
                f"{(ev.object.get('metadata') or {}).get('namespace') or 'default'}/{ref.get('name')}"
            )

    def _pods(self, job: Obj) -> list[Obj]:
        meta = job["metadata"]
        uid = meta.get("uid")
        matches = label_selector_matcher((job.get("spec") or {}).get("selector"))
        namespace = meta.get("namespace") or "default"
        out = self.pods.owned(namespace, str(uid))
        for pod in [] if _finished(job) else self.pods.orphans(namespace):
            if matches((pod.get("metadata") or {}).get("labels") or {}):
                refs = [*owner_refs(pod), new_controller_ref(job)]
                out.append(
                    self.cluster.update({**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}})
                )
        return out

    def sync(self, key: str) -> None:
        """``syncJob`` of ``namespace/name``."""
        namespace, _, name = key.partition("/")
        try:
            job = self.cluster.get("Job", namespace, name)
        except NotFoundError:
            return
        if job["metadata"].get("deletionTimestamp"):
            return
        defaulted = default_job(job)
        if defaulted["spec"] != job.get("spec"):
            job = self.cluster.update(defaulted)
        spec = job["spec"]
        status_before = dict(job.get("status") or {})
        now = self.clock.now()
        pods = self._pods(job)
        active = [p for p in pods if is_pod_active(p)]
        succeeded_pods = [p for p in pods if _phase(p) == "Succeeded"]
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        failure_policy = spec.get("podFailurePolicy")
        failed_pods = [p for p in pods if _phase(p) == "Failed"]
        matches = [(p, match_pod_failure_policy(failure_policy, p)) for p in failed_pods]
        failed = sum(1 for _, m in matches if m.count_failed)
        per_index = spec.get("backoffLimitPerIndex") if indexed else None
        completed_indexes: set[int] = set()
        if indexed:
            completed_indexes = {
                i
                for i in map(_index, succeeded_pods)
                if i is not None and (completions is None or i < int(completions))
            }
            succeeded = len(completed_indexes)
        else:
            succeeded = len(succeeded_pods)
        status = dict(status_before)
        status.setdefault("startTime", rfc3339(now))
        conditions = list(status.get("conditions") or [])
        stamp = rfc3339(now)

        def add(ctype: str, reason: str, message: str) -> None:
            if not any(c.get("type") == ctype for c in conditions):
                conditions.append(
                    {
                        "type": ctype,
                        "status": "True",
                        "lastProbeTime": stamp,
                        "lastTransitionTime": stamp,
                        "reason": reason,
                        "message": message,
                    }
                )

        failed_indexes: set[int] = set()
        if per_index is not None:
            failed_indexes = _failed_indexes(
                matches, int(per_index), int(completions or 0), completed_indexes
            )
        finished = _finished(job)
        if not finished:
            # the order of upstream's syncJob: a FailJob rule, the backoff limit, the deadline,
            # the failed indexes, the success policy, then the completions
            deadline = spec.get("activeDeadlineSeconds")
            started = parse_rfc3339(str(status["startTime"]))
            outcome: tuple[str, str, str] | None = None  # (success or failure, reason, message)
            fail_job = next((m.fail_job_message for _, m in matches if m.fail_job_message), None)
            max_failed = spec.get("maxFailedIndexes")
            if fail_job is not None:
                outcome = ("failure", "PodFailurePolicy", fail_job)
            elif failed > int(spec.get("backoffLimit", 6)):
                outcome = ("failure", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            elif deadline is not None and now >= started + float(deadline):
                outcome = ("failure", "DeadlineExceeded", "Job was active longer than specified deadline")
            elif per_index is not None and max_failed is not None and len(failed_indexes) > int(max_failed):
                outcome = (
                    "failure",
                    "MaxFailedIndexesExceeded",
                    "Job has exceeded the specified maximal number of failed indexes",
                )
            elif failed_indexes and len(failed_indexes) + succeeded >= int(completions or 0):
                outcome = ("failure", "FailedIndexes", "Job has failed indexes")
            elif indexed and (
                msg := match_success_policy(
                    spec.get("successPolicy"), int(completions or 0), completed_indexes
                )
            ):
                outcome = ("success", "SuccessPolicy", msg)
            if outcome is None and deadline is not None:
                self.queue.add_after(key, started + float(deadline) - now)
            if outcome is None:
                active = self._manage(
                    job, active, succeeded_pods, succeeded, completed_indexes, failed_indexes, matches
                )
                complete = (
                    succeeded >= int(completions) and not active
                    if completions is not None
                    else succeeded > 0 and not active
                )
                if complete:
                    outcome = ("success", "CompletionsReached", "Reached expected number of succeeded pods")
            if outcome is not None:
                kind, reason, message = outcome
                if kind == "success":
                    add("SuccessCriteriaMet", reason, message)
                    add("Complete", reason, message)
                    status["completionTime"] = stamp
                else:
                    add("FailureTarget", reason, message)
                    add("Failed", reason, message)
                for pod in active:
                    self._delete(pod)
                active = []
        status.update(
            {
                "active": len(active),
                "ready": sum(1 for p in active if is_pod_ready(p)),
                "succeeded": succeeded,
                "failed": failed,
                "terminating": 0,
                "conditions": conditions,
            }
        )
        if indexed:
            status["completedIndexes"] = format_indexes(completed_indexes)
        if per_index is not None:
            status["failedIndexes"] = format_indexes(failed_indexes)
        for k in ("active", "succeeded", "failed", "terminating"):
            if not status[k]:
                del status[k]
        if not conditions:
            del status["conditions"]
        if status != status_before:
            patch = {k: status.get(k) for k in {*status, *status_before}}
            self.cluster.patch_status("Job", namespace, name, patch)

    def _delete(self, pod: Obj) -> None:
        try:
            self.cluster.delete("Pod", pod["metadata"].get("namespace"), pod["metadata"]["name"], grace=True)
        except NotFoundError:
            pass

    def _manage(
        self,
        job: Obj,
        active: list[Obj],
        succeeded_pods: list[Obj],
        succeeded: int,
        completed: set[int],
        failed_indexes: set[int],
        matches: list[tuple[Obj, PolicyMatch]],
    ) -> list[Obj]:
        """``manageJob``: create or delete pods to run ``parallelism`` of the remaining work."""
        spec = job["spec"]
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = min(parallelism, max(0, int(completions) - succeeded))
        if len(active) > want:
            for pod in sorted(
                active, key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), p["metadata"]["name"])
            )[: len(active) - want]:
                self._delete(pod)
            return active[:want]
        template = mapping_field(spec, "template")
        name = job["metadata"]["name"]
        if spec.get("completionMode") == "Indexed":
            busy = {i for i in map(_index, active) if i is not None} | completed | failed_indexes
            free = [i for i in range(int(completions or 0)) if i not in busy]
            with_failure_count = spec.get("backoffLimitPerIndex") is not None
            for index in free[: want - len(active)]:
                pod = pod_from_template(template, job, generate_name=f"{name}-{index}-")
                counts: dict[str, str] = {}
                if with_failure_count:
                    of_index = [m for p, m in matches if _index(p) == index]
                    counts = {
                        INDEX_FAILURE_COUNT: str(sum(1 for m in of_index if m.count_failed)),
                        INDEX_IGNORED_FAILURE_COUNT: str(sum(1 for m in of_index if not m.count_failed)),
                    }
                pod["metadata"]["annotations"] = {
                    **pod["metadata"].get("annotations", {}),
                    COMPLETION_INDEX: str(index),
                    **counts,
                }
                pod["metadata"]["labels"] = {
                    **pod["metadata"].get("labels", {}),
                    COMPLETION_INDEX: str(index),
                }
                pod["spec"].setdefault("hostname", f"{name}-{index}")
                active.append(self.cluster.create(self.admit(pod)))
            return active
        for _ in range(want - len(active)):
            active.append(self.cluster.create(self.admit(pod_from_template(template, job))))
        return active
