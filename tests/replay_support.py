"""Small replay workloads built from tuples, for the replay property tests
(``tests/modes/replay/test_replay.py``, ``tests/modes/replay/test_replay_driver.py``), and the
Node manifest the replay tests build their workloads on (:func:`replay_node`)."""

from __future__ import annotations

from typing import Any

from kubesched.trace.workload import Workload, WorkloadPod

#: One pod: (arrival step, run seconds or None for until the end, CPU cores, image).
PodSpec = tuple[int, int | None, int, str]


def replay_node(name: str, cpu: str = "6", memory: str = "8Gi") -> dict[str, Any]:
    """A Node manifest named ``name`` with allocatable ``cpu`` (cores), ``memory`` and 110 pods."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def two_node_workload(specs: list[PodSpec], *, horizon: float, steps_per_second: int = 1) -> Workload:
    """Nodes ``n0`` and ``n1`` (6 CPUs, 8Gi, 110 pods each) and pod ``p<k>`` of namespace
    ``default`` per spec: one container asking its CPU cores, arriving at ``step /
    steps_per_second`` seconds. Pods are in arrival order (then by name); ``horizon`` in seconds."""
    nodes = [replay_node(f"n{i}") for i in range(2)]
    pods = []
    for k, (arrival, duration, cpu, image) in enumerate(specs):
        m: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{k}", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": str(cpu)}}}]
            },
        }
        pods.append(
            WorkloadPod(
                f"p{k}",
                "default",
                arrival / steps_per_second,
                None if duration is None else float(duration),
                m,
            )
        )
    pods.sort(key=lambda p: (p.arrival, p.name))
    return Workload(nodes, pods, horizon=horizon)
