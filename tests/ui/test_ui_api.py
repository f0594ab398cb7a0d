"""The JSON API of ``kubesched ui`` over HTTP (httpx against the server on a free loopback port)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from ui_support import ADDED_POD, BATCH_BIG_MESSAGE, EXAMPLE, FIT_WEIGHT_10, replay_report

from kubesched.embedded.manifests import load_manifests
from kubesched.ui.server import UiServer
from kubesched.ui.session import Session


def _session() -> Session:
    s = Session(load_manifests([EXAMPLE]).manifests, None, sources=["examples/cluster.yaml"])
    s.run(None)
    return s


@pytest.fixture
def server() -> Iterator[UiServer]:
    srv = UiServer(session=_session(), port=0).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def http(server: UiServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as c:
        yield c


def test_info_and_pods_pending_first(http: httpx.Client) -> None:
    info = http.get("/api/v1/info").json()
    assert info["mode"] == "snapshot"
    assert info["runs"][0]["counts"] == {"Scheduled": 3, "Unschedulable": 1, "Gated": 1, "Ignored": 1}
    pods = http.get("/api/v1/pods").json()
    assert [(r["key"], r["status"]) for r in pods["rows"]] == [
        ("shop/batch-big", "Unschedulable"),
        ("shop/gated-1", "Gated"),
        ("shop/other-scheduler", "Ignored"),
        ("ml/trainer-0", "Scheduled"),
        ("shop/web-1", "Scheduled"),
        ("shop/web-2", "Scheduled"),
        ("shop/cache-0", "Running"),
        ("shop/db-0", "Running"),
    ]
    assert pods["rows"][0]["message"] == BATCH_BIG_MESSAGE
    assert pods["rows"][0]["attempts"] == 1
    assert pods["counts"] == {"Unschedulable": 1, "Gated": 1, "Ignored": 1, "Scheduled": 3, "Running": 2}
    assert pods["namespaces"] == ["ml", "shop"]


def test_pod_filters(http: httpx.Client) -> None:
    keys = lambda **q: [r["key"] for r in http.get("/api/v1/pods", params=q).json()["rows"]]  # noqa: E731
    assert keys(selector="app=web") == ["shop/web-1", "shop/web-2"]
    assert keys(selector="app in (db,cache)") == ["shop/cache-0", "shop/db-0"]
    assert keys(namespace="ml") == ["ml/trainer-0"]
    assert keys(node="node-a1") == ["shop/web-1", "shop/web-2"]
    assert keys(status="Gated,Ignored") == ["shop/gated-1", "shop/other-scheduler"]
    assert keys(q="web-") == ["shop/web-1", "shop/web-2"]
    page = http.get("/api/v1/pods", params={"offset": 2, "limit": 2}).json()
    assert (page["total"], [r["key"] for r in page["rows"]]) == (8, ["shop/other-scheduler", "ml/trainer-0"])
    bad = http.get("/api/v1/pods", params={"selector": "a in b"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("selector: ")
    assert http.get("/api/v1/pods", params={"limit": 0}).status_code == 400


def test_nodes_allocation_taints_images(http: httpx.Client) -> None:
    data = http.get("/api/v1/nodes").json()
    rows = {r["name"]: r for r in data["rows"]}
    assert [r["name"] for r in data["rows"]] == ["gpu-b2", "gpu-b3", "node-a1", "node-a2", "node-b1"]
    assert data["resources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert data["zones"] == ["zone-a", "zone-b"]
    a1 = rows["node-a1"]
    assert a1["resources"] == {
        "cpu": {"allocatable": 4000, "requested": 1000},
        "memory": {"allocatable": 16 * 2**30, "requested": 2**30},
    }
    assert a1["pods"] == {"count": 2, "allocatable": 110}
    assert a1["images"] == [
        {
            "names": ["docker.io/library/nginx@sha256:0fd1c5a1f3c4", "docker.io/library/nginx:1.25"],
            "sizeBytes": 70000000,
        }
    ]
    assert rows["gpu-b3"]["taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert rows["gpu-b2"]["resources"]["nvidia.com/gpu"] == {"allocatable": 2, "requested": 2}  # seed 0
    assert rows["gpu-b3"]["resources"]["nvidia.com/gpu"] == {"allocatable": 2, "requested": 0}
    assert rows["node-b1"]["resources"]["cpu"] == {"allocatable": 8000, "requested": 3000}
    by_gpu = http.get("/api/v1/nodes", params={"sort": "alloc:nvidia.com/gpu", "limit": 1}).json()
    assert [r["name"] for r in by_gpu["rows"]] == ["gpu-b2"]
    assert [r["name"] for r in http.get("/api/v1/nodes", params={"zone": "zone-a"}).json()["rows"]] == [
        "node-a1",
        "node-a2",
    ]


def test_why_pending_pod(http: httpx.Client) -> None:
    pod = http.get("/api/v1/pods/shop/batch-big").json()
    assert pod["history"][0]["result"] == "FailedScheduling"
    assert pod["history"][0]["message"] == BATCH_BIG_MESSAGE
    ex = http.get("/api/v1/pods/shop/batch-big/explain").json()
    assert ex["reproduced"] is True
    assert (ex["selectedNode"], ex["result"], ex["message"]) == (None, "FailedScheduling", BATCH_BIG_MESSAGE)
    assert ex["summary"] == {
        "evaluated": 5,
        "feasible": 0,
        "notEvaluated": 0,
        "reasons": [
            {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": 3},
            {"plugin": "TaintToleration", "reason": "node(s) had untolerated taint(s)", "nodes": 2},
        ],
    }
    assert ex["postFilter"]["DefaultPreemption"]["reasons"] == [
        "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is "
        "not helpful for scheduling."
    ]
    rows = http.get(
        "/api/v1/pods/shop/batch-big/explain/nodes", params={"reason": "Insufficient cpu", "sort": "node"}
    ).json()
    assert [r["node"] for r in rows["rows"]] == ["node-a1", "node-a2", "node-b1"]
    assert rows["rows"][0]["filter"]["NodeResourcesFit"] == "UnschedulableAndUnresolvable: Insufficient cpu"
    assert rows["rows"][0]["filter"]["TaintToleration"] == "Success"


def test_why_scheduled_pod_scores_sorted(http: httpx.Client) -> None:
    ex = http.get("/api/v1/pods/shop/web-1/explain").json()
    assert (ex["selectedNode"], ex["reproduced"]) == ("node-a1", True)
    assert ex["scorePlugins"] == [
        "TaintToleration",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ]
    rows = http.get("/api/v1/pods/shop/web-1/explain/nodes", params={"sort": "total", "desc": "1"}).json()[
        "rows"
    ]
    assert [(r["node"], r["total"], r["selected"]) for r in rows] == [
        ("node-a1", 486, True),
        ("node-b1", 455, False),
        ("node-a2", 412, False),
        ("gpu-b2", None, False),
        ("gpu-b3", None, False),
    ]
    assert rows[0]["scores"] == {
        "TaintToleration": [0, 100, 300],
        "NodeResourcesFit": [91, 91, 91],
        "NodeResourcesBalancedAllocation": [95, 95, 95],
        "ImageLocality": [0, 0, 0],
    }
    asc = http.get("/api/v1/pods/shop/web-1/explain/nodes", params={"sort": "raw:NodeResourcesFit"}).json()[
        "rows"
    ]
    assert [r["node"] for r in asc] == ["node-a2", "node-b1", "node-a1", "gpu-b2", "gpu-b3"]
    assert http.get("/api/v1/pods/shop/web-1/explain/nodes", params={"sort": "bogus"}).status_code == 400


def test_why_errors(http: httpx.Client) -> None:
    r = http.get("/api/v1/pods/shop/gated-1/explain")
    assert (r.status_code, r.json()["error"]) == (
        404,
        "pod shop/gated-1 had no scheduling attempt (Gated: waiting for scheduling gates: [example.com/quota])",
    )
    r = http.get("/api/v1/pods/shop/web-1/explain", params={"attempt": 2})
    assert (r.status_code, r.json()["error"]) == (404, "pod shop/web-1 has attempts 1..1, not 2")
    assert http.get("/api/v1/pods/shop/nope").status_code == 404


def test_whatif_weight_change_moves_a_pod(http: httpx.Client) -> None:
    r = http.post("/api/v1/runs", json={"config": "", "added": ADDED_POD})
    assert r.status_code == 201
    assert r.json()["diff"]["changes"] == [
        {
            "pod": "shop/api-1",
            "change": "added",
            "before": None,
            "after": {"status": "Scheduled", "node": "node-b1", "message": ""},
        }
    ]
    r = http.post("/api/v1/runs", json={"config": FIT_WEIGHT_10, "added": ADDED_POD})
    d = r.json()
    assert d["id"] == 3
    assert d["diff"]["counts"] == {
        "moved": 1,
        "newlyScheduled": 0,
        "newlyPending": 0,
        "messageChanged": 0,
        "statusChanged": 0,
        "added": 0,
        "removed": 0,
        "unchanged": 6,
    }
    assert d["diff"]["changes"] == [
        {
            "pod": "shop/api-1",
            "change": "moved",
            "before": {"status": "Scheduled", "node": "node-b1", "message": ""},
            "after": {"status": "Scheduled", "node": "node-a1", "message": ""},
        }
    ]
    assert http.get("/api/v1/runs/3/diff", params={"against": 1}).json()["changes"][0]["change"] == "added"
    cfg = http.get("/api/v1/config").json()
    assert cfg["editor"] == FIT_WEIGHT_10
    assert "name: NodeResourcesFit\n        weight: 10" in cfg["effective"]
    # the earlier runs stay explorable
    assert http.get("/api/v1/pods/shop/api-1", params={"run": 2}).json()["node"] == "node-b1"
    assert http.get("/api/v1/pods/shop/api-1/explain", params={"run": 3}).json()["selectedNode"] == "node-a1"


def test_whatif_validation_messages_match_the_cli(http: httpx.Client) -> None:
    bad = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodMaxBackoffSeconds: 0\n"
    r = http.post("/api/v1/config/validate", json={"config": bad})
    assert (r.status_code, r.json()) == (
        422,
        {
            "error": "config.yaml: podMaxBackoffSeconds: must be greater than or "
            "equal to PodInitialBackoffSeconds"
        },
    )
    r = http.post("/api/v1/runs", json={"config": bad})
    assert r.status_code == 422
    r = http.post("/api/v1/runs", json={"added": "kind: Pod\nmetadata: {}\n"})
    assert (r.status_code, r.json()["error"]) == (422, "added.yaml doc 1: metadata.name: required")
    assert http.post("/api/v1/config/validate", json={"config": FIT_WEIGHT_10}).json() == {"valid": True}
    assert len(http.get("/api/v1/runs").json()["runs"]) == 1


def test_refuses_cross_origin_and_non_json(http: httpx.Client, server: UiServer) -> None:
    r = http.post(
        "/api/v1/runs", content="config=x", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert r.status_code == 415
    r = http.post("/api/v1/runs", json={}, headers={"Origin": "http://evil.example"})
    assert (r.status_code, r.json()["error"]) == (
        403,
        "cross-origin request from 'http://evil.example' refused",
    )
    r = http.get("/api/v1/info", headers={"Host": "evil.example:80"})
    assert r.status_code == 403
    r = http.get("/api/v1/info", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    ok = http.post("/api/v1/config/validate", json={}, headers={"Origin": f"http://127.0.0.1:{server.port}"})
    assert ok.status_code == 200
    page = http.get("/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert (
        http.post("/api/v1/runs", content=b"[1", headers={"Content-Type": "application/json"}).status_code
        == 400
    )


def test_token_required_when_set() -> None:
    srv = UiServer(session=_session(), port=0, token="s3cret").start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", timeout=30) as c:
            assert c.get("/api/v1/info").status_code == 401
            assert c.get("/api/v1/info", headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert c.get("/api/v1/info", headers={"Authorization": "Bearer s3cret"}).status_code == 200
            r = c.get("/", params={"token": "s3cret"})
            assert r.status_code == 302 and "HttpOnly" in r.headers["set-cookie"]
            assert "SameSite=Strict" in r.headers["set-cookie"]
            assert c.get("/api/v1/info").status_code == 200  # the cookie now
    finally:
        srv.stop()
    with pytest.raises(ValueError, match="token is required"):
        UiServer(session=_session(), address="0.0.0.0", port=0)


def test_static_assets_ship_in_the_package(http: httpx.Client) -> None:
    page = http.get("/").text
    assert '<script src="/static/app.js" defer></script>' in page
    assert "http://" not in page and "https://" not in page
    for asset in ("/static/app.js", "/static/style.css", "/static/plotly.min.js"):
        r = http.get(asset)
        assert r.status_code == 200, asset
    assert "https://" not in http.get("/static/app.js").text


def test_replay_report_plots(http: httpx.Client) -> None:
    report = replay_report()
    report["runs"] = report["runs"][:1]
    old = {"runs": [{k: v for k, v in report["runs"][0].items() if k != "plots"} | {"config": "b.yaml"}]}
    view = http.post(
        "/api/v1/reports",
        json={"reports": [{"name": "one.json", "report": report}, {"name": "old.json", "report": old}]},
    ).json()
    assert [r["config"] for r in view["rows"]] == ["one.json: upstream-default", "old.json: b.yaml"]
    assert view["columns"][:4] == ["config", "pods", "scheduled", "never scheduled"]
    assert view["rows"][0]["cells"][:3] == [5, 5, 0]
    assert view["rows"][0]["cells"][7] == 0.44  # GB pulled
    assert view["withoutPlots"] == ["old.json: b.yaml"]
    assert [f["layout"]["title"]["text"] for f in view["figures"]] == [
        "Start-up latency CDF (creation to container running)",
        "Bytes pulled (cumulative)",
        "Cache hit ratio (cumulative, bytes)",
        "Utilisation: allocated / allocatable",
    ]
    r = http.post("/api/v1/reports", json={"reports": [{"name": "x.json", "report": {"nope": 1}}]})
    assert (r.status_code, r.json()["error"]) == (
        422,
        'x.json: not a kubesched replay or startup report.json (no "runs" list)',
    )
    # a view opened once has an id: GET /reports/{id} answers it again (the page's URL names it)
    assert view["id"] == "1" and view["note"] == ""
    assert http.get("/api/v1/reports/1").json()["rows"] == view["rows"]
    r = http.get("/api/v1/reports/99")
    assert (r.status_code, r.json()["error"]) == (
        404,
        "report 99 not found (reports are kept while the server runs, the last 20)",
    )


def test_whatif_added_nodes_change_pending_reasons(http: httpx.Client) -> None:
    small = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: small-c1, labels: {topology.kubernetes.io/zone: zone-c}}\n"
        'status:\n  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}\n'
    )
    d = http.post("/api/v1/runs", json={"added": small}).json()["diff"]
    assert d["changes"] == [
        {
            "pod": "shop/batch-big",
            "change": "messageChanged",
            "before": {"status": "Unschedulable", "node": None, "message": BATCH_BIG_MESSAGE},
            "after": {
                "status": "Unschedulable",
                "node": None,
                "message": (
                    "0/6 nodes are available: 2 node(s) had untolerated taint(s), 4 Insufficient cpu. "
                    "no new claims to deallocate, preemption: 0/6 nodes are available: 1 No preemption "
                    "victims found for incoming pod, 5 Preemption is not helpful for scheduling."
                ),
            },
        }
    ]
    big = small.replace("small-c1", "big-c1").replace('cpu: "2"', 'cpu: "32"')
    d = http.post("/api/v1/runs", json={"added": big}).json()["diff"]
    assert [(c["pod"], c["change"], c["after"]["node"]) for c in d["changes"]] == [
        ("shop/batch-big", "newlyScheduled", "big-c1")
    ]
    nodes = {r["name"]: r for r in http.get("/api/v1/nodes").json()["rows"]}
    assert nodes["big-c1"]["resources"]["cpu"] == {"allocatable": 32000, "requested": 6000}


def test_score_weights_written_into_the_config(http: httpx.Client) -> None:
    cfg = http.get("/api/v1/config").json()
    assert cfg["scoreWeights"] == {
        "default-scheduler": {
            "TaintToleration": 3,
            "NodeAffinity": 2,
            "NodeResourcesFit": 1,
            "PodTopologySpread": 2,
            "InterPodAffinity": 2,
            "DynamicResources": 1,
            "NodeResourcesBalancedAllocation": 1,
            "ImageLocality": 1,
        }
    }
    r = http.post(
        "/api/v1/config/weights",
        json={"config": cfg["editor"], "weights": {"default-scheduler": {"NodeResourcesFit": 10}}},
    )
    text = r.json()["config"]
    assert text == (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n"
        "      - name: NodeResourcesFit\n        weight: 10\n"
    )
    again = http.post(
        "/api/v1/config/weights",
        json={"config": text, "weights": {"default-scheduler": {"NodeResourcesFit": 4, "ImageLocality": 2}}},
    ).json()["config"]
    assert (
        "name: NodeResourcesFit\n        weight: 4\n      - name: ImageLocality\n        weight: 2\n" in again
    )
    run = http.post("/api/v1/runs", json={"config": again}).json()
    assert run["id"] == 2
    assert http.get("/api/v1/config").json()["scoreWeights"]["default-scheduler"]["NodeResourcesFit"] == 4
    bad = http.post(
        "/api/v1/config/weights", json={"config": text, "weights": {"default-scheduler": {"X": 0}}}
    )
    assert (bad.status_code, bad.json()["error"]) == (
        422,
        "default-scheduler: X: weight must be a positive integer, got 0",
    )


def test_https_with_a_token() -> None:
    from kubesched.serving.tls import server_context

    srv = UiServer(session=_session(), port=0, token="t0k", ssl_context=server_context("127.0.0.1")).start()
    try:
        assert srv.url == f"https://127.0.0.1:{srv.port}/?token=t0k"
        with httpx.Client(base_url=f"https://127.0.0.1:{srv.port}", verify=False, timeout=30) as c:
            r = c.get("/", params={"token": "t0k"})
            assert r.status_code == 302 and "Secure" in r.headers["set-cookie"]
            ok = c.post(
                "/api/v1/config/validate", json={}, headers={"Origin": f"https://127.0.0.1:{srv.port}"}
            )
            assert ok.status_code == 200
            plain = c.post(
                "/api/v1/config/validate", json={}, headers={"Origin": f"http://127.0.0.1:{srv.port}"}
            )
            assert plain.status_code == 403
    finally:
        srv.stop()
