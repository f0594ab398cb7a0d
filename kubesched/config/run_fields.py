"""Fields of a ``KubeSchedulerConfiguration`` that only ``kubesched run`` reads, checked against
what it can do, so that none is accepted and then silently ignored.

* ``clientConnection.kubeconfig``: honoured (the ``--kubeconfig`` flag wins when given; see
  ``kubesched.modes.run``).
* ``clientConnection.contentType`` / ``acceptContentTypes``: kubesched sends and accepts JSON only.
  Left unset (upstream's default is protobuf, a wire format with the same meaning) JSON is used;
  set to ``application/json`` it is used; any other value is refused.
* ``delayCacheUntilActive: true`` (upstream: start the informers only after winning the lease,
  ``cmd/kube-scheduler/app/server.go`` ``Run``) is refused: kubesched lists and watches before it
  campaigns, so that a standby replica is ready to schedule at once.
* ``enableContentionProfiling: true`` set explicitly (upstream: ``runtime.SetBlockProfileRate(1)``,
  served as ``/debug/pprof/block``) is refused: Python has no block profile. Left unset it follows
  ``enableProfiling`` as upstream's defaulting does, and means nothing more.
"""

from __future__ import annotations

from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.errors import ConfigError

__all__ = ["JSON", "check_run_fields"]

JSON = "application/json"


def check_run_fields(config: KubeSchedulerConfiguration | None) -> None:
    """Raise ConfigError naming the field for a value ``run`` cannot honour (module docstring),
    e.g. ``clientConnection.contentType: "application/vnd.kubernetes.protobuf" is not supported:
    kubesched talks to the API server in application/json only; set application/json or leave it
    unset``. ``config`` None (no ``--config``) passes."""
    if config is None:
        return
    cc = config.client_connection
    if "content_type" in cc.model_fields_set and cc.content_type not in ("", JSON):
        raise ConfigError(
            "clientConnection.contentType",
            f'"{cc.content_type}" is not supported: kubesched talks to the API server in '
            f"{JSON} only; set {JSON} or leave it unset",
        )
    accept = [t.strip() for t in cc.accept_content_types.split(",") if t.strip()]
    if any(t != JSON for t in accept):
        raise ConfigError(
            "clientConnection.acceptContentTypes",
            f'"{cc.accept_content_types}" is not supported: kubesched accepts {JSON} only; '
            f"set {JSON} or leave it unset",
        )
    if config.delay_cache_until_active:
        raise ConfigError(
            "delayCacheUntilActive",
            "true is not supported: kubesched starts its informers before campaigning for the "
            "lease (a standby replica is synced and ready to take over); set false or leave it unset",
        )
    if "enable_contention_profiling" in config.model_fields_set and config.enable_contention_profiling:
        raise ConfigError(
            "enableContentionProfiling",
            "true is not supported: Python has no contention (block) profile, only the CPU profile "
            "at /debug/pprof/profile; set false or leave it unset",
        )
