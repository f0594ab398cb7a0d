"""kubectl against ``kubesched serve``: version, typed creates (protobuf bodies), namespaces,
OpenAPI-driven validation and ``kubectl explain``.

Skipped when ``kubectl`` is absent. Every command has a timeout; the server listens on loopback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.apiserver import ServerHandle, start_server, write_kubeconfig

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerHandle, Path]]:
    handle = start_server(bookmark_interval=0.2)
    try:
        yield handle, write_kubeconfig(tmp_path / "kubeconfig", handle.url)
    finally:
        handle.stop()


def _kubectl(kubeconfig: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_kubectl_version_reports_v1_35(served: tuple[ServerHandle, Path]) -> None:
    _, kc = served
    out = _kubectl(kc, "version", "-o", "json")
    assert out.returncode == 0, out.stderr
    server = json.loads(out.stdout)["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", "35", "v1.35.0")
