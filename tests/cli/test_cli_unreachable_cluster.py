"""Every command that reads a live cluster says, in one line, that it cannot read it: no
traceback, no empty message."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.embedded.apiserver.kubeconfig import write_kubeconfig


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    "command",
    [
        ["startup", "--out", "OUT"],
        ["images", "calibrate", "--output", "OUT/kubelet.yaml"],
        ["snapshot"],
        ["simulate"],
        ["record", "--out", "OUT/rec"],
        ["load", "--trace", "OUT/trace.yaml", "--out", "OUT/report"],
        ["ui", "--port", "0"],
    ],
)
def test_a_refused_connection_is_one_line(tmp_path: Path, command: list[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
    (tmp_path / "OUT").mkdir()
    (tmp_path / "OUT" / "trace.yaml").write_text(
        "nodes: [{name: n, cpu: '1', memory: 1Gi}]\npods: [{name: p, arrival: 0, cpu: 100m, image: nginx}]\n"
    )
    args = [str(tmp_path / a) if a.startswith("OUT") else a for a in command] + [
        "--kubeconfig",
        str(kubeconfig),
    ]
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot read the cluster ({kubeconfig}): GET "), (
        r.output
    )
    assert "Connection refused" in lines[0]
