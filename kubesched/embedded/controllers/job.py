"""The Job controller: runs a Job's pods to ``completions`` successes, ``parallelism`` at a time,
as ``pkg/controller/job/job_controller.go`` does (``syncJob``, ``manageJob``,
``getStatus``/``trackJobStatusAndRemoveFinalizers`` in outcome, ``indexed_job_utils.go``).

* Pods are the Job's by controller reference (``PodOwnerController.claim_pods``: matching orphans
  adopted until the Job has finished; pods that stop matching are kept). A Job without a selector
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
* Outcome, in ``syncJob``'s order: an interim condition already written (``SuccessCriteriaMet``,
  then ``FailureTarget``) stands; a ``FailJob`` rule -> ``FailureTarget`` (``PodFailurePolicy``,
  ``Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0``);
  ``failed`` beyond ``backoffLimit`` -> (``BackoffLimitExceeded``, ``Job has reached the specified
  backoff limit``); running longer than ``activeDeadlineSeconds`` -> (``DeadlineExceeded``, ``Job
  was active longer than specified deadline``); more failed indexes than ``maxFailedIndexes`` ->
  (``MaxFailedIndexesExceeded``, ``Job has exceeded the specified maximal number of failed
  indexes``); every index ended with some failed -> (``FailedIndexes``, ``Job has failed
  indexes``); a ``successPolicy`` rule met -> ``SuccessCriteriaMet`` (``SuccessPolicy``, ``Matched
  rules at index N``); ``succeeded`` reaching ``completions`` -> (``CompletionsReached``, ``Reached
  expected number of succeeded pods``). Once decided, the Job's active pods are deleted and the
  interim condition is written; the terminal one (``Failed`` or ``Complete``, same reason and
  message, with ``completionTime`` for ``Complete``) follows in the first sync that counts no
  terminating pod (``trackJobStatusAndRemoveFinalizers``, ``enactJobFinished``), so a Job whose
  pods take their grace period to stop is finished that much later.
* ``status.terminating`` (always written, 0 included): the Job's pods being deleted and not yet
  Succeeded or Failed (``CountTerminatingPods``), plus those the sync itself deleted (upstream
  counts them until it sees them gone, so even unbound pods, removed at once, put the terminal
  condition in a later status write than the interim one).
* Pods end when their kubelet ends them: under ``serve --kubelet`` (and in ``replay``) a pod
  annotated ``kubesched.io/run-seconds`` ends that long after it started, ``Succeeded``, or
  ``Failed`` with the exit code of ``kubesched.io/exit-code`` when that is not 0.

Succeeded and failed pods are counted from the pods that exist (upstream tracks them with
finalizers and leaves a finished Job's status alone, so deleting a finished pod does not change
its Job's counts there). Not modelled: backoff delays between failed pods, ``suspend``, ``podReplacementPolicy`` (terminating pods are replaced at once),
``restartPolicy: OnFailure`` restart counts, TTL after finished.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.embedded.controllers.controller_utils import (
    is_pod_active,
    is_pod_ready,
    mapping_field,
    pod_from_template,
)
from kubesched.embedded.controllers.job_policies import (
    PolicyMatch,
    match_pod_failure_policy,
    match_success_policy,
)
from kubesched.embedded.controllers.pod_owner import PodOwnerController
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


def _is_terminating(pod: Mapping[str, Any]) -> bool:
    """``IsPodTerminating``: being deleted and not yet Succeeded or Failed."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and _phase(pod) not in (
        "Succeeded",
        "Failed",
    )


def _true_condition(job: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    """The Job's condition of type ``ctype`` when its status is ``True``."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == ctype and c.get("status") == "True":
            return c
    return None


def _finished(job: Mapping[str, Any]) -> bool:
    """``IsJobFinished``: a ``Complete`` or ``Failed`` condition is ``True``."""
    return any(_true_condition(job, t) is not None for t in ("Complete", "Failed"))


class JobController(PodOwnerController):
    """Runs Jobs of ``cluster`` on ``clock`` (module docstring); ``admit`` is applied to every pod
    it creates. :meth:`start` watches Jobs and pods; :meth:`stop` ends it."""

    kind = "Job"
    queue_name = "job"
    releases_pods = False

    def can_adopt(self, owner: Obj) -> bool:
        """A finished Job adopts no more pods."""
        return not _finished(owner)

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
        pods = self.claim_pods(job)
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
        terminating = sum(1 for p in pods if _is_terminating(p))
        if not _finished(job):
            outcome = self._outcome(key, job, status, now, matches, failed, failed_indexes, completed_indexes)
            if outcome is None:
                active, removed = self._manage(
                    job, active, succeeded, completed_indexes, failed_indexes, matches
                )
                terminating += removed
                complete = (
                    succeeded >= int(completions) and not active
                    if completions is not None
                    else succeeded > 0 and not active
                )
                if complete:
                    outcome = ("success", "CompletionsReached", "Reached expected number of succeeded pods")
            if outcome is not None:
                kind, reason, message = outcome
                for pod in active:
                    self.delete_pod(pod)
                terminating += len(active)  # deleted: terminating until their kubelet confirms
                active = []
                # the interim condition at once, the terminal one when no pod is terminating
                # (trackJobStatusAndRemoveFinalizers, enactJobFinished)
                add("SuccessCriteriaMet" if kind == "success" else "FailureTarget", reason, message)
                if terminating == 0:
                    add("Complete" if kind == "success" else "Failed", reason, message)
                    if kind == "success":
                        status["completionTime"] = stamp
        status.update(
            {
                "active": len(active),
                "ready": sum(1 for p in active if is_pod_ready(p)),
                "succeeded": succeeded,
                "failed": failed,
                "terminating": terminating,
                "conditions": conditions,
            }
        )
        if indexed:
            status["completedIndexes"] = format_indexes(completed_indexes)
        if per_index is not None:
            status["failedIndexes"] = format_indexes(failed_indexes)
        for k in ("active", "succeeded", "failed"):
            if not status[k]:
                del status[k]
        if not conditions:
            del status["conditions"]
        if status != status_before:
            patch = {k: status.get(k) for k in {*status, *status_before}}
            self.cluster.patch_status("Job", namespace, name, patch)

    def _outcome(
        self,
        key: str,
        job: Obj,
        status: Obj,
        now: float,
        matches: list[tuple[Obj, PolicyMatch]],
        failed: int,
        failed_indexes: set[int],
        completed_indexes: set[int],
    ) -> tuple[str, str, str] | None:
        """How the unfinished ``job`` ends, decided before ``manageJob``, as ``("success" or
        "failure", reason, message)``, or None: an interim condition already written
        (``SuccessCriteriaMet``, then ``FailureTarget``), else in ``syncJob``'s order a ``FailJob``
        rule, the backoff limit, the deadline (when not reached, ``key`` is synced again at it), the
        failed indexes, the success policy."""
        for kind, interim in (("success", "SuccessCriteriaMet"), ("failure", "FailureTarget")):
            if (c := _true_condition(job, interim)) is not None:
                return (kind, str(c.get("reason")), str(c.get("message")))
        spec = job["spec"]
        completions = int(spec.get("completions") or 0)
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_rfc3339(str(status["startTime"]))
        fail_job = next((m.fail_job_message for _, m in matches if m.fail_job_message), None)
        max_failed = spec.get("maxFailedIndexes")
        if fail_job is not None:
            return ("failure", "PodFailurePolicy", fail_job)
        if failed > int(spec.get("backoffLimit", 6)):
            return ("failure", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        if deadline is not None and now >= started + float(deadline):
            return ("failure", "DeadlineExceeded", "Job was active longer than specified deadline")
        if deadline is not None:
            self.queue.add_after(key, started + float(deadline) - now)
        if failed_indexes and max_failed is not None and len(failed_indexes) > int(max_failed):
            return (
                "failure",
                "MaxFailedIndexesExceeded",
                "Job has exceeded the specified maximal number of failed indexes",
            )
        if failed_indexes and len(failed_indexes) + len(completed_indexes) >= completions:
            return ("failure", "FailedIndexes", "Job has failed indexes")
        if spec.get("completionMode") == "Indexed":
            msg = match_success_policy(spec.get("successPolicy"), completions, completed_indexes)
            if msg:
                return ("success", "SuccessPolicy", msg)
        return None

    def _manage(
        self,
        job: Obj,
        active: list[Obj],
        succeeded: int,
        completed: set[int],
        failed_indexes: set[int],
        matches: list[tuple[Obj, PolicyMatch]],
    ) -> tuple[list[Obj], int]:
        """``manageJob``: create or delete pods to run ``parallelism`` of the remaining work;
        returns the active pods after it and how many it deleted (they are terminating now)."""
        spec = job["spec"]
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = min(parallelism, max(0, int(completions) - succeeded))
        if len(active) > want:
            ranked = sorted(
                active, key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), p["metadata"]["name"])
            )
            for pod in ranked[: len(active) - want]:
                self.delete_pod(pod)
            return ranked[len(active) - want :], len(active) - want
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
            return active, 0
        for _ in range(want - len(active)):
            active.append(self.cluster.create(self.admit(pod_from_template(template, job))))
        return active, 0
