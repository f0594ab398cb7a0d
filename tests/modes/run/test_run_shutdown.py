"""``kubesched run`` interrupted before it ever reached the API server shuts down cleanly and says so."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sigint_before_connecting_is_clean(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{_closed_port()}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
""")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kubesched.cli.main import main; main()",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--leader-elect=false",
            "--secure-port",
            "0",
            "--port",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if "list failed" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=30)
    text = "".join(lines) + rest
    assert proc.returncode == 0, text
    assert "Traceback" not in text
    tail = [
        line.split("] ", 1)[1] for line in text.splitlines()[-3:]
    ]  # klog: I1201 10:00:00.000000 pid file:line] "msg"
    assert tail == [
        '"received SIGINT: shutting down"',
        '"shutting down before the caches synced (no pod was scheduled)"',
        '"stopped"',
    ]
