"""``deploy/`` is a kustomize base with overlays and a monitoring kustomization: each renders with
``kubectl kustomize``, every object validates against the Kubernetes 1.35 schemas, and every metric
the dashboard and alert rules name is one kubesched serves on /metrics."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S_VERSION = "1.35.0"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl (Debian kubernetes-client) is not installed"
)
TARGETS = [
    "base",
    "overlays/namespace",
    "overlays/single-replica",
    "overlays/image-aware",
    "overlays/image-aware-prepull",
    "monitoring",
    "record",
]
#: custom resources of the Prometheus Operator: not in the Kubernetes schemas, checked by shape below
CRDS = {"ServiceMonitor", "PrometheusRule"}


def render(target: str) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    out = subprocess.run(
        [KUBECTL, "kustomize", str(DEPLOY / target)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


@needs_kubectl
@pytest.mark.parametrize("target", TARGETS)
def test_renders_and_validates(target: str) -> None:
    objs = render(target)
    assert objs
    for o in objs:
        if o["kind"] in CRDS:
            assert o["apiVersion"] == "monitoring.coreos.com/v1" and o["spec"]
            continue
        kubernetes_validate.validate(o, K8S_VERSION, strict=True)


@needs_kubectl
def test_overlays_change_what_they_say() -> None:
    ns = render("overlays/namespace")
    assert {
        o["metadata"].get("namespace")
        for o in ns
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding", "Namespace")
    } == {"kubesched-system"}
    cm = next(o for o in ns if o["kind"] == "ConfigMap")
    assert (
        yaml.safe_load(cm["data"]["config.yaml"])["leaderElection"]["resourceNamespace"] == "kubesched-system"
    )
    single = next(o for o in render("overlays/single-replica") if o["kind"] == "Deployment")
    assert single["spec"]["replicas"] == 1
    assert "--leader-elect=false" in single["spec"]["template"]["spec"]["containers"][0]["command"]
    from kubesched.config.load import parse_config

    cm = next(o for o in render("overlays/image-aware") if o["kind"] == "ConfigMap")
    cfg = parse_config(yaml.safe_load(cm["data"]["config.yaml"]))
    assert cfg.percentage_of_nodes_to_score == 100
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]


@needs_kubectl
def test_recorder_rbac_is_read_only_and_covers_what_it_watches() -> None:
    """deploy/record grants get/list/watch on every kind ``kubesched record`` watches, and nothing
    else (no write verb, no Secrets or ConfigMaps)."""
    from kubesched.api import kinds
    from kubesched.client.kube import collection_path
    from kubesched.modes.record.recorder import recorded_kinds

    objs = render("record")
    [role] = [o for o in objs if o["kind"] == "ClusterRole"]
    grants = {
        (g, r, v)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert {v for _, _, v in grants} == {"get", "list", "watch"}
    assert not {r for _, r, _ in grants} & {"secrets", "configmaps"}
    for kind in recorded_kinds():
        api_version = kinds.api_version(kind)
        assert api_version is not None
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        resource = collection_path(kind, None).rsplit("/", 1)[1]
        assert {(group, resource, v) for v in ("list", "watch")} <= grants, kind
    [binding] = [o for o in objs if o["kind"] == "ClusterRoleBinding"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kubesched-recorder", "namespace": "kube-system"}
    ]


@needs_kubectl
def test_image_aware_overlays_are_the_measured_profile() -> None:
    """The image-aware overlay's configuration is examples/replay/image-aware.yaml (the profile
    the docs measure) with the deployment's schedulerName and leader election, and the committed
    patch is what deploy/overlays/generate.py writes; the pre-pull overlay is the same plus
    ``--prepull``."""
    import importlib.util

    from kubesched.config.load import parse_config

    spec = importlib.util.spec_from_file_location("generate_overlays", DEPLOY / "overlays" / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    assert (
        DEPLOY / "overlays" / "image-aware" / "config-patch.yaml"
    ).read_text() == generate.render_patch(), "run python deploy/overlays/generate.py"
    measured = yaml.safe_load((DEPLOY.parent / "examples" / "replay" / "image-aware.yaml").read_text())
    for target in ("overlays/image-aware", "overlays/image-aware-prepull"):
        objs = render(target)
        cm = next(o for o in objs if o["kind"] == "ConfigMap")
        config = yaml.safe_load(cm["data"]["config.yaml"])
        [prof] = config["profiles"]
        assert prof == {**measured["profiles"][0], "schedulerName": "kubesched"}
        assert prof["pluginConfig"][0] == {
            "name": "ImagePullTimeSaved",
            "args": {
                "defaultBandwidthBytesPerSecond": 45000000,
                "scoreScaleFloorSeconds": 10,
                "scoreScale": "PodPull",
                "recentWindowSeconds": 300,
                "recentBurst": 8,
                "inFlightProgress": 0,
                "serializedPulls": True,
                "nodeShareExponent": 0.5,
            },
        }
        assert config["leaderElection"]["resourceName"] == "kubesched"
        parsed = parse_config(config)
        assert parsed.percentage_of_nodes_to_score == 100
        command = next(o for o in objs if o["kind"] == "Deployment")["spec"]["template"]["spec"][
            "containers"
        ][0]["command"]
        prepull = [a for a in command if a.startswith("--prepull")]
        assert prepull == (
            [] if target == "overlays/image-aware" else ["--prepull", "--prepull-namespace=kube-system"]
        )
    # the flags the pre-pull overlay adds are ones `kubesched run` accepts
    from click.testing import CliRunner

    from kubesched.cli.main import main

    result = CliRunner().invoke(main, ["run", "--help"])
    assert "--prepull-namespace" in result.output and "--prepull " in result.output


_PROMQL_WORDS = {
    "sum",
    "by",
    "rate",
    "max",
    "min",
    "histogram_quantile",
    "le",
    "job",
    "queue",
    "result",
    "code",
    "pod",
    "and",
    "or",
    "unless",
    "without",
    "avg",
    "count",
    "irate",
    "increase",
}


def _metric_names(expr: str) -> set[str]:
    expr = re.sub(r'"[^"]*"', '""', expr)  # label values
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    names = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr)) - _PROMQL_WORDS
    out = set()
    for n in names:
        if re.fullmatch(r"\d.*", n):
            continue
        out.add(re.sub(r"_(bucket|sum|count)$", "", n))
    return out


def _dashboard_and_rule_metrics() -> set[str]:
    names: set[str] = set()
    dash = json.loads((DEPLOY / "monitoring" / "kubesched-dashboard.json").read_text())
    for panel in dash["panels"]:
        for t in panel["targets"]:
            names |= _metric_names(t["expr"])
    rules = yaml.safe_load((DEPLOY / "monitoring" / "prometheusrule.yaml").read_text())
    for group in rules["spec"]["groups"]:
        for rule in group["rules"]:
            names |= _metric_names(rule["expr"])
    return names


def test_every_metric_named_by_dashboard_and_rules_is_served() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from kubesched.client.client_metrics import ComponentMetrics
    from kubesched.metrics import SchedulerMetrics

    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    ComponentMetrics.for_registry(registry)
    served = {
        line.split()[2]
        for line in generate_latest(registry).decode().splitlines()
        if line.startswith("# TYPE ")
    }
    served = {re.sub(r"_total$", "", n) for n in served} | served
    named = _dashboard_and_rule_metrics()
    assert named >= {
        "scheduler_pending_pods",
        "scheduler_schedule_attempts_total",
        "leader_election_master_status",
        "scheduler_scheduling_attempt_duration_seconds",
        "rest_client_requests_total",
    }
    missing = sorted(n for n in named if n not in served)
    assert missing == []
