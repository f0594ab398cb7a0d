"""``load_manifest_text``: manifests held in memory, with the same checks and messages as files."""

from __future__ import annotations

import pytest

from kubesched.embedded.manifests import load_manifest_text
from kubesched.errors import ManifestError


def test_documents_and_lists_in_order() -> None:
    text = """apiVersion: v1
kind: Pod
metadata: {name: a, namespace: shop}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: skipped}}
"""
    r = load_manifest_text(text, "added.yaml")
    assert [m.where for m in r.manifests] == [
        "added.yaml doc 1 (Pod shop/a)",
        "added.yaml doc 2 item 1 (Node n1)",
    ]
    assert r.skipped_kinds == {"ConfigMap": 1}


def test_errors_name_the_source_and_document() -> None:
    with pytest.raises(ManifestError) as e:
        load_manifest_text("kind: Pod\nmetadata: {namespace: x}\n", "added.yaml")
    assert str(e.value) == "added.yaml doc 1: metadata.name: required"
    with pytest.raises(ManifestError) as e:
        load_manifest_text("a: [1\n", "added.yaml")
    assert str(e.value).startswith("added.yaml doc 1: invalid YAML: ")
    with pytest.raises(ManifestError) as e:
        load_manifest_text("{", "added.json", is_json=True)
    assert str(e.value).startswith("added.json doc 1: invalid JSON: ")
