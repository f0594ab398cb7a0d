"""ControllerRevisions of StatefulSets and DaemonSets on the embedded store and a virtual clock:
revision numbers and names, pods' ``controller-revision-hash``, StatefulSet ``partition`` and
``OnDelete``, rollbacks reusing a revision, and the history limit."""

from __future__ import annotations

from typing import Any

from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.daemonset import DaemonSetController
from kubesched.embedded.controllers.history import (
    _fnv32,
    go_json,
    hash_controller_revision,
    revision_patch,
)
from kubesched.embedded.controllers.statefulset import StatefulSetController
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0
HASH = "controller-revision-hash"


def test_fnv32_and_go_json_as_upstream() -> None:
    # FNV-1 32-bit reference vectors (hash/fnv New32): upstream hashes revisions with fnv-1, not 1a
    assert _fnv32(b"") == 0x811C9DC5
    assert _fnv32(b"a") == 0x050C5D7E
    assert _fnv32(b"foobar") == 0x31F0B262
    assert go_json({"b": "<a&b>", "a": [1, {"d": None, "c": "é"}]}) == (
        '{"a":[1,{"c":"é","d":null}],"b":"\\u003ca\\u0026b\\u003e"}'.encode()
    )
    patch = revision_patch({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    assert go_json(patch) == (
        b'{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},'
        b'"spec":{"containers":[{"image":"x","name":"c","resources":{}}]}}}}'
    )
    h = hash_controller_revision(patch)
    assert h != hash_controller_revision(patch, 1) and set(h) <= set("bcdfghjklmnpqrstvwxz2456789")


def _cluster() -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    return cluster, clock


def _template(image: str, app: str = "db") -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _ready(cluster: MemoryCluster, clock: VirtualClock) -> None:
    for _ in range(10):
        for pod in cluster.list("Pod").items:
            if (
                pod["metadata"].get("deletionTimestamp")
                or (pod.get("status") or {}).get("phase") == "Running"
            ):
                continue
            cluster.patch_status(
                "Pod",
                "default",
                pod["metadata"]["name"],
                {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            )
        clock.run_until(clock.now())


def _revisions(cluster: MemoryCluster) -> list[tuple[int, str, str]]:
    """``(revision, name, image)`` of every ControllerRevision, by revision."""
    return sorted(
        (
            r["revision"],
            r["metadata"]["name"],
            r["data"]["spec"]["template"]["spec"]["containers"][0]["image"],
        )
        for r in cluster.list("ControllerRevision").items
    )


def _pods(cluster: MemoryCluster) -> dict[str, tuple[str, str]]:
    """``name: (image, controller-revision-hash)``."""
    return {
        p["metadata"]["name"]: (p["spec"]["containers"][0]["image"], p["metadata"]["labels"][HASH])
        for p in cluster.list("Pod").items
        if not p["metadata"].get("deletionTimestamp")
    }


def _update_sts(cluster: MemoryCluster, clock: VirtualClock, **spec: Any) -> None:
    sts = cluster.get("StatefulSet", "default", "db")
    cluster.update({**sts, "spec": {**sts["spec"], **spec}})
    clock.run_until(clock.now())


def _sts(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": _template("postgres:16"),
            **spec,
        },
    }


def test_stateful_set_revisions_partition_and_rollback() -> None:
    cluster, clock = _cluster()
    StatefulSetController(cluster, clock).start()
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    cluster.create(_sts(updateStrategy=rolling, revisionHistoryLimit=1))
    clock.run_until(T0)
    _ready(cluster, clock)
    [(rev, r1, image)] = _revisions(cluster)
    assert (rev, image) == (1, "postgres:16")
    revision = cluster.get("ControllerRevision", "default", r1)
    assert revision["metadata"]["labels"] == {
        "app": "db",
        "controller.kubernetes.io/hash": r1.removeprefix("db-"),
    }
    assert revision["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert _pods(cluster) == {f"db-{i}": ("postgres:16", r1) for i in range(3)}

    # partition 2: only db-2 moves to the new revision
    _update_sts(
        cluster,
        clock,
        template=_template("postgres:17"),
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
    )
    _ready(cluster, clock)
    [_, (rev2, r2, image2)] = _revisions(cluster)
    assert (rev2, image2) == (2, "postgres:17")
    assert _pods(cluster) == {
        "db-0": ("postgres:16", r1),
        "db-1": ("postgres:16", r1),
        "db-2": ("postgres:17", r2),
    }
    status = cluster.get("StatefulSet", "default", "db")["status"]
    assert (
        status["currentRevision"],
        status["updateRevision"],
        status["currentReplicas"],
        status["updatedReplicas"],
    ) == (r1, r2, 2, 1)
    # a pod below the partition comes back at the current revision
    cluster.delete("Pod", "default", "db-0")
    clock.run_until(clock.now())
    _ready(cluster, clock)
    assert _pods(cluster)["db-0"] == ("postgres:16", r1)

    _update_sts(cluster, clock, updateStrategy=rolling)
    _ready(cluster, clock)
    assert _pods(cluster) == {f"db-{i}": ("postgres:17", r2) for i in range(3)}
    status = cluster.get("StatefulSet", "default", "db")["status"]
    assert (status["currentRevision"], status["updateRevision"], status["currentReplicas"]) == (r2, r2, 3)

    # back to postgres:16: revision 1 is reused as revision 3
    _update_sts(cluster, clock, template=_template("postgres:16"))
    _ready(cluster, clock)
    assert _revisions(cluster) == [(2, r2, "postgres:17"), (3, r1, "postgres:16")]
    assert _pods(cluster) == {f"db-{i}": ("postgres:16", r1) for i in range(3)}

    # a third template: revisionHistoryLimit 1 keeps one revision beside the live ones; the lowest
    # (2) goes once the rollout is complete
    _update_sts(cluster, clock, template=_template("postgres:18"))
    _ready(cluster, clock)
    [(rev4, r4, _)] = [r for r in _revisions(cluster) if r[2] == "postgres:18"]
    assert rev4 == 4
    assert _revisions(cluster) == [(3, r1, "postgres:16"), (4, r4, "postgres:18")]


def test_stateful_set_on_delete_replaces_only_deleted_pods() -> None:
    cluster, clock = _cluster()
    StatefulSetController(cluster, clock).start()
    cluster.create(_sts(updateStrategy={"type": "OnDelete"}))
    clock.run_until(T0)
    _ready(cluster, clock)
    [(_, r1, _)] = _revisions(cluster)
    _update_sts(cluster, clock, template=_template("postgres:17"))
    _ready(cluster, clock)
    [_, (_, r2, _)] = _revisions(cluster)
    assert set(_pods(cluster).values()) == {("postgres:16", r1)}
    cluster.delete("Pod", "default", "db-1")
    clock.run_until(clock.now())
    _ready(cluster, clock)
    assert _pods(cluster) == {
        "db-0": ("postgres:16", r1),
        "db-1": ("postgres:17", r2),
        "db-2": ("postgres:16", r1),
    }
    status = cluster.get("StatefulSet", "default", "db")["status"]
    assert (status["currentRevision"], status["updateRevision"], status["updatedReplicas"]) == (r1, r2, 1)


def test_daemon_set_revisions_follow_the_template() -> None:
    cluster, clock = _cluster()
    for i in (1, 2):
        cluster.create({"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {}})
    DaemonSetController(cluster, clock).start()
    cluster.create(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default", "annotations": {"team": "infra"}},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": _template("agent:1", "agent"),
                "revisionHistoryLimit": 1,
            },
        }
    )
    clock.run_until(T0)
    _ready(cluster, clock)
    [(rev, r1, image)] = _revisions(cluster)
    h1 = r1.removeprefix("agent-")
    revision = cluster.get("ControllerRevision", "default", r1)
    assert (rev, image, revision["metadata"]["labels"], revision["metadata"]["annotations"]) == (
        1,
        "agent:1",
        {"app": "agent", HASH: h1},
        {"team": "infra"},
    )
    assert set(_pods(cluster).values()) == {("agent:1", h1)}

    def roll(image: str) -> None:
        ds = cluster.get("DaemonSet", "default", "agent")
        cluster.update({**ds, "spec": {**ds["spec"], "template": _template(image, "agent")}})
        clock.run_until(clock.now())
        for _ in range(4):
            _ready(cluster, clock)
            for pod in cluster.list("Pod").items:  # play the kubelet: terminating pods end
                if pod["metadata"].get("deletionTimestamp"):
                    cluster.delete(
                        "Pod", "default", pod["metadata"]["name"], grace=True, grace_period_seconds=0
                    )
            clock.run_until(clock.now())

    roll("agent:2")
    [_, (rev2, r2, _)] = _revisions(cluster)
    assert rev2 == 2 and set(_pods(cluster).values()) == {("agent:2", r2.removeprefix("agent-"))}
    roll("agent:1")  # revision 1 comes back as 3
    assert _revisions(cluster) == [(2, r2, "agent:2"), (3, r1, "agent:1")]
    roll("agent:3")  # limit 1: the oldest unused one (revision 2) goes
    assert [(r[0], r[2]) for r in _revisions(cluster)] == [(3, "agent:1"), (4, "agent:3")]
