"""``kubesched serve`` as a subprocess for integration tests: started on a free loopback port,
waited for (``/healthz``), killed at teardown. Every wait is bounded."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from pathlib import Path

from run_support import free_port, kubesched_command, kubesched_env


class ServeProcess:
    """One ``kubesched serve --port PORT ARGS...`` subprocess; its stderr goes to ``log_path``."""

    def __init__(self, tmp: Path, *args: str, port: int | None = None, name: str = "serve") -> None:
        self.port = port if port is not None else free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / f"{name}-{self.port}-{time.monotonic_ns()}.log"
        cmd = kubesched_command("serve", "--port", str(self.port), *args)
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=kubesched_env())

    def wait_ready(self, timeout: float = 30) -> ServeProcess:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"kubesched serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"kubesched serve not ready after {timeout}s:\n{self.log()}")
            time.sleep(0.05)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s (idempotent)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
