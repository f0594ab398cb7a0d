"""PodTopologySpread's default-constraints cache gives ``build_default_constraints``'s result for
every pod while Services, ReplicationControllers, ReplicaSets and StatefulSets come and go."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.plugins.podtopologyspread.common import SYSTEM_DEFAULT_CONSTRAINTS, build_default_constraints
from kubesched.plugins.podtopologyspread.default_cache import SELECTOR_KINDS, DefaultConstraintsCache

NAMESPACES = ("default", "other")
LABEL_KEYS = ("app", "tier")
LABEL_VALUES = ("a", "b")


class VersionedObjects:
    """A ``handle.objects`` whose ``kind_version`` changes with every write of a kind."""

    def __init__(self) -> None:
        self.objs: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in SELECTOR_KINDS}
        self.versions = dict.fromkeys(SELECTOR_KINDS, 0)

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        self.objs[kind][(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        self.versions[kind] += 1

    def delete(self, kind: str, namespace: str, name: str) -> None:
        if self.objs[kind].pop((namespace, name), None) is not None:
            self.versions[kind] += 1

    def kind_version(self, kind: str) -> int:
        return self.versions.get(kind, 0)

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [o for (ns, _), o in self.objs.get(kind, {}).items() if namespace is None or ns == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.objs.get(kind, {}).get((namespace, name))

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return {}


class Unversioned(VersionedObjects):
    kind_version = None  # type: ignore[assignment]


labels_st = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=2)
owner_st = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(
            [
                ("v1", "ReplicationController"),
                ("apps/v1", "ReplicaSet"),
                ("apps/v1", "StatefulSet"),
                ("apps/v1beta2", "ReplicaSet"),
                ("batch/v1", "Job"),
            ]
        ),
        st.sampled_from(("w0", "w1")),
        st.booleans(),
    ),
)
pod_st = st.tuples(st.sampled_from(NAMESPACES), labels_st, owner_st)
write_st = st.tuples(
    st.sampled_from(SELECTOR_KINDS),
    st.sampled_from(NAMESPACES),
    st.sampled_from(("w0", "w1")),
    st.one_of(st.none(), labels_st),  # None: delete
)
step_st = st.one_of(st.tuples(st.just("pod"), pod_st), st.tuples(st.just("write"), write_st))


def make(ns: str, labels: dict[str, str], owner: Any) -> Pod:
    meta: dict[str, Any] = {"name": "p", "namespace": ns, "labels": labels}
    if owner is not None:
        (api_version, kind), name, controller = owner
        meta["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": controller}
        ]
    return Pod.from_manifest({"metadata": meta, "spec": {"containers": [{"name": "c"}]}})


def workload(kind: str, ns: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    if kind in ("Service", "ReplicationController"):
        selector: dict[str, Any] = dict(labels)
    else:
        selector = {"matchLabels": dict(labels)}
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"selector": selector}}


@settings(max_examples=200, deadline=None)
@example(  # a Service selecting a pod already seen
    [
        ("pod", ("default", {"app": "a"}, None)),
        ("write", ("Service", "default", "w0", {"app": "a"})),
        ("pod", ("default", {"app": "a"}, None)),
    ]
)
@example(  # the same labels under another controller, and its selector changing
    [
        ("write", ("Service", "default", "w0", {"app": "a"})),
        ("write", ("StatefulSet", "default", "w1", {"tier": "b"})),
        ("pod", ("default", {"app": "a"}, None)),
        ("pod", ("default", {"app": "a"}, (("apps/v1", "StatefulSet"), "w1", True))),
        ("write", ("StatefulSet", "default", "w1", {"app": "a"})),
        ("pod", ("default", {"app": "a"}, (("apps/v1", "StatefulSet"), "w1", True))),
    ]
)
@given(st.lists(step_st, min_size=4, max_size=40))
def test_cache_equals_building_every_time(steps: list[Any]) -> None:
    objects = VersionedObjects()
    cache = DefaultConstraintsCache()
    for what, arg in steps:
        if what == "write":
            kind, ns, name, labels = arg
            if labels is None:
                objects.delete(kind, ns, name)
            else:
                objects.put(kind, workload(kind, ns, name, labels))
            continue
        pod = make(*arg)
        # ScheduleAnyway: the system defaults' action; DoNotSchedule keeps none of them
        for action in ("ScheduleAnyway", "DoNotSchedule"):
            got = cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, action, objects)
            assert got == build_default_constraints(SYSTEM_DEFAULT_CONSTRAINTS, pod, action, objects)


def test_cache_builds_once_per_pod_shape_and_again_after_a_write() -> None:
    objects = VersionedObjects()
    objects.put("Service", workload("Service", "default", "web", {"app": "a"}))
    cache = DefaultConstraintsCache()
    owner = (("apps/v1", "ReplicaSet"), "w0", True)
    first = cache.get(
        SYSTEM_DEFAULT_CONSTRAINTS, make("default", {"app": "a"}, owner), "ScheduleAnyway", objects
    )
    assert [(c.max_skew, c.topology_key) for c in first] == [
        (3, "kubernetes.io/hostname"),
        (5, "topology.kubernetes.io/zone"),
    ]
    assert first[0].selector is not None and first[0].selector.matches({"app": "a"})
    again = cache.get(
        SYSTEM_DEFAULT_CONSTRAINTS, make("default", {"app": "a"}, owner), "ScheduleAnyway", objects
    )
    assert again == first and again is not first
    assert (cache.hits, cache.misses) == (1, 1)
    # the same labels in another namespace, or another controller, are other shapes
    cache.get(SYSTEM_DEFAULT_CONSTRAINTS, make("other", {"app": "a"}, owner), "ScheduleAnyway", objects)
    cache.get(SYSTEM_DEFAULT_CONSTRAINTS, make("default", {"app": "a"}, None), "ScheduleAnyway", objects)
    assert (cache.hits, cache.misses) == (1, 3)
    # the ReplicaSet appears: its selector is ANDed in, built again
    objects.put("ReplicaSet", workload("ReplicaSet", "default", "w0", {"tier": "b"}))
    after = cache.get(
        SYSTEM_DEFAULT_CONSTRAINTS, make("default", {"app": "a"}, owner), "ScheduleAnyway", objects
    )
    assert (cache.hits, cache.misses) == (1, 4)
    assert after[0].selector is not None and not after[0].selector.matches({"app": "a"})
    assert after[0].selector.matches({"app": "a", "tier": "b"})
    # the Service goes: nothing selects a pod without a controller, so no default constraints
    objects.delete("Service", "default", "web")
    assert (
        cache.get(SYSTEM_DEFAULT_CONSTRAINTS, make("default", {"app": "a"}, None), "ScheduleAnyway", objects)
        == []
    )


def test_no_selecting_object_or_no_constraint_of_the_action_builds_nothing() -> None:
    objects = VersionedObjects()
    cache = DefaultConstraintsCache()
    owner = (("apps/v1", "ReplicaSet"), "w0", True)
    pod = make("default", {"app": "a"}, owner)
    assert cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "ScheduleAnyway", objects) == []
    assert cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "DoNotSchedule", objects) == []
    assert (cache.hits, cache.misses) == (1, 0)
    # the owner appears: its selector alone makes the defaults apply
    objects.put("ReplicaSet", workload("ReplicaSet", "default", "w0", {"app": "a"}))
    got = cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "ScheduleAnyway", objects)
    assert [(c.max_skew, c.topology_key) for c in got] == [
        (3, "kubernetes.io/hostname"),
        (5, "topology.kubernetes.io/zone"),
    ]
    assert cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "DoNotSchedule", objects) == []
    assert (cache.hits, cache.misses) == (1, 1)
    objects.delete("ReplicaSet", "default", "w0")
    assert cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "ScheduleAnyway", objects) == []
    assert (cache.hits, cache.misses) == (2, 1)


def test_a_lister_without_versions_is_read_every_time() -> None:
    objects = Unversioned()
    objects.put("Service", workload("Service", "default", "web", {"app": "a"}))
    cache = DefaultConstraintsCache()
    pod = make("default", {"app": "a"}, None)
    assert len(cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "ScheduleAnyway", objects)) == 2
    objects.objs["Service"].clear()  # no version to tell: still seen
    assert cache.get(SYSTEM_DEFAULT_CONSTRAINTS, pod, "ScheduleAnyway", objects) == []
    assert (cache.hits, cache.misses) == (0, 0)
