"""HTTP extenders (``pkg/scheduler/extender.go``) against a real extender server on 127.0.0.1: filter,
prioritize,
bind and preempt verbs, nodeCacheCapable, managedResources, ignorable, errors and TLS."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import pytest
from extender_support import closed_port, extender_server

from kubesched.api.pod import Pod
from kubesched.clock import VirtualClock
from kubesched.config.types import (
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ConfigError
from kubesched.extenders import ExtenderError, HTTPExtender, build_extenders
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.core import Scheduler
from kubesched.scheduler.factory import new_scheduler
from kubesched.testing import node_manifest, pod_manifest

T0 = 1_700_000_000.0
BASIC = ["PrioritySort", "NodeResourcesFit", "DefaultBinder"]


def profile(names: Sequence[str] = BASIC) -> KubeSchedulerProfile:
    return KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            multi_point=PluginSet(enabled=[Plugin(name=n) for n in names], disabled=[Plugin(name="*")])
        ),
    )


class Env:
    """Embedded cluster + scheduler configured with ``extenders``."""

    def __init__(
        self,
        extenders: list[Extender],
        nodes: Sequence[dict[str, Any]] = (),
        pods: Sequence[dict[str, Any]] = (),
        names: Sequence[str] = BASIC,
    ) -> None:
        self.clock = VirtualClock(T0)
        self.mc = MemoryCluster(self.clock)
        for o in [*(nodes or [node_manifest(f"n{i}") for i in (1, 2, 3)]), *pods]:
            self.mc.create(o)
        cfg = KubeSchedulerConfiguration(profiles=[profile(names)], extenders=extenders)
        self.sched: Scheduler = new_scheduler(self.mc, cfg, clock=self.clock, seed=0, record=True)
        self.sched.start()

    def run(self, rounds: int = 1) -> None:
        for _ in range(rounds):
            while self.sched.schedule_next():
                pass
            self.clock.advance_to(self.clock.now() + 2)

    def add(self, manifest: dict[str, Any]) -> Pod:
        return Pod.from_manifest(self.mc.create(manifest))

    def node_of(self, name: str) -> str | None:
        return self.mc.get("Pod", "default", name)["spec"].get("nodeName")

    def events(self, reason: str | None = None) -> list[tuple[str, str, str]]:
        return [
            (e["reason"], e["regarding"]["name"], e["note"])
            for e in self.mc.events()
            if reason is None or e["reason"] == reason
        ]

    def condition(self, name: str) -> dict[str, Any]:
        conds = self.mc.get("Pod", "default", name).get("status", {}).get("conditions") or []
        return next(c for c in conds if c["type"] == "PodScheduled")


def ok_filter(
    keep: Sequence[str],
    failed: dict[str, str] | None = None,
    unresolvable: dict[str, str] | None = None,
    by_name: bool = False,
) -> Any:
    def verb(body: Any) -> tuple[int, Any]:
        if by_name:
            return 200, {
                "NodeNames": [n for n in body["NodeNames"] if n in keep],
                "FailedNodes": failed or {},
                "FailedAndUnresolvableNodes": unresolvable or {},
                "Error": "",
            }
        items = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in keep]
        return 200, {
            "Nodes": {"metadata": {}, "items": items},
            "NodeNames": None,
            "FailedNodes": failed or {},
            "FailedAndUnresolvableNodes": unresolvable or {},
            "Error": "",
        }

    return verb


# --- filter -----------------------------------------------------------------------------------


def test_filter_removes_nodes_and_sends_extender_args() -> None:
    with extender_server(
        {"filter": ok_filter(["n3"], {"n1": "n1 is busy"}, {"n2": "n2 lacks a gpu"})}
    ) as srv:
        env = Env([Extender(url_prefix=srv.url + "/", filter_verb="filter")])
        pod = env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.node_of("web") == "n3"
    assert srv.paths() == ["filter"]
    path, body = srv.requests[0]
    assert sorted(body) == ["NodeNames", "Nodes", "Pod"]
    assert body["NodeNames"] is None
    assert body["Pod"]["metadata"]["name"] == "web" and body["Pod"]["metadata"]["uid"] == pod.uid
    assert body["Nodes"]["metadata"] == {}
    assert sorted(n["metadata"]["name"] for n in body["Nodes"]["items"]) == ["n1", "n2", "n3"]
    assert srv.headers[0]["Content-Type"] == "application/json"


def test_filter_failed_nodes_appear_in_fit_error() -> None:
    verb = ok_filter(
        [], {"n1": "extender: busy", "n2": "extender: busy"}, {"n2": "no gpu here", "n3": "no gpu here"}
    )
    with extender_server({"filter": verb}) as srv:
        env = Env([Extender(url_prefix=srv.url, filter_verb="filter")])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.node_of("web") is None
    msg = "0/3 nodes are available: 1 extender: busy, 2 no gpu here."
    assert env.events("FailedScheduling") == [("FailedScheduling", "web", msg)]
    assert env.condition("web")["reason"] == "Unschedulable"
    qpi = next(q for q in env.sched.queue.unschedulable_pods_info() if q.pod.name == "web")
    assert qpi.unschedulable_plugins == {"Extender"}


def test_node_cache_capable_sends_node_names_and_maps_them_back() -> None:
    with extender_server({"filter": ok_filter(["n2"], by_name=True)}) as srv:
        env = Env(
            [Extender(url_prefix=srv.url, filter_verb="filter", node_cache_capable=True)],
            pods=[pod_manifest("old", cpu="1", node_name="n2")],
        )
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.node_of("web") == "n2"
    body = srv.requests[0][1]
    assert body["Nodes"] is None
    assert sorted(body["NodeNames"]) == ["n1", "n2", "n3"]


def test_node_cache_capable_unknown_node_is_an_error() -> None:
    def verb(body: Any) -> tuple[int, Any]:
        return 200, {
            "NodeNames": ["n1", "ghost"],
            "FailedNodes": None,
            "FailedAndUnresolvableNodes": None,
            "Error": "",
        }

    with extender_server({"filter": verb}) as srv:
        env = Env([Extender(url_prefix=srv.url, filter_verb="filter", node_cache_capable=True)])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.node_of("web") is None
    msg = f'extender "{srv.url}" claims a filtered node "ghost" which is not found in the input node list'
    assert env.events("FailedScheduling") == [("FailedScheduling", "web", msg)]
    assert env.condition("web")["reason"] == "SchedulerError"


def test_filter_error_field_and_case_insensitive_keys() -> None:
    with extender_server({"filter": lambda b: (200, {"error": "extender refuses"})}) as srv:
        env = Env([Extender(url_prefix=srv.url, filter_verb="filter")])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.events("FailedScheduling") == [("FailedScheduling", "web", "extender refuses")]


# --- prioritize -------------------------------------------------------------------------------


def test_prioritize_adds_score_times_weight_times_ten() -> None:
    prios = [{"Host": "n1", "Score": 1}, {"Host": "n2", "Score": 4}, {"Host": "n3", "Score": 0}]
    with extender_server({"prioritize": lambda b: (200, prios)}) as srv:
        env = Env(
            [Extender(url_prefix=srv.url, prioritize_verb="prioritize", weight=3)],
            names=["PrioritySort", "DefaultBinder"],
        )
        sched = env.sched
        fwk = sched.profiles["default-scheduler"]
        pod = env.add(pod_manifest("probe", cpu="1"))
        sched.cache.update_snapshot(sched.snapshot)
        scores = sched.placement.prioritize_nodes(fwk, CycleState(), pod, sched.snapshot.list())
        assert {s.name: (s.total_score, [(p.name, p.score) for p in s.scores]) for s in scores} == {
            "n1": (30, [(srv.url, 30)]),
            "n2": (120, [(srv.url, 120)]),
            "n3": (0, [(srv.url, 0)]),
        }
        env.run()
    assert env.node_of("probe") == "n2"


def test_prioritize_changes_the_chosen_node() -> None:
    # NodeResourcesFit (LeastAllocated) prefers the empty n1 over the busy n2 by a few points;
    # the extender's 5 x weight 2 x 10 = 100 for n2 turns the choice.
    nodes = [node_manifest("n1", cpu="8", memory="32Gi"), node_manifest("n2", cpu="8", memory="32Gi")]
    busy = [pod_manifest("old", cpu="2", memory="4Gi", node_name="n2")]
    env0 = Env([], nodes=nodes, pods=busy)
    env0.add(pod_manifest("web", cpu="1", memory="1Gi"))
    env0.run()
    assert env0.node_of("web") == "n1"
    with extender_server({"prio": lambda b: (200, [{"Host": "n2", "Score": 5}])}) as srv:
        env = Env([Extender(url_prefix=srv.url, prioritize_verb="prio", weight=2)], nodes=nodes, pods=busy)
        env.add(pod_manifest("web", cpu="1", memory="1Gi"))
        env.run()
    assert env.node_of("web") == "n2"


def test_prioritize_errors_are_ignored() -> None:
    with extender_server({"prio": lambda b: (500, {})}) as srv:
        env = Env([Extender(url_prefix=srv.url, prioritize_verb="prio", weight=1)])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert env.node_of("web") in ("n1", "n2", "n3")
    assert srv.paths() == ["prio"]


# --- bind -------------------------------------------------------------------------------------


def test_bind_verb_binds_instead_of_default_binder() -> None:
    with extender_server({"bind": lambda b: (200, {"Error": ""})}) as srv:
        env = Env([Extender(url_prefix=srv.url, bind_verb="bind")])
        pod = env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert srv.requests == [
        (
            "bind",
            {
                "PodName": "web",
                "PodNamespace": "default",
                "PodUID": pod.uid,
                "Node": env.sched.records["default/web"][0].selected_node,
            },
        )
    ]
    # the extender (not DefaultBinder) was responsible for the API call: the pod is untouched here
    assert env.node_of("web") is None
    assert [r for r, _, _ in env.events()] == ["Scheduled"]


def test_bind_error_fails_the_binding_cycle() -> None:
    with extender_server({"bind": lambda b: (200, {"Error": "cannot bind now"})}) as srv:
        env = Env([Extender(url_prefix=srv.url, bind_verb="bind")])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
        assert env.events("FailedScheduling") == [("FailedScheduling", "web", "cannot bind now")]
    assert env.node_of("web") is None


def test_ignorable_binder_error_falls_back_to_bind_plugins() -> None:
    with extender_server({"bind": lambda b: (503, {})}) as srv:
        env = Env([Extender(url_prefix=srv.url, bind_verb="bind", ignorable=True)])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert srv.paths() == ["bind"]
    assert env.node_of("web") in ("n1", "n2", "n3")


# --- managedResources -------------------------------------------------------------------------


def test_managed_resources_interest() -> None:
    gpu = "example.com/gpu"
    with extender_server({"filter": ok_filter(["n1"])}) as srv:
        ext = Extender(
            url_prefix=srv.url,
            filter_verb="filter",
            managed_resources=[ExtenderManagedResource(name=gpu, ignored_by_scheduler=True)],
        )
        env = Env([ext])
        env.add(pod_manifest("plain", cpu="1"))
        env.run()
        assert srv.paths() == []
        env.add(
            pod_manifest(
                "init",
                cpu="1",
                spec={
                    "initContainers": [{"name": "i", "image": "busybox", "resources": {"limits": {gpu: "1"}}}]
                },
            )
        )
        env.run()
        assert srv.paths() == ["filter"]
        env.add(pod_manifest("gpu", cpu="1", requests={gpu: "1"}, limits={gpu: "1"}))
        env.run()
        assert srv.paths() == ["filter", "filter"]
    # ignoredByScheduler: NodeResourcesFit does not check the managed resource (no node has it)
    assert env.node_of("gpu") == "n1" and env.node_of("init") == "n1"
    h = HTTPExtender(ext)
    assert not h.is_interested(Pod.from_manifest(pod_manifest("x", cpu="1")))
    assert h.is_interested(Pod.from_manifest(pod_manifest("y", limits={gpu: "1"})))


# --- errors: ignorable / not ------------------------------------------------------------------


def test_ignorable_extender_down_is_skipped() -> None:
    port = closed_port()
    env = Env([Extender(url_prefix=f"http://127.0.0.1:{port}", filter_verb="filter", ignorable=True)])
    env.add(pod_manifest("web", cpu="1"))
    env.run()
    assert env.node_of("web") in ("n1", "n2", "n3")


def test_non_ignorable_extender_down_fails_the_cycle() -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}"
    env = Env([Extender(url_prefix=url, filter_verb="filter")])
    env.add(pod_manifest("web", cpu="1"))
    env.run()
    assert env.node_of("web") is None
    msg = f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    assert env.events("FailedScheduling") == [("FailedScheduling", "web", msg)]
    assert env.condition("web")["reason"] == "SchedulerError"


def test_non_200_answer_message() -> None:
    with extender_server({"filter": lambda b: (500, {})}) as srv:
        env = Env([Extender(url_prefix=srv.url, filter_verb="filter")])
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    msg = f"failed filter with extender at URL {srv.url}/filter, code 500"
    assert env.events("FailedScheduling") == [("FailedScheduling", "web", msg)]


def test_ignorable_extenders_run_after_the_others() -> None:
    calls: list[str] = []

    def verb(tag: str) -> Any:
        def f(body: Any) -> tuple[int, Any]:
            calls.append(tag)
            return 200, {"Nodes": body["Nodes"], "Error": ""}

        return f

    with extender_server({"a": verb("a"), "b": verb("b")}) as srv:
        cfg = KubeSchedulerConfiguration(
            extenders=[
                Extender(url_prefix=srv.url, filter_verb="a", ignorable=True),
                Extender(url_prefix=srv.url + "/", filter_verb="b"),
            ]
        )
        built = build_extenders(cfg)
        assert [e.filter_verb for e in built] == ["b", "a"]
        env = Env(list(cfg.extenders))
        env.add(pod_manifest("web", cpu="1"))
        env.run()
    assert calls == ["b", "a"]


# --- preempt ----------------------------------------------------------------------------------


def _preempt_env(url: str, cache_capable: bool = False, ignorable: bool = False) -> Env:
    nodes = [node_manifest("n1", cpu="4"), node_manifest("n2", cpu="4")]
    pods = [
        pod_manifest(
            "low1", cpu="3", priority=1, node_name="n1", status={"startTime": "2024-01-01T00:00:00Z"}
        ),
        pod_manifest(
            "low2", cpu="3", priority=1, node_name="n2", status={"startTime": "2024-01-01T00:00:00Z"}
        ),
    ]
    return Env(
        [
            Extender(
                url_prefix=url, preempt_verb="preempt", node_cache_capable=cache_capable, ignorable=ignorable
            )
        ],
        nodes=nodes,
        pods=pods,
        names=["PrioritySort", "NodeResourcesFit", "DefaultPreemption", "DefaultBinder"],
    )


def test_without_extender_preemption_picks_n2() -> None:
    nodes = [node_manifest("n1", cpu="4"), node_manifest("n2", cpu="4")]
    pods = [
        pod_manifest(
            "low1", cpu="3", priority=1, node_name="n1", status={"startTime": "2024-01-01T00:00:00Z"}
        ),
        pod_manifest(
            "low2", cpu="3", priority=1, node_name="n2", status={"startTime": "2024-01-01T00:00:00Z"}
        ),
    ]
    env = Env(
        [],
        nodes=nodes,
        pods=pods,
        names=["PrioritySort", "NodeResourcesFit", "DefaultPreemption", "DefaultBinder"],
    )
    env.add(pod_manifest("hi", cpu="2", priority=100))
    env.run(3)
    assert [(r, n) for r, n, _ in env.events("Preempted")] == [("Preempted", "low2")]


def test_preempt_verb_shrinks_candidates() -> None:
    def verb(body: Any) -> tuple[int, Any]:
        uid = body["NodeNameToVictims"]["n1"]["Pods"][0]["metadata"]["uid"]
        return 200, {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": uid}], "NumPDBViolations": 0}}}

    with extender_server({"preempt": verb}) as srv:
        env = _preempt_env(srv.url)
        hi = env.add(pod_manifest("hi", cpu="2", priority=100))
        env.run(3)
    body = srv.requests[0][1]
    assert sorted(body) == ["NodeNameToMetaVictims", "NodeNameToVictims", "Pod"]
    assert body["NodeNameToMetaVictims"] is None and body["Pod"]["metadata"]["name"] == "hi"
    assert {
        n: ([p["metadata"]["name"] for p in v["Pods"]], v["NumPDBViolations"])
        for n, v in body["NodeNameToVictims"].items()
    } == {"n1": (["low1"], 0), "n2": (["low2"], 0)}
    assert env.events("Preempted") == [("Preempted", "low1", f"Preempted by pod {hi.uid} on node n1")]
    assert env.node_of("hi") == "n1"


def test_preempt_node_cache_capable_sends_meta_victims() -> None:
    seen: list[Any] = []

    def verb(body: Any) -> tuple[int, Any]:
        seen.append(body)
        return 200, {"NodeNameToMetaVictims": {"n1": body["NodeNameToMetaVictims"]["n1"]}}

    with extender_server({"preempt": verb}) as srv:
        env = _preempt_env(srv.url, cache_capable=True)
        low = {n: env.mc.get("Pod", "default", n)["metadata"]["uid"] for n in ("low1", "low2")}
        env.add(pod_manifest("hi", cpu="2", priority=100))
        env.run(3)
    assert seen[0]["NodeNameToVictims"] is None
    assert seen[0]["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": low["low1"]}], "NumPDBViolations": 0},
        "n2": {"Pods": [{"UID": low["low2"]}], "NumPDBViolations": 0},
    }
    assert [n for _, n, _ in env.events("Preempted")] == ["low1"]


def test_preempt_node_without_victims_is_an_error_unless_ignorable() -> None:
    answer = {"NodeNameToMetaVictims": {"n2": {"Pods": [], "NumPDBViolations": 0}}}
    with extender_server({"preempt": lambda b: (200, answer)}) as srv:
        env = _preempt_env(srv.url)
        env.add(pod_manifest("hi", cpu="2", priority=100))
        env.run()
        ign = _preempt_env(srv.url, ignorable=True)
        ign.add(pod_manifest("hi", cpu="2", priority=100))
        ign.run()
    assert env.events("FailedScheduling") == [
        (
            "FailedScheduling",
            "hi",
            (
                '0/2 nodes are available: 2 Insufficient cpu. preemption: expected at least one victim pod on node "n2"'
            ),
        )
    ]
    assert env.events("Preempted") == []
    assert ign.events("FailedScheduling") == [
        (
            "FailedScheduling",
            "hi",
            ("0/2 nodes are available: 2 Insufficient cpu. preemption: no candidate node for preemption"),
        )
    ]


def test_preempt_unknown_victim_uid() -> None:
    answer = {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "nope"}], "NumPDBViolations": 0}}}
    with extender_server({"preempt": lambda b: (200, answer)}) as srv:
        env = _preempt_env(srv.url)
        env.add(pod_manifest("hi", cpu="2", priority=100))
        env.run()
    msg = (
        f"0/2 nodes are available: 2 Insufficient cpu. preemption: extender: {srv.url} claims to preempt pod "
        "(UID: &{nope}) on node: n1, but the pod is not found on that node"
    )
    assert env.events("FailedScheduling") == [("FailedScheduling", "hi", msg)]


# --- TLS --------------------------------------------------------------------------------------


def test_https_with_ca_data_and_insecure_without_ca() -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "extender.test")
    server_ctx = __import__("ssl").SSLContext(__import__("ssl").PROTOCOL_TLS_SERVER)
    cert.configure_cert(server_ctx)
    with extender_server({"prio": lambda b: (200, [{"Host": "n1", "Score": 10}])}, tls=server_ctx) as srv:
        pod = Pod.from_manifest(pod_manifest("web"))
        from kubesched.api.node import Node
        from kubesched.framework.node_info import NodeInfo

        nodes = [NodeInfo(Node.from_manifest(node_manifest("n1")))]
        pem = ca.cert_pem.bytes()
        verified = HTTPExtender(
            Extender(
                url_prefix=srv.url,
                prioritize_verb="prio",
                weight=1,
                enable_https=True,
                tls_config=ExtenderTLSConfig(ca_data=pem),
            )
        )
        assert verified.prioritize(pod, nodes) == {"n1": 10}
        named = Extender.model_validate(
            {
                "urlPrefix": srv.url,
                "prioritizeVerb": "prio",
                "weight": 1,
                "tlsConfig": {"serverName": "extender.test", "caData": base64.b64encode(pem).decode()},
            }
        )
        assert HTTPExtender(named).prioritize(pod, nodes) == {"n1": 10}
        insecure = HTTPExtender(
            Extender(url_prefix=srv.url, prioritize_verb="prio", weight=1, enable_https=True)
        )
        assert insecure.prioritize(pod, nodes) == {"n1": 10}
        untrusted = HTTPExtender(Extender(url_prefix=srv.url, prioritize_verb="prio", weight=1))
        with pytest.raises(ExtenderError, match=r'^Post "https://127\.0\.0\.1:\d+/prio": '):
            untrusted.prioritize(pod, nodes)
    with pytest.raises(
        ConfigError,
        match=r"extenders\[0\]\.tlsConfig: specifying a root certificates file with "
        "the insecure flag is not allowed",
    ):
        HTTPExtender(
            Extender(url_prefix="https://x", tls_config=ExtenderTLSConfig(insecure=True, ca_data=pem))
        )
