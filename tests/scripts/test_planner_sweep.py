"""``scripts/planner_sweep.py``: the pre-pull planner's settings on one replay over tie-break seeds."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from script_support import load_script

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "tests" / "fixtures" / "replay" / "catalogue.yaml"


def _script() -> ModuleType:
    return load_script("planner_sweep")


def _growing_app(tmp_path: Path) -> Path:
    """12 nodes of 4 cpu; one application (a 150 MB image, pulled at 10 MB/s) growing by a 3-cpu
    pod every 20 s, ten pods, none ending: each pod takes a node of its own."""
    pods = [
        {
            "name": f"p{i}",
            "arrival": 20 * i,
            "duration": 1000,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "example.com/app-a:1",
                            "resources": {"requests": {"cpu": "3", "memory": "1Gi"}},
                        }
                    ]
                }
            },
        }
        for i in range(10)
    ]
    doc = {
        "horizon": 1200,
        "kubelet": {
            "nodeBandwidthBytesPerSecond": 10_000_000,
            "pullFixedSeconds": 0.0,
            "containerStartSeconds": 1.0,
        },
        "nodes": [{"name": f"n{i}", "cpu": "4", "memory": "8Gi"} for i in range(1, 13)],
        "pods": pods,
    }
    path = tmp_path / "grow.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _sweep(trace: Path, out: Path, *flags: str, seeds: str = "0-1") -> int:
    args = [str(trace), str(out), "--seeds", seeds, "--window", "", "--arrival-scale", "1"]
    args += ["--images", str(CATALOGUE), "--config", str(ROOT / "examples" / "replay" / "image-aware.yaml")]
    return int(_script().main([*args, *flags]))


def test_settings_are_typed_as_the_planner_defaults() -> None:
    parse = _script().planner_settings
    assert parse(["max_warm_nodes=8", "net_bytes=true", "lookahead_seconds=75"]) == {
        "max_warm_nodes": 8,
        "net_bytes": True,
        "lookahead_seconds": 75.0,
    }
    with pytest.raises(
        ValueError, match=r"--set 'warm=8': expected NAME=VALUE with NAME one of window_seconds, "
    ):
        parse(["warm=8"])
    with pytest.raises(ValueError, match=r"--set max_warm_nodes: expected a int, got 'many'"):
        parse(["max_warm_nodes=many"])
    with pytest.raises(ValueError, match=r"--set net_bytes: expected true or false, got 'yes'"):
        parse(["net_bytes=yes"])


def test_seed_ranges() -> None:
    assert _script().seed_range("0-5") == [0, 1, 2, 3, 4, 5]
    assert _script().seed_range("3") == [3]


def test_sweep_prints_each_seed_and_the_median(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _growing_app(tmp_path)
    assert _sweep(trace, tmp_path / "default") == 0
    assert capsys.readouterr().out.splitlines() == [
        "seed 0: p95 16.07 s, GB by pods 0.3, pre-pulled 1.5, in all 1.8, pre-pulls 10, precision 80.0 %",
        "seed 1: p95 16.07 s, GB by pods 0.3, pre-pulled 1.5, in all 1.8, pre-pulls 10, precision 80.0 %",
        "median GB in all 1.8, largest p95 16.07 s",
    ]
    assert (tmp_path / "default" / "s1" / "report.json").is_file()
    # one warm node with room at a time: fewer pre-pulls, more pods pull
    assert _sweep(trace, tmp_path / "one", "--set", "max_warm_nodes=1") == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "seed 0: p95 16.07 s, GB by pods 0.8, pre-pulled 0.9, in all 1.6, pre-pulls 6, precision 83.3 %"
    )


def test_kubelet_settings_reach_the_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubelet = tmp_path / "slot.yaml"
    kubelet.write_text("prePullKubeletSlot: true\n")
    assert _sweep(_growing_app(tmp_path), tmp_path / "slot", "--kubelet", str(kubelet), seeds="0") == 0
    report = json.loads((tmp_path / "slot" / "s0" / "report.json").read_text())
    assert report["kubelet"]["prePullKubeletSlot"] is True
    assert capsys.readouterr().out.splitlines()[-1].startswith("median GB in all ")


def test_an_unknown_setting_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _sweep(_growing_app(tmp_path), tmp_path / "o", "--set", "warm=1") == 2
    assert "--set 'warm=1'" in capsys.readouterr().err
