"""``scripts/recorded_decisions.py``: a recording's bindings re-run on the state they were made in."""

from __future__ import annotations

import csv
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from script_support import load_script

from kubesched.modes.record.log import RecordWriter

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _script() -> ModuleType:
    return load_script("recorded_decisions")


def _stamp(seconds: float) -> str:
    return f"2026-01-01T00:00:{int(seconds):02d}Z"


def _node(name: str, cpu: str) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": res, "capacity": res},
    }


def _pod(name: str, created: float, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "creationTimestamp": _stamp(created),
        },
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "main",
                    "image": "example.com/app:1" if name != "p3" else "example.com/other:1",
                    "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
                }
            ],
        },
        "status": {"phase": "Pending"},
    }


def _bound(pod: dict[str, Any], node: str) -> dict[str, Any]:
    return {**pod, "spec": {**pod["spec"], "nodeName": node}}


def _recording(tmp_path: Path) -> Path:
    """Nodes big (8 cpu), small (3 cpu), tiny (1 cpu); pods of 2 cpu created 1 s apart and bound
    to big (p1), small (p2), tiny (p3: it does not fit there) and big (p4, for another scheduler)."""
    rec = tmp_path / "rec"
    w = RecordWriter(rec)
    w.append({"op": "session", "t": T0, "version": 1, "kinds": ["Node", "Pod"], "namespace": None})
    for name, cpu in (("big", "8"), ("small", "3"), ("tiny", "1")):
        w.append({"op": "add", "t": T0, "kind": "Node", "object": _node(name, cpu)})
    w.append({"op": "synced", "t": T0, "kind": "Pod"})
    for i, (name, node, scheduler) in enumerate(
        (
            ("p1", "big", "default-scheduler"),
            ("p2", "small", "default-scheduler"),
            ("p3", "tiny", "default-scheduler"),
            ("p4", "big", "other-scheduler"),
        ),
        start=1,
    ):
        pod = _pod(name, i, scheduler)
        w.append({"op": "add", "t": T0 + i, "kind": "Pod", "object": pod})
        w.append({"op": "update", "t": T0 + i + 0.01, "kind": "Pod", "object": _bound(pod, node)})
    w.close()
    return rec


@pytest.fixture()
def config(tmp_path: Path) -> Path:
    path = tmp_path / "default.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    return path


def test_every_binding_gets_its_verdict(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = _recording(tmp_path)
    out = tmp_path / "d.csv"
    assert _script().main([str(rec), "--config", str(config), "--csv", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "decisions 4",
        "same 1",
        "tie 0",
        "lower 1",
        "filtered 1",
        "unschedulable 0",
        "not re-run 1",
    ]
    rows = list(csv.DictReader(out.open()))
    got = [
        (r["pod"], r["created"], r["recorded"], r["rerun"], r["recordedScore"], r["rerunScore"], r["verdict"])
        for r in rows
    ]
    assert got == [
        ("p1", "0", "big", "big", "474", "474", "same"),
        ("p2", "1", "small", "big", "432", "449", "lower"),
        ("p3", "2", "tiny", "big", "", "", "filtered"),
        ("p4", "3", "big", "", "", "", "not re-run"),
    ]
    # p1: TaintToleration 3 x 100, NodeResourcesFit (75 % cpu and 87.5 % memory left) 81,
    # NodeResourcesBalancedAllocation 93; p2 on small keeps a third of its cpu; p3 has one feasible
    # node (big), which upstream does not score
    assert rows[2]["detail"] == "NodeResourcesFit: Insufficient cpu"
    assert rows[3]["detail"].startswith("pod default/p4 is not waiting to be scheduled")


def test_filters_by_image_and_creation_time(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = _recording(tmp_path)
    assert (
        _script().main(
            [str(rec), "--config", str(config), "--image", "example.com/app:1", "--from", "1", "--to", "1"]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[:4] == ["decisions 1", "same 0", "tie 0", "lower 1"]


def test_an_equally_scored_node_is_a_tie() -> None:
    record = {
        "selectedNode": "a",
        "finalScore": {
            "a": {"NodeResourcesFit": 50, "ImageLocality": 0},
            "b": {"NodeResourcesFit": 50, "ImageLocality": 0},
        },
        "filter": {},
    }
    assert _script().verdict(record, "b") == ("tie", 50, 50, "")
    assert _script().verdict({"selectedNode": None, "finalScore": {}, "filter": {}}, "b") == (
        "unschedulable",
        None,
        None,
        "",
    )


def test_not_a_recording_exits_2(tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main([str(tmp_path / "missing"), "--config", str(config)]) == 2
    assert "not a directory" in capsys.readouterr().err
