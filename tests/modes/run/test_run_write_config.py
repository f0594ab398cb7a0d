"""``kubesched run --write-config-to`` writes the effective configuration (defaults and flags
applied) and exits; the file loads back to the same configuration; ``--version`` prints the version."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched import __version__
from kubesched.cli.main import main


def test_write_config_to_round_trips(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    r = CliRunner().invoke(
        main,
        [
            "run",
            "--leader-elect=false",
            "--kube-api-qps",
            "200",
            "--leader-elect-resource-name",
            "mine",
            "--write-config-to",
            str(first),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(first.read_text())
    assert doc["kind"] == "KubeSchedulerConfiguration"
    assert doc["leaderElection"]["leaderElect"] is False and doc["leaderElection"]["resourceName"] == "mine"
    assert doc["clientConnection"]["qps"] == 200.0 and doc["clientConnection"]["burst"] == 100
    assert [p["schedulerName"] for p in doc["profiles"]] == ["default-scheduler"]
    assert {p["name"] for p in doc["profiles"][0]["plugins"]["multiPoint"]["enabled"]} >= {
        "NodeResourcesFit",
        "PodTopologySpread",
        "DefaultBinder",
    }
    r = CliRunner().invoke(main, ["run", "--config", str(first), "--write-config-to", str(second)])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(second.read_text()) == doc


def test_version() -> None:
    r = CliRunner().invoke(main, ["run", "--version"])
    assert r.exit_code == 0
    assert r.output == f"kubesched v{__version__} (kube-scheduler v1.35.0 behaviour)\n"
