"""``kubesched load`` keeps the kubelet Events about its pods from its own watch: an API server
that drops old Events (``kubesched serve`` keeps its newest 10,000, kube-apiserver drops them after
``--event-ttl``) does not drop them from the start-up report."""

from __future__ import annotations

import threading

from kubesched.clock import RealClock
from kubesched.embedded.kubelet.events import kubelet_event, pulled_message
from kubesched.embedded.store import MemoryCluster
from kubesched.modes.load.driver import LoadDriver, LoadOptions
from kubesched.testing import node_manifest
from kubesched.trace.workload import Workload, WorkloadPod


def test_events_dropped_by_the_api_server_still_count() -> None:
    clock = RealClock()
    mc = MemoryCluster(clock, event_limit=2)
    node = node_manifest("n1", cpu="4", memory="8Gi")
    mc.create(node)
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p0", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "example.com/a:1"}]},
    }
    workload = Workload([node], [WorkloadPod("p0", "default", 0.0, None, manifest)], horizon=1.0)
    driver = LoadDriver(mc, workload, LoadOptions(speed=1.0, timeout=1.0, run_id="t1"))
    done = threading.Event()

    def kubelet() -> None:  # once the pod exists: its Pulled Event, then more Events push it out
        while not done.wait(0.05):
            pod = mc.get("Pod", "load-default", "p0")
            if pod is None:
                continue
            mc.create_event(
                kubelet_event(pod, "n1", "Pulled", pulled_message("example.com/a:1", 2.0, 2.0, 7), 1.0)
            )
            for reason in ("Created", "Started", "Killing"):
                mc.create_event(kubelet_event(pod, "n1", reason, reason, 2.0))
            return

    thread = threading.Thread(target=kubelet)
    thread.start()
    try:
        driver.run()
        events = [e for e in mc.events()]
        data = driver.startup_data([node], events)
    finally:
        done.set()
        thread.join(5)
        driver.cleanup()
        clock.close()
    assert [e["reason"] for e in events] == ["Started", "Killing"]  # the API server kept 2
    assert sorted(e["reason"] for e in data.events) == ["Created", "Killing", "Pulled", "Started"]
