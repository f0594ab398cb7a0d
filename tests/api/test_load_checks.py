"""Every loadable kind is checked on load as the API server checks it on create: one located line
per malformed object, exit 2, for simulate (serve shares the loader's validation and reports the same
line, then serves the other objects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.api.load_checks import check_loaded_object
from kubesched.cli.main import main
from kubesched.errors import ManifestError

PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)


def _pdb(spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "d"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("kind", "obj", "message"),
    [
        (
            "PersistentVolume",
            {"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "big"}}},
            'spec.capacity.storage: invalid quantity "big"',
        ),
        (
            "PersistentVolumeClaim",
            {"metadata": {"name": "c"}, "spec": {"resources": {"requests": {"storage": "1x"}}}},
            'spec.resources.requests.storage: invalid quantity "1x"',
        ),
        (
            "StorageClass",
            {"metadata": {"name": "s"}, "provisioner": "p", "volumeBindingMode": "Later"},
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
        ),
        (
            "CSINode",
            {"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": "x"}}]}},
            "spec.drivers[0].allocatable.count: must be an integer, got string",
        ),
        (
            "CSIStorageCapacity",
            {"metadata": {"name": "c"}, "storageClassName": "s", "capacity": "lots"},
            'capacity: invalid quantity "lots"',
        ),
        (
            "PodDisruptionBudget",
            _pdb({"minAvailable": "lots"}),
            f'spec.minAvailable: Invalid value: "lots": {PERCENT}',
        ),
        (
            "PodDisruptionBudget",
            _pdb({"maxUnavailable": "120%"}),
            'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
        ),
        (
            "PodDisruptionBudget",
            _pdb({"minAvailable": -1}),
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "PodDisruptionBudget",
            _pdb({"minAvailable": 1, "maxUnavailable": 1}),
            "spec: minAvailable and maxUnavailable cannot be both set",
        ),
        (
            "PodDisruptionBudget",
            _pdb({"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}),
            'spec.selector.matchExpressions[0].operator: unsupported operator "Near"',
        ),
        (
            "Service",
            {"metadata": {"name": "s"}, "spec": {"selector": {"bad key!": "x"}}},
            "spec.selector: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "ReplicaSet",
            {"metadata": {"name": "r"}, "spec": {"selector": {"matchLabels": "app"}}},
            "spec.selector.matchLabels: must be an object, got string",
        ),
        (
            "StatefulSet",
            {"metadata": {"name": "s"}, "spec": {"replicas": "three"}},
            "spec.replicas: must be an integer, got string",
        ),
        (
            "PriorityClass",
            {"metadata": {"name": "huge"}, "value": 2_000_000_000},
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
    ],
)
def test_each_kind_is_checked(kind: str, obj: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError) as e:
        check_loaded_object(kind, {"kind": kind, **obj})
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("kind", "obj"),
    [
        ("PodDisruptionBudget", _pdb({"minAvailable": "50%", "selector": {"matchLabels": {"app": "x"}}})),
        ("PodDisruptionBudget", _pdb({"maxUnavailable": 0})),
        ("PriorityClass", {"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000}),
        (
            "StorageClass",
            {"metadata": {"name": "s"}, "provisioner": "p", "volumeBindingMode": "WaitForFirstConsumer"},
        ),
        ("PersistentVolume", {"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "5Gi"}}}),
    ],
)
def test_valid_objects_pass(kind: str, obj: dict[str, object]) -> None:
    check_loaded_object(kind, {"kind": kind, **obj})


def test_simulate_refuses_a_malformed_pv_and_pdb_in_one_line(tmp_path: Path) -> None:
    pv = tmp_path / "pv.yaml"
    pv.write_text(
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n"
        "spec: {capacity: {storage: big}, accessModes: [ReadWriteOnce]}\n"
    )
    pdb = tmp_path / "pdb.yaml"
    pdb.write_text(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: keep, namespace: default}\n"
        "spec: {minAvailable: lots, selector: {matchLabels: {app: web}}}\n"
    )
    node = tmp_path / "node.yaml"
    node.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(node), "-f", str(pv)])
    assert (r.exit_code, r.output) == (
        2,
        f'error: {pv} doc 1 (PersistentVolume pv1): spec.capacity.storage: invalid quantity "big"\n',
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(node), "-f", str(pdb)])
    assert r.exit_code == 2
    assert r.output == (
        f"error: {pdb} doc 1 (PodDisruptionBudget default/keep): spec.minAvailable: Invalid value: "
        f'"lots": {PERCENT}\n'
    )


def test_a_kind_added_to_the_registry_brings_its_check() -> None:
    from kubesched.api import kinds

    def check(obj: dict[str, object]) -> None:
        if obj.get("spec") != {"size": "small"}:
            raise ManifestError("spec.size", 'Unsupported value: "huge"')

    row = kinds.Kind("example.com", "v1", "Widget", "widgets", "widget", True, validate=check, loadable=True)
    with kinds.extra_kinds(row):
        check_loaded_object(
            "Widget", {"kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "small"}}
        )
        with pytest.raises(ManifestError, match='spec.size: Unsupported value: "huge"'):
            check_loaded_object(
                "Widget", {"kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "huge"}}
            )
    assert kinds.validator("PodDisruptionBudget") is not None and kinds.validator("Namespace") is None
    assert kinds.validator("PersistentVolume") == kinds.parser("PersistentVolume")  # the parser is the check


@pytest.mark.parametrize(
    ("kind", "field", "value", "message"),
    [
        (
            "ReplicaSet",
            "replicas",
            -1,
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "ReplicaSet",
            "replicas",
            2**70,
            "spec.replicas: Invalid value: 1180591620717411303424: must be a 32-bit integer (at most 2147483647)",
        ),
        (
            "Deployment",
            "replicas",
            2**31,
            "spec.replicas: Invalid value: 2147483648: must be a 32-bit integer (at most 2147483647)",
        ),
        (
            "ReplicationController",
            "replicas",
            -3,
            "spec.replicas: Invalid value: -3: must be greater than or equal to 0",
        ),
        (
            "Job",
            "parallelism",
            2**40,
            "spec.parallelism: Invalid value: 1099511627776: must be a 32-bit integer (at most 2147483647)",
        ),
        ("Job", "completions", -1, "spec.completions: Invalid value: -1: must be greater than or equal to 0"),
    ],
)
def test_workload_counts_are_nonnegative_int32(kind: str, field: str, value: int, message: str) -> None:
    """A workload whose count no API server would accept (and whose expansion would never end) is
    refused on load."""
    from kubesched.api.load_checks import check_loaded_object

    obj = {
        "apiVersion": "batch/v1"
        if kind == "Job"
        else ("v1" if kind == "ReplicationController" else "apps/v1"),
        "kind": kind,
        "metadata": {"name": "w", "namespace": "shop"},
        "spec": {field: value},
    }
    with pytest.raises(ManifestError) as err:
        check_loaded_object(kind, obj)
    assert str(err.value) == message


def _workload(kind: str, template: object) -> dict[str, object]:
    api = {"Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    spec: dict[str, object] = {"template": template}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        spec["selector"] = {"matchLabels": {"app": "w"}}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "shop"}, "spec": spec}


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ({"metadata": {"labels": {"app": "w"}}, "spec": None}, "spec.template.spec: required"),
        ({"metadata": {"labels": {"app": "w"}}, "spec": {}}, "spec.template.spec.containers: Required value"),
        (
            {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [None]}},
            "spec.template.spec.containers[0]: must be an object",
        ),
        (
            {
                "metadata": {"labels": {"app": "w"}},
                "spec": {
                    "containers": [{"name": "c", "image": "x"}],
                    "tolerations": [{"key": "k", "operator": "Bogus"}],
                },
            },
            'spec.template.spec.tolerations[0].operator: unsupported value "Bogus"',
        ),
    ],
)
@pytest.mark.parametrize(
    "kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"]
)
def test_workload_templates_are_checked_as_pods(kind: str, template: object, message: str) -> None:
    """A template whose pods no parser would accept is refused at the workload (the API server's
    ``ValidatePodTemplateSpec``), not reported later at each pod a controller creates from it."""
    with pytest.raises(ManifestError) as err:
        check_loaded_object(kind, _workload(kind, template))
    assert str(err.value) == message
    ok = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    check_loaded_object(kind, _workload(kind, ok))


def test_simulate_names_the_workload_of_a_malformed_template(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
    )
    rs = tmp_path / "rs.yaml"
    rs.write_text(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n"
        "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [null]}\n"
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(node), "-f", str(rs)])
    assert (r.exit_code, r.output) == (
        2,
        f"error: {rs} doc 1 (ReplicaSet shop/web): spec.template.spec.containers[0]: must be an object\n",
    )


def _pod(**spec: object) -> dict[str, object]:
    container: dict[str, object] = {"name": "c", "image": "i"}
    container.update(spec.pop("container", {}))  # type: ignore[call-overload]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [container], **spec},
    }


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (
            _pod(container={"ports": [{"containerPort": 99999999}]}),
            "spec.containers[0].ports[0].containerPort: Invalid value: 99999999: must be between 1 and 65535, "
            "inclusive",
        ),
        (
            _pod(container={"ports": [{"containerPort": 0}]}),
            "spec.containers[0].ports[0].containerPort: Required value",
        ),
        (
            _pod(container={"ports": [{"hostPort": 80}]}),
            "spec.containers[0].ports[0].containerPort: Required value",
        ),
        (
            _pod(container={"ports": [{"containerPort": 80, "hostPort": 70000}]}),
            "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            _pod(priority=99999999999999999999),
            "spec.priority: Invalid value: 99999999999999999999: must be a 32-bit integer (between -2147483648 "
            "and 2147483647)",
        ),
        (
            _pod(priority=-(2**31) - 1),
            "spec.priority: Invalid value: -2147483649: must be a 32-bit integer (between -2147483648 and "
            "2147483647)",
        ),
        (
            _pod(container={"resources": {"requests": {"cpu": "four"}}}),
            'spec.containers[0].resources.requests.cpu: invalid quantity "four"',
        ),
    ],
)
def test_pod_ranges(pod: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError) as exc:
        check_loaded_object("Pod", pod)
    assert str(exc.value) == message


def test_pod_limits_of_the_ranges_pass() -> None:
    check_loaded_object(
        "Pod", _pod(priority=2**31 - 1, container={"ports": [{"containerPort": 65535, "hostPort": 0}]})
    )
    check_loaded_object(
        "Pod", _pod(priority=-(2**31), container={"ports": [{"containerPort": 1, "hostPort": 1}]})
    )


NODE = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
)


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: Bad_NS!}\n"
            "spec: {containers: [{name: c, image: i}]}\n",
            'doc 2 (Pod Bad_NS!/p1): metadata.namespace: Invalid value: "Bad_NS!": a lowercase RFC 1123 label '
            "must consist of lower case alphanumeric characters or '-', and must start and end with an "
            "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            "kind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c, image: i}]}\n",
            "doc 2 (Pod default/p1): apiVersion not set",
        ),
    ],
)
def test_simulate_refuses_bad_identity_in_one_line(tmp_path: Path, pod: str, message: str) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(NODE + pod)
    r = CliRunner().invoke(main, ["simulate", "-f", str(f)])
    assert (r.exit_code, r.output) == (2, f"error: {f} {message}\n")


def test_simulate_reports_a_pod_with_a_bad_port_once(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\n"
        "spec: {containers: [{name: c, image: i, ports: [{containerPort: 99999999}]}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: i}]}\n"
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "json"])
    assert r.exit_code == 1
    pods = {p["name"]: p for p in json.loads(r.stdout)["pods"]}
    assert pods["ok"]["status"] == "Scheduled"
    assert (pods["bad"]["status"], pods["bad"]["message"]) == (
        "Error",
        f"{f} doc 2 (Pod default/bad): spec.containers[0].ports[0].containerPort: Invalid value: 99999999: "
        "must be between 1 and 65535, inclusive",
    )
