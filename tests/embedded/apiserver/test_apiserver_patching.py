"""Patch application (merge, strategic merge, JSON patch) and field selectors of kubesched serve."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.apiserver.fields import compile_field_selector
from kubesched.embedded.apiserver.handlers import status_merge_patch
from kubesched.embedded.apiserver.patching import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
)
from kubesched.embedded.apiserver.status import ApiError
from kubesched.embedded.patch import merge_status_patch

POD = {
    "metadata": {"name": "web", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
    "spec": {
        "containers": [
            {
                "name": "c1",
                "image": "i1",
                "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80}],
            },
            {"name": "c2", "image": "i2"},
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "status": {
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]
    },
}


def test_merge_patch() -> None:
    out = apply_merge_patch(POD, {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"tolerations": []}})
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert out["spec"]["tolerations"] == [] and out["spec"]["containers"] == POD["spec"]["containers"]
    assert POD["metadata"]["labels"] == {"a": "1", "b": "2"}  # input untouched


def test_strategic_merge_lists_by_key() -> None:
    patch = {
        "metadata": {"finalizers": ["y"]},
        "spec": {
            "$setElementOrder/containers": [{"name": "c2"}, {"name": "c1"}],
            "containers": [
                {"name": "c1", "image": "new", "env": [{"name": "B", "value": "2"}]},
                {"name": "c3", "image": "i3"},
            ],
            "tolerations": [{"key": "other", "operator": "Exists"}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    out = apply_strategic_merge_patch(POD, patch)
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [
        ("c2", "i2"),
        ("c1", "new"),
        ("c3", "i3"),
    ]
    assert out["spec"]["containers"][1]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert out["spec"]["containers"][1]["ports"] == [{"containerPort": 80}]
    assert out["spec"]["tolerations"] == [{"key": "other", "operator": "Exists"}]  # no merge key: replaced
    assert out["metadata"]["finalizers"] == ["x", "y"]
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


def test_strategic_merge_directives() -> None:
    out = apply_strategic_merge_patch(
        POD,
        {
            "spec": {"containers": [{"name": "c2", "$patch": "delete"}]},
            "metadata": {
                "labels": {"$patch": "replace", "z": "9"},
                "$deleteFromPrimitiveList/finalizers": ["x"],
            },
            "status": {"$retainKeys": ["phase"], "phase": "Running"},
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["c1"]
    assert out["metadata"]["labels"] == {"z": "9"} and out["metadata"]["finalizers"] == []
    assert out["status"] == {"phase": "Running"}
    with pytest.raises(PatchError, match="does not contain declared merge key: name"):
        apply_strategic_merge_patch(POD, {"spec": {"containers": [{"image": "x"}]}})
    with pytest.raises(PatchError, match="unknown patch type: bogus"):
        apply_strategic_merge_patch(POD, {"spec": {"$patch": "bogus"}})


def test_json_patch() -> None:
    out = apply_json_patch(
        POD,
        [
            {"op": "add", "path": "/metadata/labels/c", "value": "3"},
            {"op": "replace", "path": "/spec/containers/0/image", "value": "img"},
            {"op": "remove", "path": "/spec/containers/1"},
            {"op": "add", "path": "/spec/tolerations/-", "value": {"key": "t"}},
            {"op": "copy", "from": "/metadata/name", "path": "/metadata/generateName"},
            {"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/moved"},
            {"op": "test", "path": "/metadata/labels/moved", "value": "1"},
        ],
    )
    assert out["metadata"]["labels"] == {"b": "2", "c": "3", "moved": "1"}
    assert [c["image"] for c in out["spec"]["containers"]] == ["img"]
    assert out["spec"]["tolerations"][-1] == {"key": "t"} and out["metadata"]["generateName"] == "web"
    with pytest.raises(PatchError, match="testing value /metadata/name failed"):
        apply_json_patch(POD, [{"op": "test", "path": "/metadata/name", "value": "other"}])
    with pytest.raises(PatchError, match="not found"):
        apply_json_patch(POD, [{"op": "remove", "path": "/metadata/nope"}])


_json_scalar = st.one_of(st.integers(-5, 5), st.text("ab", max_size=2), st.booleans())
_status = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Pending", "Running"]),
        "nominatedNodeName": st.text("nx", min_size=1, max_size=2),
        "extra": st.dictionaries(st.text("kl", min_size=1, max_size=2), _json_scalar, max_size=3),
        "conditions": st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["Ready", "PodScheduled", "Init"])},
                optional={
                    "status": st.sampled_from(["True", "False"]),
                    "reason": st.text("r", min_size=1, max_size=2),
                },
            ),
            max_size=3,
            unique_by=lambda c: c["type"],
        ),
    },
)


@given(_status, _status)
def test_status_merge_patch_turns_old_into_new(old: dict, new: dict) -> None:
    """The status PUT of kubesched serve: the computed patch, applied as the store does, gives the
    new status (conditions compared by type: the store keeps the old order of surviving ones)."""
    result = merge_status_patch(old, status_merge_patch(old, new))
    key = lambda c: c["type"]  # noqa: E731
    assert sorted(result.pop("conditions", []), key=key) == sorted(new.get("conditions", []), key=key)
    assert result == {k: v for k, v in new.items() if k != "conditions"}


def test_field_selectors() -> None:
    pod = {
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": {"nodeName": "n1", "hostNetwork": True},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]},
    }

    def match(sel: str) -> bool:
        return compile_field_selector(sel, "", "pods")(pod)

    assert match("status.phase!=Succeeded,status.phase!=Failed")
    assert match("spec.nodeName==n1,metadata.namespace=ns")
    assert not match("spec.nodeName=")
    assert match("spec.hostNetwork=true,status.podIPs=10.0.0.1")
    assert match("metadata.name=a,")
    assert compile_field_selector(r"metadata.name=a\,b", "", "pods")({"metadata": {"name": "a,b"}})
    with pytest.raises(ApiError, match="field label not supported: spec.nodeName"):
        compile_field_selector("spec.nodeName=n1", "", "nodes")
    with pytest.raises(ApiError, match="can't understand 'garbage'"):
        compile_field_selector("garbage", "", "pods")
    assert compile_field_selector("spec.unschedulable=true", "", "nodes")({"spec": {"unschedulable": True}})
