"""The Deployment controller on the embedded store and a virtual clock: proportional scaling during
a rollout, revisions and rollbacks, the history limit, the progress deadline and pausing."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.timestamps import rfc3339
from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.deployment_util import (
    get_proportion,
    proportional_sizes,
    resolve_fenceposts,
)
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0
REV = "deployment.kubernetes.io/revision"


def _setup() -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock, uid_seed=1)
    ReplicaSetController(cluster, clock).start()
    DeploymentController(cluster, clock).start()
    return cluster, clock


def _template(image: str = "nginx") -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _deployment(replicas: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _template(),
            **spec,
        },
    }


def _ready(cluster: MemoryCluster, clock: VirtualClock, image: str | None = None) -> None:
    """Play the kubelet: active pods (of ``image``, or all) Running and Ready."""
    for pod in cluster.list("Pod").items:
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") == "Running":
            continue
        if image is not None and pod["spec"]["containers"][0]["image"] != image:
            continue
        cluster.patch_status(
            "Pod",
            "default",
            pod["metadata"]["name"],
            {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        )
    clock.run_until(clock.now())


def _update(cluster: MemoryCluster, clock: VirtualClock, **spec: Any) -> None:
    d = cluster.get("Deployment", "default", "web")
    cluster.update({**d, "spec": {**d["spec"], **spec}})
    clock.run_until(clock.now())


def _sizes(cluster: MemoryCluster) -> list[tuple[str, int, str, str]]:
    """``(image, spec.replicas, desired-replicas, max-replicas)`` of every ReplicaSet."""
    return sorted(
        (
            rs["spec"]["template"]["spec"]["containers"][0]["image"],
            rs["spec"]["replicas"],
            rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"],
            rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"],
        )
        for rs in cluster.list("ReplicaSet").items
    )


def _progressing(cluster: MemoryCluster) -> tuple[str, str, str]:
    d = cluster.get("Deployment", "default", "web")
    [cond] = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
    return cond["status"], cond["reason"], cond["message"]


def test_get_proportion_shares_by_max_replicas() -> None:
    d = {"spec": {"replicas": 15, "strategy": {"rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}}}
    old = {
        "metadata": {"annotations": {"deployment.kubernetes.io/max-replicas": "13"}},
        "spec": {"replicas": 8},
    }
    new = {
        "metadata": {"annotations": {"deployment.kubernetes.io/max-replicas": "13"}},
        "spec": {"replicas": 5},
    }
    # 18 allowed, 13 running: round(8 * 18 / 13) - 8 = 3, round(5 * 18 / 13) - 5 = 2
    assert get_proportion(old, d, 5, 0) == 3
    assert get_proportion(new, d, 5, 3) == 2
    assert get_proportion(new, d, 5, 5) == 0
    assert get_proportion({"spec": {"replicas": 0}}, d, 5, 0) == 0
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": "10%", "maxUnavailable": "10%"}}, 15) == (2, 1)


@given(
    replicas=st.integers(0, 300),
    surge=st.integers(0, 30),
    sets=st.lists(st.tuples(st.integers(1, 200), st.integers(0, 400)), min_size=2, max_size=5),
)
def test_proportional_sizes_fill_replicas_plus_surge(
    replicas: int, surge: int, sets: list[tuple[int, int]]
) -> None:
    """Invariant of ``scale``: the active ReplicaSets end at ``replicas + maxSurge`` pods in all (0
    for no replicas), none below 0 -- unless the largest one would have to go below 0 for it."""
    d = {
        "spec": {
            "replicas": replicas,
            "strategy": {"rollingUpdate": {"maxSurge": surge, "maxUnavailable": 1}},
        },
        "status": {"replicas": sum(size for size, _ in sets)},
    }
    active = [
        {
            "metadata": {
                "name": f"rs{i}",
                "creationTimestamp": rfc3339(T0 + i),
                "annotations": {"deployment.kubernetes.io/max-replicas": str(most)},
            },
            "spec": {"replicas": size},
        }
        for i, (size, most) in enumerate(sets)
    ]
    sizes = [size for _, size in proportional_sizes(d, active)]
    allowed = replicas + surge if replicas > 0 else 0
    assert len(sizes) == len(sets) and min(sizes) >= 0
    assert sum(sizes) == allowed or (sizes[0] == 0 and sum(sizes) > allowed)


def test_scaling_during_a_rollout_is_proportional() -> None:
    """The documented example: 10 replicas, maxSurge 3, maxUnavailable 2, a rollout to an image
    whose pods never become ready, then a scale to 15 and down to 5."""
    cluster, clock = _setup()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    cluster.create(_deployment(10, strategy=strategy))
    clock.run_until(T0)
    _ready(cluster, clock)
    assert _sizes(cluster) == [("nginx", 10, "10", "13")]
    _update(cluster, clock, template=_template("nginx:broken"))
    _ready(cluster, clock, "nginx")
    assert _sizes(cluster) == [("nginx", 8, "10", "13"), ("nginx:broken", 5, "10", "13")]

    names = {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["metadata"]["name"]
        for rs in cluster.list("ReplicaSet").items
    }
    seen = len(cluster.events())
    _update(cluster, clock, replicas=15)  # 18 allowed: +3 to the older, larger one, +2 to the new one
    assert _sizes(cluster) == [("nginx", 11, "15", "18"), ("nginx:broken", 7, "15", "18")]
    assert [(e["reason"], e["message"]) for e in cluster.events()[seen:]] == [
        ("ScalingReplicaSet", f"Scaled up replica set {names['nginx']} from 8 to 11"),
        ("ScalingReplicaSet", f"Scaled up replica set {names['nginx:broken']} from 5 to 7"),
    ]
    _ready(cluster, clock, "nginx")
    assert _sizes(cluster) == [("nginx", 11, "15", "18"), ("nginx:broken", 7, "15", "18")]

    steps: list[tuple[str, int]] = []

    def on_rs(ev: Any) -> None:
        old_size = (ev.old_object or {}).get("spec", {}).get("replicas")
        if ev.object["spec"]["replicas"] != old_size:
            steps.append(
                (
                    ev.object["spec"]["template"]["spec"]["containers"][0]["image"],
                    ev.object["spec"]["replicas"],
                )
            )

    sub = cluster.watch("ReplicaSet", cluster.resource_version, on_rs)
    _update(cluster, clock, replicas=5)
    _ready(cluster, clock, "nginx")
    sub.stop()
    # 8 allowed: the older, larger one round(11*8/18)-11 = -6, the new one the rest (-4); then the
    # rollout goes on within maxUnavailable 2: 3 old pods stay available, the new one fills up
    assert steps == [("nginx", 5), ("nginx:broken", 3), ("nginx", 3), ("nginx:broken", 5)]
    assert _sizes(cluster) == [("nginx", 3, "5", "8"), ("nginx:broken", 5, "5", "8")]
    d = cluster.get("Deployment", "default", "web")
    assert {k: d["status"].get(k) for k in ("replicas", "updatedReplicas", "availableReplicas")} == {
        "replicas": 8,
        "updatedReplicas": 5,
        "availableReplicas": 3,
    }


def test_leftover_of_the_rounding_goes_to_the_largest() -> None:
    cluster, clock = _setup()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    cluster.create(_deployment(3, strategy=strategy))
    clock.run_until(T0)
    _ready(cluster, clock)
    _update(cluster, clock, template=_template("nginx:broken"))
    assert _sizes(cluster) == [("nginx", 3, "3", "4"), ("nginx:broken", 1, "3", "4")]
    # 7 + 1 allowed, 4 running: round(3*8/4)-3 = 3 to the old one, round(1*8/4)-1 = 1 to the new one
    _update(cluster, clock, replicas=7)
    assert _sizes(cluster) == [("nginx", 6, "7", "8"), ("nginx:broken", 2, "7", "8")]
    # 5 + 1 allowed, 8 running: old round(6*6/8)-6 = -1, new round(2*6/8)-2 = 0; the leftover -1
    # goes to the first (largest) one
    _update(cluster, clock, replicas=5)
    assert _sizes(cluster) == [("nginx", 4, "5", "6"), ("nginx:broken", 2, "5", "6")]


def _revisions(cluster: MemoryCluster) -> list[tuple[str, str, str | None, int]]:
    """``(image, revision, revision-history, replicas)`` of every ReplicaSet, by revision."""
    return sorted(
        (
            (
                rs["spec"]["template"]["spec"]["containers"][0]["image"],
                rs["metadata"]["annotations"][REV],
                rs["metadata"]["annotations"].get("deployment.kubernetes.io/revision-history"),
                rs["spec"]["replicas"],
            )
            for rs in cluster.list("ReplicaSet").items
        ),
        key=lambda r: int(r[1]),
    )


def _roll_to(cluster: MemoryCluster, clock: VirtualClock, image: str) -> None:
    _update(cluster, clock, template=_template(image))
    for _ in range(6):
        _ready(cluster, clock)


def test_rollback_raises_the_old_revision_and_keeps_its_history() -> None:
    cluster, clock = _setup()
    cluster.create(_deployment(2, revisionHistoryLimit=10))
    clock.run_until(T0)
    _ready(cluster, clock)
    _roll_to(cluster, clock, "nginx:1.27")
    assert _revisions(cluster) == [("nginx", "1", None, 0), ("nginx:1.27", "2", None, 2)]
    # what kubectl rollout undo does: the template of revision 1 back into the Deployment
    _roll_to(cluster, clock, "nginx")
    assert _revisions(cluster) == [("nginx:1.27", "2", None, 0), ("nginx", "3", "1", 2)]
    d = cluster.get("Deployment", "default", "web")
    assert d["metadata"]["annotations"][REV] == "3"
    assert len(cluster.list("ReplicaSet").items) == 2  # no new ReplicaSet for a known template
    _roll_to(cluster, clock, "nginx:1.27")
    _roll_to(cluster, clock, "nginx")
    assert _revisions(cluster) == [("nginx:1.27", "4", "2", 0), ("nginx", "5", "1,3", 2)]
    assert _progressing(cluster)[:2] == ("True", "NewReplicaSetAvailable")


def test_history_limit_deletes_the_lowest_revisions() -> None:
    cluster, clock = _setup()
    cluster.create(_deployment(1, revisionHistoryLimit=1))
    clock.run_until(T0)
    _ready(cluster, clock)
    for image in ("nginx:1", "nginx:2", "nginx:3"):
        _roll_to(cluster, clock, image)
    assert _revisions(cluster) == [("nginx:2", "3", None, 0), ("nginx:3", "4", None, 1)]


def test_progress_deadline_exceeded_then_recovered() -> None:
    cluster, clock = _setup()
    cluster.create(_deployment(2, progressDeadlineSeconds=30))
    clock.run_until(T0)
    [rs] = cluster.list("ReplicaSet").items
    name = rs["metadata"]["name"]
    assert _progressing(cluster) == ("True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.')
    clock.run_until(T0 + 30)
    assert _progressing(cluster)[1] == "ReplicaSetUpdated"  # 30 s is not yet beyond the deadline
    clock.run_until(T0 + 31)
    assert _progressing(cluster) == (
        "False",
        "ProgressDeadlineExceeded",
        f'ReplicaSet "{name}" has timed out progressing.',
    )
    d = cluster.get("Deployment", "default", "web")
    [cond] = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
    assert cond["lastTransitionTime"] == "2023-11-14T22:13:51Z"  # T0 + 31 s
    _ready(cluster, clock)
    assert _progressing(cluster) == (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{name}" has successfully progressed.',
    )
    assert [c["type"] for c in cluster.get("Deployment", "default", "web")["status"]["conditions"]] == [
        "Available",
        "Progressing",
    ]


def test_progress_renews_the_deadline() -> None:
    cluster, clock = _setup()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    cluster.create(_deployment(2, progressDeadlineSeconds=30, strategy=strategy))
    clock.run_until(T0)
    pods = cluster.list("Pod").items
    clock.run_until(T0 + 20)
    cluster.patch_status(
        "Pod",
        "default",
        pods[0]["metadata"]["name"],
        {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    )
    clock.run_until(T0 + 45)  # 45 s since the rollout began, 25 s since the last progress
    assert _progressing(cluster)[:2] == ("True", "ReplicaSetUpdated")
    clock.run_until(T0 + 51)
    assert _progressing(cluster)[:2] == ("False", "ProgressDeadlineExceeded")


def test_paused_deployment_scales_but_does_not_roll_out() -> None:
    cluster, clock = _setup()
    cluster.create(_deployment(2))
    clock.run_until(T0)
    _ready(cluster, clock)
    _update(cluster, clock, paused=True)
    assert _progressing(cluster) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    _update(cluster, clock, template=_template("nginx:1.27"))
    _update(cluster, clock, replicas=3)
    assert _sizes(cluster) == [("nginx", 3, "3", "4")]
    clock.run_until(T0 + 3600)  # paused: never times out
    assert _progressing(cluster)[1] == "DeploymentPaused"
    d = cluster.get("Deployment", "default", "web")
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    _update(cluster, clock, paused=False)
    assert [rs[0] for rs in _sizes(cluster)] == ["nginx", "nginx:1.27"]
    for _ in range(6):
        _ready(cluster, clock)
    assert [rs[:2] for rs in _sizes(cluster)] == [("nginx", 0), ("nginx:1.27", 3)]
    assert _progressing(cluster)[:2] == ("True", "NewReplicaSetAvailable")


def test_progress_deadline_off_removes_the_condition() -> None:
    cluster, clock = _setup()
    cluster.create(_deployment(1, progressDeadlineSeconds=2**31 - 1))
    clock.run_until(T0)
    _ready(cluster, clock)
    d = cluster.get("Deployment", "default", "web")
    assert [(c["type"], c["reason"]) for c in d["status"]["conditions"]] == [
        ("Available", "MinimumReplicasAvailable")
    ]
