"""``kubectl rollout`` against ``kubesched serve``'s API server with the workload controllers:
a Deployment's history, undo, pause and resume, and a rollout that exceeds its progress deadline;
a StatefulSet's ControllerRevisions (``kubectl get controllerrevisions``, ``rollout history``,
``rollout undo``). The test plays the kubelet (pods turn Running and Ready through the store)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from kubectl_support import kubectl, requires_kubectl, served_api
from kubectl_support import ok as _ok

from kubesched.embedded.apiserver import ServerHandle

T = TypeVar("T")
HASH = "controller-revision-hash"
pytestmark = requires_kubectl


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerHandle, Path]]:
    with served_api(tmp_path, bookmark_interval=0.2, workload_controllers=True) as (handle, kubeconfig):
        stop = threading.Event()

        def kubelet() -> None:  # every pod of an image without "broken" turns Running and Ready
            while not stop.wait(0.05):
                for pod in handle.cluster.list("Pod").items:
                    status = pod.get("status") or {}
                    image = pod["spec"]["containers"][0]["image"]
                    if status.get("phase") == "Running" or "broken" in image:
                        continue
                    if pod["metadata"].get("deletionTimestamp"):
                        continue
                    try:
                        handle.cluster.patch_status(
                            "Pod",
                            pod["metadata"]["namespace"],
                            pod["metadata"]["name"],
                            {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                        )
                    except Exception:  # noqa: BLE001 - a pod deleted meanwhile
                        continue

        thread = threading.Thread(target=kubelet, daemon=True)
        thread.start()
        try:
            yield handle, kubeconfig
        finally:
            stop.set()
            thread.join(5)


def _kubectl(
    kubeconfig: Path, *args: str, timeout: float = 60, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return kubectl(kubeconfig, *args, timeout=timeout, input=input)


def _eventually(read: Callable[[], T], expected: T, timeout: float = 10) -> None:
    """``read()`` equals ``expected`` within ``timeout`` seconds (the controllers run asynchronously)."""
    deadline = time.monotonic() + timeout
    while (got := read()) != expected:
        assert time.monotonic() < deadline, got
        time.sleep(0.05)


def _history(*revisions: tuple[int, str]) -> str:
    rows = "".join(f"{rev:<10}{cause}\n" for rev, cause in revisions)
    return f"deployment.apps/web \nREVISION  CHANGE-CAUSE\n{rows}\n"


def test_rollout_history_undo_pause_and_resume(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    _ok(_kubectl(kc, "create", "deployment", "web", "--image=nginx", "--replicas=3"))
    _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    [rs1] = server.cluster.list("ReplicaSet", "default").items
    events = _ok(_kubectl(kc, "describe", "deployment", "web")).split("Events:\n")[1].splitlines()[2:]
    assert [line.split(None, 4)[::4] for line in events] == [
        ["Normal", f"Scaled up replica set {rs1['metadata']['name']} from 0 to 3"]
    ]
    assert [line.split(None, 4)[1:4:2] for line in events] == [["ScalingReplicaSet", "deployment-controller"]]
    _ok(_kubectl(kc, "set", "image", "deployment/web", "nginx=nginx:1.27"))
    _ok(_kubectl(kc, "annotate", "deployment/web", "kubernetes.io/change-cause=to 1.27"))
    _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    assert _ok(_kubectl(kc, "rollout", "history", "deployment/web")) == _history(
        (1, "<none>"), (2, "to 1.27")
    )

    assert _ok(_kubectl(kc, "rollout", "undo", "deployment/web")) == "deployment.apps/web rolled back\n"
    out = _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'
    assert _ok(_kubectl(kc, "rollout", "history", "deployment/web")) == _history(
        (2, "to 1.27"), (3, "<none>")
    )
    d = server.cluster.get("Deployment", "default", "web")
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    rs_by_image = {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs
        for rs in server.cluster.list("ReplicaSet", "default").items
    }
    assert len(rs_by_image) == 2
    assert rs_by_image["nginx"]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert (rs_by_image["nginx"]["spec"]["replicas"], rs_by_image["nginx:1.27"]["spec"]["replicas"]) == (3, 0)
    out = _ok(_kubectl(kc, "rollout", "history", "deployment/web", "--revision=3"))
    assert out.splitlines()[0] == "deployment.apps/web with revision #3"
    assert "    Image:\tnginx\n" in out

    out = _kubectl(kc, "rollout", "undo", "deployment/web", "--to-revision=9")
    assert (out.returncode, out.stderr) == (1, "error: unable to find specified revision 9 in history\n")
    assert _ok(_kubectl(kc, "rollout", "pause", "deployment/web")) == "deployment.apps/web paused\n"
    out = _kubectl(kc, "rollout", "undo", "deployment/web")
    assert out.returncode == 1
    assert out.stderr.startswith("error: you cannot rollback a paused deployment; resume it first")
    _ok(_kubectl(kc, "set", "image", "deployment/web", "nginx=nginx:1.28"))
    _ok(_kubectl(kc, "scale", "deployment/web", "--replicas=4"))

    def progressing() -> tuple[str, str, str]:
        d = server.cluster.get("Deployment", "default", "web")
        [cond] = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
        return cond["status"], cond["reason"], cond["message"]

    _eventually(progressing, ("Unknown", "DeploymentPaused", "Deployment is paused"))
    _eventually(
        lambda: sorted(rs["spec"]["replicas"] for rs in server.cluster.list("ReplicaSet").items), [0, 4]
    )
    assert _ok(_kubectl(kc, "rollout", "resume", "deployment/web")) == "deployment.apps/web resumed\n"
    _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    assert _ok(_kubectl(kc, "rollout", "history", "deployment/web")) == _history(
        (2, "to 1.27"), (3, "<none>"), (4, "<none>")
    )
    pods = [
        p for p in server.cluster.list("Pod", "default").items if not p["metadata"].get("deletionTimestamp")
    ]
    assert sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["nginx:1.28"] * 4


def test_rollout_status_reports_an_exceeded_progress_deadline(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    _ok(_kubectl(kc, "create", "deployment", "web", "--image=nginx", "--replicas=2"))
    _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    _ok(_kubectl(kc, "patch", "deployment/web", "-p", '{"spec": {"progressDeadlineSeconds": 2}}'))
    _ok(_kubectl(kc, "set", "image", "deployment/web", "nginx=nginx:broken"))
    out = _kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s")
    assert out.returncode == 1
    assert out.stderr == 'error: deployment "web" exceeded its progress deadline\n'
    d = server.cluster.get("Deployment", "default", "web")
    [cond] = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
    new_rs = [
        rs
        for rs in server.cluster.list("ReplicaSet", "default").items
        if rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:broken"
    ][0]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False",
        "ProgressDeadlineExceeded",
        f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.',
    )
    # a rollback to the working revision recovers
    _ok(_kubectl(kc, "rollout", "undo", "deployment/web"))
    out = _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=30s"))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'


STATEFUL_SET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
"""


def _apply(kc: Path, manifest: str) -> str:
    return _ok(_kubectl(kc, "apply", "-f", "-", input=manifest))


def _controller_revisions(kc: Path) -> list[list[str]]:
    """``kubectl get controllerrevisions`` rows without the age column."""
    out = _ok(_kubectl(kc, "get", "controllerrevisions"))
    return [line.split()[:3] for line in out.splitlines()]


def test_stateful_set_revisions_through_kubectl(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    assert _apply(kc, STATEFUL_SET) == "statefulset.apps/db created\n"
    out = _ok(_kubectl(kc, "rollout", "status", "statefulset/db", "--timeout=30s"))
    assert out.splitlines()[-1] == "partitioned roll out complete: 2 new pods have been updated..."
    [r1] = server.cluster.list("ControllerRevision", "default").items
    name1 = r1["metadata"]["name"]
    assert _controller_revisions(kc) == [
        ["NAME", "CONTROLLER", "REVISION"],
        [name1, "statefulset.apps/db", "1"],
    ]

    _ok(_kubectl(kc, "set", "image", "statefulset/db", "db=postgres:17"))
    out = _ok(_kubectl(kc, "rollout", "status", "statefulset/db", "--timeout=30s"))
    assert out.splitlines()[-1] == "partitioned roll out complete: 2 new pods have been updated..."
    name2 = next(
        r["metadata"]["name"]
        for r in server.cluster.list("ControllerRevision", "default").items
        if r["metadata"]["name"] != name1
    )
    sts = server.cluster.get("StatefulSet", "default", "db")
    assert (sts["status"]["currentRevision"], sts["status"]["updateRevision"]) == (name2, name2)
    out = _ok(_kubectl(kc, "rollout", "history", "statefulset/db"))
    assert out == "statefulset.apps/db \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"

    assert _ok(_kubectl(kc, "rollout", "undo", "statefulset/db")) == "statefulset.apps/db rolled back\n"
    _eventually(lambda: server.cluster.get("StatefulSet", "default", "db")["status"]["updateRevision"], name1)
    _ok(_kubectl(kc, "rollout", "status", "statefulset/db", "--timeout=30s"))
    assert sorted(_controller_revisions(kc)[1:], key=lambda row: row[2]) == [
        [name2, "statefulset.apps/db", "2"],
        [name1, "statefulset.apps/db", "3"],
    ]
    pods = server.cluster.list("Pod", "default").items
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert sorted(
        (p["metadata"]["name"], p["spec"]["containers"][0]["image"], p["metadata"]["labels"][HASH])
        for p in live
    ) == [("db-0", "postgres:16", name1), ("db-1", "postgres:16", name1)]


DAEMON_SET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:1"}]
"""


def test_daemon_set_revisions_through_kubectl(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    assert _apply(kc, DAEMON_SET) == "daemonset.apps/agent created\n"
    _ok(_kubectl(kc, "set", "image", "daemonset/agent", "agent=agent:2"))
    history = "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    _eventually(lambda: _ok(_kubectl(kc, "rollout", "history", "daemonset/agent")), history)
    assert _ok(_kubectl(kc, "rollout", "undo", "daemonset/agent")) == "daemonset.apps/agent rolled back\n"
    ds = server.cluster.get("DaemonSet", "default", "agent")
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "agent:1"

    def revisions() -> list[list[str]]:
        return sorted(_controller_revisions(kc)[1:], key=lambda row: row[2])

    _eventually(
        lambda: [row[1:] for row in revisions()],
        [["daemonset.apps/agent", "2"], ["daemonset.apps/agent", "3"]],
    )
    rows = revisions()
    revision_3 = server.cluster.get("ControllerRevision", "default", rows[1][0])
    assert revision_3["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "agent:1"
