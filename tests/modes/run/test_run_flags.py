"""``kubesched run``'s command line parses as kube-scheduler's (pflag booleans, ``-v=N``), and the
config file's ``clientConnection`` is honoured or refused by name -- never ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import Cluster, Replica, scheduler_config

from kubesched.cli.main import main
from kubesched.cli.run import run


def _params(*args: str) -> dict:
    return dict(run.make_context("run", list(args)).params)


@pytest.mark.parametrize(
    ("args", "leader_elect", "profiling"),
    [
        ((), None, None),
        (("--leader-elect",), True, None),
        (("--leader-elect", "--profiling"), True, True),
        (("--leader-elect=false", "--profiling=false"), False, False),
        (("--leader-elect=true", "--profiling=1"), True, True),
        (("--leader-elect=F", "--profiling=T"), False, True),
        (("--profiling", "-v", "3"), None, True),
    ],
)
def test_boolean_flags_take_an_optional_value(
    args: tuple[str, ...], leader_elect: bool | None, profiling: bool | None
) -> None:
    p = _params(*args)
    assert (p["leader_elect"], p["profiling"]) == (leader_elect, profiling)


@pytest.mark.parametrize("args", [("-v=4",), ("--v=4",), ("-v", "4"), ("--v", "4"), ("-v4",)])
def test_verbosity_spellings(args: tuple[str, ...]) -> None:
    assert _params(*args)["verbosity"] == 4


def test_bad_boolean_is_refused_with_pflags_message() -> None:
    res = CliRunner().invoke(main, ["run", "--leader-elect=yes"])
    assert res.exit_code == 2
    assert (
        'Invalid value for \'--leader-elect\': invalid argument "yes": strconv.ParseBool: parsing "yes": '
        "invalid syntax"
    ) in res.output


CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
{extra}
profiles:
- schedulerName: x
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "clientConnection:\n  contentType: application/vnd.kubernetes.protobuf",
            'clientConnection.contentType: "application/vnd.kubernetes.protobuf" is not supported: kubesched talks '
            "to the API server in application/json only; set application/json or leave it unset",
        ),
        (
            "clientConnection:\n  acceptContentTypes: application/vnd.kubernetes.protobuf,application/json",
            'clientConnection.acceptContentTypes: "application/vnd.kubernetes.protobuf,application/json" is not '
            "supported: kubesched accepts application/json only; set application/json or leave it unset",
        ),
        (
            "delayCacheUntilActive: true",
            "delayCacheUntilActive: true is not supported: kubesched starts its informers before campaigning for the "
            "lease (a standby replica is synced and ready to take over); set false or leave it unset",
        ),
        (
            "enableContentionProfiling: true",
            "enableContentionProfiling: true is not supported: Python has no contention (block) profile, only the "
            "CPU profile at /debug/pprof/profile; set false or leave it unset",
        ),
    ],
)
def test_unsupported_client_fields_are_refused_by_name(tmp_path: Path, extra: str, message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.format(extra=extra))
    res = CliRunner().invoke(main, ["run", "--config", str(cfg), "--secure-port", "0"])
    assert (res.exit_code, res.output) == (2, f"error: {cfg}: {message}\n")


def test_empty_content_type_means_unset(tmp_path: Path) -> None:
    from kubesched.config.load import load_config
    from kubesched.config.run_fields import check_run_fields

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        CONFIG.format(extra='clientConnection:\n  contentType: ""\nenableContentionProfiling: false')
    )
    check_run_fields(load_config(str(cfg)))  # no error


def test_config_kubeconfig_field_reaches_the_client(tmp_path: Path) -> None:
    bad = tmp_path / "kc.yaml"
    bad.write_text("- a\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        CONFIG.format(extra=f"clientConnection:\n  kubeconfig: {bad}\n  contentType: application/json")
    )
    res = CliRunner().invoke(main, ["run", "--config", str(cfg), "--secure-port", "0"])
    assert res.exit_code == 2
    assert res.output == (
        f"error: {bad}: --kubeconfig: not a kubeconfig: expected a mapping with clusters, "
        "contexts and users, got a list\n"
    )


def test_run_schedules_through_the_config_files_kubeconfig(cluster: Cluster, replicas: list[Replica]) -> None:
    """No --kubeconfig flag: clientConnection.kubeconfig names the API server."""
    cluster.add_nodes(1)
    cfg = scheduler_config(cluster.tmp, cluster.namespace)
    text = cfg.read_text().replace(
        "profiles:\n", f"clientConnection:\n  kubeconfig: {cluster.kubeconfig}\nprofiles:\n"
    )
    cfg.write_text(text)
    r = Replica(cluster, cfg, "--leader-elect=false", kubeconfig_flag=False)
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("via-config")
    assert cluster.wait_bound(["via-config"]) == {"via-config": "node-0"}
