"""Workload controllers in a replay (tests/fixtures/replay/workloads.yaml, kubelet as tiny.yaml:
100 MB/s, 0.5 s per layer, container start 1 s; images app-a = base 100 MB + 50 MB, app-b = base
+ 20 MB, base alone).

* Job ``batch`` (3 completions, 2 in parallel, on n1, 10 s each): two pods at 0 s pull app-b
  together (2 x 0.5 + 1.2 = 2.2 s) and start at 3.2 s, succeed at 13.2 s; the third is created
  then, finds app-b cached, starts at 14.2 s and succeeds at 24.2 s. No fourth pod.
* ReplicaSet ``web`` (3 cpu, pool=web): its pod runs on n2 from 3.5 s (app-a: 2 x 0.5 + 1.5 s);
  ``urgent`` (priority 1000, 3 cpu, n2) arrives at 20 s, preempts it and starts at 21.7 s (only
  app-b's layer: 0.5 + 0.2 s); the ReplicaSet's replacement, created at 20 s, fits nowhere until
  n3 joins at 30 s and starts there at 33.5 s.
* DaemonSet ``agent``: pods on n1 and n2 at 0 s, on n3 at 30 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.config.load import load_config
from kubesched.errors import ManifestError
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.run import ConfigSpec, run_replay
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.load import load_workload
from kubesched.trace.workload import Workload

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
APPROX = {"abs": 1e-6}


@pytest.fixture(scope="module")
def catalogue() -> Any:
    return load_catalogue(FIX / "catalogue.yaml")


@pytest.fixture(scope="module")
def workload(catalogue: Any) -> Workload:
    return load_workload(FIX / "workloads.yaml", ImageAssigner(catalogue, seed=0))


@pytest.fixture(scope="module")
def result(workload: Workload, catalogue: Any) -> ReplayResult:
    spec = ConfigSpec("default-profile.yaml", load_config(FIX / "default-profile.yaml"))
    return run_replay(workload, spec, catalogue=catalogue, seed=0)


def _rows(result: ReplayResult, prefix: str) -> list[tuple[Any, ...]]:
    return [
        (t.node, t.arrival, t.bound, t.started, t.finished, t.preempted)
        for t in result.timelines
        if t.key.startswith(f"default/{prefix}")
    ]


def test_trace_loads_objects_and_node_arrivals(workload: Workload) -> None:
    assert [o["kind"] for o in workload.objects] == ["PriorityClass", "Job", "DaemonSet", "ReplicaSet"]
    assert workload.objects[1]["metadata"]["namespace"] == "default"
    assert dict(workload.node_arrivals) == {"n3": 30.0}
    assert [p.key for p in workload.pods] == ["default/urgent"]


def test_job_runs_its_completions(result: ReplayResult) -> None:
    rows = _rows(result, "batch-")
    assert rows == [
        ("n1", 0.0, 0.0, pytest.approx(3.2, **APPROX), pytest.approx(13.2, **APPROX), False),
        ("n1", 0.0, 0.0, pytest.approx(3.2, **APPROX), pytest.approx(13.2, **APPROX), False),
        (
            "n1",
            pytest.approx(13.2, **APPROX),
            pytest.approx(13.2, **APPROX),
            pytest.approx(14.2, **APPROX),
            pytest.approx(24.2, **APPROX),
            False,
        ),
    ]


def test_replicaset_replaces_its_preempted_pod_on_the_node_that_joins(result: ReplayResult) -> None:
    assert _rows(result, "web-") == [
        ("n2", 0.0, 0.0, 3.5, 20.0, True),
        ("n3", 20.0, 30.0, 33.5, None, False),
    ]
    [urgent] = _rows(result, "urgent")
    assert urgent == ("n2", 20.0, 20.0, pytest.approx(21.7, **APPROX), None, False)


def test_daemonset_gets_a_pod_on_every_node_including_the_late_one(result: ReplayResult) -> None:
    rows = _rows(result, "agent-")
    assert sorted((r[0], r[1], r[2]) for r in rows) == [
        ("n1", 0.0, 0.0),
        ("n2", 0.0, 0.0),
        ("n3", 30.0, 30.0),
    ]


def test_pod_counts(result: ReplayResult) -> None:
    # the trace's pod first, then the controllers' pods in creation order
    assert result.timelines[0].key == "default/urgent"
    assert len(result.timelines) == 9
    assert sum(1 for t in result.timelines if t.bound is None) == 0


def test_workload_image_missing_from_the_catalogue(catalogue: Any, tmp_path: Path) -> None:
    text = (FIX / "workloads.yaml").read_text().replace("example.com/base:1", "example.com/missing:1")
    (tmp_path / "w.yaml").write_text(text)
    wl = load_workload(tmp_path / "w.yaml", ImageAssigner(catalogue, seed=0))
    with pytest.raises(ManifestError) as err:
        run_replay(wl, None, catalogue=catalogue)
    assert str(err.value) == (
        "DaemonSet default/agent: spec.template.spec.containers[0].image: image 'example.com/missing:1' "
        f"is not in the image catalogue {catalogue.where}"
    )


def test_objects_of_kinds_a_trace_cannot_hold(catalogue: Any, tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(
        "nodes: [{name: n1, cpu: '1', memory: 1Gi}]\n"
        "objects: [{apiVersion: v1, kind: Pod, metadata: {name: p}}]\n"
    )
    with pytest.raises(ManifestError) as err:
        load_workload(tmp_path / "w.yaml", ImageAssigner(catalogue, seed=0))
    assert str(err.value) == (
        f"{tmp_path / 'w.yaml'}: objects[0].kind: 'Pod' is not a kind a trace's objects may hold "
        "(pods and nodes have their own lists)"
    )


FAILING_JOB = """
horizon: 100
kubelet: {containerStartSeconds: 1.0, layerLatencySeconds: 0.5, pullFixedSeconds: 0.0,
          nodeBandwidthBytesPerSecond: 100000000, decompressBytesPerSecond: 1000000000000}
nodes: [{name: n1, cpu: "4", memory: 8Gi}]
objects:
  - apiVersion: batch/v1
    kind: Job
    metadata: {name: flaky}
    spec:
      backoffLimit: 2
      POLICY
      template:
        metadata:
          annotations: {kubesched.io/run-seconds: "5", kubesched.io/exit-code: "3"}
        spec:
          restartPolicy: Never
          containers: [{name: main, image: example.com/app-b:1, resources: {requests: {cpu: "1"}}}]
"""


@pytest.mark.parametrize(
    ("policy", "pods"),
    [
        # exit code 3 counts: backoffLimit 2 -> three pods fail, one after the other (the image
        # cached, a replacement starts 1 s after the failure), then the Job has failed
        ("", [(3.2, 8.2), (9.2, 14.2), (15.2, 20.2)]),
        # FailJob on exit code 3: the first failure ends the Job
        (
            "podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [3]}}]}",
            [(3.2, 8.2)],
        ),
    ],
)
def test_failing_job_pods_and_pod_failure_policy(
    catalogue: Any, tmp_path: Path, policy: str, pods: list[tuple[float, float]]
) -> None:
    (tmp_path / "t.yaml").write_text(FAILING_JOB.replace("POLICY", policy))
    wl = load_workload(tmp_path / "t.yaml", ImageAssigner(catalogue, seed=0))
    result = run_replay(wl, None, catalogue=catalogue, seed=0)
    assert [(t.started, t.finished) for t in result.timelines] == [
        (pytest.approx(a, **APPROX), pytest.approx(b, **APPROX)) for a, b in pods
    ]


JOB_TRACE = """\
nodes:
  - {name: n1, cpu: "4", memory: 8Gi}
  - {name: n2, cpu: "4", memory: 8Gi, arrival: 30}
pods: []
objects:
  - apiVersion: batch/v1
    kind: Job
    metadata: {name: batch}
    spec:
      completions: 3
      parallelism: 2
      template:
        metadata: {annotations: {kubesched.io/run-seconds: "10"}}
        spec:
          restartPolicy: Never
          containers: [{name: main, image: redis:latest, resources: {requests: {cpu: "1"}}}]
"""


def test_replay_line_counts_the_workloads_whose_pods_it_replays(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    trace = tmp_path / "trace.yaml"
    trace.write_text(JOB_TRACE)
    config = Path(__file__).resolve().parents[3] / "examples" / "replay" / "upstream-default.yaml"
    r = CliRunner().invoke(
        main, ["replay", "--trace", str(trace), "--config", str(config), "--out", str(tmp_path / "out")]
    )
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0] == f"replaying 0 pods and 1 workload (1 Job) on 2 nodes from {trace}"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(run["pods"], run["scheduled"]) for run in report["runs"]] == [(3, 3)]


def test_replay_line_of_the_fixture_counts_owners_not_owned(workload: Workload) -> None:
    from kubesched.cli.replay import replaying_line

    owned = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}],
        },
    }
    more = Workload(
        workload.nodes,
        workload.pods,
        workload.horizon,
        description="w.yaml",
        objects=[*workload.objects, owned],
    )
    assert replaying_line(more) == (
        f"replaying {len(workload.pods)} pods and 3 workloads (1 DaemonSet, 1 Job, 1 ReplicaSet) on "
        f"{len(workload.nodes)} nodes from w.yaml"
    )
    bare = Workload(workload.nodes, workload.pods, workload.horizon, description="w.yaml")
    assert (
        replaying_line(bare)
        == f"replaying {len(workload.pods)} pods on {len(workload.nodes)} nodes from w.yaml"
    )
