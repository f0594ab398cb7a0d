"""Tests for kubesched.embedded.manifests (loading and writing manifests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.manifests import load_manifests, write_manifests
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ManifestError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "manifests"


def test_multi_document_yaml() -> None:
    path = FIX / "multi.yaml"
    res = load_manifests([path])
    assert [m.where for m in res.manifests] == [
        f"{path} doc 1 (Node n1)",
        f"{path} doc 2 (Pod default/web-1)",
        f"{path} doc 5 (Pod prod/db-0)",
    ]
    assert res.skipped_kinds == {"ConfigMap": 1}
    web = res.manifests[1]
    assert (web.source, web.doc_index, web.item_index) == (str(path), 2, None)
    # Unquoted timestamps stay strings, as with kubectl's YAML decoder.
    assert web.obj["metadata"] == {"name": "web-1", "creationTimestamp": "2024-01-01T00:00:00Z"}
    assert res.manifests[0].obj["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}


def test_list_with_item_kinds() -> None:
    path = FIX / "list.yaml"
    res = load_manifests([str(path)])
    assert [m.where for m in res.manifests] == [
        f"{path} doc 1 item 1 (Node n2)",
        f"{path} doc 1 item 3 (Pod default/web-2)",
    ]
    assert res.skipped_kinds == {"Event": 1}


def test_typed_json_list_without_item_kinds() -> None:
    path = FIX / "podlist.json"
    res = load_manifests([path])
    assert [m.where for m in res.manifests] == [
        f"{path} doc 1 item 1 (Pod prod/api-0)",
        f"{path} doc 1 item 2 (Pod prod/api-1)",
    ]
    assert res.objects[0] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "api-0", "namespace": "prod"},
        "spec": {"containers": [{"name": "c", "image": "api:1"}]},
    }


def test_directory_recursive_sorted_and_several_paths() -> None:
    tree = FIX / "tree"
    flat = load_manifests([tree])
    assert all("/sub/" not in m.where for m in flat.manifests)  # like kubectl -f DIR without -R
    res = load_manifests([tree, FIX / "podlist.json"], recursive=True)
    assert [m.where for m in res.manifests] == [
        f"{tree}/a.json doc 1 (StorageClass fast)",
        f"{tree}/b-nodes.yml doc 1 (Node tree-n1)",
        f"{tree}/sub/c.yaml doc 1 (Deployment default/web)",
        f"{tree}/sub/c.yaml doc 2 (PersistentVolumeClaim prod/data)",
        f"{FIX / 'podlist.json'} doc 1 item 1 (Pod prod/api-0)",
        f"{FIX / 'podlist.json'} doc 1 item 2 (Pod prod/api-1)",
    ]
    assert res.skipped_kinds == {}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "bad-syntax.yaml",
            "doc 2: invalid YAML: mapping values are not allowed in this context (line 8, column 12)",
        ),
        ("not-mapping.yaml", "doc 2: expected a mapping (a Kubernetes object), got list"),
        ("no-kind.yaml", "doc 1: kind: required"),
        ("no-name.yaml", "doc 2: metadata.name: required"),
        ("list-item-no-kind.yaml", "doc 1 item 2: kind: required"),
        ("typed-list-no-name.json", "doc 1 item 2: metadata.name: required"),
        (
            "bad.json",
            "doc 1: invalid JSON: Expecting property name enclosed in double quotes (line 2, column 28)",
        ),
    ],
)
def test_errors_name_file_doc_and_field(name: str, message: str) -> None:
    path = FIX / "errors" / name
    with pytest.raises(ManifestError) as err:
        load_manifests([path])
    assert str(err.value) == f"{path} {message}"


def test_missing_path_and_bad_field_types(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"^nope\.yaml: no such file or directory$"):
        load_manifests(["nope.yaml"])
    bad = tmp_path / "x.yaml"
    bad.write_text("kind: Node\nmetadata: [a]\n---\nkind: 3\n")
    with pytest.raises(ManifestError) as err:
        load_manifests([bad])
    assert str(err.value) == f"{bad} doc 1: metadata: must be a mapping, got list"
    bad.write_text("kind: [Node]\n")
    with pytest.raises(ManifestError) as err:
        load_manifests([bad])
    assert str(err.value) == f"{bad} doc 1: kind: must be a string, got list"


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    store = MemoryCluster(VirtualClock(start=1704067200.0))
    store.load(load_manifests([FIX / "multi.yaml", FIX / "list.yaml"]).objects)
    objects = store.snapshot_objects()
    out = tmp_path / "snap.yaml"
    write_manifests(out, objects)
    text = out.read_text()
    assert text.startswith("---\napiVersion: v1\nkind: Node\nmetadata:\n")
    back = load_manifests([out])
    assert back.objects == objects
    assert [m.where for m in back.manifests][:2] == [f"{out} doc 1 (Node n1)", f"{out} doc 2 (Node n2)"]
    write_manifests(out, objects)
    assert out.read_text() == text  # stable output
    as_list = tmp_path / "snap-list.yaml"
    write_manifests(as_list, objects, as_list=True)
    assert load_manifests([as_list]).objects == objects
    as_json = tmp_path / "snap.json"
    write_manifests(as_json, objects)
    assert load_manifests([as_json]).objects == objects
