"""``replay --scheduler-seed``: the same workload (images assigned by ``--seed``) with the
scheduler's ties broken by another seed."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import kubesched
from kubesched.cli.main import main
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.run import run_replay
from kubesched.trace.load import load_workload

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"


def _trace(tmp_path: Path) -> Path:
    """8 identical nodes and 6 pods without an image (so ``--seed`` assigns theirs)."""
    d = tmp_path / "trace"
    d.mkdir()
    (d / "nodes.csv").write_text("name,cpu,memory,gpu,count\nnode,4,8Gi,0,8\n")
    rows = "".join(f"p{i},{i},30,1,1Gi,0,,\n" for i in range(6))
    (d / "pods.csv").write_text("name,arrival,duration,cpu,memory,gpu,image,namespace\n" + rows)
    return d


def _replay(
    tmp_path: Path, trace: Path, name: str, *flags: str
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    out = tmp_path / name
    args = ["replay", "--trace", str(trace), "--images", str(FIX / "catalogue.yaml"), "--no-html"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), *flags], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    for run in report["runs"]:
        run.pop("wallSeconds")
    with (out / "pods.csv").open() as f:
        return report, list(csv.DictReader(f))


def test_scheduler_seed_breaks_ties_of_the_same_workload(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    default, default_pods = _replay(tmp_path, trace, "default", "--seed", "0")
    same, same_pods = _replay(tmp_path, trace, "same", "--seed", "0", "--scheduler-seed", "0")
    other, other_pods = _replay(tmp_path, trace, "other", "--seed", "0", "--scheduler-seed", "3")

    assert (same, same_pods) == (default, default_pods)
    assert other["seed"] == 3
    # the images are those --seed 0 assigned; the nodes are those ties broken by seed 3 give
    assert [p["images"] for p in other_pods] == [p["images"] for p in default_pods]
    assert [p["node"] for p in default_pods] == ["node-2", "node-0", "node-3", "node-7", "node-6", "node-1"]
    assert [p["node"] for p in other_pods] == ["node-7", "node-0", "node-1", "node-5", "node-4", "node-2"]
    catalogue = load_catalogue(FIX / "catalogue.yaml")
    workload = load_workload(trace, ImageAssigner(catalogue, seed=0))
    expected = run_replay(workload, catalogue=catalogue, seed=3)
    assert [p["node"] for p in other_pods] == [t.node for t in expected.timelines]
    api = kubesched.replay(trace, images=FIX / "catalogue.yaml", seed=0, scheduler_seed=3)
    assert [t.node for t in api.runs[0].timelines] == [p["node"] for p in other_pods]
