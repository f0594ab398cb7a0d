"""Loading config files: apiVersion/kind, strict decoding, error paths, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.config import (
    Plugin,
    default_config,
    dump_config,
    extender_ignored_resources,
    load_config,
    parse_config,
)
from kubesched.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "config"
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str = "sched.yaml") -> str:
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text)
    return name


def _load_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str = "sched.yaml") -> str:
    with pytest.raises(ConfigError) as exc:
        load_config(_write(tmp_path, monkeypatch, text, name))
    return str(exc.value)


def test_multi_profile_fixture() -> None:
    c = load_config(FIXTURES / "multi_profile.yaml")
    assert c.parallelism == 32
    assert c.percentage_of_nodes_to_score == 50
    assert (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds) == (2, 20)
    assert c.client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert (c.client_connection.qps, c.client_connection.burst) == (100.0, 200)
    assert c.client_connection.content_type == "application/vnd.kubernetes.protobuf"
    le = c.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (90.0, 45.0, 0.5)
    assert (le.resource_namespace, le.resource_name, le.resource_lock) == (
        "scheduling",
        "kube-scheduler",
        "leases",
    )
    assert c.enable_profiling is False
    assert c.enable_contention_profiling is False
    assert c.delay_cache_until_active is True

    p0, p1 = c.profiles
    assert p0.scheduler_name == "default-scheduler"
    assert p0.plugins is not None
    mp = p0.plugins.multi_point
    assert "NodeResourcesBalancedAllocation" not in mp.enabled_names()
    assert mp.enabled[mp.enabled_names().index("ImageLocality")] == Plugin(name="ImageLocality", weight=5)
    assert mp.enabled[-1] == Plugin(name="NodeNumber", weight=2)
    assert [p.name for p in mp.disabled] == ["NodeResourcesBalancedAllocation"]
    assert p0.plugin_config[0].args == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "NodeResourcesFitArgs",
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    }

    assert p1.scheduler_name == "bin-packer"
    assert p1.percentage_of_nodes_to_score == 100
    assert p1.plugins is not None
    assert p1.plugins.multi_point.enabled_names()[0] == "SchedulingGates"
    assert [(p.name, p.weight) for p in p1.plugins.score.enabled] == [("NodeResourcesFit", 10)]
    assert p1.plugins.score.disables_all()
    assert p1.plugins.pre_score.disables_all() and p1.plugins.pre_score.enabled == []

    e0, e1 = c.extenders
    assert e0.url_prefix == "http://gpu-extender.kube-system:8888/"
    assert (e0.filter_verb, e0.prioritize_verb, e0.weight) == ("filter", "prioritize", 3)
    assert e0.node_cache_capable and e0.ignorable
    assert e0.http_timeout == 2.0
    assert e1.http_timeout == 5.0
    assert e1.enable_https is True
    assert e1.tls_config is not None
    assert e1.tls_config.server_name == "binder.example.com"
    assert e1.tls_config.ca_data == b"-----BEGIN CERTIFICATE-----\n"
    assert extender_ignored_resources(c) == ["example.com/gpu"]


def test_round_trip(tmp_path: Path) -> None:
    c = load_config(FIXTURES / "multi_profile.yaml")
    doc = dump_config(c)
    assert doc["leaderElection"]["leaseDuration"] == "1m30s"
    assert doc["leaderElection"]["retryPeriod"] == "500ms"
    assert doc["extenders"][1]["enableHTTPS"] is True
    assert doc["extenders"][1]["tlsConfig"]["caData"] == "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
    assert doc["extenders"][0]["httpTimeout"] == "2s"
    assert parse_config(doc) == c
    out = tmp_path / "again.yaml"
    out.write_text(yaml.safe_dump(doc))
    assert load_config(out) == c
    out_json = tmp_path / "again.json"
    out_json.write_text(json.dumps(doc))
    assert load_config(out_json) == c


def test_default_config_round_trip() -> None:
    c = default_config()
    assert parse_config(dump_config(c)) == c


def test_json_fixture() -> None:
    c = load_config(FIXTURES / "minimal.json")
    assert c.parallelism == 8
    assert c.profiles[0].scheduler_name == "default-scheduler"
    assert c.profiles[0].plugins is not None
    assert [(p.name, p.weight) for p in c.profiles[0].plugins.score.enabled] == [("NodeAffinity", 7)]


def test_bad_nested_weight_path() -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(FIXTURES / "bad_weight.yaml")
    assert exc.value.path == "profiles[0].plugins.score.enabled[1].weight"
    assert str(exc.value) == (
        f"{FIXTURES / 'bad_weight.yaml'}: profiles[0].plugins.score.enabled[1].weight: Input should be a valid integer"
    )


def test_unknown_nested_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEADER + "profiles:\n- schedulerName: a\n  plugins:\n    scores:\n      enabled: []\n"
    assert (
        _load_error(tmp_path, monkeypatch, text)
        == 'sched.yaml: profiles[0].plugins.scores: unknown field "scores"'
    )


def test_case_sensitive_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        _load_error(tmp_path, monkeypatch, HEADER + "Parallelism: 3\n")
        == 'sched.yaml: Parallelism: unknown field "Parallelism"'
    )


def test_missing_required_plugin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEADER + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 2\n"
    assert (
        _load_error(tmp_path, monkeypatch, text)
        == "sched.yaml: profiles[0].plugins.filter.enabled[0].name: Required value"
    )


def test_bad_duration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEADER + "leaderElection:\n  leaseDuration: 15\n"
    assert _load_error(tmp_path, monkeypatch, text) == (
        'sched.yaml: leaderElection.leaseDuration: invalid duration 15: must be a string such as "15s"'
    )
    text = HEADER + "extenders:\n- urlPrefix: http://x\n  httpTimeout: 3d\n"
    assert _load_error(tmp_path, monkeypatch, text) == (
        'sched.yaml: extenders[0].httpTimeout: time: unknown unit "d" in duration "3d"'
    )


def test_string_number_not_coerced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _load_error(tmp_path, monkeypatch, HEADER + 'parallelism: "16"\n') == (
        "sched.yaml: parallelism: Input should be a valid integer"
    )


def test_nulls_mean_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = _write(tmp_path, monkeypatch, HEADER + "parallelism: null\nprofiles: null\nextenders:\n")
    c = load_config(name)
    assert c.parallelism == 16
    assert [p.scheduler_name for p in c.profiles] == ["default-scheduler"]


def test_api_version_and_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _load_error(tmp_path, monkeypatch, "kind: KubeSchedulerConfiguration\n") == (
        'sched.yaml: apiVersion: Required value (want "kubescheduler.config.k8s.io/v1")'
    )
    assert _load_error(tmp_path, monkeypatch, "apiVersion: kubescheduler.config.k8s.io/v1\n") == (
        'sched.yaml: kind: Required value (want "KubeSchedulerConfiguration")'
    )
    text = "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
    assert _load_error(tmp_path, monkeypatch, text) == (
        'sched.yaml: apiVersion: no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3"'
    )
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n"
    assert _load_error(tmp_path, monkeypatch, text) == (
        'sched.yaml: kind: no kind "Policy" is registered for version "kubescheduler.config.k8s.io/v1"'
    )


def test_malformed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _load_error(tmp_path, monkeypatch, "") == "sched.yaml: empty configuration document"
    assert (
        _load_error(tmp_path, monkeypatch, "- a\n") == "sched.yaml: configuration must be a mapping, got list"
    )
    assert _load_error(tmp_path, monkeypatch, HEADER + "parallelism: 1\nparallelism: 2\n") == (
        'sched.yaml: line 4: key "parallelism" already set in map'
    )
    assert _load_error(tmp_path, monkeypatch, "a: [\n").startswith("sched.yaml: invalid YAML:")
    assert _load_error(tmp_path, monkeypatch, "{", "s.json").startswith("s.json: invalid JSON:")
    assert (
        _load_error(tmp_path, monkeypatch, '{"a": 1, "a": 2}', "s.json")
        == 's.json: key "a" already set in map'
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as exc:
        load_config("missing.yaml")
    assert str(exc.value) == "missing.yaml: cannot read: No such file or directory"


def test_deprecated_bind_addresses_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = _write(
        tmp_path, monkeypatch, HEADER + "healthzBindAddress: 0.0.0.0:10251\nmetricsBindAddress: ''\n"
    )
    c = load_config(name)
    assert c.healthz_bind_address == "0.0.0.0:10251"
    assert c.metrics_bind_address == ""


def test_validation_error_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEADER + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 120\n"
    assert _load_error(tmp_path, monkeypatch, text) == (
        "sched.yaml: profiles[0].percentageOfNodesToScore: not in valid range [0-100]"
    )
