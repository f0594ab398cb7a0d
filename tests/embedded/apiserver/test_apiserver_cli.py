"""``kubesched serve`` as a process: loads manifests (creating the namespaces they use), writes a
kubeconfig, stops on SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml
from process_support import stop_process

SNAPSHOT = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: team-a}
spec:
  containers: [{name: c, image: nginx}]
"""


def test_serve_command(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(SNAPSHOT)
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kubesched.cli.serve import serve; serve()",
            "-f",
            str(snap),
            "--port",
            "0",
            "--write-kubeconfig",
            str(kc),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(300):  # at most ~30 s for the interpreter to start and listen
            if kc.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert kc.exists(), proc.stderr.read() if proc.stderr else ""
        config = yaml.safe_load(kc.read_text())
        assert config["current-context"] == "kubesched"
        url = config["clusters"][0]["cluster"]["server"]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/api/v1/pods", timeout=10) as resp:
            pods = json.loads(resp.read())
        assert pods["kind"] == "PodList"
        assert [p["metadata"]["name"] for p in pods["items"]] == ["web", "api"]
        # the namespace the file's objects use without declaring it is created
        with urllib.request.urlopen(url + "/api/v1/namespaces/team-a", timeout=10) as resp:
            assert json.loads(resp.read())["status"] == {"phase": "Active"}
        with urllib.request.urlopen(url + "/api/v1/nodes", timeout=10) as resp:
            assert [n["metadata"]["name"] for n in json.loads(resp.read())["items"]] == ["n1"]
    finally:
        stop_process(proc)
    assert proc.returncode == 0
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert f"serving the embedded cluster (5 Namespace, 1 Node, 2 Pod) at {url}" in err
