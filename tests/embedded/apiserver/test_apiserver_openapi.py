"""The OpenAPI documents (``kubesched.embedded.apiserver.openapi``) and the schema walk of field
validation (``kubesched.embedded.unknown_fields``), both from the v1.35 schemas."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.kinds import served_kinds
from kubesched.embedded.apiserver.openapi import gv_path, v2_document, v3_document, v3_root
from kubesched.embedded.apiserver.paths import group_versions
from kubesched.embedded.schema import definition_name
from kubesched.embedded.unknown_fields import prune_unknown_fields as unknown_fields


def test_v3_root_lists_every_served_group_version() -> None:
    root = json.loads(v3_root())["paths"]
    assert list(root) == [gv_path(g, v) for g, v in group_versions()]
    assert root["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    assert v3_document("apps", "v2") is None


def test_every_served_kind_has_its_schema_and_a_patch_with_field_validation() -> None:
    for r in served_kinds():
        doc = json.loads(v3_document(r.group, r.version) or b"{}")
        name = definition_name(r.group, r.version, r.kind)
        assert name is not None and name in doc["components"]["schemas"], r
        ns = "/namespaces/{namespace}" if r.namespaced else ""
        prefix = f"/apis/{r.group}/{r.version}" if r.group else "/api/v1"
        patch = doc["paths"][f"{prefix}{ns}/{r.plural}/{{name}}"]["patch"]
        assert patch["x-kubernetes-group-version-kind"] == {
            "group": r.group,
            "version": r.version,
            "kind": r.kind,
        }
        assert "fieldValidation" in [p["name"] for p in patch["parameters"]]


def test_schemas_are_in_openapi_form() -> None:
    schemas = json.loads(v3_document("", "v1") or b"{}")["components"]["schemas"]
    assert schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    affinity = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["affinity"]
    assert affinity == {
        "description": "If specified, the pod's scheduling constraints",
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Affinity"}],
    }
    assert schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["nodeName"]["type"] == "string"
    v2 = json.loads(v2_document())
    assert (
        v2["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["affinity"]["$ref"]
        == "#/definitions/io.k8s.api.core.v1.Affinity"
    )


def test_unknown_fields_are_pruned_and_reported_in_document_order() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "labels": {"any": "key"}, "nmae": "x"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "imagePullPolic": "Always",
                    "resources": {"requests": {"cpu": "1"}},
                }
            ],
            "affinity": {"nodeAffinity": {"requiredDuringScheduling": {}}},
        },
    }
    pruned, unknown = unknown_fields(pod, "", "v1", "Pod")
    assert unknown == [
        "metadata.nmae",
        "spec.containers[0].imagePullPolic",
        "spec.affinity.nodeAffinity.requiredDuringScheduling",
    ]
    assert pruned == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "labels": {"any": "key"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            "affinity": {"nodeAffinity": {}},
        },
    }
    assert unknown_fields({"kind": "Widget", "x": 1}, "example.com", "v1", "Widget") == (
        {"kind": "Widget", "x": 1},
        [],
    )


_PLACES = ("", "metadata", "spec", "spec.containers[0]", "spec.containers[0].resources", "status")


def _at(obj: dict[str, Any], place: str) -> dict[str, Any]:
    for part in filter(None, place.replace("[0]", ".0").split(".")):
        obj = obj[int(part)] if part.isdigit() else obj[part]  # type: ignore[index]
    return obj


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_PLACES), st.from_regex(r"zz[a-z]{1,6}", fullmatch=True)),
        min_size=1,
        max_size=5,
        unique_by=lambda t: t,
    )
)
def test_inserted_unknown_fields_are_exactly_what_is_reported_and_pruned(
    extra: list[tuple[str, str]],
) -> None:
    clean = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "labels": {"zzlabel": "ok"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }
    dirty = copy.deepcopy(clean)
    for place, key in extra:
        _at(dirty, place)[key] = 1
    pruned, unknown = unknown_fields(dirty, "", "v1", "Pod")
    expected = {f"{place}.{key}" if place else key for place, key in extra}
    assert set(unknown) == expected and len(unknown) == len(expected)
    assert pruned == clean
