"""``kubesched serve --kubelet`` as a process, through the official ``kubernetes`` client: a pod bound
through ``pods/binding`` is pulled, started and reported as a kubelet would, and node
``status.images`` follows."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from process_support import stop_process

kubernetes = pytest.importorskip("kubernetes")

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
"""
# 20 MB at 1 MB/s: a 20 s pull (2 s of wall time at --speed 10)
KUBELET = "decompressBytesPerSecond: 1000000\nlayerLatencySeconds: 0\npullFixedSeconds: 0\ncontainerStartSeconds: 1\n"


def _wait(pred: Any, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_serve_kubelet_runs_bound_pods(tmp_path: Path) -> None:
    from kubernetes import client, config

    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "kubelet.yaml").write_text(KUBELET)
    (tmp_path / "images.yaml").write_text(
        "images:\n  - {name: 'example.com/app:1', class: cpu, source: test, confidence: derived,\n"
        "     layers: [{id: app-base, size_bytes: 15000000}, {id: app-top, size_bytes: 5000000}]}\n"
    )
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kubesched.cli.serve import serve; serve()",
            "-f",
            str(tmp_path / "node.yaml"),
            "--port",
            "0",
            "--write-kubeconfig",
            str(kc),
            "--kubelet",
            "--kubelet-config",
            str(tmp_path / "kubelet.yaml"),
            "--images",
            str(tmp_path / "images.yaml"),
            "--speed",
            "10",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait(lambda: kc.exists() or proc.poll() is not None, 30, "the kubeconfig")
        assert kc.exists(), proc.stderr.read() if proc.stderr else ""
        api = client.CoreV1Api(config.new_client_from_config(str(kc)))
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="web", annotations={"kubesched.io/run-seconds": "30"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="example.com/app:1")]),
        )
        api.create_namespaced_pod("default", pod)
        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name="web"), target=client.V1ObjectReference(kind="Node", name="n1")
        )
        api.create_namespaced_binding("default", body, _preload_content=False)

        def running() -> Any:
            p = api.read_namespaced_pod("web", "default")
            return p if p.status.phase == "Running" else None

        p = _wait(running, 30, "pod web Running")
        conds = {c.type: c.status for c in p.status.conditions}
        assert conds == {
            "PodScheduled": "True",
            "PodReadyToStartContainers": "True",
            "Initialized": "True",
            "ContainersReady": "True",
            "Ready": "True",
        }
        [cs] = p.status.container_statuses
        assert cs.ready and cs.state.running is not None
        # 20 s of pull then 1 s of container start, in cluster seconds (second-precision stamps)
        started = cs.state.running.started_at.timestamp()
        assert 20 <= started - p.status.start_time.timestamp() <= 25
        events = api.list_namespaced_event("default", field_selector="involvedObject.name=web").items
        kubelet = [(e.reason, e.message) for e in events if e.source and e.source.component == "kubelet"]
        assert [r for r, _ in kubelet] == ["Pulling", "Pulled", "Created", "Started"]
        assert kubelet[0][1] == 'Pulling image "example.com/app:1"'
        # 20 s of pull; the real clock's timer thread may fire a little late (x10 in cluster seconds)
        assert re.fullmatch(
            r'Successfully pulled image "example.com/app:1" in (2\d(\.\d+)?s) '
            r"\(\1 including waiting\)\. Image size: 20000000 bytes\.",
            kubelet[1][1],
        ), kubelet[1][1]
        assert kubelet[2:] == [("Created", "Container created"), ("Started", "Container started")]
        assert all(
            e.involved_object.field_path == "spec.containers{app}"
            for e in events
            if e.source and e.source.component == "kubelet"
        )

        def images() -> Any:
            return api.read_node("n1").status.images

        [entry] = _wait(images, 10, "node status.images")
        assert entry.names[-1] == "example.com/app:1" and entry.size_bytes == 20_000_000

        def succeeded() -> bool:
            return api.read_namespaced_pod("web", "default").status.phase == "Succeeded"

        _wait(succeeded, 10, "pod web Succeeded after its 30 s run")
    finally:
        stop_process(proc)
