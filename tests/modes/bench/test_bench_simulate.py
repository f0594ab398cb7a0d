"""``kubesched bench --simulate``: the SimulateSpreading fixture and the timed ``simulate`` runs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.embedded.manifests import load_manifests
from kubesched.modes.bench.simulate_bench import resolve_file, run_simulate
from kubesched.modes.bench.simulate_fixture import (
    SIMULATE_FIXTURES,
    SimulateFixture,
    spreading_cluster,
    write_fixture,
)

SMALL = SimulateFixture("Small", nodes=6, pods=30, apps=3, spread_every=10)


def test_spreading_cluster_shape() -> None:
    objs = list(spreading_cluster(6, 30, apps=3, spread_every=10))
    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == [
        "zone-a",
        "zone-b",
        "zone-c",
    ] * 2
    assert nodes[4]["metadata"]["labels"]["kubernetes.io/hostname"] == "node-00004"
    assert len(pods) == 30
    assert [p["metadata"]["labels"]["app"] for p in pods[:4]] == ["app-00", "app-01", "app-02", "app-00"]
    spreading = [p for p in pods if "topologySpreadConstraints" in p["spec"]]
    assert [p["metadata"]["name"] for p in spreading] == ["app-00-000009", "app-01-000019", "app-02-000029"]
    assert spreading[1]["spec"]["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "app-01"}},
        }
    ]
    assert all(not p["spec"].get("nodeName") for p in pods)


def test_shipped_sizes() -> None:
    big = SIMULATE_FIXTURES["SimulateSpreading/2000Nodes_20000Pods"]
    assert (big.nodes, big.pods, big.apps, big.spread_every) == (2000, 20000, 50, 10)
    huge = SIMULATE_FIXTURES["SimulateSpreading/10000Nodes_100000Pods"]
    assert (huge.nodes, huge.pods) == (10000, 100000)


def test_write_fixture_is_deterministic_and_loads(tmp_path: Path) -> None:
    a = write_fixture(tmp_path / "a.yaml", SMALL).read_bytes()
    b = write_fixture(tmp_path / "b.yaml", SMALL).read_bytes()
    assert a == b
    loaded = load_manifests([str(tmp_path / "a.yaml")])
    assert [m.kind for m in loaded.manifests].count("Pod") == 30
    assert [m.kind for m in loaded.manifests].count("Node") == 6


def test_resolve_file(tmp_path: Path) -> None:
    own = tmp_path / "own.yaml"
    own.write_text("")
    assert resolve_file(str(own), str(tmp_path)) == str(own)
    made = resolve_file("SimulateSpreading/200Nodes_2000Pods", str(tmp_path))
    assert made.endswith("SimulateSpreading_200Nodes_2000Pods.yaml")
    assert len(load_manifests([made]).manifests) == 2200
    with pytest.raises(ValueError, match="no such file and not one of SimulateSpreading/2000Nodes_20000Pods"):
        resolve_file("nope.yaml", str(tmp_path))


def test_run_simulate_times_one_process(tmp_path: Path) -> None:
    path = write_fixture(tmp_path / "small.yaml", SMALL)
    run = run_simulate(str(path), "table")
    assert run.status == "ok", run.error
    assert run.mode == "table" and run.file == str(path)
    assert run.seconds > run.load_seconds > 0
    assert run.schedule_seconds > 0
    assert run.peak_rss > 20 * 2**20
    assert 0 < run.cpu_seconds
    r = CliRunner().invoke(main, ["simulate", "-f", str(path), "--seed", "0"])
    assert r.exit_code == 0
    assert run.output_bytes == len(r.output.encode())
    assert run.output_sha256 == hashlib.sha256(r.output.encode()).hexdigest()


def test_bench_simulate_cli_json(tmp_path: Path) -> None:
    path = write_fixture(tmp_path / "small.yaml", SMALL)
    out = tmp_path / "out.json"
    r = CliRunner().invoke(
        main, ["bench", "--simulate", str(path), "--simulate-mode", "json", "--output", str(out)]
    )
    assert r.exit_code == 0, r.output
    (entry,) = json.loads(out.read_text())["simulate"]
    assert entry["mode"] == "json" and entry["status"] == "ok" and entry["tree"] == ""
    assert entry["outputBytes"] > 0 and entry["scheduleSeconds"] > 0


def test_bench_simulate_refuses_bad_input() -> None:
    r = CliRunner().invoke(main, ["bench", "--simulate", "nope.yaml"])
    assert r.exit_code == 2
    assert "--simulate 'nope.yaml': no such file" in r.output
    r = CliRunner().invoke(main, ["bench", "--repeat", "2", "SchedulingBasic"])
    assert r.exit_code == 2
    assert "--simulate-mode, --repeat and --baseline-tree apply to --simulate runs only" in r.output
    r = CliRunner().invoke(main, ["bench", "--simulate", "x.yaml", "SchedulingBasic"])
    assert r.exit_code == 2
    assert "--simulate runs alone" in r.output


def test_simulate_v1_logs_the_phases(tmp_path: Path) -> None:
    path = write_fixture(tmp_path / "small.yaml", SMALL)
    r = CliRunner().invoke(main, ["simulate", "-f", str(path), "--seed", "0", "-v=1", "-o", "name"])
    assert r.exit_code == 0
    lines = [ln for ln in r.stderr.splitlines() if "simulate.py" in ln]
    assert [ln.split('] "', 1)[1].split('"', 1)[0] for ln in lines] == [
        "Loaded the input",
        "Scheduled until quiet",
        "Wrote the output",
    ]
    assert "objects=36" in lines[0] and "loadSeconds=" in lines[0] and "readSeconds=" in lines[0]
    assert "attempts=30 pods=30" in lines[1]
    assert 'output="name"' in lines[2] and "totalSeconds=" in lines[2]
    assert r.stdout.splitlines()[0] == "pod/app-00-000000"
