"""Field defaults, aliases, strictness and durations of the v1 config models."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from kubesched.config import (
    ClientConnectionConfiguration,
    Extender,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    Plugins,
    format_go_duration,
    parse_go_duration,
)
from kubesched.config.duration import parse_go_duration_nanos
from kubesched.config.types import EXTENSION_POINTS, point_json_name


def test_top_level_defaults() -> None:
    c = KubeSchedulerConfiguration()
    assert c.api_version == "kubescheduler.config.k8s.io/v1"
    assert c.kind == "KubeSchedulerConfiguration"
    assert c.parallelism == 16
    assert c.percentage_of_nodes_to_score is None
    assert c.pod_initial_backoff_seconds == 1
    assert c.pod_max_backoff_seconds == 10
    assert c.enable_profiling is True
    assert c.enable_contention_profiling is True
    assert c.delay_cache_until_active is False
    assert c.healthz_bind_address is None
    assert c.metrics_bind_address is None
    assert c.profiles == []
    assert c.extenders == []


def test_client_connection_defaults() -> None:
    cc = KubeSchedulerConfiguration().client_connection
    assert cc == ClientConnectionConfiguration(
        kubeconfig="",
        accept_content_types="",
        content_type="application/vnd.kubernetes.protobuf",
        qps=50.0,
        burst=100,
    )
    assert cc.kubeconfig == ""
    assert cc.accept_content_types == ""
    assert cc.content_type == "application/vnd.kubernetes.protobuf"
    assert cc.qps == 50.0
    assert cc.burst == 100


def test_client_connection_zero_values_take_defaults() -> None:
    cc = ClientConnectionConfiguration.model_validate_json('{"contentType": "", "qps": 0, "burst": 0}')
    assert (cc.content_type, cc.qps, cc.burst) == ("application/vnd.kubernetes.protobuf", 50.0, 100)


def test_leader_election_defaults() -> None:
    le = KubeSchedulerConfiguration().leader_election
    assert le.leader_elect is True
    assert le.lease_duration == 15.0
    assert le.renew_deadline == 10.0
    assert le.retry_period == 2.0
    assert le.resource_lock == "leases"
    assert le.resource_name == "kube-scheduler"
    assert le.resource_namespace == "kube-system"


def test_leader_election_parses_durations_and_zero_defaults() -> None:
    le = LeaderElectionConfiguration.model_validate_json(
        '{"leaseDuration": "1m30s", "renewDeadline": "0s", "retryPeriod": "250ms", "resourceName": ""}'
    )
    assert le.lease_duration == 90.0
    assert le.renew_deadline == 10.0
    assert le.retry_period == 0.25
    assert le.resource_name == "kube-scheduler"


def test_duration_number_rejected_from_json_but_accepted_from_python() -> None:
    with pytest.raises(ValidationError) as exc:
        LeaderElectionConfiguration.model_validate_json('{"leaseDuration": 15}')
    assert 'invalid duration 15: must be a string such as "15s"' in str(exc.value)
    assert LeaderElectionConfiguration(lease_duration=20).lease_duration == 20.0


def test_contention_profiling_follows_profiling_when_unset() -> None:
    assert KubeSchedulerConfiguration(enable_profiling=False).enable_contention_profiling is False
    c = KubeSchedulerConfiguration(enable_profiling=False, enable_contention_profiling=True)
    assert c.enable_contention_profiling is True
    c2 = KubeSchedulerConfiguration.model_validate_json(
        '{"enableProfiling": true, "enableContentionProfiling": false}'
    )
    assert c2.enable_contention_profiling is False


def test_extender_defaults() -> None:
    e = Extender(url_prefix="http://x")
    assert e.name == "http://x"
    assert (e.filter_verb, e.preempt_verb, e.prioritize_verb, e.bind_verb) == ("", "", "", "")
    assert e.weight == 0
    assert e.enable_https is False
    assert e.tls_config is None
    assert e.http_timeout == 5.0
    assert e.node_cache_capable is False
    assert e.managed_resources == []
    assert e.ignorable is False
    assert Extender.model_validate_json('{"httpTimeout": "0s"}').http_timeout == 5.0


def test_extender_aliases_and_tls() -> None:
    e = Extender.model_validate_json(
        '{"urlPrefix": "https://e", "enableHTTPS": true, "httpTimeout": "1.5s",'
        ' "tlsConfig": {"insecure": true, "serverName": "e", "certFile": "c", "keyFile": "k", "caFile": "ca",'
        ' "certData": "Y2VydA==", "keyData": "a2V5", "caData": ""},'
        ' "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": true}]}'
    )
    assert e.enable_https is True
    assert e.http_timeout == 1.5
    assert e.tls_config == ExtenderTLSConfig(
        insecure=True,
        server_name="e",
        cert_file="c",
        key_file="k",
        ca_file="ca",
        cert_data=b"cert",
        key_data=b"key",
        ca_data=b"",
    )
    assert e.managed_resources[0].ignored_by_scheduler is True
    # the Go field is enableHTTPS; the plain camelCase spelling is an unknown field
    with pytest.raises(ValidationError):
        Extender.model_validate_json('{"enableHttps": true}')


def test_tls_bad_base64() -> None:
    with pytest.raises(ValidationError) as exc:
        ExtenderTLSConfig.model_validate_json('{"caData": "%%%"}')
    assert "illegal base64 data" in str(exc.value)


def test_plugins_has_13_points_with_camel_names() -> None:
    assert len(EXTENSION_POINTS) == 13
    assert [point_json_name(p) for p in EXTENSION_POINTS] == [
        "preEnqueue",
        "queueSort",
        "preFilter",
        "filter",
        "postFilter",
        "preScore",
        "score",
        "reserve",
        "permit",
        "preBind",
        "bind",
        "postBind",
        "multiPoint",
    ]
    p = Plugins()
    for point in EXTENSION_POINTS:
        assert p.point(point).enabled == [] and p.point(point).disabled == []
    with pytest.raises(KeyError):
        p.point("nope")


def test_strict_decoding() -> None:
    with pytest.raises(ValidationError):
        KubeSchedulerConfiguration.model_validate_json('{"parallelism": "16"}')
    with pytest.raises(ValidationError):
        KubeSchedulerConfiguration.model_validate_json('{"parallelism": 2147483648}')
    with pytest.raises(ValidationError):
        KubeSchedulerConfiguration.model_validate_json('{"unknownField": 1}')
    # snake_case names work from Python
    assert KubeSchedulerConfiguration(pod_max_backoff_seconds=30).pod_max_backoff_seconds == 30


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("300ms", 0.3),
        ("-2m", -120.0),
        ("+5s", 5.0),
        ("1h2m3s4ms5us6ns", 3723.004005006),
        ("2µs", 2e-6),
        ("2μs", 2e-6),
        (".5s", 0.5),
        ("1.s", 1.0),
    ],
)
def test_parse_go_duration(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("15", 'time: missing unit in duration "15"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("s", 'time: invalid duration "s"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_parse_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_go_duration(text)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (15, "15s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (60, "1m0s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (2e-6, "2µs"),
        (1e-9, "1ns"),
        (-2, "-2s"),
        (5400, "1h30m0s"),
    ],
)
def test_format_go_duration(seconds: float, text: str) -> None:
    assert format_go_duration(seconds) == text


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_duration_round_trip_nanos(nanos: int) -> None:
    assert parse_go_duration_nanos(format_go_duration(nanos / 1e9)) == round((nanos / 1e9) * 1e9)
