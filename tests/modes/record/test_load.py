"""``kubesched load`` against ``kubesched serve``: pods created at their (scaled) arrival times in
labelled namespaces, deleted when their run time ends; Ctrl-C stops creating and removes what was
created, unless ``--keep``."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kubernetes")

from record_support import load_command, serve_kubelet  # noqa: E402
from run_support import kubesched_env, wait_for  # noqa: E402
from serve_support import ServeProcess  # noqa: E402

from kubesched.testing import node_manifest  # noqa: E402

IMAGE = "example.com/team/app:1"
CATALOGUE = {
    "images": [
        {
            "name": IMAGE,
            "class": "cpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": "app", "size_bytes": 10_000_000}],
        },
        {
            "name": "example.com/team/gpu:1",
            "class": "gpu",
            "source": "test",
            "confidence": "derived",
            "layers": [{"id": "gpu", "size_bytes": 10_000_000}],
        },
    ]
}


def _setup(tmp: Path, pods: list[dict[str, Any]]) -> tuple[ServeProcess, Path]:
    """``kubesched serve --kubelet`` (default kubelet settings, clock 10x) on one node, and the
    trace of ``pods`` on it in ``tmp/trace.yaml``."""
    nodes = [node_manifest("n0", cpu="8", memory="16Gi")]
    (tmp / "trace.yaml").write_text(yaml.safe_dump({"nodes": nodes, "pods": pods}))
    return serve_kubelet(tmp, nodes, CATALOGUE, {}, 10)


def _load(tmp: Path, kc: Path, *args: str) -> list[str]:
    return load_command(tmp / "trace.yaml", kc, tmp / "images.yaml", tmp / "report", *args)


def test_load_binds_nothing_itself_and_ctrl_c_removes_what_it_created(tmp_path: Path) -> None:
    """No scheduler runs: the pods stay Pending. Two arrive at once, the third only after 100 trace
    seconds (10 s of wall time at --speed 10): Ctrl-C before it comes removes the two and the
    namespace, and the third is never created. A run time is annotated exactly (``1234567.5``)."""
    from kubernetes import client, config

    pods = [
        {"name": "a", "arrival": 0, "duration": 1234567.5, "cpu": "1", "image": IMAGE},
        {"name": "b", "arrival": 0, "duration": None, "cpu": "1", "image": IMAGE},
        {"name": "c", "arrival": 100, "duration": 30, "cpu": "1", "image": IMAGE},
    ]
    serve, kc = _setup(tmp_path, pods)
    try:
        api = client.CoreV1Api(config.new_client_from_config(str(kc)))
        proc = subprocess.Popen(
            _load(tmp_path, kc, "--speed", "10", "--namespace-prefix", "t-"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=kubesched_env(),
        )
        created = wait_for(
            lambda: (
                api.list_namespaced_pod("t-default").items
                if len(api.list_namespaced_pod("t-default").items) == 2
                else None
            ),
            30,
            "two pods",
        )
        run_id = created[0].metadata.labels["kubesched.io/load"]
        assert {
            p.metadata.name: (p.metadata.labels, p.metadata.annotations, p.spec.scheduler_name)
            for p in created
        } == {
            "a": (
                {"kubesched.io/load": run_id},
                {"kubesched.io/run-seconds": "1234567.5"},
                "default-scheduler",
            ),
            "b": ({"kubesched.io/load": run_id}, None, "default-scheduler"),
        }
        assert api.read_namespace("t-default").metadata.labels == {"kubesched.io/load": run_id}
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopping: no more pods are created; removing what was created" in err
        assert api.list_pod_for_all_namespaces(label_selector="kubesched.io/load").items == []
        assert [n.metadata.name for n in api.list_namespace().items if n.metadata.name.startswith("t-")] == []
        report = json.loads((tmp_path / "report" / "report.json").read_text())
        [run] = report["runs"]
        assert (run["scheduler"], run["pods"], run["scheduled"]) == ("default-scheduler", 2, 0)
    finally:
        serve.stop()


def test_load_deletes_pods_when_their_run_time_ends(tmp_path: Path) -> None:
    """Pods bound at once (spec.nodeName in the trace's template) run 20 trace seconds, end
    (Succeeded) and are deleted; the report counts them; --keep leaves the namespace."""
    from kubernetes import client, config

    template = {
        "spec": {
            "nodeName": "n0",
            "containers": [{"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": "1"}}}],
        }
    }
    pods = [{"name": "p", "arrival": 0, "duration": 20, "count": 2, "template": template}]
    serve, kc = _setup(tmp_path, pods)
    try:
        api = client.CoreV1Api(config.new_client_from_config(str(kc)))
        done = subprocess.run(
            _load(tmp_path, kc, "--speed", "10", "--keep", "--scheduler-name", "nobody", "--timeout", "60"),
            capture_output=True,
            text=True,
            timeout=120,
            env=kubesched_env(),
        )
        assert done.returncode == 0, done.stderr
        assert api.list_namespaced_pod("load-default").items == []
        assert api.read_namespace("load-default").metadata.labels["kubesched.io/load"]
        [run] = json.loads((tmp_path / "report" / "report.json").read_text())["runs"]
        assert (run["scheduler"], run["pods"]) == ("nobody", 2)
        assert run["startupLatencySeconds"] is not None
    finally:
        serve.stop()
