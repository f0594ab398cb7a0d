"""Pods kube-apiserver refuses are refused by ``serve`` on every write verb (create, update, patch,
kubectl apply), with upstream's status codes and messages; the Priority admission refuses a
``spec.priority`` that differs from what the pod's PriorityClass resolves to."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from apiserver_support import core_fixture, server_fixture
from kubernetes import client as k8s

from kubesched.embedded.apiserver import ServerHandle, write_kubeconfig

KUBECTL = shutil.which("kubectl")
BAD_CPU = (
    'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


server = server_fixture(bookmark_interval=0.2)
core = core_fixture()


def _pod(name: str = "web", cpu: Any = "100m", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


def _refused(call: Any) -> tuple[int, str, str]:
    with pytest.raises(k8s.ApiException) as exc:
        call()
    body = json.loads(exc.value.body)
    return exc.value.status, body["reason"], body["message"]


def test_bad_quantity_refused_on_create_update_and_patch(core: k8s.CoreV1Api) -> None:
    assert _refused(lambda: core.create_namespaced_pod("default", _pod(cpu="four"))) == (
        400,
        "BadRequest",
        BAD_CPU,
    )
    core.create_namespaced_pod("default", _pod())
    assert _refused(lambda: core.replace_namespaced_pod("web", "default", _pod(cpu="four"))) == (
        400,
        "BadRequest",
        BAD_CPU,
    )
    patch = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "four"}}}]}}
    assert _refused(lambda: core.patch_namespaced_pod("web", "default", patch)) == (
        400,
        "BadRequest",
        BAD_CPU,
    )
    stored = core.read_namespaced_pod("web", "default")
    assert stored.spec.containers[0].resources.requests == {"cpu": "100m"}


def test_container_port_and_priority_ranges(core: k8s.CoreV1Api) -> None:
    pod = _pod()
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 99999999}]
    assert _refused(lambda: core.create_namespaced_pod("default", pod)) == (
        422,
        "Invalid",
        'Pod "web" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 99999999: '
        "must be between 1 and 65535, inclusive",
    )
    assert _refused(lambda: core.create_namespaced_pod("default", _pod(priority=99999999999999999999))) == (
        422,
        "Invalid",
        'Pod "web" is invalid: spec.priority: Invalid value: 99999999999999999999: must be a 32-bit '
        "integer (between -2147483648 and 2147483647)",
    )


def test_priority_admission_refuses_a_priority_its_class_does_not_give(core: k8s.CoreV1Api) -> None:
    assert _refused(lambda: core.create_namespaced_pod("default", _pod(priority=5))) == (
        403,
        "Forbidden",
        'pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 0 from the given PriorityClass name",
    )
    sched = k8s.SchedulingV1Api(core.api_client)
    sched.create_priority_class({"metadata": {"name": "high"}, "value": 1000})
    assert _refused(
        lambda: core.create_namespaced_pod("default", _pod(priority=5, priorityClassName="high"))
    ) == (
        403,
        "Forbidden",
        'pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 1000 from the given PriorityClass name",
    )
    created = core.create_namespaced_pod("default", _pod(priority=1000, priorityClassName="high"))
    assert created.spec.priority == 1000
    assert core.create_namespaced_pod("default", _pod("zero", priority=0)).spec.priority == 0


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.parametrize("extra", [[], ["--validate=false"]])
def test_kubectl_apply_bad_quantity(server: ServerHandle, tmp_path: Path, extra: list[str]) -> None:
    assert KUBECTL is not None
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    manifest = tmp_path / "pod.yaml"

    def apply(cpu: str) -> subprocess.CompletedProcess[str]:
        manifest.write_text(json.dumps(_pod(cpu=cpu)))
        return subprocess.run(
            [KUBECTL, "--kubeconfig", str(kubeconfig), "apply", "-f", str(manifest), *extra],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    first = apply("four")
    assert first.returncode == 1
    assert f'Error from server (BadRequest): error when creating "{manifest}": {BAD_CPU}' in first.stderr
    assert apply("100m").returncode == 0
    again = apply("four")
    assert again.returncode == 1
    assert BAD_CPU in again.stderr


def test_generate_name_pod_is_checked_and_created(core: k8s.CoreV1Api) -> None:
    pod = _pod()
    pod["metadata"] = {"generateName": "web-"}
    created = core.create_namespaced_pod("default", pod)
    assert created.metadata.name.startswith("web-") and len(created.metadata.name) == len("web-") + 5
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "four"
    assert _refused(lambda: core.create_namespaced_pod("default", pod)) == (400, "BadRequest", BAD_CPU)


PORT_ERROR = "Invalid value: 99999999: must be between 1 and 65535, inclusive"
PORT_FIELD = "spec.containers[0].ports[0].containerPort"


def _bad_port_pod() -> dict[str, Any]:
    pod = _pod()
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 99999999}]
    return pod


def test_invalid_status_has_details_as_new_invalid(core: k8s.CoreV1Api) -> None:
    with pytest.raises(k8s.ApiException) as exc:
        core.create_namespaced_pod("default", _bad_port_pod())
    assert json.loads(exc.value.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Pod "web" is invalid: {PORT_FIELD}: {PORT_ERROR}',
        "reason": "Invalid",
        "details": {
            "name": "web",
            "kind": "Pod",
            "causes": [{"reason": "FieldValueInvalid", "message": PORT_ERROR, "field": PORT_FIELD}],
        },
        "code": 422,
    }


def test_invalid_status_names_the_group_of_a_non_core_kind(core: k8s.CoreV1Api) -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep"},
        "spec": {"minAvailable": "lots", "selector": {"matchLabels": {"app": "web"}}},
    }
    with pytest.raises(k8s.ApiException) as exc:
        k8s.PolicyV1Api(core.api_client).create_namespaced_pod_disruption_budget("default", pdb)
    body = json.loads(exc.value.body)
    cause = body["details"]["causes"][0]
    assert body["message"] == (
        'PodDisruptionBudget.policy "keep" is invalid: spec.minAvailable: Invalid value: "lots": a valid percent string '
        "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
        "'[0-9]+%')"
    )
    assert body["message"].endswith(f"spec.minAvailable: {cause['message']}")
    assert {k: v for k, v in body["details"].items() if k != "causes"} == {
        "name": "keep",
        "group": "policy",
        "kind": "PodDisruptionBudget",
    }
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "spec.minAvailable")


def test_missing_name_is_a_required_value_cause(core: k8s.CoreV1Api) -> None:
    pod = _pod()
    pod["metadata"] = {}
    with pytest.raises(k8s.ApiException) as exc:
        core.create_namespaced_pod("default", pod)
    body = json.loads(exc.value.body)
    assert (
        body["message"]
        == 'Pod "" is invalid: metadata.name: Required value: name or generateName is required'
    )
    assert body["details"] == {
        "kind": "Pod",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value: name or generateName is required",
                "field": "metadata.name",
            }
        ],
    }


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_apply_prints_the_invalid_pod(server: ServerHandle, tmp_path: Path) -> None:
    assert KUBECTL is not None
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(json.dumps(_bad_port_pod()))
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "apply", "-f", str(manifest)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stderr) == (1, f'The Pod "web" is invalid: {PORT_FIELD}: {PORT_ERROR}\n')
