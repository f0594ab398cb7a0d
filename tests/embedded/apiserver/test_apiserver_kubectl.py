"""kubectl (Debian's ``kubernetes-client`` or any kubectl on PATH) against ``kubesched serve``.

Skipped when ``kubectl`` is absent. Every command has a timeout; the server listens on loopback.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

from apiserver_support import served_fixture
from kubectl_support import KUBECTL, requires_kubectl
from kubectl_support import kubectl as _kubectl

from kubesched.embedded.apiserver import ServerHandle

pytestmark = requires_kubectl

PODS = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx:1.25
    resources: {requests: {cpu: 100m}}
"""


served = served_fixture(bookmark_interval=0.2)


def test_kubectl_apply_get_and_reapply(served: tuple[ServerHandle, Path], tmp_path: Path) -> None:
    server, kc = served
    manifest = tmp_path / "pods.yaml"
    manifest.write_text(PODS)
    out = _kubectl(kc, "apply", "--validate=false", "-f", str(manifest))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["node/n1 created", "pod/web created"]
    got = _kubectl(kc, "get", "pods", "-o", "json")
    assert got.returncode == 0, got.stderr
    items = json.loads(got.stdout)["items"]
    assert [(p["metadata"]["name"], p["spec"]["containers"][0]["image"]) for p in items] == [
        ("web", "nginx:1.25")
    ]
    # re-apply with a change: kubectl computes a strategic merge patch
    manifest.write_text(
        PODS.replace("nginx:1.25", "nginx:1.26").replace("{app: web}", "{app: web, tier: fe}")
    )
    out = _kubectl(kc, "apply", "--validate=false", "-f", str(manifest))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["node/n1 unchanged", "pod/web configured"]
    pod = server.cluster.get("Pod", "default", "web")
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
    assert pod["metadata"]["labels"] == {"app": "web", "tier": "fe"}
    names = _kubectl(kc, "get", "no", "-o", "name")
    assert names.stdout.split() == ["node/n1"]


def test_kubectl_delete(served: tuple[ServerHandle, Path], tmp_path: Path) -> None:
    server, kc = served
    manifest = tmp_path / "pods.yaml"
    manifest.write_text(PODS)
    assert _kubectl(kc, "apply", "--validate=false", "-f", str(manifest)).returncode == 0
    out = _kubectl(kc, "delete", "pod", "web", "--wait=false")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'pod "web" deleted'
    assert server.cluster.list("Pod").items == []


def test_kubectl_get_watch(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    server.cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
    )
    assert KUBECTL is not None
    proc = subprocess.Popen(
        [KUBECTL, "--kubeconfig", str(kc), "get", "pods", "--watch", "-o", "name", "--request-timeout=5s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert lines.get(timeout=20) == "pod/web"  # from the initial list
        server.cluster.bind("default", "web", "", "n1")
        assert lines.get(timeout=20) == "pod/web"  # the MODIFIED event
        server.state.hub.drop_all()  # kubectl --watch ends when its watch closes
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        reader.join(timeout=5)
