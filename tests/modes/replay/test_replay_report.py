"""report.json / report.html / pods.csv and the ``kubesched replay`` command."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.run import ConfigSpec, run_replay
from kubesched.modes.report.report_html import render_html
from kubesched.modes.report.report_json import report_dict, write_pods_csv
from kubesched.modes.report.result import ReplayResult
from kubesched.trace.load import load_workload

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
OPENB = Path(__file__).resolve().parents[4] / "shared" / "data" / "alibaba-gpu-2023"
ISSUE_KEYS = [
    "config",
    "pods",
    "scheduled",
    "neverScheduled",
    "startupLatencySeconds",
    "pullSeconds",
    "bytesPulled",
    "cacheHitRatio",
    "meanAllocatedFraction",
]


@pytest.fixture(scope="module")
def result() -> ReplayResult:
    cat = load_catalogue(FIX / "catalogue.yaml")
    wl = load_workload(FIX / "tiny.yaml", ImageAssigner(cat, seed=0))
    return run_replay(wl, ConfigSpec("a.yaml", None), catalogue=cat, seed=0)


def test_report_dict_keys_and_values(result: ReplayResult) -> None:
    d = report_dict([result])
    run = d["runs"][0]
    assert list(run)[: len(ISSUE_KEYS)] == ISSUE_KEYS
    assert (run["config"], run["pods"], run["scheduled"], run["neverScheduled"]) == ("a.yaml", 5, 5, 0)
    assert list(run["startupLatencySeconds"]) == ["p50", "p90", "p95", "p99"]
    assert run["startupLatencySeconds"]["p50"] == 3.5
    assert run["bytesPulled"] == 440_000_000
    assert run["cacheHitRatio"] == pytest.approx(250 / 690)
    assert list(run["meanAllocatedFraction"]) == ["cpu", "memory", "nvidia.com/gpu"]
    json.dumps(d)  # JSON-serialisable


def test_html_is_self_contained(result: ReplayResult) -> None:
    page = render_html([result])
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert "plotly.js" in page.lower() or "Plotly.newPlot" in page
    assert page.count('class="plotly-graph-div"') == 4
    for title in ("Start-up latency CDF", "Bytes pulled", "Cache hit ratio", "Utilisation"):
        assert title in page


def test_pods_csv(tmp_path: Path, result: ReplayResult) -> None:
    write_pods_csv(tmp_path / "pods.csv", [result])
    rows = list(csv.DictReader(open(tmp_path / "pods.csv")))
    assert [r["pod"] for r in rows] == [f"default/p{i}" for i in range(1, 6)]
    p3 = rows[2]
    assert (p3["config"], p3["node"], p3["attempts"], p3["startupLatencySeconds"]) == (
        "a.yaml",
        "n1",
        "3",
        "12.5",
    )


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(main, ["replay", *args], catch_exceptions=False)


def test_cli_writes_the_reports(tmp_path: Path) -> None:
    out = tmp_path / "report"
    cfg = str(FIX / "default-profile.yaml")
    res = _invoke(
        [
            "--trace",
            str(FIX / "tiny.yaml"),
            "--images",
            str(FIX / "catalogue.yaml"),
            "--config",
            cfg,
            "--config",
            cfg,
            "--out",
            str(out),
            "--seed",
            "3",
        ]
    )
    assert res.exit_code == 0, res.output
    assert "kubesched replay" in res.output and f"wrote {out / 'report.json'}" in res.output
    report = json.loads((out / "report.json").read_text())
    assert [r["config"] for r in report["runs"]] == [cfg, cfg]
    assert report["seed"] == 3
    assert report["workload"]["pods"] == 5 and report["kubelet"]["layerLatencySeconds"] == 0.5
    for run in report["runs"]:
        assert run["startupLatencySeconds"]["p99"] == pytest.approx(12.14)
    assert (out / "report.html").stat().st_size > 100_000  # plotly.js embedded
    assert (out / "pods.csv").exists()


def test_cli_same_seed_same_report(tmp_path: Path) -> None:
    reports = []
    for name in ("a", "b"):
        res = _invoke(
            [
                "--trace",
                str(FIX / "csv"),
                "--images",
                str(FIX / "catalogue.yaml"),
                "--out",
                str(tmp_path / name),
                "--seed",
                "5",
                "--no-html",
            ]
        )
        assert res.exit_code == 0, res.output
        report = json.loads((tmp_path / name / "report.json").read_text())
        for run in report["runs"]:
            run.pop("wallSeconds")
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["runs"][0]["config"] == "upstream-default"
    assert not (tmp_path / "a" / "report.html").exists()


def test_cli_prepull_missing_planner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubesched.prepull.hook as planner

    monkeypatch.setattr(planner, "DEFAULT_PLANNER", "kubesched.prepull.no_such_planner:PrePullPlanner")
    res = _invoke(
        [
            "--trace",
            str(FIX / "tiny.yaml"),
            "--images",
            str(FIX / "catalogue.yaml"),
            "--out",
            str(tmp_path),
            "--prepull",
        ]
    )
    assert res.exit_code == 2
    assert res.output.strip() == (
        "error: --prepull: the pre-pull planner kubesched.prepull.no_such_planner:PrePullPlanner "
        "is not available: module kubesched.prepull.no_such_planner is not installed"
    )


def test_cli_bad_kubelet_setting(tmp_path: Path) -> None:
    k = tmp_path / "kubelet.yaml"
    k.write_text("imageGCLowThresholdPercent: 90\n")
    res = _invoke(
        [
            "--trace",
            str(FIX / "tiny.yaml"),
            "--images",
            str(FIX / "catalogue.yaml"),
            "--out",
            str(tmp_path),
            "--kubelet",
            str(k),
        ]
    )
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"error: {k}: kubelet.imageGCLowThresholdPercent: imageGCLowThresholdPercent (90) "
        "must be less than imageGCHighThresholdPercent (85)"
    )


@pytest.mark.skipif(not OPENB.exists(), reason="../shared/data/alibaba-gpu-2023 is not available")
def test_cli_openb_window(tmp_path: Path) -> None:
    res = _invoke(
        [
            "--trace",
            str(OPENB),
            "--trace-window",
            "30d",
            "--max-pods",
            "100",
            "--nodes",
            "100",
            "--out",
            str(tmp_path),
            "--no-html",
        ]
    )
    assert res.exit_code == 0, res.output
    run = json.loads((tmp_path / "report.json").read_text())["runs"][0]
    assert run["pods"] == 100
