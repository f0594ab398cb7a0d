"""The embedded cluster served over the Kubernetes API (``kubesched serve``).

Public API: :func:`setup_server` (the server built, not started), :func:`start_server` (background thread, keyword arguments typed by :class:`ServerOptions`; returns a :class:`ServerHandle` with
``.url``, ``.cluster``, ``.stop()``), :func:`serve_forever`, :func:`write_kubeconfig`,
:func:`build_app` (the aiohttp application). See :mod:`kubesched.embedded.apiserver.app` for the routes and
the test hooks under ``/kubesched/``.
"""

from kubesched.embedded.apiserver.app import ServerState, build_app
from kubesched.embedded.apiserver.kubeconfig import kubeconfig_dict, write_kubeconfig
from kubesched.embedded.apiserver.server import (
    ServerHandle,
    ServerOptions,
    ensure_namespaces,
    epoch_resource_version,
    serve_forever,
    setup_server,
    start_server,
)

__all__ = [
    "ServerHandle",
    "ServerOptions",
    "ServerState",
    "build_app",
    "ensure_namespaces",
    "epoch_resource_version",
    "kubeconfig_dict",
    "serve_forever",
    "setup_server",
    "start_server",
    "write_kubeconfig",
]
