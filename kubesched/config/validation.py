"""Validation of a defaulted ``KubeSchedulerConfiguration`` v1.

Source: ``pkg/scheduler/apis/config/validation/validation.go`` (``ValidateKubeSchedulerConfiguration``,
``validateKubeSchedulerProfile``, ``validatePluginConfig``, ``validateCommonQueueSort``,
``validateExtenders``) and component-base ``ValidateClientConnectionConfiguration`` /
``ValidateLeaderElectionConfiguration``.

Errors are reported in upstream order as :class:`ConfigError` with the upstream field path and the
upstream detail text (without the ``Invalid value: <v>:`` prefix), e.g.
``podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds``.
Plugin *args* are validated when the plugins decode them (:mod:`kubesched.config.args`); unknown plugin
names are rejected by the framework's registry.
"""

from __future__ import annotations

from typing import Final

from kubesched.config.resource_names import is_extended_resource_name, is_qualified_name
from kubesched.config.types import (
    API_VERSION,
    EXTENSION_POINTS,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    PluginSet,
    point_json_name,
)
from kubesched.errors import ConfigError

REMOVED_PLUGINS: Final = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
"""In-tree plugins removed in ``kubescheduler.config.k8s.io/v1``; naming one is an error."""


def _removed_message(name: str) -> str:
    return (
        f'plugin "{name}" was removed in version "{API_VERSION}" '
        f'(KubeSchedulerConfiguration is version "{API_VERSION}")'
    )


def _validate_client_connection(config: KubeSchedulerConfiguration) -> list[ConfigError]:
    if config.client_connection.burst < 0:
        return [ConfigError("clientConnection.burst", "must be non-negative")]
    return []


def _validate_leader_election(config: KubeSchedulerConfiguration) -> list[ConfigError]:
    le = config.leader_election
    if not le.leader_elect:
        return []
    errs: list[ConfigError] = []
    if le.lease_duration <= 0:
        errs.append(ConfigError("leaderElection.leaseDuration", "must be greater than zero"))
    if le.renew_deadline <= 0:
        errs.append(ConfigError("leaderElection.renewDeadline", "must be greater than zero"))
    if le.retry_period <= 0:
        errs.append(ConfigError("leaderElection.retryPeriod", "must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        errs.append(
            ConfigError("leaderElection.leaseDuration", "LeaseDuration must be greater than RenewDeadline")
        )
    if not le.resource_lock:
        errs.append(ConfigError("leaderElection.resourceLock", "resourceLock is required"))
    if not le.resource_namespace:
        errs.append(ConfigError("leaderElection.resourceNamespace", "resourceNamespace is required"))
    if not le.resource_name:
        errs.append(ConfigError("leaderElection.resourceName", "resourceName is required"))
    if le.resource_lock != "leases":
        errs.append(ConfigError("leaderElection.resourceLock", 'resourceLock value must be "leases"'))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[ConfigError]:
    if value is not None and not 0 <= value <= 100:
        return [ConfigError(path, "not in valid range [0-100]")]
    return []


def _validate_profile(path: str, profile: KubeSchedulerProfile) -> list[ConfigError]:
    errs: list[ConfigError] = []
    if not profile.scheduler_name:
        errs.append(ConfigError(f"{path}.schedulerName", "Required value"))
    errs += _validate_percentage(f"{path}.percentageOfNodesToScore", profile.percentage_of_nodes_to_score)
    if profile.plugins is not None:
        for point in EXTENSION_POINTS:
            plugin_set = profile.plugins.point(point)
            for i, plugin in enumerate(plugin_set.enabled):
                if plugin.name in REMOVED_PLUGINS:
                    errs.append(
                        ConfigError(
                            f"{path}.plugins.{point_json_name(point)}.enabled[{i}]",
                            _removed_message(plugin.name),
                        )
                    )
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        pc_path = f"{path}.pluginConfig[{i}]"
        if pc.name in seen:
            errs.append(ConfigError(pc_path, f"repeated config for plugin {pc.name}"))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(ConfigError(pc_path, _removed_message(pc.name)))
    return errs


def _validate_common_queue_sort(config: KubeSchedulerConfiguration) -> list[ConfigError]:
    errs: list[ConfigError] = []
    first = config.profiles[0]
    canon = first.plugins.queue_sort if first.plugins is not None else PluginSet()
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            ConfigError("profiles[0].plugins.queueSort.enabled", "only one queue sort plugin can be enabled")
        )
    canon_args = None
    for pc in first.plugin_config:
        if queue_sort_name and pc.name == queue_sort_name:
            canon_args = pc.args
    for i, prof in enumerate(config.profiles[1:], start=1):
        current = prof.plugins.queue_sort if prof.plugins is not None else PluginSet()
        if current != canon:
            errs.append(ConfigError(f"profiles[{i}].plugins.queueSort", "must be the same for all profiles"))
        for pc in prof.plugin_config:
            if pc.name == queue_sort_name and pc.args != canon_args:
                errs.append(
                    ConfigError(f"profiles[{i}].pluginConfig.args", "must be the same for all profiles")
                )
    return errs


def _validate_extenders(extenders: list[Extender]) -> list[ConfigError]:
    errs: list[ConfigError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if not ext.url_prefix:
            errs.append(ConfigError(f"{path}.urlPrefix", "Required value"))
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(ConfigError(f"{path}.weight", "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        for j, res in enumerate(ext.managed_resources):
            res_path = f"{path}.managedResources[{j}].name"
            name_errs = is_qualified_name(res.name)
            errs += [ConfigError(res_path, msg) for msg in name_errs]
            if not name_errs and not is_extended_resource_name(res.name):
                errs.append(ConfigError(res_path, "is an invalid extended resource name"))
            if res.name in managed:
                errs.append(ConfigError(res_path, "duplicate extender managed resource name"))
            managed.add(res.name)
    if binders > 1:
        errs.append(
            ConfigError("extenders", f"only one extender can implement bind (found {binders} extenders)")
        )
    return errs


def validation_errors(config: KubeSchedulerConfiguration) -> list[ConfigError]:
    """Every validation error of a defaulted ``config`` (see
    :func:`kubesched.config.defaults.apply_defaults`), in upstream order; empty when valid.

    Checks: clientConnection.burst >= 0; leaderElection (when leaderElect: positive durations,
    leaseDuration > renewDeadline, resourceLock ``leases``); parallelism > 0; profiles present,
    schedulerName required and unique, percentageOfNodesToScore in 0..100 (also top level),
    removed plugins, repeated pluginConfig names, QueueSort (and its args) identical across profiles;
    podInitialBackoffSeconds > 0, podMaxBackoffSeconds >= initial; extenders (urlPrefix required,
    weight > 0 with prioritizeVerb, at most one bindVerb, managed resources valid and unique).
    """
    errs: list[ConfigError] = []
    errs += _validate_client_connection(config)
    errs += _validate_leader_election(config)
    if config.parallelism <= 0:
        errs.append(ConfigError("parallelism", "should be an integer value greater than zero"))
    if not config.profiles:
        errs.append(ConfigError("profiles", "Required value"))
    else:
        seen: dict[str, int] = {}
        for i, prof in enumerate(config.profiles):
            errs += _validate_profile(f"profiles[{i}]", prof)
            name = prof.scheduler_name or ""
            if name in seen:
                errs.append(ConfigError(f"profiles[{i}].schedulerName", f'Duplicate value: "{name}"'))
            seen[name] = i
        errs += _validate_common_queue_sort(config)
    errs += _validate_percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score)
    if config.pod_initial_backoff_seconds <= 0:
        errs.append(ConfigError("podInitialBackoffSeconds", "must be greater than 0"))
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        errs.append(
            ConfigError("podMaxBackoffSeconds", "must be greater than or equal to PodInitialBackoffSeconds")
        )
    errs += _validate_extenders(config.extenders)
    return errs


def validate_config(config: KubeSchedulerConfiguration) -> None:
    """Raise the first of :func:`validation_errors` (a :class:`ConfigError`), if any.

    Raises:
        ConfigError: the config is invalid.
    """
    errs = validation_errors(config)
    if errs:
        raise errs[0]
