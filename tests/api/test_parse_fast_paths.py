"""The shortcuts of the Pod parser give what the general code gives.

- ``resource_value`` remembers quantity strings: the same amount on every call, and a malformed
  string is refused every time (failures are not remembered).
- ``pod_requests`` of one container and nothing else equals the general computation (fed the same
  containers as tuples, which take the general path), for random requests and defaults.
- A Pod without affinity, volumes, owners, gates or conditions parses to the empty values the
  general code gives; the field-type check still names the first wrong field.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.api.quantity import QuantityError, resource_value
from kubesched.api.resources import NON_ZERO_DEFAULTS, pod_requests
from kubesched.errors import ManifestError


def test_resource_value_memo_gives_the_same_amount_and_still_refuses_bad_strings() -> None:
    assert [resource_value("cpu", "100m") for _ in range(3)] == [100, 100, 100]
    assert [resource_value("memory", "128Mi") for _ in range(3)] == [134217728] * 3
    assert resource_value("memory", "100m") == 1  # the same string, another resource: rounded up
    for _ in range(2):
        with pytest.raises(QuantityError):
            resource_value("cpu", "1.5.0")


_names = st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "pods"])
_lists = st.dictionaries(_names, st.integers(min_value=0, max_value=10**12), max_size=4)


@given(_lists, st.sampled_from([None, "Always"]), st.one_of(st.none(), st.just(NON_ZERO_DEFAULTS), _lists))
def test_single_container_requests_equal_the_general_path(
    requests: dict[str, int], policy: str | None, defaults: dict[str, int] | None
) -> None:
    fast = pod_requests([(requests, policy)], [], None, None, defaults)
    general = pod_requests(((requests, policy),), (), None, None, defaults)
    assert fast == general
    assert list(fast) == list(general)
    assert fast is not requests


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
            **spec,
        },
    }


def test_plain_pod_gets_the_empty_values() -> None:
    p = Pod.from_manifest(_pod())
    assert p.required_node_affinity is None
    assert p.preferred_node_affinity == ()
    assert p.pod_affinity_required == p.pod_anti_affinity_required == ()
    assert p.pod_affinity_preferred == p.pod_anti_affinity_preferred == ()
    assert p.affinity_parse_error is None and p.has_affinity is False
    assert p.volumes == p.pvc_names == p.owner_references == p.scheduling_gates == p.conditions == ()
    assert p.host_ports == () and p.images == ("nginx",)
    assert p.requests == {"cpu": 100}
    assert p.non_zero_requests == {"cpu": 100, "memory": 200 * 1024 * 1024}
    assert p.pod_level_requests == {}


def test_two_containers_and_an_init_container() -> None:
    obj = _pod(
        initContainers=[{"name": "i", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
    )
    obj["spec"]["containers"].append(
        {"name": "d", "image": "redis", "ports": [{"containerPort": 80, "hostPort": 8080}]}
    )
    p = Pod.from_manifest(obj)
    assert p.images == ("busybox", "nginx", "redis")
    assert [hp.host_port for hp in p.host_ports] == [8080]
    assert p.requests == {"cpu": 1000}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": ["1"]}}}]},
            "spec.containers[0].resources.requests.cpu: must be a string, got list",
        ),
        (
            {"containers": [{"name": "c", "image": {"a": 1}}]},
            "spec.containers[0].image: must be a string, got object",
        ),
        (
            {"containers": [{"name": "c"}], "priority": "high"},
            "spec.priority: must be an integer, got string",
        ),
        (
            {"containers": [{"name": "c", "resources": {"limits": {"memory": "1.5.0"}}}]},
            'spec.containers[0].resources.limits.memory: invalid quantity "1.5.0"',
        ),
        (
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]},
            "spec.containers[0].resources.requests.cpu: must be greater than or equal to 0",
        ),
    ],
)
def test_errors_name_the_field(spec: dict[str, Any], message: str) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}
    with pytest.raises(ManifestError) as e:
        Pod.from_manifest(obj)
    assert str(e.value) == message
