"""``NodeInfo.replace_pod`` (the cache's update of a pod in place, e.g. an assumed pod confirmed by
its binding) leaves a NodeInfo exactly as ``remove_pod`` then ``add_pod`` leave it: pod order,
UID index, amounts, ports, PVC counts, affinity lists and generations taken."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.cache import Cache
from kubesched.framework import node_info as node_info_mod
from kubesched.framework.node_info import NodeInfo
from kubesched.testing import make_node, make_pod

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def _pod(name: str, cpu: int, extra: int, node: str = "n") -> Pod:
    """``extra``: 0 plain, 1 anti-affinity, 2 a host port, 3 a PVC."""
    spec: dict[str, Any] = {}
    container: dict[str, Any] = {"name": "c", "image": "x", "resources": {"requests": {"cpu": f"{cpu}m"}}}
    if extra == 1:
        spec["affinity"] = ANTI
    elif extra == 2:
        container["ports"] = [{"containerPort": 80, "hostPort": 8000}]
    elif extra == 3:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]
    spec["containers"] = [container]
    return make_pod(name, cpu=f"{cpu}m", node_name=node, spec=spec)


def _amounts(r: Any) -> tuple[Any, ...]:
    return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, dict(r.scalar))


def _state(ni: NodeInfo) -> tuple[Any, ...]:
    return (
        [pi.pod.uid for pi in ni.pods],
        ni._index(),
        [pi.pod.uid for pi in ni.pods_with_affinity],
        [pi.pod.uid for pi in ni.pods_with_required_anti_affinity],
        _amounts(ni.requested),
        _amounts(ni.non_zero_requested),
        {ip: sorted(ports) for ip, ports in ni.used_ports.ports.items()},
        dict(ni.pvc_ref_counts),
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 500), st.integers(0, 3)), min_size=1, max_size=6),
    st.integers(0, 5),
    st.integers(1, 500),
    st.integers(0, 3),
    st.booleans(),
)
def test_replace_pod_equals_remove_then_add(
    pods: list[tuple[int, int]], which: int, cpu: int, extra: int, same_requests: bool
) -> None:
    which %= len(pods)
    built = [_pod(f"p{i}", c, e) for i, (c, e) in enumerate(pods)]
    old = built[which]
    new = old.with_node_name("n") if same_requests else _pod(f"p{which}", cpu, extra)
    new.uid = old.uid
    a, b = NodeInfo(make_node("n")), NodeInfo(make_node("n"))
    for p in built:
        a.add_pod(p)
        b.add_pod(p)
    g0 = node_info_mod.next_generation()
    replaced = a.replace_pod(old, new)
    g1 = node_info_mod.next_generation()
    if replaced:
        assert g1 - g0 == 3  # two generations taken in between, as remove + add take
    else:
        a.remove_pod(old)
        a.add_pod(new)
    b.remove_pod(old)
    b.add_pod(new)
    assert _state(a) == _state(b)
    assert a.pods[-1].pod is new
    plain = not (old.has_affinity or new.has_affinity or old.host_ports or new.host_ports)
    plain = plain and not (old.pvc_names or new.pvc_names) and old.requests == new.requests
    assert replaced == plain


def test_replace_pod_of_a_pod_not_on_the_node_changes_nothing() -> None:
    ni = NodeInfo(make_node("n"))
    ni.add_pod(_pod("a", 100, 0))
    before = (_state(ni), ni.generation)
    assert not ni.replace_pod(_pod("b", 100, 0), _pod("b", 100, 0))
    assert (_state(ni), ni.generation) == before


def test_confirming_an_assumed_pod_keeps_the_cache_as_remove_and_add_do() -> None:
    cache = Cache()
    cache.add_node(make_node("n"))
    pods = [_pod(f"p{i}", 100 * (i + 1), 0) for i in range(3)]
    for p in pods:
        cache.assume_pod(p)
    bound = pods[0].with_node_name("n")
    cache.add_pod(bound)
    assert not cache.is_assumed_pod(bound)
    assert cache.get_pod(bound) is bound
    assert cache.is_assumed_pod(pods[1])
    info = cache.node_info("n")
    assert info is not None
    assert [pi.pod.name for pi in info.pods] == ["p2", "p1", "p0"]
    assert info.requested.milli_cpu == 600
