"""Interrupts end a command as a Unix tool ends: SIGINT exits 130 and SIGTERM 143, with no
traceback and no ``Aborted!``; what had finished is kept (each replay config, each bench workload)
and nothing partial is left under a real name. Subprocesses (signals go to a real process); the
signal is sent once the command has finished one piece of work, or after one second of work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_support import BASE, base_args, make_inputs

ROOT = Path(__file__).resolve().parents[2]
REPLAY_CONFIGS = [
    str(ROOT / "examples" / "replay" / n)
    for n in ("upstream-default.yaml", "image-aware.yaml", "imagelocality-weight-10.yaml")
]


class _Command:
    """A ``kubesched`` subprocess (in a process group of its own, as a shell's job) whose stderr
    lines are collected as they come."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli.main", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.05)

    def stop(self, sig: int, timeout: float = 60.0, *, group: bool = False) -> tuple[int, str]:
        """Send ``sig`` to the process (``group``: to its whole group, as Ctrl-C in a terminal
        does); its exit code and stderr. Fails when a process of the group outlives it."""
        if group:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(5)
        time.sleep(0.5)
        try:
            os.killpg(self.proc.pid, 0)
            left = True
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            left = False
        assert not left, "a child process outlived the command"
        return code, "".join(self.lines)


def _trace(path: Path, pods: int) -> Path:
    lines = ["nodes: [{name: n, cpu: '16', memory: 64Gi, count: 30}]", "pods:"]
    lines += [
        f"- {{name: p{i}, arrival: {i * 2}, duration: 600, cpu: 500m, memory: 1Gi, image: busybox:latest}}"
        for i in range(pods)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_replay_interrupted_keeps_the_finished_configs(tmp_path: Path, sig: int, code: int) -> None:
    trace = _trace(tmp_path / "trace.yaml", 1500)
    out = tmp_path / "report"
    args = ["replay", "--trace", str(trace), "--out", str(out), "--no-html"]
    for c in REPLAY_CONFIGS:
        args += ["--config", c]
    cmd = _Command(args, tmp_path)
    cmd.wait_for(f"{REPLAY_CONFIGS[0]}: done in")
    got, err = cmd.stop(sig)
    assert got == code, err
    assert "Traceback" not in err and "Aborted" not in err, err
    report = json.loads((out / "report.json").read_text())
    assert [r["config"] for r in report["runs"]][:1] == [REPLAY_CONFIGS[0]]
    assert len(report["runs"]) < 3  # the interrupted config is not there
    kept = len(report["runs"])
    assert (
        f"replay interrupted: kept {out / 'report.json'} and {out / 'pods.csv'} with {kept} of 3 config(s)"
        in err
    )
    assert (out / "pods.csv").read_text().count("\n") == 1 + 1500 * kept
    assert sorted(p.name for p in out.iterdir()) == ["pods.csv", "report.json"]  # no temporary file left


def test_bench_interrupted_keeps_the_finished_workloads(tmp_path: Path) -> None:
    config = tmp_path / "workloads.yaml"
    config.write_text(
        "- name: Tiny\n  defaultPodTemplatePath: pod-default.yaml\n  workloadTemplate:\n"
        "  - {opcode: createNodes, countParam: $nodes}\n"
        "  - {opcode: createPods, countParam: $pods, collectMetrics: true}\n"
        "  workloads:\n"
        "  - {name: first, params: {nodes: 10, pods: 50}}\n"
        "  - {name: long, params: {nodes: 500, pods: 200000}}\n"
    )
    output = tmp_path / "bench.json"
    cmd = _Command(["bench", "--config", str(config), "--in-process", "--output", str(output)], tmp_path)
    deadline = time.monotonic() + 120
    while not output.exists():
        assert cmd.proc.poll() is None and time.monotonic() < deadline, "".join(cmd.lines)
        time.sleep(0.05)
    time.sleep(1.0)
    code, err = cmd.stop(signal.SIGINT)
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    assert [w["name"] for w in json.loads(output.read_text())["workloads"]] == ["Tiny/first"]
    assert f"bench interrupted: {output} keeps 1 of 2 workload(s): Tiny/first" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json", "workloads.yaml"]


def test_simulate_interrupted_leaves_no_partial_snapshot(tmp_path: Path) -> None:
    docs = [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: '8', "
        f"memory: 32Gi, pods: '110'}}}}\n"
        for i in range(300)
    ]
    docs += [
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default}}\nspec: {{containers: "
        f"[{{name: c, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]}}\n"
        for i in range(20000)
    ]
    snapshot = tmp_path / "big.yaml"
    snapshot.write_text("---\n".join(docs))
    out = tmp_path / "after.yaml"
    cmd = _Command(["simulate", "-f", str(snapshot), "--write-snapshot", str(out), "-o", "name"], tmp_path)
    time.sleep(1.0)
    code, err = cmd.stop(signal.SIGINT)
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    assert err.strip().splitlines()[-1] == "interrupted (SIGINT)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml"]


def test_parallel_replay_interrupted_stops_its_workers(tmp_path: Path) -> None:
    """Ctrl-C in a terminal reaches the workers too: no traceback from them, none left running."""
    trace = _trace(tmp_path / "trace.yaml", 1500)
    args = ["replay", "--trace", str(trace), "--out", str(tmp_path / "report"), "--no-html", "--workers", "2"]
    for c in REPLAY_CONFIGS:
        args += ["--config", c]
    cmd = _Command(args, tmp_path)
    cmd.wait_for("replaying 1500 pods")
    time.sleep(1.0)
    code, err = cmd.stop(signal.SIGINT, group=True)
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    assert err.strip().splitlines()[-1] == "interrupted (SIGINT)"


def test_isolated_bench_interrupted_by_sigterm_stops_its_child(tmp_path: Path) -> None:
    config = tmp_path / "workloads.yaml"
    config.write_text(
        "- name: Tiny\n  defaultPodTemplatePath: pod-default.yaml\n  workloadTemplate:\n"
        "  - {opcode: createNodes, countParam: $nodes}\n"
        "  - {opcode: createPods, countParam: $pods, collectMetrics: true}\n"
        "  workloads:\n"
        "  - {name: long, params: {nodes: 500, pods: 200000}}\n"
    )
    cmd = _Command(["bench", "--config", str(config), "--output", str(tmp_path / "bench.json")], tmp_path)
    time.sleep(1.0)
    code, err = cmd.stop(signal.SIGTERM)
    assert code == 143, err
    assert "Traceback" not in err, err
    assert not (tmp_path / "bench.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workloads.yaml"]


#: the file a command writes last, once its work is done (relative to its ``tmp_path``): a signal
#: that comes after it lands in the command's exit, not its work
RESULT_FILES = {"replay": "replay/report.json"}


@pytest.mark.parametrize("command", sorted(BASE))
def test_every_command_takes_ctrl_c(tmp_path: Path, command: str) -> None:
    """SIGINT one second after the start, to the whole group: 130, or ended by SIGINT itself
    (which a shell reports as 130 too); 0 when a server had started and stopped gracefully; or the
    command's own outcome when it had finished (0, or 2 for the closed port of the base
    arguments). Never a traceback or ``Aborted!``."""
    args = command.split() + base_args(command, make_inputs(tmp_path))
    cmd = _Command(args, tmp_path)
    time.sleep(1.0)
    code, err = cmd.stop(signal.SIGINT, group=True)
    assert "Traceback" not in err and "Aborted" not in err, err
    assert code in (0, 2, 130, -signal.SIGINT), err
    if code in (130, -signal.SIGINT):
        # interrupted, or the command had just printed its own outcome (the closed port of the base
        # arguments) or written its whole result when the signal came during its exit
        last = err.strip().splitlines()[-1]
        finished = command in RESULT_FILES and (tmp_path / RESULT_FILES[command]).is_file()
        assert last == "interrupted (SIGINT)" or last.startswith("error: ") or finished, err
