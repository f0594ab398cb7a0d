"""The in-process ``kubesched serve`` API server as pytest fixtures, for the tests that talk to it
over HTTP. A test module names the fixtures it needs, with the server's options:

    server = server_fixture(bookmark_interval=0.2)   # a ServerHandle, stopped at teardown
    core = core_fixture()                            # the official client's CoreV1Api on ``server``
    served = served_fixture(bookmark_interval=0.2)   # (ServerHandle, kubeconfig path) for kubectl
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import pytest
from kubectl_support import served_api

if TYPE_CHECKING:
    from kubesched.embedded.apiserver import ServerHandle, ServerOptions


def server_fixture(**options: Unpack[ServerOptions]) -> Any:
    """A function-scoped fixture yielding ``start_server(**options)`` (loopback, a free port),
    stopped at teardown."""

    @pytest.fixture
    def server() -> Iterator[ServerHandle]:
        from kubesched.embedded.apiserver import start_server

        with start_server(**options) as handle:
            yield handle

    return server


def served_fixture(**options: Unpack[ServerOptions]) -> Any:
    """A function-scoped fixture yielding ``(server, kubeconfig)``: ``start_server(**options)`` and a
    kubeconfig for it at ``tmp_path/kubeconfig`` (:func:`kubectl_support.served_api`)."""

    @pytest.fixture
    def served(tmp_path: Path) -> Iterator[tuple[ServerHandle, Path]]:
        with served_api(tmp_path, **options) as s:
            yield s

    return served


def api_client(server: ServerHandle) -> Any:
    """The official client's ``ApiClient`` for ``server`` (plain HTTP, no credentials)."""
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = server.url
    return k8s.ApiClient(cfg)


def core_fixture() -> Any:
    """A fixture: the official client's ``CoreV1Api`` on the module's ``server`` fixture."""

    @pytest.fixture
    def core(server: ServerHandle) -> Any:
        from kubernetes import client as k8s

        return k8s.CoreV1Api(api_client(server))

    return core
