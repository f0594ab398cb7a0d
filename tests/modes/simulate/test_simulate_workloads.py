"""``kubesched simulate`` expands workloads without pods (a Deployment, a DaemonSet, a Job, a
StatefulSet) into the pods their controllers would create, schedules them with the rest, and shows
them in the output and ``--write-snapshot``; ``--no-controllers`` leaves them alone."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}
status:
  allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}
  capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
"""
    for i in range(1, 4)
)
WORKLOADS = """---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: agent, resources: {requests: {cpu: 100m}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 50
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 300m}}}]
"""
UNFIT = (
    "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)


def _run(*args: str) -> str:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def test_a_50_replica_deployment_and_a_daemon_set_are_expanded_and_scheduled(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(NODES + WORKLOADS)
    out = _run(
        "simulate",
        "-f",
        str(snap),
        "--seed",
        "1",
        "--no-headers",
        "--write-snapshot",
        str(tmp_path / "after.yaml"),
    )
    rows = [line.split(None, 3) for line in out.splitlines()]
    agents = [r for r in rows if r[0].startswith("default/agent-")]
    web = [r for r in rows if r[0].startswith("default/web-")]
    assert sorted(r[1] for r in agents) == ["n1", "n2", "n3"] and {r[2] for r in agents} == {"Scheduled"}
    assert len(web) == 50
    # 4000m per node: 100m for the agent, 13 x 300m for web pods
    assert sum(r[2] == "Scheduled" for r in web) == 39
    assert [r[3] for r in web if r[2] == "Unschedulable"] == [UNFIT] * 11
    after = list(yaml.safe_load_all((tmp_path / "after.yaml").read_text()))
    [rs] = [o for o in after if o["kind"] == "ReplicaSet"]
    pods = [o for o in after if o["kind"] == "Pod"]
    assert len(pods) == 53
    web_pods = [p for p in pods if p["metadata"]["name"].startswith("web-")]
    assert {p["metadata"]["ownerReferences"][0]["name"] for p in web_pods} == {rs["metadata"]["name"]}
    assert all(p["metadata"]["name"].startswith(rs["metadata"]["name"] + "-") for p in web_pods)
    agent = next(p for p in pods if p["metadata"]["name"].startswith("agent-"))
    assert agent["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [agent["spec"]["nodeName"]]}
                ]
            }
        ]
    }
    # the same input and seed give the same names and placements
    assert _run("simulate", "-f", str(snap), "--seed", "1", "--no-headers") == out


def test_no_controllers_keeps_workloads_without_pods(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(NODES + WORKLOADS)
    out = _run("simulate", "-f", str(snap), "--no-controllers", "-o", "name")
    assert out == ""


def test_a_stateful_set_and_a_job_are_expanded(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(
        NODES
        + """---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: default}
spec:
  completions: 4
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
"""
    )
    names = _run("simulate", "-f", str(snap), "-o", "name").split()
    assert sorted(n for n in names if n.startswith("pod/db-")) == ["pod/db-0", "pod/db-1", "pod/db-2"]
    assert len([n for n in names if n.startswith("pod/batch-")]) == 2  # parallelism
