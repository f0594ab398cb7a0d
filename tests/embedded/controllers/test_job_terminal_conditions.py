"""The Job controller writes ``Failed``/``Complete`` only once the pods it deleted have
terminated, as upstream's does: first the interim ``FailureTarget``/``SuccessCriteriaMet`` with
``status.terminating`` counting the deleted pods, then the terminal condition when
``terminating`` is 0 (``pkg/controller/job/job_controller.go: syncJob``,
``trackJobStatusAndRemoveFinalizers``, ``enactJobFinished``). Every status write of the Job is
recorded over virtual time."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.timestamps import parse_rfc3339, rfc3339
from kubesched.client.client import WatchEvent
from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.store import MemoryCluster
from tests.embedded.controllers.test_job_policies import POLICY, T0, end, pods

Obj = dict[str, Any]
Write = tuple[float, list[str], int | None, int | None]

FAIL_JOB = "Container main for pod default/{} failed with exit code 42 matching FailJob rule at index 1"


def start(node: str | None = "n1", **spec: Any) -> tuple[MemoryCluster, VirtualClock, list[Write]]:
    """A Job ``j`` whose pods are bound to ``node`` at creation (grace period 10 s), with a
    kubelet that removes a pod being deleted once its grace period is over. Returns the cluster,
    the clock and the Job's status writes so far as (seconds since T0, condition types,
    ``terminating``, ``active``)."""
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    writes: list[Write] = []

    def on_job(ev: WatchEvent) -> None:
        status = ev.object.get("status") or {}
        if ev.type == "MODIFIED" and status != ((ev.old_object or {}).get("status") or {}):
            types = [c["type"] for c in status.get("conditions") or []]
            writes.append((clock.now() - T0, types, status.get("terminating"), status.get("active")))

    def kubelet(ev: WatchEvent) -> None:
        meta = ev.object["metadata"]
        if ev.type == "MODIFIED" and meta.get("deletionTimestamp"):
            if not ((ev.old_object or {}).get("metadata") or {}).get("deletionTimestamp"):
                clock.call_at(
                    parse_rfc3339(meta["deletionTimestamp"]),
                    lambda: cluster.delete(
                        "Pod", "default", meta["name"], grace=True, grace_period_seconds=0
                    ),
                )

    cluster.watch("Job", None, on_job)
    cluster.watch("Pod", None, kubelet)
    JobController(cluster, clock).start()
    pod_spec: Obj = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 10,
        "containers": [{"name": "main", "image": "busybox"}],
    }
    if node is not None:
        pod_spec["nodeName"] = node
    cluster.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {**spec, "template": {"spec": pod_spec}},
        }
    )
    clock.run_until(T0)
    return cluster, clock, writes


def conditions(cluster: MemoryCluster) -> list[tuple[str, str, str, str]]:
    return [
        (c["type"], c["reason"], c["message"], c["lastTransitionTime"])
        for c in cluster.get("Job", "default", "j")["status"].get("conditions", [])
    ]


def at(seconds: float) -> str:
    return rfc3339(T0 + seconds)


def test_fail_job_rule_waits_for_the_deleted_pod_to_terminate() -> None:
    cluster, clock, writes = start(completions=2, parallelism=2, podFailurePolicy=POLICY)
    first, second = pods(cluster)
    clock.run_until(T0 + 5)
    end(cluster, clock, first, 42)
    # the other pod is terminating for its 10 s grace period: no Failed yet, no replacement
    clock.run_until(T0 + 14)
    assert len(pods(cluster)) == 2
    assert cluster.get("Pod", "default", second["metadata"]["name"])["metadata"]["deletionTimestamp"] == at(
        15
    )
    clock.run_until(T0 + 20)
    assert writes == [
        (0.0, [], 0, 2),
        (5.0, ["FailureTarget"], 1, None),
        (15.0, ["FailureTarget", "Failed"], 0, None),
    ]
    message = FAIL_JOB.format(first["metadata"]["name"])
    assert conditions(cluster) == [
        ("FailureTarget", "PodFailurePolicy", message, at(5)),
        ("Failed", "PodFailurePolicy", message, at(15)),
    ]
    status = cluster.get("Job", "default", "j")["status"]
    assert (status["failed"], status["terminating"], "completionTime" in status) == (1, 0, False)
    assert [p["metadata"]["name"] for p in pods(cluster)] == [first["metadata"]["name"]]


def test_unbound_pods_go_at_once_and_failed_follows_in_a_second_write() -> None:
    cluster, clock, writes = start(node=None, completions=2, parallelism=2, podFailurePolicy=POLICY)
    first, _ = pods(cluster)
    clock.run_until(T0 + 5)
    end(cluster, clock, first, 42)
    # upstream counts the pods it just deleted as terminating until it sees them gone
    assert writes == [
        (0.0, [], 0, 2),
        (5.0, ["FailureTarget"], 1, None),
        (5.0, ["FailureTarget", "Failed"], 0, None),
    ]


def test_success_policy_met_then_complete_once_the_other_indexes_terminated() -> None:
    cluster, clock, writes = start(
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0"}]},
    )
    [zero] = [p for p in pods(cluster) if p["metadata"]["name"].startswith("j-0-")]
    clock.run_until(T0 + 5)
    end(cluster, clock, zero, 0)
    clock.run_until(T0 + 30)
    assert writes == [
        (0.0, [], 0, 3),
        (5.0, ["SuccessCriteriaMet"], 2, None),
        (15.0, ["SuccessCriteriaMet", "Complete"], 0, None),
    ]
    assert conditions(cluster) == [
        ("SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0", at(5)),
        ("Complete", "SuccessPolicy", "Matched rules at index 0", at(15)),
    ]
    status = cluster.get("Job", "default", "j")["status"]
    assert (status["completionTime"], status["succeeded"], status["completedIndexes"]) == (at(15), 1, "0")


def test_completions_reached_with_nothing_terminating_completes_in_one_write() -> None:
    cluster, clock, writes = start(completions=1)
    clock.run_until(T0 + 5)
    end(cluster, clock, pods(cluster)[0], 0)
    assert writes == [(0.0, [], 0, 1), (5.0, ["SuccessCriteriaMet", "Complete"], 0, None)]
    reached = ("CompletionsReached", "Reached expected number of succeeded pods", at(5))
    assert conditions(cluster) == [("SuccessCriteriaMet", *reached), ("Complete", *reached)]
    assert cluster.get("Job", "default", "j")["status"]["completionTime"] == at(5)


def test_deadline_exceeded_fails_after_the_grace_period() -> None:
    cluster, clock, writes = start(activeDeadlineSeconds=20)
    clock.run_until(T0 + 40)
    assert writes == [
        (0.0, [], 0, 1),
        (20.0, ["FailureTarget"], 1, None),
        (30.0, ["FailureTarget", "Failed"], 0, None),
    ]
    deadline = ("DeadlineExceeded", "Job was active longer than specified deadline")
    assert conditions(cluster) == [("FailureTarget", *deadline, at(20)), ("Failed", *deadline, at(30))]
    assert pods(cluster) == []


def test_scale_down_counts_the_deleted_pods_as_terminating() -> None:
    cluster, clock, writes = start(completions=4, parallelism=2)
    clock.run_until(T0 + 5)
    job = cluster.get("Job", "default", "j")
    cluster.update({**job, "spec": {**job["spec"], "parallelism": 1}})
    clock.run_until(T0 + 30)
    assert writes == [(0.0, [], 0, 2), (5.0, [], 1, 1), (15.0, [], 0, 1)]
    assert len(pods(cluster)) == 1


@settings(max_examples=40, deadline=None)
@given(
    bound=st.booleans(),
    completions=st.integers(1, 4),
    parallelism=st.integers(1, 4),
    indexed=st.booleans(),
    exits=st.lists(st.sampled_from([0, 1, 42]), min_size=1, max_size=8),
)
def test_terminal_condition_only_once_nothing_terminates(
    bound: bool, completions: int, parallelism: int, indexed: bool, exits: list[int]
) -> None:
    """Whatever the pods do, ``Failed``/``Complete`` is written only with ``terminating`` 0 and
    after (or with) its interim condition, and a Job whose pods are all gone is finished."""
    cluster, clock, writes = start(
        node="n1" if bound else None,
        completions=completions,
        parallelism=parallelism,
        backoffLimit=1,
        podFailurePolicy=POLICY,
        completionMode="Indexed" if indexed else "NonIndexed",
    )
    for step, code in enumerate(exits, 1):
        live = [p for p in pods(cluster, "Pending") if not p["metadata"].get("deletionTimestamp")]
        if not live:
            break
        clock.run_until(T0 + 3 * step)
        end(cluster, clock, live[0], code)
    clock.run_until(T0 + 100)
    for _, types, terminating, _ in writes:
        for interim, terminal in (("FailureTarget", "Failed"), ("SuccessCriteriaMet", "Complete")):
            if terminal in types:
                assert terminating == 0 and types.index(interim) < types.index(terminal)
    types = writes[-1][1]
    if any(t in types for t in ("FailureTarget", "SuccessCriteriaMet")):
        assert ("Failed" in types) != ("Complete" in types)
        assert not [p for p in pods(cluster) if p["metadata"].get("deletionTimestamp")]
