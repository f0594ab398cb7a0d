"""kubectl against ``kubesched serve``: version, typed creates (protobuf bodies), namespaces,
OpenAPI-driven validation and ``kubectl explain``.

Skipped when ``kubectl`` is absent. Every command has a timeout; the server listens on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

from apiserver_support import served_fixture
from kubectl_support import kubectl as _kubectl
from kubectl_support import requires_kubectl

from kubesched.embedded.apiserver import ServerHandle

pytestmark = requires_kubectl


served = served_fixture(bookmark_interval=0.2)


def test_kubectl_version_reports_v1_35(served: tuple[ServerHandle, Path]) -> None:
    _, kc = served
    out = _kubectl(kc, "version", "-o", "json")
    assert out.returncode == 0, out.stderr
    server = json.loads(out.stdout)["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", "35", "v1.35.0")


def test_kubectl_create_namespace_and_deployment_send_protobuf(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    out = _kubectl(kc, "create", "namespace", "team-a")
    assert (out.returncode, out.stdout) == (0, "namespace/team-a created\n"), out.stderr
    ns = server.cluster.get("Namespace", None, "team-a")
    assert (ns["spec"], ns["status"]) == ({"finalizers": ["kubernetes"]}, {"phase": "Active"})
    out = _kubectl(kc, "create", "priorityclass", "high", "--value=1000", "--description=urgent")
    assert out.returncode == 0, out.stderr
    pc = server.cluster.get("PriorityClass", None, "high")
    assert (pc["value"], pc["description"], pc.get("globalDefault")) == (1000, "urgent", None)


def test_deleting_a_namespace_deletes_its_objects(served: tuple[ServerHandle, Path], tmp_path: Path) -> None:
    server, kc = served
    assert _kubectl(kc, "create", "namespace", "gone").returncode == 0
    manifest = tmp_path / "objs.yaml"
    manifest.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: gone}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: gone}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kept}
data: {a: b}
""")
    out = _kubectl(kc, "create", "-f", str(manifest), "--validate=false")
    assert out.returncode == 0, out.stderr
    out = _kubectl(kc, "delete", "namespace", "gone")
    assert (out.returncode, out.stdout) == (0, 'namespace "gone" deleted\n'), out.stderr
    assert [
        o["metadata"]["name"]
        for o in server.cluster.list("Namespace").items
        if o["metadata"]["name"] == "gone"
    ] == []
    assert server.cluster.list("Pod", "gone").items == []
    assert [c["metadata"]["name"] for c in server.cluster.list("ConfigMap").items] == ["kept"]
    out = _kubectl(kc, "delete", "namespace", "default")
    assert out.returncode == 1
    assert out.stderr == (
        'Error from server (Forbidden): namespaces "default" is forbidden: '
        "this namespace may not be deleted\n"
    )


POD_WITH_TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: c
    image: nginx
    imagePullPolic: Always
"""


def test_kubectl_create_validates_against_the_served_openapi(
    served: tuple[ServerHandle, Path], tmp_path: Path
) -> None:
    server, kc = served
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD_WITH_TYPO)
    out = _kubectl(kc, "create", "-f", str(manifest))
    assert out.returncode == 1
    assert out.stderr == (
        f'Error from server (BadRequest): error when creating "{manifest}": Pod in version "v1" '
        "cannot be handled as a Pod: strict decoding error: unknown field "
        '"spec.containers[0].imagePullPolic"\n'
    )
    out = _kubectl(kc, "create", "-f", str(manifest), "--validate=warn")
    assert (out.returncode, out.stdout) == (0, "pod/web created\n"), out.stderr
    assert out.stderr == 'Warning: unknown field "spec.containers[0].imagePullPolic"\n'
    container = server.cluster.get("Pod", "default", "web")["spec"]["containers"][0]
    assert "imagePullPolic" not in container
    manifest.write_text(POD_WITH_TYPO.replace("    imagePullPolic: Always\n", "").replace("web", "web2"))
    out = _kubectl(kc, "apply", "-f", str(manifest))
    assert (out.returncode, out.stdout) == (0, "pod/web2 created\n"), out.stderr


def test_kubectl_explain_reads_the_v1_35_schemas(served: tuple[ServerHandle, Path]) -> None:
    _, kc = served
    out = _kubectl(kc, "explain", "pod.spec.affinity")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:8] == [
        "KIND:       Pod",
        "VERSION:    v1",
        "",
        "FIELD: affinity <Affinity>",
        "",
        "",
        "DESCRIPTION:",
        "    If specified, the pod's scheduling constraints",
    ]
    assert "  nodeAffinity\t<NodeAffinity>" in out.stdout.splitlines()
    out = _kubectl(kc, "explain", "pod.spec.resourceClaims.resourceClaimTemplateName")
    assert out.returncode == 0 and "FIELD: resourceClaimTemplateName <string>" in out.stdout, out.stderr


def test_limit_ranges_default_container_resources(served: tuple[ServerHandle, Path], tmp_path: Path) -> None:
    server, kc = served
    manifest = tmp_path / "lr.yaml"
    manifest.write_text("""\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: c, image: nginx, resources: {requests: {memory: 64Mi}}}
""")
    out = _kubectl(kc, "create", "-f", str(manifest))
    assert out.returncode == 0, out.stderr
    pod = server.cluster.get("Pod", "default", "web")
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"memory": "64Mi", "cpu": "100m"},
        "limits": {"cpu": "500m", "memory": "256Mi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c; "
        "memory limit for container c"
    )
