"""Every decoder refuses an object whose ``apiVersion`` does not belong to its kind (the Pod and
Node parsers, the shape check of other kinds, ``simulate``'s loader), with a one-line error
naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.api.api_versions import check_api_version
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.shape import check_shape
from kubesched.cli.main import main
from kubesched.errors import ManifestError
from kubesched.testing import node_manifest, pod_manifest


@pytest.mark.parametrize(
    ("kind", "api_version", "message"),
    [
        ("Node", "apps/v1", 'apiVersion: must be "v1" for kind Node, got "apps/v1"'),
        ("Pod", "v2", 'apiVersion: must be "v1" for kind Pod, got "v2"'),
        ("StorageClass", "v1", 'apiVersion: must be "storage.k8s.io/v1" for kind StorageClass, got "v1"'),
        (
            "PodDisruptionBudget",
            "policy/v1beta1",
            'apiVersion: must be "policy/v1" for kind PodDisruptionBudget, got "policy/v1beta1"',
        ),
        ("Lease", 7, 'apiVersion: must be "coordination.k8s.io/v1" for kind Lease, got "7"'),
    ],
)
def test_a_foreign_api_version_is_refused(kind: str, api_version: object, message: str) -> None:
    with pytest.raises(ManifestError) as e:
        check_api_version({"apiVersion": api_version, "kind": kind}, kind)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("kind", "api_version"),
    [
        ("Node", "v1"),
        ("Node", None),
        ("Node", ""),
        ("Event", "v1"),
        ("Event", "events.k8s.io/v1"),
        ("Widget", "anything/v9"),
    ],
)
def test_own_missing_or_unknown_api_versions_pass(kind: str, api_version: object) -> None:
    check_api_version({"apiVersion": api_version, "kind": kind}, kind)


def test_parsers_and_shape_check_refuse_it() -> None:
    with pytest.raises(ManifestError, match='^apiVersion: must be "v1" for kind Node, got "apps/v1"$'):
        Node.from_manifest({**node_manifest("n1"), "apiVersion": "apps/v1"})
    with pytest.raises(ManifestError, match='^apiVersion: must be "v1" for kind Pod, got "batch/v1"$'):
        Pod.from_manifest({**pod_manifest("p"), "apiVersion": "batch/v1"})
    with pytest.raises(ManifestError, match='^apiVersion: must be "storage.k8s.io/v1" for kind StorageClass'):
        check_shape({"apiVersion": "v1", "kind": "StorageClass", "metadata": {"name": "s"}}, "StorageClass")


def test_simulate_names_the_object_and_the_field(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    )
    r = CliRunner().invoke(main, ["simulate", "-f", str(f)])
    assert r.exit_code != 0
    assert r.output.strip().splitlines()[-1] == (
        f'error: {f} doc 1 (Node n1): apiVersion: must be "v1" for kind Node, got "apps/v1"'
    )
