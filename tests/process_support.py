"""Stopping a ``kubesched`` subprocess a test started (``serve``, ``run``): the signal, a bounded
wait, then a kill."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop_process(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Send ``sig`` (if ``proc`` still runs) and wait up to ``timeout`` seconds for it to exit;
    kill it after that (and wait 5 s more)."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
