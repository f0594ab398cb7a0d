"""What ``kubesched run`` runs with, once flags and the config file are combined: :class:`RunOptions`
(and the pre-pull controller's :class:`PrePullOptions`). Built by the command line
(:mod:`kubesched.cli.run`), read by :func:`kubesched.modes.run.scheduler.run_scheduler`."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.serving.delegation import DelegationOptions

__all__ = ["PrePullOptions", "RunOptions"]


@dataclass(frozen=True)
class PrePullOptions:
    """``--prepull`` settings: puller pods' ``namespace``, ``interval`` (s) between ticks,
    ``max_per_tick`` new puller pods, ``timeout`` (s) per puller pod, ``catalogue`` (None: shipped),
    ``priority_class`` ("" = none), ``mechanism`` (auto, pods, imagepulljob), ``registry_settings``
    (registry settings file for images missing from the catalogue; None: the profiles' image plugins'
    ``registrySettingsPath``, if any). The agent runs on the scheduler's clock
    (:attr:`RunOptions.speed`)."""

    namespace: str
    interval: float
    max_per_tick: int
    timeout: float
    catalogue: str | None
    priority_class: str
    mechanism: str = "auto"
    registry_settings: str | None = None


@dataclass
class RunOptions:
    """Everything ``run`` needs, after flags and the config file are combined."""

    kubeconfig: str | None
    config: KubeSchedulerConfiguration | None
    effective: KubeSchedulerConfiguration
    qps: float
    burst: int
    leader_elect: bool
    lease_duration: float
    renew_deadline: float
    retry_period: float
    lease_name: str
    lease_namespace: str
    identity: str
    permit_wait_timeout: float
    profiling: bool
    bind_address: str
    secure_port: int
    port: int
    tls_cert_file: str | None
    tls_private_key_file: str | None
    plugin_modules: tuple[str, ...]
    parallel_bindings: int
    #: ``--cpu-affinity``: "auto", "none" or a CPU number (:mod:`kubesched.modes.run.cpu_affinity`)
    cpu_affinity: str | int = "auto"
    #: ``--thread-policy``: "batch" or "normal" (:mod:`kubesched.modes.run.thread_policy`)
    thread_policy: str = "batch"
    #: the --config file (names the file in config errors found while building the profiles)
    config_file: str | None = None
    #: ``--speed``: cluster seconds per wall second of the cluster scheduled (``serve --speed``);
    #: the scheduler and the pre-pull agent run on a clock that fast, the API client, leader
    #: election and the endpoints on wall time
    speed: float = 1.0
    #: --prepull settings (None: no pre-pull controller)
    prepull: PrePullOptions | None = None
    #: delegated authentication/authorization of the endpoints
    delegation: DelegationOptions = field(default_factory=DelegationOptions)
