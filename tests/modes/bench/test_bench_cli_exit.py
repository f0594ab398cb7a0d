"""``kubesched bench`` exits 1 when a workload does not complete, and refuses the API-mode flags
without ``--api``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import main

# one default node (4 cpu) holds 40 default pods (100m): 10 of the 50 measured pods never fit
OVERFULL = """
- name: Overfull
  defaultPodTemplatePath: pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - {name: 1Node, threshold: null, params: {nodes: 1, measurePods: 50}}
"""


def test_an_incomplete_workload_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(OVERFULL)
    r = CliRunner().invoke(main, ["bench", "--in-process", "--config", str(path), "Overfull/1Node"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines()[-1] == "error: 1 of 1 workloads did not complete: Overfull/1Node"


def test_api_flags_need_api() -> None:
    r = CliRunner().invoke(main, ["bench", "--measure-pods", "5", "SchedulingBasic/500Nodes_10000Pods"])
    assert r.exit_code == 2
    assert "Error: --measure-pods applies to --api runs only" in r.output
