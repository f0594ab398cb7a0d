"""``deploy/``: every manifest validates against the Kubernetes OpenAPI schemas (strict, offline,
via ``kubernetes-validate``), the embedded KubeSchedulerConfiguration loads, RBAC lists rules
explicitly, and the Deployment's command line parses with ``kubesched run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config.load import parse_config

kubernetes_validate = pytest.importorskip("kubernetes_validate")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BASE = DEPLOY / "base"
K8S_VERSION = "1.35.0"


def documents() -> list[tuple[str, dict[str, Any]]]:
    """The objects of the kustomize base, read from the files its kustomization lists (the base
    has no transformers beyond a label, so this is what ``kubectl kustomize`` renders)."""
    out = []
    for name in yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"]:
        f = BASE / name
        for i, doc in enumerate(yaml.safe_load_all(f.read_text())):
            if doc is not None:
                out.append((f"{f.name}#{i}", doc))
    return out


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for _, d in documents() if d["kind"] == kind]


def test_deploy_has_the_expected_objects() -> None:
    kinds = sorted((d["kind"], d["metadata"]["name"]) for _, d in documents())
    assert kinds == [
        ("ClusterRole", "kubesched:kube-scheduler"),
        ("ClusterRole", "kubesched:metrics-reader"),
        ("ClusterRole", "kubesched:prepull-priorityclass"),
        ("ClusterRole", "kubesched:volume-scheduler"),
        ("ClusterRoleBinding", "kubesched:auth-delegator"),
        ("ClusterRoleBinding", "kubesched:kube-scheduler"),
        ("ClusterRoleBinding", "kubesched:prepull-priorityclass"),
        ("ClusterRoleBinding", "kubesched:volume-scheduler"),
        ("ConfigMap", "kubesched-config"),
        ("Deployment", "kubesched"),
        ("Role", "kubesched:leader-election"),
        ("Role", "kubesched:prepull"),
        ("RoleBinding", "kubesched:extension-apiserver-authentication-reader"),
        ("RoleBinding", "kubesched:leader-election"),
        ("RoleBinding", "kubesched:prepull"),
        ("Service", "kubesched-metrics"),
        ("ServiceAccount", "kubesched"),
    ]


@pytest.mark.parametrize(("where", "doc"), documents(), ids=[w for w, _ in documents()])
def test_manifest_is_valid_against_openapi_schema(where: str, doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_validator_rejects_a_broken_manifest() -> None:
    dep = by_kind("Deployment")[0]
    broken = {**dep, "spec": {**dep["spec"], "replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_configmap_config_loads_with_a_kubesched_profile() -> None:
    cm = by_kind("ConfigMap")[0]
    cfg = parse_config(yaml.safe_load(cm["data"]["config.yaml"]))
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    le = cfg.leader_election
    assert (le.leader_elect, le.resource_lock, le.resource_name, le.resource_namespace) == (
        True,
        "leases",
        "kubesched",
        "kube-system",
    )
    role = next(r for r in by_kind("Role") if r["metadata"]["name"] == "kubesched:leader-election")
    assert role["metadata"]["namespace"] == le.resource_namespace
    assert {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [le.resource_name],
        "verbs": ["get", "update"],
    } in role["rules"]


def _grants(role: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    out = set()
    for r in role["rules"]:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                for v in r["verbs"]:
                    for n in r.get("resourceNames") or ["*any*"]:
                        out.add((g, res, v, n))
    return out


READ = ("get", "list", "watch")


#: What upstream's bootstrap ClusterRoles grant (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go,
#: v1.35): ``system:kube-scheduler`` (without its leader-election and legacy endpoints lock rules) and
#: ``system:volume-scheduler``; plus ``system:auth-delegator``.
UPSTREAM_KUBE_SCHEDULER = (
    {(g, "events", v, "*any*") for g in ("", "events.k8s.io") for v in ("create", "patch", "update")}
    | {("", "nodes", v, "*any*") for v in READ}
    | {("", "pods", v, "*any*") for v in (*READ, "delete")}
    | {("", r, "create", "*any*") for r in ("pods/binding", "bindings")}
    | {("", "pods/status", v, "*any*") for v in ("patch", "update")}
    | {
        ("", r, v, "*any*")
        for r in (
            "services",
            "replicationcontrollers",
            "namespaces",
            "persistentvolumeclaims",
            "persistentvolumes",
        )
        for v in READ
    }
    | {(g, "replicasets", v, "*any*") for g in ("apps", "extensions") for v in READ}
    | {("apps", "statefulsets", v, "*any*") for v in READ}
    | {("policy", "poddisruptionbudgets", v, "*any*") for v in READ}
    | {
        ("authentication.k8s.io", "tokenreviews", "create", "*any*"),
        ("authorization.k8s.io", "subjectaccessreviews", "create", "*any*"),
    }
    | {
        ("storage.k8s.io", r, v, "*any*")
        for r in ("csinodes", "csidrivers", "csistoragecapacities")
        for v in READ
    }
    | {("resource.k8s.io", r, v, "*any*") for r in ("deviceclasses", "resourceslices") for v in READ}
    | {
        ("resource.k8s.io", r, v, "*any*")
        for r in ("resourceclaims", "resourceclaims/status")
        for v in (*READ, "update", "patch")
    }
)
UPSTREAM_VOLUME_SCHEDULER = {
    ("", r, v, "*any*")
    for r in ("persistentvolumes", "persistentvolumeclaims")
    for v in (*READ, "update", "patch")
} | {("storage.k8s.io", "storageclasses", v, "*any*") for v in READ}


def test_rbac_is_explicit_and_within_the_bootstrap_roles() -> None:
    for _, d in documents():
        if d["kind"] in ("ClusterRole", "Role"):
            for r in d["rules"]:
                assert "*" not in r.get("apiGroups", []) + r.get("resources", []) + r["verbs"], (
                    d["metadata"]["name"],
                    r,
                )
    roles = {d["metadata"]["name"]: d for d in by_kind("ClusterRole")}
    ks = _grants(roles["kubesched:kube-scheduler"])
    vs = _grants(roles["kubesched:volume-scheduler"])
    assert ks <= UPSTREAM_KUBE_SCHEDULER
    assert vs <= UPSTREAM_VOLUME_SCHEDULER
    assert not ks & vs  # every grant once
    watched = (
        {("", r) for r in ("nodes", "pods", "services", "replicationcontrollers", "namespaces")}
        | {("apps", "replicasets"), ("apps", "statefulsets"), ("policy", "poddisruptionbudgets")}
        | {("storage.k8s.io", r) for r in ("csinodes", "csidrivers", "csistoragecapacities")}
        | {("resource.k8s.io", r) for r in ("deviceclasses", "resourceslices", "resourceclaims")}
    )
    expected = {(g, r, v, "*any*") for g, r in watched for v in ("list", "watch")}
    expected |= {
        ("events.k8s.io", "events", "create", "*any*"),
        ("events.k8s.io", "events", "patch", "*any*"),
        ("", "pods", "delete", "*any*"),
        ("", "pods/binding", "create", "*any*"),
        ("", "pods/status", "patch", "*any*"),
        ("resource.k8s.io", "resourceclaims", "get", "*any*"),
        ("resource.k8s.io", "resourceclaims", "update", "*any*"),
        ("resource.k8s.io", "resourceclaims/status", "patch", "*any*"),
    }
    assert ks == expected
    assert vs == (
        {
            ("", r, v, "*any*")
            for r in ("persistentvolumes", "persistentvolumeclaims")
            for v in ("list", "watch", "update")
        }
        | {("storage.k8s.io", "storageclasses", v, "*any*") for v in ("list", "watch")}
    )
    assert roles["kubesched:metrics-reader"]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    bindings = {b["metadata"]["name"]: b for b in by_kind("ClusterRoleBinding")}
    assert bindings["kubesched:auth-delegator"]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:auth-delegator",
    }
    role_bindings = {b["metadata"]["name"]: b for b in by_kind("RoleBinding")}
    reader = role_bindings["kubesched:extension-apiserver-authentication-reader"]
    assert (reader["metadata"]["namespace"], reader["roleRef"]) == (
        "kube-system",
        {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "extension-apiserver-authentication-reader",
        },
    )
    sa = by_kind("ServiceAccount")[0]["metadata"]
    for b in by_kind("ClusterRoleBinding") + by_kind("RoleBinding"):
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]


def test_deployment_runs_two_leader_elected_replicas_with_probes() -> None:
    from kubesched.cli.run import run

    dep = by_kind("Deployment")[0]
    spec = dep["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == by_kind("ServiceAccount")[0]["metadata"]["name"]
    (c,) = pod["containers"]
    cmd = c["command"]
    assert cmd[:5] == ["kubesched", "run", "--config", "/etc/kubesched/config.yaml", "--leader-elect=true"]
    ctx = run.make_context("run", list(cmd[2:]))  # every flag exists and parses
    assert ctx.params["leader_elect"] is True and ctx.params["config_file"] == "/etc/kubesched/config.yaml"
    port = ctx.params["secure_port"]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port, "scheme": "HTTPS"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port, "scheme": "HTTPS"}
    mount = next(m for m in c["volumeMounts"] if m["mountPath"] == "/etc/kubesched")
    vol = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert vol["configMap"]["name"] == by_kind("ConfigMap")[0]["metadata"]["name"]
    assert "config.yaml" in by_kind("ConfigMap")[0]["data"]


def test_dockerfile_is_multi_stage_without_the_report_stack() -> None:
    lines = [
        ln.strip()
        for ln in (DEPLOY / "Dockerfile").read_text().splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    stages = [ln for ln in lines if ln.startswith("FROM ")]
    assert stages == ["FROM python:3.11-slim AS build", "FROM python:3.11-slim AS runtime"]
    runtime = lines[lines.index(stages[1]) :]
    assert "COPY --from=build /wheels /wheels" in runtime
    install = next(ln for ln in runtime if ln.startswith("RUN pip install"))
    assert install.startswith("RUN pip install --no-index --find-links /wheels kubesched ")
    assert "[" not in install  # no extras: no plotly, pandas, dask
    assert 'ENTRYPOINT ["kubesched"]' in runtime and any(ln.startswith("USER 65532") for ln in runtime)
    import tomllib

    project = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"]).lower()
    for heavy in ("plotly", "pandas", "dask", "playwright"):
        assert heavy not in base, heavy
    assert any(d.startswith("plotly") for d in project["optional-dependencies"]["report"])
