"""``kubesched serve --detach`` returns only once the API answers, so a script's next line works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_detach_returns_when_serving(tmp_path: Path) -> None:
    kc = tmp_path / "kc.yaml"
    done = _serve("--port", "0", "--write-kubeconfig", str(kc), "-f", "examples/run/pods.yaml", "--detach")
    assert done.returncode == 0, done.stderr
    pid = int((tmp_path / "kc.yaml.pid").read_text())
    try:
        server = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
        with urllib.request.urlopen(server + "/api/v1/nodes", timeout=10) as resp:  # usable at once
            names = [n["metadata"]["name"] for n in yaml.safe_load(resp.read())["items"]]
        assert names == ["node-1", "node-2"]
        assert done.stderr.strip().splitlines()[-1].startswith(f"serving at {server} (pid {pid}, in ")
    finally:
        os.kill(pid, signal.SIGTERM)


def test_detach_needs_a_kubeconfig_and_reports_a_failed_start(tmp_path: Path) -> None:
    done = _serve("--port", "0", "--detach")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "error: --detach needs --write-kubeconfig (the detached server is found through it)"
    )
    done = _serve(
        "--port",
        "0",
        "--write-kubeconfig",
        str(tmp_path / "k"),
        "-f",
        str(tmp_path / "missing.yaml"),
        "--detach",
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: the detached server exited with 2: ")
    assert "missing.yaml: no such file or directory" in done.stderr


def test_serve_leaves_out_what_an_api_server_refuses(tmp_path: Path) -> None:
    """A node kube-apiserver would refuse is reported once in the log and not served; the rest is."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: four}}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
    )
    kc = tmp_path / "kc.yaml"
    done = _serve("--port", "0", "-f", str(bad), "--write-kubeconfig", str(kc), "--detach")
    assert done.returncode == 0, done.stderr
    pid = int((tmp_path / "kc.yaml.pid").read_text())
    try:
        server = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
        with urllib.request.urlopen(server + "/api/v1/nodes", timeout=10) as resp:
            names = [n["metadata"]["name"] for n in yaml.safe_load(resp.read())["items"]]
        assert names == ["n2"]
        log = (tmp_path / "kc.yaml.log").read_text().splitlines()
        assert (
            log[0]
            == f'error: not served: {bad} doc 1 (Node n1): status.allocatable.cpu: invalid quantity "four"'
        )
    finally:
        os.kill(pid, signal.SIGTERM)


def test_a_failed_second_start_leaves_the_running_servers_kubeconfig(tmp_path: Path) -> None:
    kc = tmp_path / "kc.yaml"
    done = _serve("--port", "0", "--write-kubeconfig", str(kc), "--detach")
    assert done.returncode == 0, done.stderr
    pid = int((tmp_path / "kc.yaml.pid").read_text())
    try:
        text = kc.read_text()
        port = yaml.safe_load(text)["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1]
        again = _serve(
            "--port", port, "--write-kubeconfig", str(kc), "--pid-file", str(tmp_path / "2.pid"), "--detach"
        )
        assert again.returncode == 2
        assert "Address already in use" in again.stderr
        assert kc.read_text() == text  # the first server is still reachable through it
        assert int((tmp_path / "kc.yaml.pid").read_text()) == pid
    finally:
        os.kill(pid, signal.SIGTERM)
