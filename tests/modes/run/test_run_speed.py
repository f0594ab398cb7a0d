"""``kubesched run --speed S`` puts the scheduler on the cluster's clock: against a cluster whose
clock runs S times faster than wall time (``serve --speed S``), the queue's timers count cluster
seconds. Shown with upstream's flush of the unschedulable pods
(``pkg/scheduler/backend/queue/scheduling_queue.go: flushUnschedulablePodsLeftover``): a pod that no
node fits, with no cluster event that could make it fit, is tried again once it has been
unschedulable for ``podMaxInUnschedulablePodsDuration`` (5 min). At ``--speed 60`` that is 5 wall
seconds; at the default speed the pod is not tried again within the test.
"""

from __future__ import annotations

import time

import pytest
from run_support import Cluster, Replica, scheduler_config, wait_for

#: wall seconds watched for a second attempt at the default speed (the flush is 300 s away)
WATCH = 8.0


def _unschedulable_attempts(r: Replica) -> int:
    samples = r.samples("scheduler_schedule_attempts_total")
    return int(sum(v for labels, v in samples.items() if ("result", "unschedulable") in labels))


@pytest.mark.parametrize(("speed", "attempts"), [("60", 2), ("1", 1)])
def test_unschedulable_pods_are_flushed_after_five_cluster_minutes(
    cluster: Cluster, replicas: list[Replica], speed: str, attempts: int
) -> None:
    cluster.add_nodes(1, cpu="1")
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--speed", speed)
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("huge", cpu="2")
    wait_for(lambda: _unschedulable_attempts(r) == 1, 15, "the first unschedulable attempt")
    first = time.monotonic()
    if attempts == 2:
        wait_for(lambda: _unschedulable_attempts(r) == 2, 15, "the attempt after the flush")
        # 300 cluster seconds at 60x, with the flush's 30 s period (0.5 s) as slack
        assert 300 / 60 - 0.2 <= time.monotonic() - first <= 300 / 60 + 3.0
    else:
        time.sleep(WATCH)
    assert _unschedulable_attempts(r) == attempts
    assert "nodeName" not in cluster.pods()["huge"]["spec"]
