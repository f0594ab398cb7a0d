"""The endpoints of ``kubesched run`` authenticate bearer tokens with TokenReview and authorise
every path with SubjectAccessReview against ``kubesched serve`` (its static tokens and ABAC policy,
see tests/run_support.py): anonymous requests and unknown tokens never get metrics or a profile."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import httpx
import pytest
from cert_support import Issued, client_context, make_ca, make_client_cert
from run_support import (
    METRICS_TOKEN,
    NOBODY_TOKEN,
    READER_TOKEN,
    Cluster,
    Replica,
    free_port,
    needs_hooks,
    scheduler_config,
    wait_for,
)

pytestmark = needs_hooks  # the tokens and policy are the embedded server's


def _status(body: bytes) -> tuple[int, str, str]:
    doc = json.loads(body)
    assert (doc["kind"], doc["apiVersion"], doc["status"]) == ("Status", "v1", "Failure")
    return doc["code"], doc["reason"], doc["message"]


def _reviews(cluster: Cluster) -> Counter[str]:
    out: Counter[str] = Counter()
    for row in cluster.hook("GET", "/kubesched/requests")["requests"]:
        if row["method"] == "POST" and row["path"].endswith("reviews"):
            out[row["path"].rsplit("/", 1)[1]] += row["count"]
    return out


def test_anonymous_and_unauthorised_requests_get_no_data(cluster: Cluster, replicas: list[Replica]) -> None:
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--profiling")
    replicas.append(r)
    r.wait_ready()
    # always allowed, anonymous
    for path in ("/healthz", "/readyz", "/livez"):
        assert r.get(path, token=None)[:2] == (200, b"ok")
    # anonymous: 403, the Status names system:anonymous
    for path in ("/metrics", "/debug/pprof/profile?seconds=5", "/configz", "/nope"):
        code, body, headers = r.get(path, token=None)
        plain = path.split("?")[0]
        assert code == 403 and headers["Content-Type"].startswith("application/json")
        assert _status(body) == (
            403,
            "Forbidden",
            f'forbidden: User "system:anonymous" cannot get path "{plain}": No policy matched.',
        )
    # a token serve does not know: 401, even for an always-allowed path
    for path in ("/metrics", "/debug/pprof/profile", "/healthz"):
        code, body, _ = r.get(path, token="made-up")
        assert (code, _status(body)) == (401, (401, "Unauthorized", "Unauthorized"))
    # authenticated but not allowed
    code, body, _ = r.get("/metrics", token=NOBODY_TOKEN)
    assert _status(body) == (
        403,
        "Forbidden",
        'forbidden: User "it-nobody" cannot get path "/metrics": No policy matched.',
    )
    # the scraper may read /metrics and nothing else
    code, body, headers = r.get("/metrics", token=METRICS_TOKEN)
    assert code == 200 and headers["Content-Type"].startswith("text/plain") and b"scheduler_" in body
    code, body, _ = r.get("/debug/pprof/profile?seconds=0.2", token=METRICS_TOKEN)
    assert _status(body) == (
        403,
        "Forbidden",
        'forbidden: User "it-scraper" cannot get path "/debug/pprof/profile": No policy matched.',
    )
    # the reader may profile; unknown paths are then 404
    code, body, headers = r.get("/debug/pprof/profile?seconds=0.2", timeout=15, token=READER_TOKEN)
    assert code == 200, body
    assert headers["Content-Disposition"] == 'attachment; filename="profile.pstats"'
    assert r.get("/nope", token=READER_TOKEN)[0] == 404
    code, body, headers = r.get("/configz", token=READER_TOKEN)
    assert code == 200 and headers["Content-Type"] == "application/json"
    cc = json.loads(body)["componentconfig"]
    assert (cc["kind"], cc["leaderElection"]["leaseDuration"], cc["profiles"][0]["schedulerName"]) == (
        "KubeSchedulerConfiguration",
        "2s",
        "kubesched-it",
    )


def test_review_answers_are_cached(cluster: Cluster, replicas: list[Replica]) -> None:
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.hook("DELETE", "/kubesched/requests")
    for _ in range(5):
        assert r.get("/metrics", token=METRICS_TOKEN)[0] == 200
        assert r.get("/metrics", token=NOBODY_TOKEN)[0] == 403
        assert r.get("/metrics", token="made-up")[0] == 401
        assert r.get("/metrics", token=None)[0] == 403
    # one TokenReview per token (3), one SubjectAccessReview per user (3: scraper, nobody, anonymous)
    assert _reviews(cluster) == Counter({"tokenreviews": 3, "subjectaccessreviews": 3})


def test_always_allow_paths_flag(cluster: Cluster, replicas: list[Replica]) -> None:
    r = Replica(
        cluster,
        scheduler_config(cluster.tmp, cluster.namespace),
        "--authorization-always-allow-paths=/healthz,/metr*",
    )
    replicas.append(r)
    wait_for(lambda: r.get("/readyz", 1, token=READER_TOKEN)[0] == 200, 30, "readyz")
    assert r.get("/metrics", token=None)[0] == 200
    assert r.get("/readyz", token=None)[0] == 403  # no longer in the list


@pytest.mark.parametrize("authz_flag", [False, True])
def test_secure_port_over_https(cluster: Cluster, replicas: list[Replica], authz_flag: bool) -> None:
    port = free_port()
    extra = (
        ["--authorization-kubeconfig", cluster.kubeconfig, "--authentication-kubeconfig", cluster.kubeconfig]
        if authz_flag
        else []
    )
    r = Replica(
        cluster,
        scheduler_config(cluster.tmp, cluster.namespace),
        f"--secure-port={port}",
        "--profiling",
        *extra,
    )
    replicas.append(r)
    r.wait_ready()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # self-signed serving certificate

    def get(path: str, token: str | None) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        req = urllib.request.Request(f"https://127.0.0.1:{port}{path}", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    assert get("/healthz", None) == (200, b"ok")
    assert get("/debug/pprof/profile?seconds=1", None)[0] == 403
    assert get("/debug/pprof/profile?seconds=1", "made-up")[0] == 401
    code, body = get("/metrics", METRICS_TOKEN)
    assert code == 200 and b"scheduler_" in body


def _https_get(
    port: int, path: str, cert: tuple[Path, Path] | None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    r = httpx.get(
        f"https://127.0.0.1:{port}{path}", verify=client_context(cert), headers=headers or {}, timeout=10
    )
    if r.status_code in (401, 403):
        return r.status_code, json.loads(r.text)["message"]
    return r.status_code, ""


def _client_cert_cases(port: int, client_ca: Issued, proxy_ca: Issued, tmp: Path) -> None:
    scraper = make_client_cert(client_ca, "it-scraper", ("scrapers",)).write(tmp, "scraper")
    nobody = make_client_cert(client_ca, "it-nobody").write(tmp, "nobody")
    proxy = make_client_cert(proxy_ca, "front-proxy").write(tmp, "proxy")
    stranger = make_client_cert(proxy_ca, "another-proxy").write(tmp, "stranger")
    assert _https_get(port, "/metrics", scraper)[0] == 200
    assert _https_get(port, "/debug/pprof/profile", scraper) == (
        403,
        'forbidden: User "it-scraper" cannot get path "/debug/pprof/profile": No policy matched.',
    )
    assert _https_get(port, "/metrics", nobody) == (
        403,
        'forbidden: User "it-nobody" cannot get path "/metrics": No policy matched.',
    )
    # the front proxy names the user; serve's policy lets it-scraper read /metrics
    assert _https_get(port, "/metrics", proxy, {"X-Remote-User": "it-scraper"})[0] == 200
    assert _https_get(port, "/metrics", proxy, {"X-Remote-User": "it-nobody"}) == (
        403,
        'forbidden: User "it-nobody" cannot get path "/metrics": No policy matched.',
    )
    assert _https_get(port, "/metrics", stranger, {"X-Remote-User": "it-scraper"}) == (401, "Unauthorized")
    assert _https_get(port, "/metrics", None, {"X-Remote-User": "it-scraper"}) == (
        403,
        'forbidden: User "system:anonymous" cannot get path "/metrics": No policy matched.',
    )
    assert _https_get(port, "/healthz", None)[0] == 200


def test_client_certificates_and_front_proxy_from_flags(cluster: Cluster, replicas: list[Replica]) -> None:
    client_ca, proxy_ca = make_ca("it-client-ca"), make_ca("it-proxy-ca")
    client_ca_file, _ = client_ca.write(cluster.tmp, "client-ca")
    proxy_ca_file, _ = proxy_ca.write(cluster.tmp, "proxy-ca")
    port = free_port()
    r = Replica(
        cluster,
        scheduler_config(cluster.tmp, cluster.namespace),
        f"--secure-port={port}",
        f"--client-ca-file={client_ca_file}",
        f"--requestheader-client-ca-file={proxy_ca_file}",
        "--requestheader-allowed-names=front-proxy",
    )
    replicas.append(r)
    r.wait_ready()
    cluster.hook("DELETE", "/kubesched/requests")
    _client_cert_cases(port, client_ca, proxy_ca, cluster.tmp)
    reviews = _reviews(cluster)
    # no TokenReview; one SubjectAccessReview per distinct (user, groups, path): it-scraper in
    # "scrapers" (2 paths), it-nobody (its proxied twin has the same groups: cached), it-scraper via
    # the proxy (no "scrapers" group), system:anonymous
    assert (reviews["tokenreviews"], reviews["subjectaccessreviews"]) == (0, 5)


def test_client_certificates_and_front_proxy_from_the_cluster(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    """Without the CA flags, the settings come from kube-system/extension-apiserver-authentication."""
    assert cluster.handle is not None
    client_ca, proxy_ca = make_ca("it-client-ca"), make_ca("it-proxy-ca")
    cluster.handle.cluster.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system"},
            "data": {
                "client-ca-file": client_ca.pem.decode(),
                "requestheader-client-ca-file": proxy_ca.pem.decode(),
                "requestheader-allowed-names": '["front-proxy"]',
                "requestheader-username-headers": '["X-Remote-User"]',
                "requestheader-group-headers": '["X-Remote-Group"]',
                "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
            },
        }
    )
    port = free_port()
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), f"--secure-port={port}")
    replicas.append(r)
    r.wait_ready()
    _client_cert_cases(port, client_ca, proxy_ca, cluster.tmp)
