"""The Job controller's pod failure policy, backoff limit per index and success policy, after
upstream's ``pkg/controller/job/pod_failure_policy_test.go``, ``success_policy_test.go`` and the
``job_controller_test.go`` cases, with their reasons and messages."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.controllers.job_policies import (
    PolicyMatch,
    match_pod_failure_policy,
    match_success_policy,
    parse_indexes,
)
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0
INDEX = "batch.kubernetes.io/job-completion-index"

Obj = dict[str, Any]


def setup(**spec: Any) -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    JobController(cluster, clock).start()
    cluster.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {
                **spec,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                },
            },
        }
    )
    clock.run_until(T0)
    return cluster, clock


def pods(cluster: MemoryCluster, phase: str | None = None) -> list[Obj]:
    return [
        p for p in cluster.list("Pod").items if phase is None or (p.get("status") or {}).get("phase") == phase
    ]


def by_index(cluster: MemoryCluster, index: int) -> Obj:
    [pod] = [
        p
        for p in pods(cluster, "Pending")
        if p["metadata"]["annotations"].get(INDEX) == str(index)
        and not p["metadata"].get("deletionTimestamp")
    ]
    return pod


def end(
    cluster: MemoryCluster, clock: VirtualClock, pod: Obj, exit_code: int, conditions: list[Obj] | None = None
) -> None:
    """Play the kubelet: ``pod``'s container ``main`` exits with ``exit_code``."""
    status: Obj = {
        "phase": "Succeeded" if exit_code == 0 else "Failed",
        "containerStatuses": [
            {
                "name": "main",
                "state": {
                    "terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}
                },
            }
        ],
    }
    if conditions:
        status["conditions"] = conditions
    cluster.patch_status("Pod", "default", pod["metadata"]["name"], status)
    clock.run_until(clock.now())


def job_status(cluster: MemoryCluster) -> Obj:
    return dict(cluster.get("Job", "default", "j")["status"])


def conditions(cluster: MemoryCluster) -> list[tuple[str, str, str]]:
    return [(c["type"], c["reason"], c["message"]) for c in job_status(cluster).get("conditions", [])]


POLICY = {
    "rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [42]}},
    ]
}


def test_fail_job_rule_fails_the_job_with_upstream_message() -> None:
    cluster, clock = setup(completions=2, parallelism=2, podFailurePolicy=POLICY)
    first, second = pods(cluster)
    end(cluster, clock, first, 42)
    name = first["metadata"]["name"]
    message = (
        f"Container main for pod default/{name} failed with exit code 42 matching FailJob rule at index 1"
    )
    assert conditions(cluster) == [
        ("FailureTarget", "PodFailurePolicy", message),
        ("Failed", "PodFailurePolicy", message),
    ]
    assert job_status(cluster)["failed"] == 1
    # the other pod (unbound) is deleted at once
    assert [p["metadata"]["name"] for p in pods(cluster)] == [name]
    assert second["metadata"]["name"] != name


def test_ignore_rule_does_not_count_and_the_pod_is_replaced() -> None:
    cluster, clock = setup(completions=1, backoffLimit=0, podFailurePolicy=POLICY)
    [pod] = pods(cluster)
    end(
        cluster,
        clock,
        pod,
        137,
        [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    )
    status = job_status(cluster)
    assert (status.get("failed"), status.get("active"), status.get("conditions")) == (None, 1, None)
    assert len(pods(cluster, "Pending")) == 1
    # a counted failure (exit code 1, rule 2) goes over backoffLimit 0
    end(cluster, clock, pods(cluster, "Pending")[0], 1)
    assert conditions(cluster)[-1] == (
        "Failed",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert job_status(cluster)["failed"] == 1


def test_backoff_limit_per_index_and_max_failed_indexes() -> None:
    cluster, clock = setup(
        completions=3, parallelism=3, completionMode="Indexed", backoffLimitPerIndex=1, maxFailedIndexes=0
    )
    assert cluster.get("Job", "default", "j")["spec"]["backoffLimit"] == 2147483647
    end(cluster, clock, by_index(cluster, 1), 1)
    retry = by_index(cluster, 1)
    assert retry["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] == "1"
    assert job_status(cluster)["failedIndexes"] == ""
    end(cluster, clock, retry, 1)
    status = job_status(cluster)
    assert (status["failedIndexes"], status["failed"]) == ("1", 2)
    assert conditions(cluster) == [
        (
            "FailureTarget",
            "MaxFailedIndexesExceeded",
            "Job has exceeded the specified maximal number of failed indexes",
        ),
        (
            "Failed",
            "MaxFailedIndexesExceeded",
            "Job has exceeded the specified maximal number of failed indexes",
        ),
    ]
    assert pods(cluster, "Pending") == []


def test_fail_index_rule_and_failed_indexes_once_every_index_ended() -> None:
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]}
    cluster, clock = setup(
        completions=2,
        parallelism=2,
        completionMode="Indexed",
        backoffLimitPerIndex=5,
        podFailurePolicy=policy,
    )
    end(cluster, clock, by_index(cluster, 0), 3)
    assert job_status(cluster)["failedIndexes"] == "0"
    assert [p["metadata"]["annotations"][INDEX] for p in pods(cluster, "Pending")] == [
        "1"
    ]  # index 0 not retried
    end(cluster, clock, by_index(cluster, 1), 0)
    status = job_status(cluster)
    assert (status["completedIndexes"], status["failedIndexes"], status["succeeded"]) == ("1", "0", 1)
    assert conditions(cluster) == [
        ("FailureTarget", "FailedIndexes", "Job has failed indexes"),
        ("Failed", "FailedIndexes", "Job has failed indexes"),
    ]


def test_success_policy_completes_the_job_and_deletes_the_rest() -> None:
    cluster, clock = setup(
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0-1", "succeededCount": 1}]},
    )
    end(cluster, clock, by_index(cluster, 1), 0)
    assert conditions(cluster) == [
        ("SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"),
        ("Complete", "SuccessPolicy", "Matched rules at index 0"),
    ]
    status = job_status(cluster)
    assert (status["completedIndexes"], status["succeeded"], status.get("active")) == ("1", 1, None)
    assert pods(cluster, "Pending") == []


def test_match_pod_failure_policy_cases() -> None:
    def failed(code: int, name: str = "main", conds: list[Obj] | None = None) -> Obj:
        return {
            "metadata": {"name": "p", "namespace": "ns"},
            "status": {
                "phase": "Failed",
                "conditions": conds or [],
                "containerStatuses": [{"name": name, "state": {"terminated": {"exitCode": code}}}],
            },
        }

    assert match_pod_failure_policy(None, failed(42)) == PolicyMatch(None, True, None)
    assert match_pod_failure_policy(POLICY, failed(42, "side")) == PolicyMatch(None, True, None)
    assert match_pod_failure_policy(POLICY, failed(7, "side")) == PolicyMatch(None, True, "Count")
    assert match_pod_failure_policy(POLICY, failed(0)) == PolicyMatch(
        None, True, None
    )  # exit 0 never matches
    assert match_pod_failure_policy(
        {"rules": [{"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue", "status": "True"}]}]},
        failed(1, conds=[{"type": "ConfigIssue", "status": "True"}]),
    ) == PolicyMatch("Pod ns/p has condition ConfigIssue matching FailJob rule at index 0", True, "FailJob")


def test_match_success_policy_and_parse_indexes() -> None:
    assert parse_indexes("0-2,5,9", 8) == {0, 1, 2, 5}
    assert parse_indexes("1,x,3", 5) == {1}
    rules = {"rules": [{"succeededIndexes": "0,2"}, {"succeededCount": 2}]}
    assert match_success_policy(rules, 4, {0}) is None
    assert match_success_policy(rules, 4, {1, 3}) == "Matched rules at index 1"
    assert match_success_policy(rules, 4, {0, 2}) == "Matched rules at index 0"
    assert match_success_policy(None, 4, {0, 2}) is None
