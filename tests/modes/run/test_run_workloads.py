"""Workloads on ``kubesched serve --kubelet`` scheduled by ``kubesched run``, driven through kubectl
and the official client: a Deployment of 50 replicas converges, scales, rolls out a new image,
and survives a stopped node (its pods evicted after their tolerations and recreated elsewhere).
``--speed`` keeps upstream's timings (50 s node grace, 300 s tolerations) short."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubectl_support import kubectl, requires_kubectl
from kubectl_support import ok as _ok
from run_support import free_port, kubesched_command, kubesched_env, wait_for
from serve_support import ServeProcess

kubernetes = pytest.importorskip("kubernetes")
pytestmark = requires_kubectl

SPEED = 40
NODES = "".join(
    f"""\
---
apiVersion: v1
kind: Node
metadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}
status:
  allocatable: {{cpu: "16", memory: 64Gi, pods: "110"}}
  capacity: {{cpu: "16", memory: 64Gi, pods: "110"}}
"""
    for i in range(1, 5)
)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "nodes.yaml").write_text(NODES)
    kc = tmp_path / "kubeconfig"
    serve = ServeProcess(
        tmp_path,
        "-f",
        str(tmp_path / "nodes.yaml"),
        "--kubelet",
        "--speed",
        str(SPEED),
        "--write-kubeconfig",
        str(kc),
    )
    run: subprocess.Popen[bytes] | None = None
    try:
        serve.wait_ready()
        log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 - closed below
        run = subprocess.Popen(
            kubesched_command(
                "run", "--kubeconfig", str(kc), "--secure-port", "0", "--port", str(free_port())
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=kubesched_env(),
        )
        yield kc
    finally:
        if run is not None:
            run.kill()
            run.wait(10)
        serve.stop()


def _kubectl(kc: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return kubectl(kc, *args, timeout=timeout)


def test_deployment_scale_rollout_and_a_stopped_node(cluster: Path) -> None:
    from kubernetes import client, config

    kc = cluster
    apps = client.AppsV1Api(config.new_client_from_config(str(kc)))
    core = client.CoreV1Api(apps.api_client)
    assert (
        _ok(_kubectl(kc, "create", "deployment", "web", "--image=nginx", "--replicas=50"))
        == "deployment.apps/web created\n"
    )
    out = _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=60s"))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'
    d = apps.read_namespaced_deployment("web", "default")
    assert (d.status.replicas, d.status.updated_replicas, d.status.available_replicas) == (50, 50, 50)
    pods = core.list_namespaced_pod("default").items
    assert len(pods) == 50 and all(p.spec.node_name for p in pods)
    [rs] = apps.list_namespaced_replica_set("default").items
    assert rs.metadata.name == f"web-{rs.metadata.labels['pod-template-hash']}"
    assert {p.metadata.owner_references[0].name for p in pods} == {rs.metadata.name}

    assert _ok(_kubectl(kc, "scale", "deployment", "web", "--replicas=60")) == "deployment.apps/web scaled\n"
    _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=60s"))
    assert apps.read_namespaced_deployment_scale("web", "default").status.replicas == 60

    assert (
        _ok(_kubectl(kc, "set", "image", "deployment/web", "nginx=nginx:1.27"))
        == "deployment.apps/web image updated\n"
    )
    out = _ok(_kubectl(kc, "rollout", "status", "deployment/web", "--timeout=120s"))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'
    rs_list = sorted(
        apps.list_namespaced_replica_set("default").items,
        key=lambda r: r.metadata.annotations["deployment.kubernetes.io/revision"],
    )
    assert [(r.spec.replicas, r.spec.template.spec.containers[0].image) for r in rs_list] == [
        (0, "nginx"),
        (60, "nginx:1.27"),
    ]

    def web_pods_on(node: str) -> list[str]:
        return [
            p.metadata.name
            for p in core.list_namespaced_pod("default").items
            if p.spec.node_name == node and p.metadata.deletion_timestamp is None
        ]

    on_n1 = web_pods_on("n1")
    assert on_n1
    _ok(_kubectl(kc, "annotate", "node", "n1", "kubesched.io/kubelet-stopped=true"))
    # Unknown after 50-60 s, evicted 300 s later, replaced on the other nodes
    wait_for(lambda: not web_pods_on("n1"), (60 + 300) / SPEED + 20, "the pods of n1 evicted")

    def converged() -> bool:
        d = apps.read_namespaced_deployment("web", "default")
        return d.status.available_replicas == 60

    wait_for(converged, 30, "60 available replicas again")
    live = [p for p in core.list_namespaced_pod("default").items if p.metadata.deletion_timestamp is None]
    assert len(live) == 60 and {p.spec.node_name for p in live} <= {"n2", "n3", "n4"}
    assert not set(on_n1) & {p.metadata.name for p in live}


WORKLOADS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  completions: 3
  parallelism: 2
  template:
    metadata:
      annotations: {kubesched.io/run-seconds: "20"}
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: standard
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def test_job_daemon_set_and_stateful_set_converge(cluster: Path, tmp_path: Path) -> None:
    from kubernetes import client, config

    kc = cluster
    api = config.new_client_from_config(str(kc))
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    manifest = tmp_path / "workloads.yaml"
    manifest.write_text(WORKLOADS)
    assert _ok(_kubectl(kc, "create", "-f", str(manifest))).splitlines() == [
        "job.batch/batch created",
        "daemonset.apps/agent created",
        "storageclass.storage.k8s.io/standard created",
        "statefulset.apps/db created",
    ]
    assert _ok(_kubectl(kc, "create", "job", "hello", "--image=busybox")) == "job.batch/hello created\n"

    out = _ok(_kubectl(kc, "rollout", "status", "daemonset/agent", "--timeout=60s"))
    assert out.splitlines()[-1] == 'daemon set "agent" successfully rolled out'
    agents = [p for p in core.list_namespaced_pod("default", label_selector="app=agent").items]
    assert sorted(p.spec.node_name for p in agents) == ["n1", "n2", "n3", "n4"]

    out = _ok(_kubectl(kc, "rollout", "status", "statefulset/db", "--timeout=90s"))
    # kubectl's message for RollingUpdate with the defaulted partition 0, as against kube-apiserver
    assert out.splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    claims = core.list_namespaced_persistent_volume_claim("default").items
    assert sorted((c.metadata.name, c.status.phase) for c in claims) == [
        ("data-db-0", "Bound"),
        ("data-db-1", "Bound"),
        ("data-db-2", "Bound"),
    ]
    assert sorted(
        p.metadata.name for p in core.list_namespaced_pod("default", label_selector="app=db").items
    ) == ["db-0", "db-1", "db-2"]

    out = _ok(_kubectl(kc, "wait", "--for=condition=complete", "job/batch", "--timeout=60s"))
    assert out == "job.batch/batch condition met\n"
    job = batch.read_namespaced_job("batch", "default")
    assert (job.status.succeeded, job.status.failed) == (3, None)
    hello = batch.read_namespaced_job("hello", "default")
    wait_for(lambda: batch.read_namespaced_job("hello", "default").status.active == 1, 30, "hello active")
    assert hello.spec.completions == 1

    assert _ok(_kubectl(kc, "delete", "daemonset", "agent")) == 'daemonset.apps "agent" deleted\n'
    wait_for(
        lambda: not core.list_namespaced_pod("default", label_selector="app=agent").items,
        30,
        "the daemon pods collected",
    )
    assert apps.list_namespaced_daemon_set("default").items == []
