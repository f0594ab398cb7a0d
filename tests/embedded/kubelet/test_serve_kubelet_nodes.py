"""``kubesched serve --kubelet`` nodes through kubectl: Ready nodes with Leases, a stopped
kubelet's node turning NotReady and its pods evicted (``--speed`` keeps the 50 s grace period and
the 300 s tolerations short)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import ServeProcess

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

NODES = "".join(
    f"""\
---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status:
  allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}
  capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
"""
    for name in ("n1", "n2")
)
SPEED = 40


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[ServeProcess, Path]]:
    (tmp_path / "nodes.yaml").write_text(NODES)
    kc = tmp_path / "kubeconfig"
    proc = ServeProcess(
        tmp_path,
        "-f",
        str(tmp_path / "nodes.yaml"),
        "--kubelet",
        "--speed",
        str(SPEED),
        "--write-kubeconfig",
        str(kc),
    )
    try:
        proc.wait_ready()
        yield proc, kc
    finally:
        proc.stop()


def _kubectl(kc: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kc), *args], capture_output=True, text=True, timeout=30, check=False
    )


def _wait(pred: Callable[[], Any], timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _node_status(kc: Path) -> dict[str, str]:
    out = _kubectl(kc, "get", "nodes", "--no-headers")
    return {line.split()[0]: line.split()[1] for line in out.stdout.splitlines()}


def test_nodes_are_ready_with_leases_and_a_stopped_node_loses_its_pods(
    serve: tuple[ServeProcess, Path],
) -> None:
    _, kc = serve
    assert _wait(lambda: _node_status(kc) == {"n1": "Ready", "n2": "Ready"}, 20, "Ready nodes")
    leases = json.loads(_kubectl(kc, "get", "leases", "-n", "kube-node-lease", "-o", "json").stdout)["items"]
    assert sorted((le["metadata"]["name"], le["spec"]["holderIdentity"]) for le in leases) == [
        ("n1", "n1"),
        ("n2", "n2"),
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
    }
    created = subprocess.run(
        [str(KUBECTL), "--kubeconfig", str(kc), "create", "-f", "-"],
        input=json.dumps(pod),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert created.returncode == 0, created.stderr
    tolerations = json.loads(_kubectl(kc, "get", "pod", "p1", "-o", "json").stdout)["spec"]["tolerations"]
    assert tolerations == [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]
    out = _kubectl(kc, "annotate", "node", "n1", "kubesched.io/kubelet-stopped=true")
    assert out.returncode == 0, out.stderr
    # 50 s grace + <= 5 s probe period + 10 s renew period, in cluster seconds
    assert _wait(
        lambda: _node_status(kc) == {"n1": "NotReady", "n2": "Ready"}, 70 / SPEED + 10, "n1 NotReady"
    )
    node = json.loads(_kubectl(kc, "get", "node", "n1", "-o", "json").stdout)
    assert [(t["key"], t["effect"]) for t in node["spec"]["taints"]] == [
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    ]
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown",
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    # evicted 300 s after the taint, deleted 30 s later (grace period)
    assert _wait(
        lambda: _kubectl(kc, "get", "pods", "-o", "name").stdout == "", 340 / SPEED + 10, "p1 evicted"
    )
    out = _kubectl(kc, "annotate", "node", "n1", "kubesched.io/kubelet-stopped-")
    assert out.returncode == 0, out.stderr
    assert _wait(
        lambda: _node_status(kc) == {"n1": "Ready", "n2": "Ready"}, 10 / SPEED + 10, "n1 Ready again"
    )
