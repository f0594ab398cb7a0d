"""The ``churn`` and ``sleep`` ops of ``kubesched bench``: upstream's churn state machine tick by
tick, and API-mode workloads that churn and sleep through ``kubesched serve`` + ``kubesched run``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubesched.errors import NotFoundError
from kubesched.modes.bench import load_workloads
from kubesched.modes.bench.api import run_api_workload
from kubesched.modes.bench.churn import Churn
from kubesched.modes.bench.workloads import Op

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "churn-pod-"}, "spec": {}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "churn-node-"}}


class Api:
    def __init__(self, fail_deletes: bool = False) -> None:
        self.log: list[str] = []
        self.seq = 0
        self.fail_deletes = fail_deletes

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        meta = obj["metadata"]
        name = f"{meta['generateName']}{self.seq}"
        self.log.append(f"create {obj['kind']} {meta.get('namespace')}/{name}")
        return {**obj, "metadata": {**meta, "name": name}}

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        self.log.append(f"delete {kind} {namespace}/{name}")
        if self.fail_deletes:
            raise NotFoundError(f'pods "{name}" not found')


def test_create_mode_makes_one_of_each_template_per_tick_for_number_ticks() -> None:
    churn, api = Churn(4, Op("churn", count=2, templates=[POD, NODE], mode="create")), Api()
    for _ in range(4):
        churn.tick(api.create, api.delete)
    assert api.log == [
        "create Pod namespace-4/churn-pod-1",
        "create Node None/churn-node-2",
        "create Pod namespace-4/churn-pod-3",
        "create Node None/churn-node-4",
    ]
    assert churn.finished and (churn.created, churn.deleted) == (4, 0)
    assert "namespace" not in POD["metadata"]  # templates are not modified


def test_create_mode_without_number_never_finishes() -> None:
    churn, api = Churn(0, Op("churn", templates=[POD], mode="create", namespace="churn")), Api()
    for _ in range(5):
        churn.tick(api.create, api.delete)
    assert not churn.finished and api.log[-1] == "create Pod churn/churn-pod-5"


def test_recreate_mode_fills_and_empties_number_slots_round_robin() -> None:
    churn, api = Churn(1, Op("churn", count=2, templates=[POD, NODE], mode="recreate")), Api()
    for _ in range(5):
        churn.tick(api.create, api.delete)
    assert api.log == [
        "create Pod namespace-1/churn-pod-1",
        "create Node None/churn-node-2",  # slot 0
        "create Pod namespace-1/churn-pod-3",
        "create Node None/churn-node-4",  # slot 1
        "delete Pod namespace-1/churn-pod-1",
        "delete Node None/churn-node-2",  # slot 0 emptied
        "delete Pod namespace-1/churn-pod-3",
        "delete Node None/churn-node-4",  # slot 1 emptied
        "create Pod namespace-1/churn-pod-5",
        "create Node None/churn-node-6",  # slot 0 again
    ]
    assert not churn.finished and (churn.created, churn.deleted, churn.failures) == (6, 4, 0)


def test_failed_deletes_are_counted_and_forgotten() -> None:
    churn, api = Churn(1, Op("churn", count=1, templates=[POD], mode="recreate")), Api(fail_deletes=True)
    for _ in range(3):
        churn.tick(api.create, api.delete)
    assert api.log == [
        "create Pod namespace-1/churn-pod-1",
        "delete Pod namespace-1/churn-pod-1",
        "create Pod namespace-1/churn-pod-2",
    ]
    assert (churn.created, churn.deleted, churn.failures) == (2, 0, 1)


WORKLOADS = """
- name: Churn
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $initPods
  - opcode: churn
    mode: create
    number: 3
    intervalMilliseconds: 100
    templatePaths: [pod-default.yaml]
  - opcode: sleep
    duration: 800ms
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - {name: 4Nodes, threshold: null, params: {nodes: 4, initPods: 6, measurePods: 12}}
- name: Sleep
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: sleep
    duration: 1500ms
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - {name: 2Nodes, threshold: null, params: {nodes: 2, measurePods: 5}}
"""

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="API mode reads /proc")


@needs_proc
def test_api_workload_with_churn_and_sleep(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOADS)
    churn_w, sleep_w = load_workloads(path)
    r = run_api_workload(churn_w, timeout=90)
    assert r.status == "ok", r.error
    # init pods, then 3 churn pods (100 ms apart) during the 800 ms sleep, then the measured pods
    assert (r.scheduled_pods, r.churn) == (12, {"created": 3, "deleted": 0, "failed": 0})
    assert [(o["op"], o["opcode"]) for o in r.live_ops] == [(2, "churn"), (3, "sleep"), (4, "createPods")]
    r = run_api_workload(sleep_w, timeout=90)
    assert r.status == "ok", r.error
    assert r.scheduled_pods == 5
    sleep, create = r.live_ops
    assert (sleep["opcode"], create["opcode"]) == ("sleep", "createPods")
    assert 1.5 <= sleep["seconds"] < 2.5
    # the pods are created once the sleep is over, and the first bind comes after that
    assert sleep["startSeconds"] + 1.5 <= create["startSeconds"] <= r.startup_seconds


def test_in_process_workload_with_churn(tmp_path: Path) -> None:
    from kubesched.modes.bench import run_workload

    path = tmp_path / "w.yaml"
    path.write_text(WORKLOADS.replace("intervalMilliseconds: 100", "intervalMilliseconds: 1"))
    churn_w, _ = load_workloads(path)
    r = run_workload(churn_w)
    assert (r.status, r.scheduled_pods) == ("ok", 12), r.error


LONG_SLEEP = """
- name: LongSleep
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: sleep
    duration: 120s
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - {name: 1Node, threshold: null, params: {nodes: 1, measurePods: 1}}
"""


def _descendants(pid: int) -> list[int]:
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
        except OSError:
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [k for k, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _argv(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@needs_proc
def test_sigterm_stops_serve_and_run(tmp_path: Path) -> None:
    """``timeout`` or ``kill`` ending ``bench --api`` ends its ``serve`` and ``run`` too."""
    path = tmp_path / "w.yaml"
    path.write_text(LONG_SLEEP)
    bench = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kubesched.cli.main import main; main()",
            "bench",
            "--api",
            "--config",
            str(path),
            "LongSleep/1Node",
            "--timeout",
            "300",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        kids: list[int] = []
        while time.monotonic() < deadline:  # serve, then run once serve listens (the sleep op runs then)
            kids = [k for k in _descendants(bench.pid) if {b"serve", b"run"} & set(_argv(k))]
            if len(kids) == 2:
                break
            time.sleep(0.2)
        assert sorted(b"run" in _argv(k) for k in kids) == [False, True], (
            "bench --api did not start serve and run"
        )
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(60) == 128 + signal.SIGTERM
        assert [k for k in kids if _alive(k)] == []
    finally:
        if bench.poll() is None:
            bench.terminate()
            bench.wait(60)
