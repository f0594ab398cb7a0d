"""Configs of one replay in parallel (local processes, a local Dask cluster) give the same report
as one after the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.config.load import load_config
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.parallel import jobs_for, run_on_dask, run_parallel
from kubesched.modes.replay.run import ConfigSpec, run_replays
from kubesched.modes.report.result import ReplayResult
from kubesched.prepull.planner import PrePullPlanner
from kubesched.trace.load import load_workload

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
REPO = Path(__file__).resolve().parents[3]


def _same(r: ReplayResult) -> dict[str, Any]:
    s = r.summary()
    s.pop("wallSeconds")
    return {**s, "timelines": [t.to_dict() for t in r.timelines]}


@pytest.fixture(scope="module")
def setup() -> tuple[Any, ...]:
    catalogue = load_catalogue(FIX / "catalogue.yaml")
    workload = load_workload(FIX / "tiny.yaml", ImageAssigner(catalogue, seed=0))
    specs = [
        ConfigSpec("default-profile.yaml", load_config(FIX / "default-profile.yaml")),
        ConfigSpec("image-aware.yaml", load_config(REPO / "examples/replay/image-aware.yaml")),
        ConfigSpec("upstream-default", None),
    ]
    serial = run_replays(workload, specs, catalogue=catalogue, seed=0, planners=[PrePullPlanner])
    return catalogue, workload, specs, serial


def test_local_processes_match_the_serial_run(setup: tuple[Any, ...]) -> None:
    catalogue, workload, specs, serial = setup
    seen: list[str] = []
    jobs = jobs_for(workload, specs, catalogue=catalogue, seed=0, planners=[PrePullPlanner])
    parallel = run_parallel(jobs, 2, lambda r: seen.append(r.config))
    assert [r.config for r in parallel] == [s.name for s in specs]
    assert sorted(seen) == sorted(s.name for s in specs)
    assert [_same(r) for r in parallel] == [_same(r) for r in serial]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_parallel(jobs, 0)


def test_local_dask_cluster_matches_the_serial_run(setup: tuple[Any, ...], tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    catalogue, workload, specs, serial = setup
    jobs = jobs_for(workload, specs, catalogue=catalogue, seed=0, planners=[PrePullPlanner])
    args = [
        "replay",
        "--trace",
        str(FIX / "tiny.yaml"),
        "--images",
        str(FIX / "catalogue.yaml"),
        "--config",
        str(FIX / "default-profile.yaml"),
        "--no-html",
    ]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        results = run_on_dask(jobs, cluster.scheduler_address)
        cli = CliRunner().invoke(
            main,
            [*args, "--out", str(tmp_path / "dask"), "--dask-scheduler", cluster.scheduler_address],
            catch_exceptions=False,
        )
    assert [_same(r) for r in results] == [_same(r) for r in serial]
    assert cli.exit_code == 0, cli.output
    local = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "local")], catch_exceptions=False)
    assert local.exit_code == 0
    a, b = (json.loads((tmp_path / d / "report.json").read_text()) for d in ("dask", "local"))
    for run in (*a["runs"], *b["runs"]):
        run.pop("wallSeconds")
    assert a == b


def test_cli_workers_writes_the_same_report(tmp_path: Path) -> None:
    args = [
        "replay",
        "--trace",
        str(FIX / "tiny.yaml"),
        "--images",
        str(FIX / "catalogue.yaml"),
        "--config",
        str(FIX / "default-profile.yaml"),
        "--config",
        str(REPO / "examples/replay/image-aware.yaml"),
        "--no-html",
    ]
    one = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "one")], catch_exceptions=False)
    two = CliRunner().invoke(
        main, [*args, "--out", str(tmp_path / "two"), "--workers", "2"], catch_exceptions=False
    )
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    a, b = (json.loads((tmp_path / d / "report.json").read_text()) for d in ("one", "two"))
    for run in (*a["runs"], *b["runs"]):
        run.pop("wallSeconds")
    assert a == b
    assert (tmp_path / "one" / "pods.csv").read_text() == (tmp_path / "two" / "pods.csv").read_text()


def test_unreachable_dask_scheduler_is_a_clear_error(setup: tuple[Any, ...]) -> None:
    pytest.importorskip("distributed")
    from kubesched.errors import ConfigError

    catalogue, workload, specs, _ = setup
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        run_on_dask(
            jobs_for(workload, specs[:1], catalogue=catalogue), "tcp://127.0.0.1:1", connect_timeout=2
        )
