"""``kubesched serve --detach``: start the same command without ``--detach`` in a new session,
wait until it answers, write its pid, and return (as ``kind create cluster`` returns once the
cluster is up), so that a script's next line can use the API."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import click
import yaml

from kubesched.errors import KubeschedError

__all__ = ["READY_TIMEOUT", "serve_detached"]

#: seconds to wait for the detached server's /readyz (loading a 10,000-object snapshot takes a few)
READY_TIMEOUT = 60.0


def _server_url(kubeconfig: Path) -> str | None:
    try:
        doc = yaml.safe_load(kubeconfig.read_text())
        return str(doc["clusters"][0]["cluster"]["server"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """``(inode, mtime ns, size)`` of ``path``, None when it does not exist."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/readyz", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def serve_detached(
    argv: list[str], kubeconfig: str | None, pid_file: str | None, log_file: str | None
) -> None:
    """Re-run ``argv`` (this ``kubesched serve`` command line) without ``--detach`` in the
    background; return once its ``/readyz`` answers 200. Raises KubeschedError (with the log's last
    lines) when it exits or is not ready within :data:`READY_TIMEOUT` seconds. Needs
    ``--write-kubeconfig`` (the way to find the server)."""
    if not kubeconfig:
        raise KubeschedError("--detach needs --write-kubeconfig (the detached server is found through it)")
    kc = Path(kubeconfig)
    pid_path = Path(pid_file or f"{kubeconfig}.pid")
    log_path = Path(log_file or f"{kubeconfig}.log")
    # a file from an earlier server (maybe still running: a failed start must not take its
    # kubeconfig away) does not count: readiness needs the file this server writes (atomically)
    before = _stamp(kc)
    args = [a for a in argv[1:] if a != "--detach"]
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli.main", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = "".join(
                log_path.read_text(encoding="utf-8", errors="replace").splitlines(True)[-5:]
            ).strip()
            raise KubeschedError(f"the detached server exited with {proc.returncode}: {tail}")
        url = _server_url(kc) if _stamp(kc) not in (None, before) else None
        if url is not None and _ready(url):
            pid_path.write_text(f"{proc.pid}\n", encoding="utf-8")
            click.echo(
                f"serving at {url} (pid {proc.pid}, in {pid_path}; log {log_path}); "
                f"stop it with: kill $(cat {pid_path})",
                err=True,
            )
            return
        time.sleep(0.1)
    proc.terminate()
    raise KubeschedError(
        f"the detached server did not answer /readyz within {READY_TIMEOUT:g}s (log {log_path})"
    )
