"""Each upstream validation rule and its message (validation.go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import (
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    apply_defaults,
    default_config,
    extender_ignored_resources,
    load_config,
    ordered_extenders,
    validate_config,
    validation_errors,
)
from kubesched.errors import ConfigError

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _errors(**fields: Any) -> list[str]:
    cfg = apply_defaults(KubeSchedulerConfiguration(**fields))
    return [str(e) for e in validation_errors(cfg)]


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> KubeSchedulerConfiguration:
    monkeypatch.chdir(tmp_path)
    Path("sched.yaml").write_text(yaml.safe_dump({**HEADER, **doc}))
    return load_config("sched.yaml")


def test_default_config_is_valid() -> None:
    assert validation_errors(default_config()) == []


def test_parallelism() -> None:
    assert _errors(parallelism=0) == ["parallelism: should be an integer value greater than zero"]
    assert _errors(parallelism=-3) == ["parallelism: should be an integer value greater than zero"]
    assert _errors(parallelism=1) == []


@pytest.mark.parametrize("value", [-1, 101])
def test_percentage_of_nodes_to_score(value: int) -> None:
    assert _errors(percentage_of_nodes_to_score=value) == [
        "percentageOfNodesToScore: not in valid range [0-100]"
    ]
    prof = KubeSchedulerProfile(percentage_of_nodes_to_score=value)
    assert _errors(profiles=[prof]) == ["profiles[0].percentageOfNodesToScore: not in valid range [0-100]"]


@pytest.mark.parametrize("value", [0, 1, 100])
def test_percentage_of_nodes_to_score_valid(value: int) -> None:
    assert (
        _errors(
            percentage_of_nodes_to_score=value,
            profiles=[KubeSchedulerProfile(percentage_of_nodes_to_score=value)],
        )
        == []
    )


def test_backoff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _errors(pod_initial_backoff_seconds=0, pod_max_backoff_seconds=0) == [
        "podInitialBackoffSeconds: must be greater than 0"
    ]
    assert _errors(pod_initial_backoff_seconds=5, pod_max_backoff_seconds=4) == [
        "podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds"
    ]
    assert _errors(pod_initial_backoff_seconds=5, pod_max_backoff_seconds=5) == []
    with pytest.raises(ConfigError) as exc:
        _load(tmp_path, monkeypatch, {"podInitialBackoffSeconds": 20})
    assert (
        str(exc.value)
        == "sched.yaml: podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds"
    )


def test_profile_names_required_and_unique() -> None:
    assert _errors(profiles=[KubeSchedulerProfile(), KubeSchedulerProfile(scheduler_name="b")]) == [
        "profiles[0].schedulerName: Required value"
    ]
    assert _errors(profiles=[KubeSchedulerProfile(scheduler_name="")]) == [
        "profiles[0].schedulerName: Required value"
    ]
    a, b = KubeSchedulerProfile(scheduler_name="a"), KubeSchedulerProfile(scheduler_name="a")
    assert _errors(profiles=[a, b]) == ['profiles[1].schedulerName: Duplicate value: "a"']


def test_undefaulted_config_without_profiles() -> None:
    assert [str(e) for e in validation_errors(KubeSchedulerConfiguration())] == ["profiles: Required value"]


def _qs(*names: str, disabled: tuple[str, ...] = ()) -> Plugins:
    return Plugins(
        queue_sort=PluginSet(
            enabled=[Plugin(name=n) for n in names], disabled=[Plugin(name=n) for n in disabled]
        )
    )


def test_queue_sort_must_be_same_for_all_profiles() -> None:
    p0 = KubeSchedulerProfile(scheduler_name="a")
    p1 = KubeSchedulerProfile(scheduler_name="b", plugins=_qs("CustomSort", disabled=("*",)))
    assert _errors(profiles=[p0, p1]) == ["profiles[1].plugins.queueSort: must be the same for all profiles"]
    same = KubeSchedulerProfile(scheduler_name="c", plugins=_qs("CustomSort", disabled=("*",)))
    assert _errors(profiles=[p1, same]) == []


def test_queue_sort_args_must_be_same() -> None:
    p0 = KubeSchedulerProfile(
        scheduler_name="a",
        plugins=_qs("CustomSort"),
        plugin_config=[PluginConfig(name="CustomSort", args={"x": 1})],
    )
    p1 = KubeSchedulerProfile(
        scheduler_name="b",
        plugins=_qs("CustomSort"),
        plugin_config=[PluginConfig(name="CustomSort", args={"x": 2})],
    )
    assert _errors(profiles=[p0, p1]) == ["profiles[1].pluginConfig.args: must be the same for all profiles"]


def test_only_one_queue_sort() -> None:
    p0 = KubeSchedulerProfile(scheduler_name="a", plugins=_qs("A", "B"))
    assert _errors(profiles=[p0]) == [
        "profiles[0].plugins.queueSort.enabled: only one queue sort plugin can be enabled"
    ]


def test_repeated_plugin_config() -> None:
    prof = KubeSchedulerProfile(
        plugin_config=[
            PluginConfig(name="NodeResourcesFit"),
            PluginConfig(name="ImageLocality"),
            PluginConfig(name="NodeResourcesFit", args={}),
        ]
    )
    assert _errors(profiles=[prof]) == [
        "profiles[0].pluginConfig[2]: repeated config for plugin NodeResourcesFit"
    ]


@pytest.mark.parametrize("name", ["AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"])
def test_removed_plugins(name: str) -> None:
    msg = (
        f'plugin "{name}" was removed in version "kubescheduler.config.k8s.io/v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
    )
    prof = KubeSchedulerProfile(
        plugins=Plugins(filter=PluginSet(enabled=[Plugin(name="NodePorts"), Plugin(name=name)]))
    )
    assert _errors(profiles=[prof]) == [f"profiles[0].plugins.filter.enabled[1]: {msg}"]
    mp = KubeSchedulerProfile(plugins=Plugins(multi_point=PluginSet(enabled=[Plugin(name=name)])))
    assert _errors(profiles=[mp]) == [f"profiles[0].plugins.multiPoint.enabled[19]: {msg}"]
    pc = KubeSchedulerProfile(plugin_config=[PluginConfig(name=name)])
    assert _errors(profiles=[pc]) == [f"profiles[0].pluginConfig[0]: {msg}"]
    # disabling a removed plugin is fine
    off = KubeSchedulerProfile(plugins=Plugins(filter=PluginSet(disabled=[Plugin(name=name)])))
    assert _errors(profiles=[off]) == []


def test_leader_election_resource_lock() -> None:
    from kubesched.config import LeaderElectionConfiguration

    assert _errors(leader_election=LeaderElectionConfiguration(resource_lock="endpointsleases")) == [
        'leaderElection.resourceLock: resourceLock value must be "leases"'
    ]
    assert (
        _errors(leader_election=LeaderElectionConfiguration(leader_elect=False, resource_lock="configmaps"))
        == []
    )


def test_leader_election_durations() -> None:
    from kubesched.config import LeaderElectionConfiguration

    le = LeaderElectionConfiguration(lease_duration=5, renew_deadline=10, retry_period=-1)
    assert _errors(leader_election=le) == [
        "leaderElection.retryPeriod: must be greater than zero",
        "leaderElection.leaseDuration: LeaseDuration must be greater than RenewDeadline",
    ]


def test_client_connection_burst() -> None:
    from kubesched.config import ClientConnectionConfiguration

    assert _errors(client_connection=ClientConnectionConfiguration(burst=-1)) == [
        "clientConnection.burst: must be non-negative"
    ]


def test_extender_weight_bind_and_url() -> None:
    exts = [
        Extender(url_prefix="http://a", prioritize_verb="prioritize"),
        Extender(url_prefix="http://b", bind_verb="bind", prioritize_verb="p", weight=1),
        Extender(bind_verb="bind"),
    ]
    assert _errors(extenders=exts) == [
        "extenders[0].weight: must have a positive weight applied to it",
        "extenders[2].urlPrefix: Required value",
        "extenders: only one extender can implement bind (found 2 extenders)",
    ]


def test_extender_managed_resources() -> None:
    ext = Extender(
        url_prefix="http://a",
        managed_resources=[
            ExtenderManagedResource(name="example.com/gpu"),
            ExtenderManagedResource(name="cpu"),
            ExtenderManagedResource(name="example.com/gpu"),
            ExtenderManagedResource(name="kubernetes.io/foo"),
            ExtenderManagedResource(name="bad name/x"),
        ],
    )
    assert _errors(extenders=[ext]) == [
        "extenders[0].managedResources[1].name: is an invalid extended resource name",
        "extenders[0].managedResources[2].name: duplicate extender managed resource name",
        "extenders[0].managedResources[3].name: is an invalid extended resource name",
        "extenders[0].managedResources[4].name: prefix part a lowercase RFC 1123 subdomain must consist of lower "
        "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]


def test_extender_ignored_resources_and_order() -> None:
    cfg = KubeSchedulerConfiguration(
        extenders=[
            Extender(
                url_prefix="http://a",
                ignorable=True,
                managed_resources=[
                    ExtenderManagedResource(name="example.com/a", ignored_by_scheduler=True),
                    ExtenderManagedResource(name="example.com/b"),
                ],
            ),
            Extender(
                url_prefix="http://b",
                managed_resources=[ExtenderManagedResource(name="example.com/c", ignored_by_scheduler=True)],
            ),
        ]
    )
    assert extender_ignored_resources(cfg) == ["example.com/a", "example.com/c"]
    assert [e.name for e in ordered_extenders(cfg)] == ["http://b", "http://a"]


def test_validate_config_raises_first_error() -> None:
    cfg = apply_defaults(KubeSchedulerConfiguration(parallelism=0, pod_initial_backoff_seconds=0))
    with pytest.raises(ConfigError) as exc:
        validate_config(cfg)
    assert exc.value.path == "parallelism"
    assert exc.value.message == "should be an integer value greater than zero"
    validate_config(default_config())
