"""Pre-pull on a real cluster: puller pods (shape, outcome), the planner's cluster view (one per
node, caps, disk pressure), precision, and ``kubesched run --prepull`` against ``kubesched serve``."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.api import kinds
from kubesched.api.kinds import Kind
from kubesched.api.node import Node
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.framework.node_info import NodeInfo
from kubesched.images.catalogue import default_catalogue
from kubesched.prepull.cluster_view import ClusterImageView
from kubesched.prepull.precision import PrecisionTracker
from kubesched.prepull.puller_pod import pull_outcome, puller_pod

REDIS = "docker.io/library/redis:latest"
NGINX = "docker.io/library/nginx:latest"


def test_puller_pod_shape() -> None:
    pod = puller_pod("n1", "uid-1", [REDIS, NGINX], "kube-system")
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "kubesched-prepull-",
            "namespace": "kube-system",
            "labels": {"kubesched.io/prepull": "true", "kubesched.io/prepull-node": "n1"},
            "annotations": {"kubesched.io/prepull-images": f"{REDIS},{NGINX}"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": "n1",
                    "uid": "uid-1",
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "spec": {
            "nodeName": "n1",
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "priorityClassName": "kubesched-prepull",
            "containers": [
                {
                    "name": f"pull-{i}",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["/bin/true"],
                    "resources": {
                        "requests": {"cpu": "1m", "memory": "8Mi"},
                        "limits": {"cpu": "10m", "memory": "32Mi"},
                    },
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
                for i, image in enumerate([REDIS, NGINX])
            ],
        },
    }
    assert "priorityClassName" not in puller_pod("n1", "u", [REDIS], "ns", None)["spec"]


def _status(*states: dict[str, Any], phase: str = "Pending") -> dict[str, Any]:
    pod = puller_pod("n1", "u", [REDIS, NGINX], "ns")
    pod["status"] = {
        "phase": phase,
        "containerStatuses": [{"name": f"pull-{i}", **s} for i, s in enumerate(states)],
    }
    return pod


def test_pull_outcome() -> None:
    terminated = {"state": {"terminated": {"exitCode": 0}}, "imageID": "sha256:x"}
    start_error = {"state": {"terminated": {"exitCode": 128, "reason": "StartError"}}, "imageID": "sha256:y"}
    pulling = {"state": {"waiting": {"reason": "ContainerCreating"}}}
    assert pull_outcome(_status(terminated, start_error, phase="Failed")) == "succeeded"
    assert pull_outcome(_status(terminated, pulling)) is None
    assert (
        pull_outcome(_status(terminated, {"state": {"waiting": {"reason": "ImagePullBackOff"}}})) == "failed"
    )
    assert pull_outcome(puller_pod("n1", "u", [REDIS], "ns")) is None
    rejected = puller_pod("n1", "u", [REDIS], "ns")
    rejected["status"] = {"phase": "Failed", "reason": "OutOfpods"}
    assert pull_outcome(rejected) == "failed"


def _ni(
    name: str,
    images: list[tuple[list[str], int]] | None = None,
    disk_pressure: bool = False,
    storage: str | None = None,
    cpu: str = "4",
) -> NodeInfo:
    status: dict[str, Any] = {
        "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        "images": [{"names": n, "sizeBytes": s} for n, s in images or []],
        "conditions": [{"type": "DiskPressure", "status": "True" if disk_pressure else "False"}],
    }
    if storage:
        status["capacity"]["ephemeral-storage"] = storage
    ni = NodeInfo()
    ni.set_node(
        Node.from_manifest(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "uid": f"u-{name}"},
                "status": status,
            }
        )
    )
    return ni


def _pod(node: str, image: str, phase: str = "Pending", puller: bool = False) -> dict[str, Any]:
    if puller:
        p = puller_pod(node, "u", [image], "kube-system")
        p["metadata"]["name"] = f"pull-{node}"
    else:
        p = {
            "metadata": {"name": f"p-{node}", "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": image}]},
        }
    p["status"] = {"phase": phase}
    return p


def test_cluster_view_one_puller_per_node_caps_and_disk_pressure() -> None:
    view = ClusterImageView(default_catalogue(), max_new_per_tick=2)
    nodes = [
        _ni("a", [(["redis:latest"], 55474442)]),
        _ni("b"),
        _ni("c"),
        _ni("d"),
        _ni("dp", disk_pressure=True),
        _ni("busy"),
    ]
    # the puller pod itself is not a pod's pull: the active pre-pulls say what pulls where
    view.refresh(
        nodes,
        [_pod("busy", NGINX, puller=True), _pod("c", NGINX), _pod("d", NGINX, phase="Running")],
        active=[("busy", [NGINX])],
    )
    assert view.has_image("a", "redis") and view.has_image("a", REDIS) and not view.has_image("b", REDIS)
    assert (view.pulling("busy", NGINX), view.pending_pulls("busy")) == (True, 1)
    assert (view.pulling("c", NGINX), view.pending_pulls("c")) == (True, 1)  # a bound pod still Pending
    assert (view.pulling("d", NGINX), view.pending_pulls("d")) == (False, 0)  # Running: pulled
    assert view.prepull("a", REDIS) is False  # present
    assert view.prepull("busy", REDIS) is False  # a puller pod runs there
    assert view.prepull("dp", REDIS) is False and view.refused_disk_pressure == 1
    assert view.prepull("b", REDIS) is True and view.prepull("b", NGINX) is True  # one pod, two images
    assert view.prepull("b", REDIS) is False  # already queued
    assert view.prepull("d", REDIS) is True
    assert view.prepull("c", REDIS) is False  # past the cap of 2 new puller pods
    assert view.requests == {"b": [REDIS, NGINX], "d": [REDIS]}
    assert view.prepull("x", REDIS) is False  # unknown node
    # redis shares no layer with nginx; on "a" it is all present
    assert view.layer_bytes("a", REDIS) == (55474442, 0)
    assert view.layer_bytes("b", REDIS) == (0, 55474442)  # coming with b's puller
    dp = view.store("dp")
    assert dp.usage_bytes == dp.capacity_bytes  # full: the planner's disk check refuses it
    e = _ni("e", [(["nginx:latest"], 63110572)], storage="100Gi")
    view.refresh([e], [])
    disk = view.store("e")
    assert (disk.usage_bytes, disk.capacity_bytes, disk.has_image(NGINX)) == (63110572, 100 * 2**30, True)


def test_precision() -> None:
    t = PrecisionTracker()
    for node in ("a", "b", "c"):
        t.started(node, REDIS)
    t.pulled("a", REDIS)
    t.pulled("b", REDIS)
    t.failed("c", REDIS)
    t.node_images("a", {REDIS})
    t.node_images("b", {REDIS})
    assert t.pod_bound("a", [REDIS, NGINX]) == 1
    t.node_images("b", set())  # GC removed it before any pod came
    assert t.pod_bound("b", [REDIS]) == 0
    assert (t.prepulls, t.succeeded, t.used, t.wasted, t.precision) == (3, 2, 1, 1, 1 / 3)


# ---------------------------------------------------------------------------------------- run --prepull


def _node(cluster: Cluster, name: str, cpu: str, *, disk_pressure: bool = False) -> None:
    res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    conditions = [
        {"type": "Ready", "status": "True"},
        {"type": "DiskPressure", "status": "True" if disk_pressure else "False"},
    ]
    spec = (
        {"taints": [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]}
        if disk_pressure
        else {}
    )
    cluster.core.create_node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": spec,
            "status": {"capacity": res, "allocatable": res, "conditions": conditions},
        }
    )


def _app_pod(cluster: Cluster, name: str) -> None:
    cluster.core.create_namespaced_pod(
        cluster.namespace,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": cluster.namespace},
            "spec": {
                "schedulerName": "kubesched-it",
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "c",
                        "image": "redis:latest",
                        "resources": {"requests": {"cpu": "600m", "memory": "8Mi"}},
                    }
                ],
            },
        },
    )


def _pullers(cluster: Cluster) -> list[dict[str, Any]]:
    resp = cluster.core.list_namespaced_pod(
        "prepull", label_selector="kubesched.io/prepull=true", _preload_content=False
    )
    return list(json.loads(resp.data)["items"])


def _metric(replica: Replica, name: str) -> float | None:
    code, body, _ = replica.get("/metrics")
    m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", body.decode(), re.M)
    return float(m.group(1)) if m else None


@needs_hooks
def test_run_prepull_against_serve(cluster: Cluster, replicas: list[Any]) -> None:
    """Two redis pods fill two of the three 1-CPU nodes; the application is hot and has no warm room
    left, so the controller pre-pulls redis on a node with room: never ``dp`` (DiskPressure, most
    room), so the third 1-CPU node. Once the puller pod reports its container done, it is deleted
    (outcome succeeded); the next redis pod lands there, on the pre-pulled image: precision 1."""
    cluster.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prepull"}})
    for name, cpu in (("n0", "1"), ("n1", "1"), ("n2", "1")):
        _node(cluster, name, cpu)
    _node(cluster, "dp", "8", disk_pressure=True)
    config = scheduler_config(cluster.tmp, cluster.namespace)
    r = Replica(
        cluster,
        config,
        "--prepull",
        "--prepull-namespace",
        "prepull",
        "--prepull-interval",
        "0.3",
        "--leader-elect",
        "false",
    )
    replicas.append(r)
    r.wait_ready()
    _app_pod(cluster, "redis-0")
    _app_pod(cluster, "redis-1")
    bound = cluster.wait_bound(["redis-0", "redis-1"])
    free = sorted({"n0", "n1", "n2"} - set(bound.values()))
    assert len(free) == 1
    target = free[0]

    pullers = wait_for(lambda: _pullers(cluster), 20, "a puller pod")
    assert len(pullers) == 1
    p = pullers[0]
    node_uid = cluster.core.read_node(target).metadata.uid
    assert p["spec"]["nodeName"] == target
    assert p["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": target, "uid": node_uid, "blockOwnerDeletion": False}
    ]
    assert p["metadata"]["labels"] == {"kubesched.io/prepull": "true", "kubesched.io/prepull-node": target}
    c = p["spec"]["containers"]
    assert [(x["image"], x["imagePullPolicy"], x["resources"]["requests"]) for x in c] == [
        (REDIS, "IfNotPresent", {"cpu": "1m", "memory": "8Mi"})
    ]
    assert (p["spec"]["restartPolicy"], p["spec"]["priorityClassName"], p["spec"]["priority"]) == (
        "Never",
        "kubesched-prepull",
        -1000000,
    )
    pc = cluster.api.call_api(
        "/apis/scheduling.k8s.io/v1/priorityclasses/kubesched-prepull",
        "GET",
        response_type="object",
        _return_http_data_only=True,
    )
    assert pc["value"] == -1000000
    # one puller per node at a time, none on dp, whatever the ticks since
    time.sleep(1.0)
    assert [x["spec"]["nodeName"] for x in _pullers(cluster)] == [target]

    # the "kubelet" reports the pull done (containers terminated) and the image in the node's status
    cluster.core.patch_namespaced_pod_status(
        p["metadata"]["name"],
        "prepull",
        {
            "status": {
                "phase": "Failed",
                "containerStatuses": [
                    {
                        "name": "pull-0",
                        "image": REDIS,
                        "imageID": "sha256:abc",
                        "ready": False,
                        "restartCount": 0,
                        "state": {"terminated": {"exitCode": 127, "reason": "StartError"}},
                    }
                ],
            }
        },
    )
    cluster.core.patch_node_status(
        target, {"status": {"images": [{"names": [REDIS], "sizeBytes": 55474442}]}}
    )
    wait_for(lambda: not _pullers(cluster), 20, "the puller pod deleted")
    assert _metric(r, 'kubesched_prepulls_total{outcome="succeeded"}') == 1.0
    assert _metric(r, "kubesched_prepull_bytes_total") == 55474442.0

    _app_pod(cluster, "redis-2")
    assert cluster.wait_bound(["redis-2"])["redis-2"] == target
    wait_for(lambda: _metric(r, "kubesched_prepull_precision") == 1.0, 20, "precision 1")
    assert _metric(r, "kubesched_prepull_used_total") == 1.0
    resp = cluster.events_api.list_namespaced_event("default", _preload_content=False)
    events = [
        (e["reason"], e["regarding"]["name"])
        for e in json.loads(resp.data)["items"]
        if e.get("reportingController") == "kubesched-prepull"
    ]
    assert ("PrePulling", target) in events and ("PrePulled", target) in events
    assert not any(node == "dp" for _, node in events)


# ---------------------------------------------------------------------------------------- ImagePullJob


KRUISE_ROW = Kind("apps.kruise.io", "v1alpha1", "ImagePullJob", "imagepulljobs", "imagepulljob", True)


def test_discovery_picks_image_pull_jobs_when_served() -> None:
    from kubesched.prepull.mechanisms import ImagePullJobs, PullerPods, discover

    plain = MemoryCluster(VirtualClock(0.0))  # no ImagePullJob served
    reader = fake_scheduler([], [])
    assert isinstance(discover(plain, reader, "ns", None, 600), PullerPods)
    assert isinstance(discover(plain, reader, "ns", None, 600, mode="imagepulljob"), ImagePullJobs)
    with kinds.extra_kinds(KRUISE_ROW):
        kruise = MemoryCluster(VirtualClock(0.0))
        assert isinstance(discover(kruise, reader, "ns", None, 600), ImagePullJobs)
        assert isinstance(discover(kruise, reader, "ns", None, 600, mode="pods"), PullerPods)
    with pytest.raises(ValueError, match="unknown pre-pull mechanism 'daemonset'"):
        discover(plain, reader, "ns", None, 600, mode="daemonset")


def test_image_pull_jobs_one_per_image_and_outcomes() -> None:
    from kubesched.prepull.mechanisms import ImagePullJobs, job_outcome

    with kinds.extra_kinds(KRUISE_ROW):
        cluster = MemoryCluster(VirtualClock(1767225600.0))
        jobs = ImagePullJobs(cluster, "kruise-ns", 600)
        names = jobs.start("n1", "u1", [REDIS, NGINX]).split(",")
        job = cluster.get("ImagePullJob", "kruise-ns", names[0])
        pulls = jobs.pulls()
        jobs.delete(pulls[0])
        left = [o["metadata"]["name"] for o in cluster.list("ImagePullJob").items]
    assert len(names) == 2 and all(n.startswith("kubesched-prepull-") for n in names)
    assert job["apiVersion"] == "apps.kruise.io/v1alpha1" and job["kind"] == "ImagePullJob"
    assert job["spec"] == {
        "image": REDIS,
        "parallelism": 1,
        "selector": {"names": ["n1"]},
        "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 600},
        "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 600, "ttlSecondsAfterFinished": 300},
    }
    assert job["metadata"]["labels"] == {"kubesched.io/prepull": "true", "kubesched.io/prepull-node": "n1"}
    assert sorted((p.name, p.node, p.images, p.outcome) for p in pulls) == sorted(
        [(names[0], "n1", (REDIS,), None), (names[1], "n1", (NGINX,), None)]
    )
    assert pulls[0].created == 1767225600.0
    done = {"completionTime": "2026-01-01T00:01:00Z", "desired": 1, "succeeded": 1, "failed": 0}
    assert job_outcome({"status": done}) == "succeeded"
    assert job_outcome({"status": {**done, "succeeded": 0, "failed": 1}}) == "failed"
    assert job_outcome({"status": {"desired": 1, "active": 1}}) is None
    assert left == [n for n in sorted(names) if n != pulls[0].name]


# ---------------------------------------------------------------------------------------- the controller


class FakeMechanism:
    name = "fake"

    def __init__(self, clock: Any) -> None:
        from kubesched.prepull.mechanisms import ActivePull

        self.clock = clock
        self.active: list[ActivePull] = []
        self.deleted: list[str] = []

    def pulls(self) -> list[Any]:
        return list(self.active)

    def start(self, node: str, node_uid: str, images: list[str]) -> str:
        from kubesched.prepull.mechanisms import ActivePull

        name = f"pull-{node}"
        self.active.append(ActivePull(name, node, tuple(images), None, self.clock.now()))
        return name

    def delete(self, pull: Any) -> None:
        self.deleted.append(pull.name)
        self.active = [p for p in self.active if p.name != pull.name]


def fake_scheduler(pods: list[dict[str, Any]], nodes: list[Any]) -> Any:
    """The scheduler's read surface the controller uses, over fixed pods and NodeInfos; the
    profile ``kubesched-it``."""
    from types import SimpleNamespace

    return SimpleNamespace(
        objects=lambda kind, ns=None: list(pods) if kind == "Pod" else [],
        node_info_copies=lambda: list(nodes),
        add_event_handlers=lambda kind, h: None,
        profile_name_for=lambda p: p.scheduler_name if p.scheduler_name == "kubesched-it" else None,
    )


class FakeClient:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def create_event(self, ev: dict[str, Any]) -> None:
        self.events.append(ev)


def test_controller_tick_starts_reaps_and_times_out() -> None:
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry

    from kubesched.prepull.controller import PrePullController
    from kubesched.prepull.metrics import PrePullMetrics

    clock = SimpleNamespace(t=1000.0)
    clock.now = lambda: clock.t
    # "full" holds redis but has no room for another 3-CPU pod: the pre-pull goes to "roomy"
    nodes = [_ni("full", [(["redis:latest"], 55474442)], cpu="2"), _ni("roomy")]
    sched = fake_scheduler([], nodes)
    registry = CollectorRegistry()
    mech = FakeMechanism(clock)
    client = FakeClient()
    c = PrePullController(
        client,
        sched,
        default_catalogue(),
        clock,  # type: ignore[arg-type]
        interval=1.0,
        timeout_seconds=60.0,
        metrics=PrePullMetrics(registry),
        mechanism=mech,
    )
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "d", "uid": "ua"},
        "spec": {
            "schedulerName": "kubesched-it",
            "containers": [{"name": "c", "image": "redis", "resources": {"requests": {"cpu": "3"}}}],
        },
    }
    c._pod_add(pod)
    c._pod_add({**pod, "metadata": {**pod["metadata"], "name": "b", "uid": "ub"}})
    assert c.tick() == [("roomy", [REDIS])]
    assert [(e["reason"], e["regarding"]["name"]) for e in client.events] == [("PrePulling", "roomy")]
    clock.t = 1030.0
    assert c.tick() == [] and mech.deleted == []  # still pulling: one pre-pull per node at a time
    clock.t = 1061.0  # 61 s after the pull started at t=1000: timed out
    c.tick()
    assert mech.deleted == ["pull-roomy"]
    assert registry.get_sample_value("kubesched_prepulls_total", {"outcome": "timeout"}) == 1.0
    assert registry.get_sample_value("kubesched_prepulls_total", {"outcome": "succeeded"}) == 0.0
    assert client.events[-1]["reason"] == "PrePullFailed" and client.events[-1]["type"] == "Warning"
    assert client.events[-1]["note"] == f"Pre-pull of {REDIS} (fake pull-roomy) timed out"
    assert registry.get_sample_value("kubesched_prepull_precision") == 0.0


# ---------------------------------------------------------------------------------------- registry images


class FakeRegistrySource:
    """The part of RegistryLayerSource the image facts use: lookups answered once asked and waited for."""

    def __init__(self, images: dict[str, Any]) -> None:
        self.images = images
        self.asked: list[str] = []
        self.done: set[str] = set()
        self.generation = 0

    def lookup(self, ref: str) -> Any:
        if ref not in self.asked:
            self.asked.append(ref)
        return self.images.get(ref) if ref in self.done else None

    def wait_idle(self, timeout: float) -> bool:
        new = set(self.asked) - self.done
        self.done |= new
        self.generation += bool(new & set(self.images))
        return True


def _registry_world(source: Any | None) -> tuple[Any, Any, FakeMechanism]:
    """Nodes ``sharing`` (16 cpu, lists reg.test/app:1, which shares a 600 MB base layer with
    reg.test/app:2) and ``big`` (32 cpu, empty); one pending 3-cpu pod of reg.test/app:2; a
    controller whose image facts are the catalogue plus ``source``."""
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry

    from kubesched.images.catalogue import CatalogueImage, Layer
    from kubesched.images.names import parse_image_ref
    from kubesched.prepull.controller import PrePullController
    from kubesched.prepull.image_facts import ImageFacts
    from kubesched.prepull.metrics import PrePullMetrics

    def image(ref: str, top: str) -> CatalogueImage:
        layers = (Layer("sha256:base", 600_000_000), Layer(top, 100_000_000))
        return CatalogueImage(
            name=ref,
            ref=parse_image_ref(ref),
            image_class="cpu",
            layers=layers,
            source="registry",
            confidence="verified",
            unique_layers=layers,
        )

    if source is not None:
        source.images.update(
            {
                "reg.test/app:1": image("reg.test/app:1", "sha256:one"),
                "reg.test/app:2": image("reg.test/app:2", "sha256:two"),
            }
        )
    clock = SimpleNamespace(now=lambda: 1000.0)
    nodes = [_ni("sharing", [(["reg.test/app:1"], 700_000_000)], cpu="16"), _ni("big", cpu="32")]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "d", "uid": "ua"},
        "spec": {
            "schedulerName": "kubesched-it",
            "containers": [{"name": "c", "image": "reg.test/app:2", "resources": {"requests": {"cpu": "3"}}}],
        },
    }
    mech = FakeMechanism(clock)
    registry = CollectorRegistry()
    facts = ImageFacts(default_catalogue(), source)
    c = PrePullController(
        FakeClient(),
        fake_scheduler([pod], nodes),
        facts,
        clock,  # type: ignore[arg-type]
        metrics=PrePullMetrics(registry),
        mechanism=mech,
    )
    c._pod_add(pod)
    return c, registry, mech


def test_planner_pre_pulls_registry_images_on_the_node_sharing_their_layers() -> None:
    """Without registry lookups the planner knows nothing of reg.test/app:2 and plans nothing; with
    them (looked up before the planner's tick) it pre-pulls it where its base layer already is:
    ``sharing``, not ``big`` (which has more room). Demand 1 pending + ceil(1 x 300 / 900) = 2 pods;
    ``sharing`` has room for 5."""
    c, _, mech = _registry_world(None)
    assert c.tick() == [] and mech.active == []

    source = FakeRegistrySource({})
    c, registry, mech = _registry_world(source)
    assert c.tick() == [("sharing", ["reg.test/app:2"])]
    assert sorted(source.asked) == ["reg.test/app:1", "reg.test/app:2"]  # the node's image and the pod's
    # bytes of a succeeded pre-pull come from the registry's layers
    from kubesched.prepull.mechanisms import ActivePull

    mech.active = [ActivePull("pull-sharing", "sharing", ("reg.test/app:2",), "succeeded", 1000.0)]
    c.tick()
    assert registry.get_sample_value("kubesched_prepulls_total", {"outcome": "succeeded"}) == 1.0
    assert registry.get_sample_value("kubesched_prepull_bytes_total") == 700_000_000.0


def test_registry_settings_of_the_profiles() -> None:
    from kubesched.config.load import parse_config
    from kubesched.prepull.image_facts import registry_settings_of

    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "a", "pluginConfig": [{"name": "NodeResourcesFit", "args": {}}]},
            {
                "schedulerName": "b",
                "pluginConfig": [{"name": "ImageCacheWait", "args": {"registrySettingsPath": "r.yaml"}}],
            },
        ],
    }
    assert registry_settings_of(parse_config(doc)) == "r.yaml"
    assert registry_settings_of(None) is None
