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
    posts = float(
        re.search(
            r'rest_client_requests_total\{code="201",host="[^"]+",method="POST"\} ([0-9.e+]+)', text
        ).group(1)
    )
    assert posts >= 2  # at least the binding and its event
    assert re.search(r'rest_client_request_duration_seconds_count\{host="[^"]+",verb="GET"\} [1-9]', text)
    assert re.search(
        r'rest_client_rate_limiter_duration_seconds_count\{host="[^"]+",verb="POST"\} [1-9]', text
    )


def test_metrics_resources(cluster: Cluster, replicas: list[Replica]) -> None:
    """``/metrics/resources``: every pod's requests and limits (``kube_pod_resource_request``/``_limit``),
    behind the secure port's authorisation like ``/metrics``."""
    node = cluster.add_nodes(1)[0]
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("web", cpu="250m")
    cluster.wait_bound(["web"])
    assert r.get("/metrics/resources", token=None)[0] == 403

    def scraped() -> str | None:
        code, body, headers = r.get("/metrics/resources")
        assert code == 200 and headers["Content-Type"].startswith("text/plain")
        text = body.decode()
        return text if f'node="{node}"' in text else None

    text = wait_for(scraped, 30, "the bound pod in /metrics/resources")
    labels = (
        f'namespace="{cluster.namespace}",node="{node}",pod="web",priority="0",resource="cpu",'
        'scheduler="kubesched-it",unit="cores"'
    )
    assert f"kube_pod_resource_request{{{labels}}} 0.25" in text  # the API server admits priority 0
    assert re.search(
        rf'kube_pod_resource_request\{{namespace="{cluster.namespace}",node="{node}",pod="web",'
        r'priority="0",resource="memory",scheduler="kubesched-it",unit="bytes"\} 8\.388608e\+06',
        text,
    )
