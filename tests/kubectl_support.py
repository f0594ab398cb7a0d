"""kubectl (Debian's ``kubernetes-client`` or any kubectl on PATH) against an API server the test
starts: the in-process ``kubesched serve`` API server (:func:`served_api`) or a ``kubesched serve``
subprocess. Tests that need kubectl skip without it (``pytestmark = requires_kubectl``)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubesched.embedded.apiserver import ServerHandle

KUBECTL = shutil.which("kubectl")
requires_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def kubectl(
    kubeconfig: Path, *args: str, timeout: float = 30, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``kubectl --kubeconfig KUBECONFIG ARGS...`` with ``input`` on its stdin (text output
    captured, no check; killed after ``timeout`` seconds)."""
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(out: subprocess.CompletedProcess[str]) -> str:
    """``out``'s stdout, asserting kubectl exited 0 (its stderr otherwise)."""
    assert out.returncode == 0, out.stderr
    return out.stdout


@contextmanager
def served_api(tmp_path: Path, **options: Any) -> Iterator[tuple[ServerHandle, Path]]:
    """The embedded API server (``start_server(**options)``) and a kubeconfig for it at
    ``tmp_path/kubeconfig``; stopped on exit."""
    from kubesched.embedded.apiserver import start_server, write_kubeconfig

    handle = start_server(**options)
    try:
        yield handle, write_kubeconfig(tmp_path / "kubeconfig", handle.url)
    finally:
        handle.stop()
