"""``scripts/report_spread.py``: the spread of start-up percentiles and image bytes over runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from script_support import load_script


def _script() -> ModuleType:
    return load_script("report_spread")


def _replay_run(config: str, p50: float, p95: float, pulled: int, prepulled: int) -> dict[str, Any]:
    return {
        "config": config,
        "startupLatencySeconds": {"p50": p50, "p95": p95},
        "bytesPulled": 1,  # layers fetched: not the whole-image basis
        "imageBytesPulled": pulled,
        "imageBytesPrepulled": prepulled,
    }


def test_groups_by_glob_and_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for seed, p95 in ((0, 68.6), (1, 48.3), (2, 48.3)):
        d = tmp_path / f"replay-s{seed}"
        d.mkdir()
        runs = [
            _replay_run("examples/replay/upstream-default.yaml", 1.0, 127.8, 2_600_000_000_000, 0),
            _replay_run(
                "examples/replay/image-aware.yaml", 1.0, p95, 900_000_000_000 + seed, 300_000_000_000
            ),
        ]
        (d / "report.json").write_text(json.dumps({"runs": runs}))
    live = tmp_path / "live" / "out"
    live.mkdir(parents=True)
    run = {"scheduler": "default-scheduler", "startupLatencySeconds": {"p50": 2.0, "p95": 49.0}}
    (live / "report.json").write_text(json.dumps({"runs": [{**run, "bytesPulled": 908_400_000_000}]}))

    code = _script().main(
        [
            f"image-aware replay={tmp_path}/replay-s*/report.json@image-aware",
            f"image-aware live={tmp_path}/live/out/report.json",
        ]
    )

    assert code == 0
    assert capsys.readouterr().out.splitlines()[2:] == [
        "| image-aware replay | 3 | 1.0 (mean 1.0, 1.0-1.0) | 48.3 (mean 55.1, 48.3-68.6) | 900.0 | 300.0 |",
        "| image-aware live | 1 | 2.0 (mean 2.0, 2.0-2.0) | 49.0 (mean 49.0, 49.0-49.0) | 908.4 | 0.0 |",
    ]


def test_a_group_without_runs_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main([f"none={tmp_path}/*/report.json"]) == 2
    assert capsys.readouterr().err == f"error: none={tmp_path}/*/report.json: no run matches\n"


def _pods_csv(path: Path, rows: list[tuple[str, str, str]]) -> None:
    """``pods.csv`` with the columns ``--within`` reads: (config or scheduler column, name, start-up)."""
    column = rows[0][0]
    lines = [f"{column},pod,startupLatencySeconds"] + [
        f"{name},p{i},{s}" for i, (_, name, s) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n")


def test_within_counts_each_runs_pods_started_in_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = tmp_path / "replay"
    replay.mkdir()
    runs = [
        _replay_run("upstream.yaml", 1.0, 72.9, 3_000_000_000_000, 0),
        _replay_run("image-aware.yaml", 1.0, 39.0, 1_700_000_000_000, 0),
    ]
    (replay / "report.json").write_text(json.dumps({"runs": runs}))
    _pods_csv(
        replay / "pods.csv",
        [("config", "upstream.yaml", "1.0"), ("config", "upstream.yaml", "72.9")]
        + [("config", "image-aware.yaml", s) for s in ("1.0", "30.0", "30.5", "")],
    )
    live = tmp_path / "live"
    live.mkdir()
    run = {"scheduler": "default-scheduler", "startupLatencySeconds": {"p50": 1.0, "p95": 18.0}}
    (live / "report.json").write_text(json.dumps({"runs": [{**run, "bytesPulled": 1_725_600_000_000}]}))
    _pods_csv(
        live / "pods.csv", [("scheduler", "default-scheduler", s) for s in ("1.0", "2.0", "18.0", "69.0")]
    )

    code = _script().main(
        ["--within", "30", f"replayed={replay}/report.json@image-aware", f"live={live}/report.json"]
    )

    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("| GB pre-pulled | started within 30 s: median (runs) |")
    assert out[1] == "|---|---|---|---|---|---|---|"
    # a pod that never started (empty start-up) is not counted; 30.0 is within 30 s, 30.5 is not
    assert out[2:] == [
        "| replayed | 1 | 1.0 (mean 1.0, 1.0-1.0) | 39.0 (mean 39.0, 39.0-39.0) | 1700.0 | 0.0 | 2 (2) |",
        "| live | 1 | 1.0 (mean 1.0, 1.0-1.0) | 18.0 (mean 18.0, 18.0-18.0) | 1725.6 | 0.0 | 3 (3) |",
    ]


def test_within_without_pods_csv_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "report.json").write_text(json.dumps({"runs": [_replay_run("a.yaml", 1.0, 2.0, 1, 0)]}))
    assert _script().main(["--within", "5", f"r={tmp_path}/report.json"]) == 2
    assert capsys.readouterr().err == f"error: r={tmp_path}/report.json: {tmp_path}/pods.csv: no such file\n"
