"""Unknown fields of loaded files and of API requests come from one walk along the v1.35 schemas
(``kubesched.embedded.schema``): the same paths for the same object, whichever asks."""

from __future__ import annotations

from typing import Any

from kubesched.embedded.unknown_fields import prune_unknown_fields, unknown_fields

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"free": "form"}, "nmae": "x"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"cpu": "1"}},
                        "imagePullPolic": "x",
                    }
                ],
                "nodeSelecter": {"disk": "ssd"},
            },
        },
        "strategy": {"rollingUpdate": {"maxSurge": 1, "maxSurgee": 2}},
    },
}
EXPECTED = [
    "metadata.nmae",
    "spec.template.spec.containers[0].imagePullPolic",
    "spec.template.spec.nodeSelecter",
    "spec.strategy.rollingUpdate.maxSurgee",
]


def test_loaded_files_and_requests_report_the_same_paths() -> None:
    assert unknown_fields(DEPLOYMENT) == EXPECTED
    pruned, unknown = prune_unknown_fields(DEPLOYMENT, "apps", "v1", "Deployment")
    assert unknown == EXPECTED
    assert unknown_fields(pruned) == []


def test_the_registry_version_stands_in_for_an_unknown_api_version() -> None:
    pod = {"apiVersion": "v9", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containerz": []}}
    assert unknown_fields(pod) == ["spec.containerz"]


def test_kinds_without_an_upstream_schema_have_no_unknown_fields() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "anything": {"goes": 1}}
    assert unknown_fields(widget) == []
    assert prune_unknown_fields(widget, "example.com", "v1", "Widget") == (widget, [])
