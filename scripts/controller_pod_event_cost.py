"""CPU cost of one pod binding through the embedded store's watch into the controllers ``serve``
starts (the namespace controller, the workload controllers, the ``ControllerManager`` list and
taint eviction), in microseconds per binding.

    python scripts/controller_pod_event_cost.py [PODS] [none]

Builds a ``MemoryCluster`` with 20 nodes and PODS (default 4000) pending pods without a
controller (as the spreading file has them), starts the controllers, then binds every pod
(``MemoryCluster.bind``: one MODIFIED pod event each) and prints the process CPU time per binding,
median of 7 repeats (each on a fresh store, after ``gc.collect()``). ``none`` starts no
controllers: the store's own cost.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

from kubesched.clock import RealClock
from kubesched.embedded.controllers.manager import ControllerManager, start_workload_controllers
from kubesched.embedded.controllers.namespace import NamespaceController
from kubesched.embedded.controllers.tainteviction import TaintEvictionController
from kubesched.embedded.store import MemoryCluster

NODES = 20
REPEATS = 7


def one_run(pods: int, controllers: bool) -> float:
    """Microseconds of CPU per binding for ``pods`` bindings."""
    clock = RealClock()
    cluster = MemoryCluster(clock, uid_seed=None)
    for i in range(NODES):
        cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "1000"}},
            }
        )
    created = [
        cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
        )
        for i in range(pods)
    ]
    started: list[Any] = []
    if controllers:
        started = [
            NamespaceController(cluster).start(),
            *start_workload_controllers(cluster, clock),
            ControllerManager(cluster, clock).start(),
            TaintEvictionController(cluster, clock).start(),
        ]
    gc.collect()
    t = time.process_time()
    for i, pod in enumerate(created):
        cluster.bind("default", pod["metadata"]["name"], pod["metadata"]["uid"], f"n{i % NODES}")
    per_bind = (time.process_time() - t) / pods * 1e6
    for c in started:
        c.stop()
    return per_bind


def main() -> None:
    pods = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    controllers = not (len(sys.argv) > 2 and sys.argv[2] == "none")
    runs = [one_run(pods, controllers) for _ in range(REPEATS)]
    print(f"us/bind median {statistics.median(runs):.1f} all {[round(r, 1) for r in runs]}")


if __name__ == "__main__":
    main()
