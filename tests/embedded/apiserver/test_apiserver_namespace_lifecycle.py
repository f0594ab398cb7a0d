"""NamespaceLifecycle admission in ``kubesched serve``, through the official client and kubectl:
creates in a namespace that does not exist answer 404, in a terminating one 403, the immortal
namespaces cannot be deleted, and a server loaded with objects creates their namespaces."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from apiserver_support import api_client, served_fixture
from kubectl_support import kubectl, ok, requires_kubectl

from kubesched.clock import RealClock
from kubesched.embedded.apiserver import ServerHandle, start_server
from kubesched.embedded.store import MemoryCluster

k8s = pytest.importorskip("kubernetes.client")


served = served_fixture(bookmark_interval=0.2)


def _refused(call: Callable[[], object]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(k8s.ApiException) as exc:
        call()
    return exc.value.status, json.loads(exc.value.body)


def _pod(name: str = "web", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def _deployment(name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": _pod()["spec"]},
        },
    }


def _not_found(namespace: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'namespaces "{namespace}" not found',
        "reason": "NotFound",
        "details": {"name": namespace, "kind": "namespaces"},
        "code": 404,
    }


def _terminating(resource: str, name: str, namespace: str, group: str = "") -> dict[str, Any]:
    qualified = f"{resource}.{group}" if group else resource
    details: dict[str, Any] = {"name": name, "kind": resource}
    if group:
        details["group"] = group
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated",
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


def _terminate(server: ServerHandle, namespace: str) -> None:
    """Create ``namespace`` with a pod bound to a node, then delete it: the bound pod's 30 s grace
    period (no kubelet, no finalizer) keeps the namespace ``Terminating``."""
    cluster = server.cluster
    if not cluster.list("Node").items:
        cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    core = k8s.CoreV1Api(api_client(server))
    core.create_namespace({"metadata": {"name": namespace}})
    core.create_namespaced_pod(namespace, _pod("bound"))
    cluster.bind(namespace, "bound", "", "n1")
    core.delete_namespace(namespace)
    assert core.read_namespace(namespace).status.phase == "Terminating"


def test_creates_in_a_missing_namespace_answer_404(served: tuple[ServerHandle, Path]) -> None:
    server, _ = served
    api = api_client(server)
    core, apps, events = k8s.CoreV1Api(api), k8s.AppsV1Api(api), k8s.EventsV1Api(api)
    event = {"metadata": {"name": "e"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "R"}
    for call in (
        lambda: core.create_namespaced_pod("nope", _pod()),
        lambda: core.create_namespaced_pod("nope", _pod(), dry_run="All"),
        lambda: core.create_namespaced_config_map("nope", {"metadata": {"generateName": "cm-"}}),
        lambda: apps.create_namespaced_deployment("nope", _deployment()),
        lambda: events.create_namespaced_event("nope", event),
        # NamespaceLifecycle admits before the registry validates: not 422
        lambda: core.create_namespaced_pod("nope", {**_pod(), "spec": {"containers": []}}),
    ):
        assert _refused(call) == (404, _not_found("nope"))
    assert server.cluster.list("Pod").items == []
    assert server.cluster.list("Deployment").items == []


def test_creates_in_a_terminating_namespace_answer_403(served: tuple[ServerHandle, Path]) -> None:
    server, _ = served
    _terminate(server, "t")
    api = api_client(server)
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    assert _refused(lambda: core.create_namespaced_pod("t", _pod("q"))) == (
        403,
        _terminating("pods", "q", "t"),
    )
    assert _refused(
        lambda: core.create_namespaced_pod("t", {**_pod(), "metadata": {"generateName": "w-"}})
    ) == (
        403,
        _terminating("pods", "w-", "t"),
    )
    assert _refused(lambda: apps.create_namespaced_deployment("t", _deployment())) == (
        403,
        _terminating("deployments", "web", "t", "apps"),
    )
    # a binding is a create too (of pods/binding): a scheduler cannot bind into a terminating namespace
    server.cluster.create({**_pod("pending"), "metadata": {"name": "pending", "namespace": "t"}})
    binding = {"metadata": {"name": "pending"}, "target": {"kind": "Node", "name": "n1"}}
    assert _refused(lambda: core.create_namespaced_pod_binding("pending", "t", binding)) == (
        403,
        _terminating("pods", "pending", "t"),
    )
    assert _refused(lambda: core.create_namespaced_binding("t", binding)) == (
        403,
        _terminating("bindings", "pending", "t"),
    )
    # other namespaces are not affected
    assert core.create_namespaced_pod("default", _pod("q")).metadata.name == "q"


def test_immortal_namespaces_cannot_be_deleted(served: tuple[ServerHandle, Path]) -> None:
    server, _ = served
    core = k8s.CoreV1Api(api_client(server))
    for name in ("default", "kube-system", "kube-public"):
        assert _refused(lambda name=name: core.delete_namespace(name)) == (
            403,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                "reason": "Forbidden",
                "details": {"name": name, "kind": "namespaces"},
                "code": 403,
            },
        )
    # upstream's immortal namespaces are these three: kube-node-lease may be deleted
    core.delete_namespace("kube-node-lease")
    assert [ns.metadata.name for ns in core.list_namespace().items] == [
        "default",
        "kube-public",
        "kube-system",
    ]


@requires_kubectl
def test_kubectl_reports_the_refusals(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: %s}\nspec: {containers: [{name: c, image: nginx}]}\n"
    out = kubectl(kc, "run", "web", "--image=nginx", "-n", "nope")
    assert (out.returncode, out.stderr) == (1, 'Error from server (NotFound): namespaces "nope" not found\n')
    out = kubectl(kc, "create", "deployment", "web", "--image=nginx", "-n", "nope")
    assert (out.returncode, out.stderr) == (
        1,
        'error: failed to create deployment: namespaces "nope" not found\n',
    )
    out = kubectl(kc, "apply", "-f", "-", input=pod % "nope")
    assert (out.returncode, out.stderr) == (
        1,
        'Error from server (NotFound): error when creating "STDIN": namespaces "nope" not found\n',
    )
    _terminate(server, "t")
    out = kubectl(kc, "run", "q", "--image=nginx", "-n", "t")
    assert (out.returncode, out.stderr) == (
        1,
        'Error from server (Forbidden): pods "q" is forbidden: unable to create new content in '
        "namespace t because it is being terminated\n",
    )
    out = kubectl(kc, "create", "deployment", "web", "--image=nginx", "-n", "t")
    assert (out.returncode, out.stderr) == (
        1,
        'error: failed to create deployment: deployments.apps "web" is forbidden: unable to create new '
        "content in namespace t because it is being terminated\n",
    )
    out = kubectl(kc, "delete", "namespace", "kube-public")
    assert (out.returncode, out.stderr) == (
        1,
        'Error from server (Forbidden): namespaces "kube-public" is forbidden: this namespace may not be deleted\n',
    )
    assert ok(kubectl(kc, "create", "namespace", "nope")) == "namespace/nope created\n"
    assert ok(kubectl(kc, "apply", "-f", "-", input=pod % "nope")) == "pod/w created\n"


def test_a_loaded_store_gets_the_namespaces_of_its_objects() -> None:
    """Objects loaded into the store (``serve -f`` of a file that declares no Namespace) have their
    namespaces created when the server starts, so clients can add to them."""
    cluster = MemoryCluster(RealClock())
    cluster.load(
        [
            _pod("a", namespace="team-a"),
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "team-b"}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
        ]
    )
    with start_server(cluster) as server:
        core = k8s.CoreV1Api(api_client(server))
        assert [
            (ns.metadata.name, ns.status.phase, ns.spec.finalizers) for ns in core.list_namespace().items
        ] == [
            ("default", "Active", ["kubernetes"]),
            ("kube-node-lease", "Active", ["kubernetes"]),
            ("kube-public", "Active", ["kubernetes"]),
            ("kube-system", "Active", ["kubernetes"]),
            ("team-a", "Active", ["kubernetes"]),
            ("team-b", "Active", ["kubernetes"]),
        ]
        assert core.create_namespaced_pod("team-a", _pod("b")).metadata.namespace == "team-a"
