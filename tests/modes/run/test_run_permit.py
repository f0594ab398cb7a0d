"""Permit waits in ``kubesched run``: a test Permit plugin (tests/run_permit_plugin.py, loaded with
``--plugin-module``) holds pods; they are released through the framework handle, or time out at
the plugin's timeout or at ``--permit-wait-timeout``, are unreserved and requeued with the
upstream message. See tests/run_support.py."""

from __future__ import annotations

from run_permit_plugin import ALLOW_AFTER, TIMEOUT
from run_support import Cluster, Replica, scheduler_config, wait_for


def _failed(cluster: Cluster, name: str) -> list[dict]:
    return [e for e in cluster.events("FailedScheduling") if e["regarding"]["name"] == name]


def _series_count(cluster: Cluster, name: str) -> int:
    failed = _failed(cluster, name)
    return int((failed[0].get("series") or {}).get("count", 1)) if failed else 0


def test_waiting_pod_released_or_timed_out(cluster: Cluster, replicas: list[Replica]) -> None:
    (node,) = cluster.add_nodes(1, cpu="1") if cluster.embedded else cluster.add_nodes(0)[:1]
    cfg = scheduler_config(cluster.tmp, cluster.namespace, permit_plugin=True)
    r = Replica(cluster, cfg, "--plugin-module", "run_permit_plugin")
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("plain")
    cluster.create_pod("released", labels={ALLOW_AFTER: "1", TIMEOUT: "30"})
    cluster.create_pod("timed-out", cpu="500m", labels={ALLOW_AFTER: "600", TIMEOUT: "1"})
    cluster.wait_bound(["plain", "released"], timeout=20)
    # the binding clears the nomination made while waiting on Permit (ClearingNominatedNodeNameAfterBinding)
    assert "nominatedNodeName" not in cluster.pods()["released"]["status"]

    failed = wait_for(lambda: _failed(cluster, "timed-out"), 15, "the timeout")
    host = failed[0]["note"]
    assert failed[0]["note"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin TestPermit."
    )
    pod = cluster.pods()["timed-out"]
    cond = {c["type"]: c for c in pod["status"]["conditions"]}["PodScheduled"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", host)
    assert "nodeName" not in pod["spec"]
    # forgotten and requeued: it is assumed, waits and times out again after its backoff (an
    # assumed pod that was not forgotten would be skipped). The second FailedScheduling is folded
    # into the first Event as a series (client-go's event broadcaster): one Event, count 2
    wait_for(lambda: _series_count(cluster, "timed-out") >= 2, 20, "a second attempt")
    (ev,) = _failed(cluster, "timed-out")
    assert ev["note"] == host and ev["series"]["count"] == 2
    # deleting a waiting pod rejects it; the scheduler carries on
    cluster.core.delete_namespaced_pod("timed-out", cluster.namespace, grace_period_seconds=0)
    cluster.create_pod("after", cpu="900m" if cluster.embedded else "10m")
    cluster.wait_bound(["after"], timeout=20)


def test_permit_wait_timeout_flag_caps_plugin_timeouts(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(1)
    cfg = scheduler_config(cluster.tmp, cluster.namespace, permit_plugin=True)
    r = Replica(cluster, cfg, "--plugin-module", "run_permit_plugin", "--permit-wait-timeout", "1s")
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("capped", labels={ALLOW_AFTER: "600", TIMEOUT: "300"})
    cluster.create_pod("quick", labels={ALLOW_AFTER: "0.2", TIMEOUT: "300"})
    cluster.wait_bound(["quick"], timeout=20)
    failed = wait_for(lambda: _failed(cluster, "capped"), 15, "the capped timeout")
    assert failed[0]["note"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin TestPermit."
    )
