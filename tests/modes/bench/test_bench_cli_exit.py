"""``kubesched bench`` exits 1 when a workload does not complete, and refuses the API-mode flags
without ``--api``; ``--run-flag`` reaches ``kubesched run``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main

WORKLOAD = """
- name: {name}
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - {{name: {nodes}Node, threshold: null, params: {{nodes: {nodes}, measurePods: {pods}}}}}
"""

# one default node (4 cpu) holds 40 default pods (100m): 10 of the 50 measured pods never fit
OVERFULL = WORKLOAD.format(name="Overfull", nodes=1, pods=50)


def test_an_incomplete_workload_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(OVERFULL)
    r = CliRunner().invoke(main, ["bench", "--in-process", "--config", str(path), "Overfull/1Node"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines()[-1] == "error: 1 of 1 workloads did not complete: Overfull/1Node"


def test_api_flags_need_api() -> None:
    r = CliRunner().invoke(main, ["bench", "--measure-pods", "5", "SchedulingBasic/500Nodes_10000Pods"])
    assert r.exit_code == 2
    assert r.output == "error: --measure-pods applies to --api runs only\n"


def test_run_flag_needs_api() -> None:
    r = CliRunner().invoke(
        main, ["bench", "--run-flag=--parallel-bindings=2", "SchedulingBasic/500Nodes_10000Pods"]
    )
    assert r.exit_code == 2
    assert r.output == "error: --run-flag applies to --api runs only\n"


def test_a_cluster_file_name_needs_simulate_or_api() -> None:
    r = CliRunner().invoke(main, ["bench", "--in-process", "SimulateSpreading/200Nodes_2000Pods"])
    assert r.exit_code == 2
    assert r.output == (
        "error: SimulateSpreading/200Nodes_2000Pods is a cluster file: run it with --simulate or --api\n"
    )


SMALL = WORKLOAD.format(name="Small", nodes=2, pods=20)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="API mode reads /proc")
def test_run_flags_reach_run_and_the_processes_are_measured(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(SMALL)
    out = tmp_path / "out.json"
    r = CliRunner().invoke(
        main,
        [
            "bench",
            "--api",
            "--config",
            str(path),
            "--timeout",
            "60",
            "--run-flag=--cpu-affinity=none",
            "--run-flag=--parallel-bindings=2",
            "--output",
            str(out),
            "Small/2Node",
        ],
    )
    assert r.exit_code == 0, r.output
    row = json.loads(out.read_text())["workloads"][0]
    assert (row["status"], row["scheduledPods"]) == ("ok", 20)
    assert row["run"]["contextSwitches"] > 0 and row["serve"]["contextSwitches"] > 0
    # a flag run refuses makes the workload fail with run's own message
    r = CliRunner().invoke(
        main,
        [
            "bench",
            "--api",
            "--config",
            str(path),
            "--timeout",
            "60",
            "--run-flag=--cpu-affinity=fast",
            "Small/2Node",
        ],
    )
    assert r.exit_code == 1
    assert 'error: --cpu-affinity: must be "auto", "none" or a CPU number, got "fast"' in r.output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="API mode reads /proc")
def test_a_simulate_cluster_file_runs_through_serve_and_run(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    r = CliRunner().invoke(
        main,
        [
            "bench",
            "--api",
            "--timeout",
            "120",
            "--measure-pods",
            "30",
            "--output",
            str(out),
            "SimulateSpreading/200Nodes_2000Pods",
        ],
    )
    assert r.exit_code == 0, r.output
    row = json.loads(out.read_text())["workloads"][0]
    assert (row["name"], row["status"], row["nodes"], row["measuredPods"], row["scheduledPods"]) == (
        "SimulateSpreading/200Nodes_2000Pods",
        "ok",
        200,
        30,
        30,
    )
    assert row["run"]["cpuSeconds"] >= 0 and row["serve"]["peakRssBytes"] > 0
