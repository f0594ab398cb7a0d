"""Pod state machine of the cache (``pkg/scheduler/backend/cache/cache.go``): assume / finish_binding /
forget / add / update / remove."""

from __future__ import annotations

import pytest

from kubesched.api.pod import Pod
from kubesched.cache import Cache, CacheCorruptedError, CacheError
from kubesched.testing import make_node, make_pod


def bound(p: Pod, node: str) -> Pod:
    return p.with_node_name(node)


@pytest.fixture()
def cache() -> Cache:
    c = Cache()
    c.add_node(make_node("n1"))
    c.add_node(make_node("n2"))
    return c


def requested_cpu(c: Cache, node: str) -> int:
    return c.dump().nodes[node].requested.milli_cpu


def pod_uids(c: Cache, node: str) -> list[str]:
    return sorted(pi.pod.uid for pi in c.dump().nodes[node].pods)


def test_assume_then_add_confirms(cache: Cache) -> None:
    p = make_pod("web", cpu="500m")
    cache.assume_pod(bound(p, "n1"))
    assert cache.is_assumed_pod(p)
    assert cache.assumed_pod_count() == 1 and cache.pod_count() == 1
    assert requested_cpu(cache, "n1") == 500
    cache.finish_binding(bound(p, "n1"))
    assert cache.is_binding_finished(p)
    real = make_pod("web", cpu="500m", node_name="n1", labels={"confirmed": "yes"})
    cache.add_pod(real)
    assert not cache.is_assumed_pod(p)
    assert cache.assumed_pod_count() == 0 and cache.pod_count() == 1
    assert cache.get_pod(p) is real
    assert requested_cpu(cache, "n1") == 500
    assert cache.dump().nodes["n1"].pods[0].pod is real
    assert cache.cache_size() == {"assumed_pods": 0, "pods": 1, "nodes": 2}


def test_add_of_assumed_pod_on_other_node_moves_it(cache: Cache) -> None:
    p = make_pod("web", cpu="250m")
    cache.assume_pod(bound(p, "n1"))
    cache.add_pod(make_pod("web", cpu="250m", node_name="n2"))
    assert requested_cpu(cache, "n1") == 0
    assert requested_cpu(cache, "n2") == 250
    assert pod_uids(cache, "n2") == ["uid-default-web"]
    assert not cache.is_assumed_pod(p)


def test_assume_twice_errors_with_uid_and_key(cache: Cache) -> None:
    p = bound(make_pod("web", namespace="prod"), "n1")
    cache.assume_pod(p)
    with pytest.raises(CacheError) as e:
        cache.assume_pod(p)
    assert str(e.value) == "pod uid-prod-web(prod/web) is in the cache, so can't be assumed"


def test_assume_then_forget(cache: Cache) -> None:
    p = bound(make_pod("web", cpu="1"), "n2")
    cache.assume_pod(p)
    assert requested_cpu(cache, "n2") == 1000
    cache.forget_pod(p)
    assert requested_cpu(cache, "n2") == 0
    assert cache.pod_count() == 0 and cache.assumed_pod_count() == 0
    assert not cache.is_assumed_pod(p)
    with pytest.raises(CacheError) as e:
        cache.get_pod(p)
    assert str(e.value) == "pod uid-default-web(default/web) does not exist in scheduler cache"


def test_forget_of_non_assumed_errors(cache: Cache) -> None:
    p = make_pod("web", node_name="n1")
    with pytest.raises(CacheError) as e:
        cache.forget_pod(p)
    assert str(e.value) == "pod uid-default-web(default/web) wasn't assumed so cannot be forgotten"
    cache.add_pod(p)
    with pytest.raises(CacheError) as e:
        cache.forget_pod(p)
    assert str(e.value) == "pod uid-default-web(default/web) wasn't assumed so cannot be forgotten"
    assert cache.pod_count() == 1


def test_forget_on_other_node_errors(cache: Cache) -> None:
    p = make_pod("web")
    cache.assume_pod(bound(p, "n1"))
    with pytest.raises(CacheError) as e:
        cache.forget_pod(bound(p, "n2"))
    assert str(e.value) == "pod uid-default-web(default/web) was assumed on n2 but assigned to n1"
    assert cache.is_assumed_pod(p)


def test_add_twice_errors(cache: Cache) -> None:
    p = make_pod("web", node_name="n1")
    cache.add_pod(p)
    with pytest.raises(CacheError) as e:
        cache.add_pod(p)
    assert str(e.value) == "pod uid-default-web(default/web) was already in added state"


def test_update_pod(cache: Cache) -> None:
    old = make_pod("web", cpu="100m", node_name="n1")
    new = make_pod("web", cpu="300m", node_name="n1")
    with pytest.raises(CacheError) as e:
        cache.update_pod(old, new)
    assert (
        str(e.value)
        == "pod uid-default-web(default/web) is not added to scheduler cache, so cannot be updated"
    )
    cache.add_pod(old)
    cache.update_pod(old, new)
    assert requested_cpu(cache, "n1") == 300
    assert cache.get_pod(new) is new
    with pytest.raises(CacheCorruptedError):
        cache.update_pod(new, make_pod("web", node_name="n2"))


def test_update_of_assumed_pod_errors(cache: Cache) -> None:
    p = bound(make_pod("web"), "n1")
    cache.assume_pod(p)
    with pytest.raises(CacheError) as e:
        cache.update_pod(p, p)
    assert str(e.value) == "assumed pod uid-default-web(default/web) should not be updated"


def test_remove_pod(cache: Cache) -> None:
    p = make_pod("web", cpu="200m", node_name="n1")
    with pytest.raises(CacheError) as e:
        cache.remove_pod(p)
    assert (
        str(e.value)
        == "pod uid-default-web(default/web) is not found in scheduler cache, so cannot be removed from it"
    )
    cache.add_pod(p)
    # a delete with an empty nodeName (missed delete, last known state) removes the cached copy
    cache.remove_pod(make_pod("web"))
    assert cache.pod_count() == 0 and requested_cpu(cache, "n1") == 0
    cache.add_pod(p)
    with pytest.raises(CacheCorruptedError):
        cache.remove_pod(make_pod("web", node_name="n2"))


def test_assumed_pods_never_expire(cache: Cache) -> None:
    p = bound(make_pod("web"), "n1")
    cache.assume_pod(p)
    cache.finish_binding(p)
    for _ in range(3):
        cache.new_snapshot()
    assert cache.is_assumed_pod(p) and cache.pod_count() == 1


def test_pod_before_node_creates_nodeless_info_not_in_snapshot() -> None:
    c = Cache()
    p = make_pod("early", cpu="1", node_name="late")
    c.add_pod(p)
    assert c.node_count() == 1
    assert c.new_snapshot().node_info_map == {}
    ni = c.add_node(make_node("late"))
    assert ni.requested.milli_cpu == 1000 and [pi.pod for pi in ni.pods] == [p]
    assert list(c.new_snapshot().node_info_map) == ["late"]
