"""``kubesched record``: the log (gzip members per flush, segments, a crash loses only the flush
being written, a restart adds a segment), what is kept out of it, and a recording of ``kubesched
serve --kubelet`` through the kube client (nodes with ``status.images``, pods, owners, image Events)."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.modes.record.log import RecordingError, RecordWriter, read_records, segments
from kubesched.modes.record.recorder import recorded_kinds, sanitize


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_log_members_segments_crash_and_restart(tmp_path: Path) -> None:
    clock = _Clock()
    w = RecordWriter(tmp_path / "rec", segment_seconds=60, clock=clock)
    w.append({"op": "session", "n": 0})
    w.append({"op": "add", "n": 1})
    assert w.flush() == 2 and w.flush() == 0
    w.append({"op": "add", "n": 2})
    w.flush()
    clock.t += 61  # the next flush opens segment 2
    w.append({"op": "add", "n": 3})
    w.close()
    w.close()
    assert [p.name for p in segments(tmp_path / "rec")] == [
        "segment-000001.jsonl.gz",
        "segment-000002.jsonl.gz",
    ]
    assert (w.records, w.members) == (4, 3)
    # gzip reads the members as one stream
    assert gzip.decompress((tmp_path / "rec" / "segment-000001.jsonl.gz").read_bytes()).count(b"\n") == 3
    assert [r["n"] for r in read_records(tmp_path / "rec")] == [0, 1, 2, 3]
    # a crash in the middle of a write: the member cut short is skipped, the rest is kept
    first = tmp_path / "rec" / "segment-000001.jsonl.gz"
    data = first.read_bytes()
    first.write_bytes(data[:-7])
    problems: list[str] = []
    assert [r["n"] for r in read_records(tmp_path / "rec", problems)] == [0, 1, 3]
    assert problems == [
        "segment-000001.jsonl.gz: member 2 is cut short (a write interrupted); its records are skipped"
    ]
    # a restart adds a segment after the last one and never writes into the old ones
    w2 = RecordWriter(tmp_path / "rec", clock=clock)
    w2.append({"op": "session", "n": 4})
    w2.close()
    assert [p.name for p in w2.paths] == ["segment-000003.jsonl.gz"]
    assert [r["n"] for r in read_records(tmp_path / "rec")] == [0, 1, 3, 4]
    with pytest.raises(RecordingError, match="no segment-NNNNNN.jsonl.gz files"):
        list(read_records(tmp_path))
    with pytest.raises(RecordingError, match="not a directory"):
        list(read_records(tmp_path / "missing"))


def test_sanitize_keeps_credentials_out() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "1"},
        },
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "env": [{"name": "TOKEN", "value": "s3cret"}],
                    "envFrom": [{"secretRef": {"name": "x"}}],
                }
            ],
            "initContainers": [{"name": "i", "image": "j", "env": [{"name": "A", "value": "b"}]}],
        },
    }
    out = sanitize("Pod", pod)
    assert out == {
        "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"keep": "1"}},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "initContainers": [{"name": "i", "image": "j"}],
        },
    }
    assert pod["spec"]["containers"][0]["env"][0]["value"] == "s3cret"  # the input is untouched
    rs = {
        "kind": "ReplicaSet",
        "metadata": {"name": "r"},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "b"}]}]}
            },
        },
    }
    assert sanitize("ReplicaSet", rs)["spec"] == {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
    }
    assert "Secret" not in recorded_kinds() and "ConfigMap" not in recorded_kinds()
    assert recorded_kinds()[0] == "Node" and recorded_kinds()[-2:] == ["Pod", "Event"]


# ----------------------------------------------------------------------------- against serve --kubelet

kubernetes = pytest.importorskip("kubernetes")

from record_support import serve_kubelet  # noqa: E402
from run_support import wait_for  # noqa: E402
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
            "layers": [
                {"id": "app-base", "size_bytes": 15_000_000},
                {"id": "app-top", "size_bytes": 5_000_000},
            ],
        }
    ]
}
# 20 MB at 10 MB/s: 2 s of pull, 1 s of container start (cluster seconds; --speed 10)
KUBELET = {
    "decompressBytesPerSecond": 10_000_000,
    "layerLatencySeconds": 0.0,
    "pullFixedSeconds": 0.0,
    "containerStartSeconds": 1.0,
}


def _serve(tmp: Path) -> tuple[ServeProcess, Path]:
    nodes = [node_manifest(f"n{i}", cpu="4", memory="16Gi") for i in range(2)]
    return serve_kubelet(tmp, nodes, CATALOGUE, KUBELET, 10)


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": IMAGE,
                    "env": [{"name": "PASSWORD", "value": "hunter2"}],
                    "resources": {"requests": {"cpu": "1"}},
                }
            ]
        },
    }


def test_record_serve_kubelet(tmp_path: Path) -> None:
    from kubernetes import client, config

    from kubesched.client.kube import KubeClusterClient
    from kubesched.modes.record.recorder import Recorder

    serve, kc = _serve(tmp_path)
    rec = tmp_path / "rec"
    try:
        api = client.CoreV1Api(config.new_client_from_config(str(kc)))
        for ns in ("team", "other"):
            api.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        kube = KubeClusterClient.from_kubeconfig(str(kc), qps=50, burst=100)
        recorder = Recorder(kube, RecordWriter(rec), namespace="team", source=str(kc))
        recorder.start()
        for name, ns, node in (("a", "team", "n0"), ("b", "team", "n0"), ("c", "other", "n1")):
            api.create_namespaced_pod(ns, _pod(name, ns))
            api.create_namespaced_binding(
                ns,
                {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}},
                _preload_content=False,
            )

        def running() -> bool:
            pods = api.list_pod_for_all_namespaces().items
            return len(pods) == 3 and all(p.status.phase == "Running" for p in pods)

        wait_for(running, 30, "pods Running")
        wait_for(
            lambda: any(i.names and IMAGE in i.names for i in api.read_node("n0").status.images or []),
            10,
            "n0 lists the image",
        )
        time.sleep(0.5)
        api.delete_namespaced_pod("b", "team", grace_period_seconds=0)
        wait_for(lambda: len(api.list_namespaced_pod("team").items) == 1, 10, "b deleted")
        time.sleep(0.5)
        recorder.stop()
        kube.close()
    finally:
        serve.stop()
    records = list(read_records(rec))
    assert records[0]["op"] == "session" and records[0]["namespace"] == "team"
    assert records[0]["kinds"] == recorded_kinds()
    assert records[1]["op"] == "synced" or any(r["op"] == "synced" for r in records)
    text = json.dumps(records)
    assert "hunter2" not in text and '"Secret"' not in text and "managedFields" not in text
    kinds = {r.get("kind") for r in records if r["op"] in ("add", "update", "delete")}
    assert kinds <= set(recorded_kinds())
    pods = [r for r in records if r.get("kind") == "Pod"]
    assert {r["object"]["metadata"]["namespace"] for r in pods} == {"team"}
    assert [(r["op"], r["object"]["metadata"]["name"]) for r in pods if r["op"] != "update"] == [
        ("add", "a"),
        ("add", "b"),
        ("delete", "b"),
    ]
    last_a = [r["object"] for r in pods if r["object"]["metadata"]["name"] == "a"][-1]
    assert last_a["spec"]["nodeName"] == "n0" and last_a["status"]["phase"] == "Running"
    events = [r["object"] for r in records if r.get("kind") == "Event"]
    reasons = sorted((e["regarding"]["name"], e["reason"]) for e in events)
    assert reasons == [("a", "Pulled"), ("a", "Pulling"), ("b", "Pulled"), ("b", "Pulling")]
    pulled = next(e for e in events if e["reason"] == "Pulled" and e["regarding"]["name"] == "a")
    assert pulled["note"].startswith(f'Successfully pulled image "{IMAGE}" in ')
    assert pulled["note"].endswith("Image size: 20000000 bytes.")
    nodes = [r for r in records if r.get("kind") == "Node"]
    assert [r["object"]["metadata"]["name"] for r in nodes if r["op"] == "add"] == ["n0", "n1"]
    n0 = [r["object"] for r in nodes if r["object"]["metadata"]["name"] == "n0"][-1]
    assert [i["sizeBytes"] for i in n0["status"]["images"] if IMAGE in i["names"]] == [20_000_000]
    # no two consecutive records of one node differ by heartbeats only
    by_node: dict[str, list[Any]] = {}
    for r in nodes:
        by_node.setdefault(r["object"]["metadata"]["name"], []).append(r["object"]["status"].get("images"))
    assert all(len(v) <= 4 for v in by_node.values()), {k: len(v) for k, v in by_node.items()}


def test_record_cli_stops_on_sigint_and_resumes(tmp_path: Path) -> None:
    serve, kc = _serve(tmp_path)
    rec = tmp_path / "rec"
    try:
        cmd = [
            sys.executable,
            "-c",
            "from kubesched.cli.main import main; main()",
            "record",
            "--kubeconfig",
            str(kc),
            "--out",
            str(rec),
            "--flush-interval",
            "0.2",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: rec.exists() and any(r["op"] == "synced" for r in _safe(rec)), 30, "the first flush")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert out.startswith("wrote ") and "segment-000001.jsonl.gz" in out, out
        done = subprocess.run([*cmd, "--duration", "1s"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "segment-000002.jsonl.gz" in done.stdout
        bad = subprocess.run([*cmd, "--duration", "soon"], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "'--duration': 'soon' is not a duration" in bad.stderr, bad.stderr
    finally:
        serve.stop()
    sessions = [r for r in read_records(rec) if r["op"] == "session"]
    assert len(sessions) == 2
    nodes = [
        r["object"]["metadata"]["name"]
        for r in read_records(rec)
        if r.get("kind") == "Node" and r["op"] == "add"
    ]
    assert nodes == ["n0", "n1", "n0", "n1"]


def _safe(rec: Path) -> list[dict[str, Any]]:
    try:
        return list(read_records(rec))
    except RecordingError:
        return []
