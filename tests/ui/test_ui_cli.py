"""``kubesched ui`` on the command line: start-up, the printed URL, and flag errors."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import httpx
from click.testing import CliRunner
from ui_support import EXAMPLE, ROOT

from kubesched.cli.main import main


def test_serves_the_snapshot_and_prints_its_url() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kubesched.cli.main import main; main()",
            "ui",
            "-f",
            str(EXAMPLE),
            "--port",
            "0",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first == "simulated 6 pods in " + first.split(" in ")[1]
        assert first.endswith("s (1 gated, 1 ignored, 3 scheduled, 1 unschedulable)\n")
        m = re.fullmatch(r"kubesched ui: serving (http://127\.0\.0\.1:(\d+)/)\n", proc.stderr.readline())
        assert m is not None
        info = httpx.get(m.group(1) + "api/v1/info", timeout=30).json()
        assert (info["mode"], info["sources"]) == ("snapshot", [str(EXAMPLE)])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_flag_errors() -> None:
    r = CliRunner().invoke(main, ["ui"])
    assert r.exit_code == 2 and "give either -f snapshot.yaml (repeatable) or --kubeconfig" in r.output
    r = CliRunner().invoke(main, ["ui", "-f", str(EXAMPLE), "--kubeconfig", "k"])
    assert r.exit_code == 2


def test_bad_config_is_reported_like_simulate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "podMaxBackoffSeconds: 0\n"
    )
    ui = CliRunner().invoke(main, ["ui", "-f", str(EXAMPLE), "--config", str(cfg)])
    sim = CliRunner().invoke(main, ["simulate", "-f", str(EXAMPLE), "--config", str(cfg)])
    assert ui.exit_code == sim.exit_code == 2
    assert (
        ui.output
        == sim.output
        == (
            f"error: {cfg}: podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds\n"
        )
    )
