"""``kubesched run`` exports the component metrics kube-scheduler does: the REST client's
request counts and latencies, its rate-limiter waits, and the leader-election status."""

from __future__ import annotations

import re

from run_support import Cluster, Replica, scheduler_config, wait_for


def _metrics(r: Replica) -> str:
    code, body, _ = r.get("/metrics")
    assert code == 200
    return body.decode()


def test_rest_client_and_leader_metrics(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(1)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace, lease=True))
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("web")
    cluster.wait_bound(["web"])
    def leading() -> str | None:
        t = _metrics(r)
        return t if 'leader_election_master_status{name="kubesched-it"} 1.0' in t else None

    text = wait_for(leading, 30, "leader_election_master_status 1")
    posts = float(re.search(r'rest_client_requests_total\{code="201",host="[^"]+",method="POST"\} ([0-9.e+]+)',
                            text).group(1))
    assert posts >= 2  # at least the binding and its event
    assert re.search(r'rest_client_request_duration_seconds_count\{host="[^"]+",verb="GET"\} [1-9]', text)
    assert re.search(r'rest_client_rate_limiter_duration_seconds_count\{host="[^"]+",verb="POST"\} [1-9]', text)
