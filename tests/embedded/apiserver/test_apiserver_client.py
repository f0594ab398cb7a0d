"""kubesched serve through the official ``kubernetes`` Python client (loopback only, bounded)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from apiserver_support import api_client, core_fixture, server_fixture
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from kubesched.embedded.apiserver import ServerHandle, write_kubeconfig

server = server_fixture(bookmark_interval=0.2, enable_test_hooks=True)
core = core_fixture()


def _raw(
    server: ServerHandle, method: str, path: str, body: Any = None, ctype: str = "application/json"
) -> tuple[int, Any, dict[str, str]]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server.url + path, data=data, method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null"), dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), dict(e.headers)


def _watch_lines(server: ServerHandle, path: str) -> list[dict[str, Any]]:
    """Read a watch stream to its end (the server closes it: timeoutSeconds, drop, error)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        assert resp.status == 200
        return [json.loads(line) for line in resp.read().splitlines() if line.strip()]
    finally:
        conn.close()


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec},
    }


def test_discovery(server: ServerHandle) -> None:
    code, version, _ = _raw(server, "GET", "/version")
    assert code == 200 and (version["major"], version["minor"], version["gitVersion"]) == (
        "1",
        "35",
        "v1.35.0",
    )
    _, api, _ = _raw(server, "GET", "/api")
    assert api["versions"] == ["v1"]
    _, core_list, _ = _raw(server, "GET", "/api/v1")
    by_name = {r["name"]: r for r in core_list["resources"]}
    assert by_name["pods"]["shortNames"] == ["po"] and by_name["pods"]["namespaced"] is True
    assert by_name["nodes"]["shortNames"] == ["no"] and by_name["nodes"]["namespaced"] is False
    assert by_name["pods/binding"]["verbs"] == ["create"]
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    _, groups, _ = _raw(server, "GET", "/apis")
    assert [g["name"] for g in groups["groups"]] == [
        "scheduling.k8s.io",
        "storage.k8s.io",
        "resource.k8s.io",
        "apps",
        "batch",
        "policy",
        "events.k8s.io",
        "coordination.k8s.io",
    ]
    _, storage, _ = _raw(server, "GET", "/apis/storage.k8s.io/v1")
    assert {r["name"] for r in storage["resources"]} == {
        "storageclasses",
        "csinodes",
        "csidrivers",
        "csistoragecapacities",
    }
    code, body, _ = _raw(server, "GET", "/openapi/v2")
    assert code == 200 and (body["swagger"], body["info"]["version"]) == ("2.0", "v1.35.0")
    code, body, _ = _raw(server, "GET", "/openapi/v3/apis/widgets.example.com/v1")
    assert code == 404 and body["reason"] == "NotFound"
    code, body, _ = _raw(server, "GET", "/api/v1/widgets")
    assert code == 404 and body["kind"] == "Status"


def test_system_namespaces(core: k8s.CoreV1Api) -> None:
    names = [ns.metadata.name for ns in core.list_namespace().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert core.read_namespace("default").status.phase == "Active"


def test_pod_crud_and_errors(core: k8s.CoreV1Api) -> None:
    created = core.create_namespaced_pod("default", _pod("web"))
    assert created.metadata.namespace == "default" and created.status.phase == "Pending"
    # API server defaults and admission
    assert created.spec.scheduler_name == "default-scheduler"
    assert created.spec.priority == 0
    assert [(t.key, t.toleration_seconds) for t in created.spec.tolerations] == [
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 300),
    ]
    with pytest.raises(k8s.ApiException) as exc:
        core.create_namespaced_pod("default", _pod("web"))
    assert exc.value.status == 409
    assert json.loads(exc.value.body)["reason"] == "AlreadyExists"
    assert json.loads(exc.value.body)["message"] == 'pods "web" already exists'

    got = core.read_namespaced_pod("web", "default")
    assert got.metadata.uid == created.metadata.uid

    patched = core.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"tier": "fe"}}})
    assert patched.metadata.labels == {"app": "web", "tier": "fe"}
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version)

    stale = core.read_namespaced_pod("web", "default")
    stale.metadata.resource_version = created.metadata.resource_version
    stale.metadata.labels = {"x": "y"}
    with pytest.raises(k8s.ApiException) as exc:
        core.replace_namespaced_pod("web", "default", stale)
    body = json.loads(exc.value.body)
    assert (exc.value.status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on pods "web": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )

    fresh = core.read_namespaced_pod("web", "default")
    fresh.metadata.labels = {"x": "y"}
    assert core.replace_namespaced_pod("web", "default", fresh).metadata.labels == {"x": "y"}

    core.delete_namespaced_pod("web", "default", grace_period_seconds=0)
    with pytest.raises(k8s.ApiException) as exc:
        core.read_namespaced_pod("web", "default")
    body = json.loads(exc.value.body)
    assert (exc.value.status, body["reason"], body["message"]) == (404, "NotFound", 'pods "web" not found')
    assert body["details"] == {"kind": "pods", "name": "web"}


def test_graceful_delete_of_bound_pod(core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}})
    core.create_namespaced_pod("default", _pod("web", nodeName="n1", terminationGracePeriodSeconds=20))
    deleted = core.delete_namespaced_pod("web", "default")
    assert deleted.metadata.deletion_timestamp is not None
    assert deleted.metadata.deletion_grace_period_seconds == 20
    core.delete_namespaced_pod("web", "default", grace_period_seconds=0)
    assert core.list_namespaced_pod("default").items == []


def test_binding(core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}})
    pod = core.create_namespaced_pod("default", _pod("web"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "default", "uid": pod.metadata.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    resp = core.create_namespaced_pod_binding("web", "default", binding, _preload_content=False)
    assert resp.status == 201
    assert json.loads(resp.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    bound = core.read_namespaced_pod("web", "default")
    assert bound.spec.node_name == "n1"
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(k8s.ApiException) as exc:
        core.create_namespaced_pod_binding("web", "default", binding, _preload_content=False)
    body = json.loads(exc.value.body)
    assert (exc.value.status, body["reason"]) == (409, "Conflict")
    assert (
        body["message"]
        == 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    )
    with pytest.raises(k8s.ApiException) as exc:
        core.create_namespaced_pod_binding(
            "gone", "default", {**binding, "metadata": {"name": "gone"}}, _preload_content=False
        )
    assert exc.value.status == 404


def test_pod_status_subresource(core: k8s.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("web"))
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/0 nodes are available",
    }
    core.patch_namespaced_pod_status("web", "default", {"status": {"conditions": [cond]}})
    other = {"type": "Ready", "status": "False"}
    out = core.patch_namespaced_pod_status(
        "web", "default", {"status": {"conditions": [other], "nominatedNodeName": "n2"}}
    )
    assert [(c.type, c.status) for c in out.status.conditions] == [
        ("PodScheduled", "False"),
        ("Ready", "False"),
    ]
    assert out.status.nominated_node_name == "n2"
    # PUT of the status replaces it; spec changes in the body are ignored
    current = core.read_namespaced_pod_status("web", "default")
    current.status.conditions = [k8s.V1PodCondition(type="Ready", status="True")]
    current.status.nominated_node_name = None
    current.spec.node_name = "sneaky"
    out = core.replace_namespaced_pod_status("web", "default", current)
    assert [(c.type, c.status) for c in out.status.conditions] == [("Ready", "True")]
    assert out.status.nominated_node_name is None and out.spec.node_name is None
    # a status patch through the main resource leaves status alone
    out = core.patch_namespaced_pod("web", "default", {"status": {"phase": "Running"}})
    assert out.status.phase == "Pending"


def test_node_status(core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}})
    patched = core.patch_node_status(
        "n1", {"status": {"allocatable": {"cpu": "3"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    )
    assert patched.status.allocatable == {"cpu": "3"} and patched.status.capacity == {"cpu": "4"}
    assert core.read_node_status("n1").status.conditions[0].type == "Ready"


def test_field_and_label_selectors(core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}})
    for name, node, phase in (
        ("a", "n1", "Running"),
        ("b", None, None),
        ("c", "n1", "Succeeded"),
        ("d", None, None),
    ):
        spec = {"nodeName": node} if node else {}
        core.create_namespaced_pod("default", _pod(name, **spec))
        if phase:
            core.patch_namespaced_pod_status(name, "default", {"status": {"phase": phase}})

    def names(**kw: Any) -> list[str]:
        return [p.metadata.name for p in core.list_pod_for_all_namespaces(**kw).items]

    assert names(field_selector="status.phase!=Succeeded,status.phase!=Failed") == ["a", "b", "d"]
    assert names(field_selector="spec.nodeName=") == ["b", "d"]
    assert names(field_selector="spec.nodeName!=") == ["a", "c"]
    assert names(field_selector="spec.nodeName=n1,status.phase=Running") == ["a"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.namespace=kube-system") == []
    assert names(label_selector="app in (a,d)") == ["a", "d"]
    assert names(label_selector="app!=a,app!=b") == ["c", "d"]
    with pytest.raises(k8s.ApiException) as exc:
        core.list_pod_for_all_namespaces(field_selector="spec.bogus=1")
    assert exc.value.status == 400
    assert json.loads(exc.value.body)["message"] == "field label not supported: spec.bogus"
    assert [n.metadata.name for n in core.list_node(field_selector="metadata.name=n1").items] == ["n1"]


def test_limit_and_continue(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    for i in range(5):
        core.create_namespaced_pod("default", _pod(f"p{i}"))
    first = core.list_namespaced_pod("default", limit=2)
    assert [p.metadata.name for p in first.items] == ["p0", "p1"]
    assert first.metadata.remaining_item_count == 3 and first.metadata._continue
    core.create_namespaced_pod("default", _pod("p00"))  # not in the paged snapshot
    second = core.list_namespaced_pod("default", limit=2, _continue=first.metadata._continue)
    assert [p.metadata.name for p in second.items] == ["p2", "p3"]
    assert second.metadata.resource_version == first.metadata.resource_version
    third = core.list_namespaced_pod("default", limit=2, _continue=second.metadata._continue)
    assert [p.metadata.name for p in third.items] == ["p4"] and third.metadata._continue is None
    # a token whose snapshot was compacted answers 410 Expired
    again = core.list_namespaced_pod("default", limit=1)
    assert _raw(server, "POST", "/kubesched/compact")[0] == 200
    with pytest.raises(k8s.ApiException) as exc:
        core.list_namespaced_pod("default", limit=1, _continue=again.metadata._continue)
    assert exc.value.status == 410 and json.loads(exc.value.body)["reason"] == "Expired"
    with pytest.raises(k8s.ApiException) as exc:
        core.list_namespaced_pod("default", _continue="not-a-token")
    assert exc.value.status == 400


def test_list_resource_version_match(core: k8s.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", _pod("web"))
    with pytest.raises(k8s.ApiException) as exc:
        core.list_namespaced_pod("default", resource_version=rv, resource_version_match="Exact")
    assert exc.value.status == 410 and json.loads(exc.value.body)["reason"] == "Expired"
    assert (
        len(
            core.list_namespaced_pod(
                "default", resource_version=rv, resource_version_match="NotOlderThan"
            ).items
        )
        == 1
    )


def test_watch_added_modified_deleted(core: k8s.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", _pod("web"))
    core.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"v": "2"}}})
    core.delete_namespaced_pod("web", "default")
    seen = []
    w = k8s_watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=5):
        seen.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.labels.get("v")))
        if ev["type"] == "DELETED":
            w.stop()
    assert seen == [("ADDED", "web", None), ("MODIFIED", "web", "2"), ("DELETED", "web", "2")]


def test_watch_from_start_replays_state(core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}})
    w = k8s_watch.Watch()
    events = [(e["type"], e["object"].metadata.name) for e in w.stream(core.list_node, timeout_seconds=1)]
    assert events == [("ADDED", "n1")]


def test_watch_gone_after_compaction(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", _pod("web"))
    _, compacted, _ = _raw(server, "POST", "/kubesched/compact")
    with pytest.raises(k8s.ApiException) as exc:
        for _ in k8s_watch.Watch().stream(
            core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=5
        ):
            pass
    assert exc.value.status == 410
    lines = _watch_lines(server, f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}")
    assert lines == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {rv} ({compacted['resourceVersion']})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
    # watching from the compaction point works
    lines = _watch_lines(
        server, f"/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion={compacted['resourceVersion']}"
    )
    assert lines == []


def test_watch_selector_transitions(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    core.create_node({"metadata": {"name": "n1"}})
    rv = core.list_pod_for_all_namespaces().metadata.resource_version
    core.create_namespaced_pod("default", _pod("web"))
    core.create_namespaced_pod_binding(
        "web", "default", {"metadata": {"name": "web"}, "target": {"name": "n1"}}, _preload_content=False
    )
    lines = _watch_lines(
        server,
        f"/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion={rv}&fieldSelector=spec.nodeName%3D",
    )
    assert [(ln["type"], ln["object"]["spec"].get("nodeName")) for ln in lines] == [
        ("ADDED", None),
        ("DELETED", "n1"),
    ]


def test_watch_bookmarks(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("web"))
    lines = _watch_lines(
        server, "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1"
    )
    assert lines[0]["type"] == "ADDED"
    assert lines[1] == {
        "type": "BOOKMARK",
        "object": {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": server.cluster.resource_version},
        },
    }
    assert all(ln["type"] == "BOOKMARK" for ln in lines[1:])
    lines = _watch_lines(
        server,
        "/api/v1/pods?watch=1&allowWatchBookmarks=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
    )
    assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_drop_watches(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=30")
        resp = conn.getresponse()
        core.create_namespaced_pod("default", _pod("web"))
        first = json.loads(resp.readline())
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "web")
        code, body, _ = _raw(server, "POST", "/kubesched/drop-watches")
        assert (code, body) == (200, {"dropped": 1})
        assert resp.read() == b""  # the stream ended long before its 30 s timeout
    finally:
        conn.close()


def test_fault_injection_and_request_counts(server: ServerHandle, core: k8s.CoreV1Api) -> None:
    code, rule, _ = _raw(
        server, "POST", "/kubesched/faults", {"status": 500, "count": 2, "paths": "^/api/v1/nodes"}
    )
    assert code == 201 and rule["count"] == 2
    _raw(
        server,
        "POST",
        "/kubesched/faults",
        {"status": 429, "count": 1, "paths": "/pods$", "methods": ["POST"], "retryAfterSeconds": 2},
    )
    _raw(server, "DELETE", "/kubesched/requests")
    for _ in range(2):
        with pytest.raises(k8s.ApiException) as exc:
            core.list_node()
        assert exc.value.status == 500
        assert json.loads(exc.value.body)["reason"] == "InternalError"
    assert core.list_node().items == []
    assert core.list_namespaced_pod("default").items == []  # GET is not a faulted method
    code, body, headers = _raw(server, "POST", "/api/v1/namespaces/default/pods", _pod("web"))
    assert (code, body["reason"], headers["Retry-After"]) == (429, "TooManyRequests", "2")
    assert _raw(server, "POST", "/api/v1/namespaces/default/pods", _pod("web"))[0] == 201
    _, counts, _ = _raw(server, "GET", "/kubesched/requests")
    per_path: dict[tuple[str, str], int] = {}
    for entry in counts["requests"]:
        key = (entry["method"], entry["path"])
        per_path[key] = per_path.get(key, 0) + entry["count"]
    assert per_path == {
        ("GET", "/api/v1/nodes"): 3,
        ("GET", "/api/v1/namespaces/default/pods"): 1,
        ("POST", "/api/v1/namespaces/default/pods"): 2,
    }
    assert _raw(server, "GET", "/kubesched/faults")[1] == {"faults": []}
    assert _raw(server, "POST", "/kubesched/faults", {"status": 200})[0] == 400


def test_events_in_both_versions(server: ServerHandle) -> None:
    api = api_client(server)
    events = k8s.EventsV1Api(api)
    events.create_namespaced_event(
        "default",
        {
            "metadata": {"name": "web.1"},
            "eventTime": "2024-05-01T12:00:00.000000Z",
            "reportingController": "kubesched",
            "reportingInstance": "kubesched-1",
            "action": "Binding",
            "reason": "Scheduled",
            "type": "Normal",
            "note": "Successfully assigned default/web to n1",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
        },
    )
    core_events = k8s.CoreV1Api(api).list_namespaced_event(
        "default", field_selector="involvedObject.name=web"
    )
    (ev,) = core_events.items
    assert (ev.message, ev.reason, ev.source.component, ev.involved_object.kind) == (
        "Successfully assigned default/web to n1",
        "Scheduled",
        "kubesched",
        "Pod",
    )
    (ev1,) = events.list_namespaced_event("default", field_selector="reason=Scheduled").items
    assert ev1.note == "Successfully assigned default/web to n1"


def test_leases(server: ServerHandle) -> None:
    leases = k8s.CoordinationV1Api(api_client(server))
    lease = leases.create_namespaced_lease(
        "kube-system",
        {"metadata": {"name": "kubesched"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}},
    )
    lease.spec.holder_identity = "b"
    updated = leases.replace_namespaced_lease("kubesched", "kube-system", lease)
    assert updated.spec.holder_identity == "b"
    lease.spec.holder_identity = "c"  # stale resourceVersion
    with pytest.raises(k8s.ApiException) as exc:
        leases.replace_namespaced_lease("kubesched", "kube-system", lease)
    assert exc.value.status == 409
    assert json.loads(exc.value.body)["message"].startswith(
        'Operation cannot be fulfilled on leases.coordination.k8s.io "kubesched": the object has been modified'
    )


def test_apps_policy_storage(server: ServerHandle) -> None:
    api = api_client(server)
    apps = k8s.AppsV1Api(api)
    rs = apps.create_namespaced_replica_set(
        "default",
        {
            "metadata": {"name": "rs"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    )
    assert rs.kind == "ReplicaSet" and rs.api_version == "apps/v1"
    policy = k8s.PolicyV1Api(api)
    policy.create_namespaced_pod_disruption_budget(
        "default", {"metadata": {"name": "pdb"}, "spec": {"minAvailable": 1}}
    )
    assert [p.metadata.name for p in policy.list_pod_disruption_budget_for_all_namespaces().items] == ["pdb"]
    storage = k8s.StorageV1Api(api)
    storage.create_storage_class({"metadata": {"name": "fast"}, "provisioner": "x"})
    assert storage.read_storage_class("fast").provisioner == "x"
    with pytest.raises(k8s.ApiException) as exc:
        storage.read_csi_node("nope")
    assert json.loads(exc.value.body)["details"] == {
        "kind": "csinodes",
        "name": "nope",
        "group": "storage.k8s.io",
    }


def test_kubeconfig(server: ServerHandle, tmp_path: Any) -> None:
    path = write_kubeconfig(tmp_path / "sub" / "kubeconfig", server.url)
    api = k8s_config.new_client_from_config(config_file=str(path), context="kubesched")
    assert api.configuration.host == server.url
    names = [ns.metadata.name for ns in k8s.CoreV1Api(api).list_namespace().items]
    assert "kube-system" in names
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_wrongly_typed_fields_are_refused_as_the_decoder_refuses_them(
    server: ServerHandle, core: k8s.CoreV1Api
) -> None:
    """A Pod with ``spec.containers: 5`` (``kubectl create --validate=false``) gets kube-apiserver's
    400 instead of being stored (where it would break every Table list of its namespace); a patch
    that would make one is refused the same way, and the pod is unchanged."""
    api = api_client(server)
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p5"}, "spec": {"containers": 5}}
    with pytest.raises(k8s.ApiException) as exc:
        api.call_api(
            "/api/v1/namespaces/default/pods",
            "POST",
            body=bad,
            response_type="object",
            _return_http_data_only=True,
        )
    body = json.loads(exc.value.body)
    assert (exc.value.status, body["reason"], body["message"]) == (
        400,
        "BadRequest",
        'Pod in version "v1" cannot be handled as a Pod: spec.containers: must be a list, got number',
    )
    core.create_namespaced_pod("default", _pod("web"))
    with pytest.raises(k8s.ApiException) as exc:
        core.patch_namespaced_pod("web", "default", {"metadata": {"labels": "app"}})
    assert (exc.value.status, json.loads(exc.value.body)["message"]) == (
        400,
        'Pod in version "v1" cannot be handled as a Pod: metadata.labels: must be an object, got string',
    )
    assert core.read_namespaced_pod("web", "default").metadata.labels == {"app": "web"}
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["web"]


def test_objects_the_load_checks_refuse_are_invalid(server: ServerHandle) -> None:
    """A PV with ``capacity.storage: big`` gets kube-apiserver's 400, as ``serve -f`` refuses it when
    loading, and a PodDisruptionBudget with a valid percentage is created (``minAvailable: lots``
    gets the 422 of ``test_apiserver_pod_validation.py``)."""
    api = api_client(server)
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "big"}},
    }
    with pytest.raises(k8s.ApiException) as exc:
        api.call_api(
            "/api/v1/persistentvolumes", "POST", body=pv, response_type="object", _return_http_data_only=True
        )
    assert (exc.value.status, json.loads(exc.value.body)["message"]) == (
        400,
        'PersistentVolume in version "v1" cannot be handled as a PersistentVolume: quantities must match '
        "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }
    api.call_api(
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        "POST",
        body=pdb,
        response_type="object",
        _return_http_data_only=True,
    )


def test_negative_scale_is_invalid_with_details(server: ServerHandle) -> None:
    apps = k8s.AppsV1Api(api_client(server))
    labels = {"app": "web"}
    apps.create_namespaced_deployment(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    )
    with pytest.raises(k8s.ApiException) as exc:
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    body = json.loads(exc.value.body)
    assert (exc.value.status, body["message"], body["details"]) == (
        422,
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        {
            "name": "web",
            "group": "autoscaling",
            "kind": "Scale",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: -1: must be greater than or equal to 0",
                    "field": "spec.replicas",
                }
            ],
        },
    )
