"""Cluster files for ``kubesched bench --simulate``: what-if snapshots at the size of real
clusters (no upstream counterpart; ``scheduler_perf`` has no ``simulate``).

**SimulateSpreading** (:func:`spreading_cluster`): ``nodes`` nodes (``cpu: 8``, ``memory: 32Gi``,
``pods: 110``) labelled ``kubernetes.io/hostname`` and ``topology.kubernetes.io/zone`` round-robin
over ``zone-a``, ``zone-b``, ``zone-c``; ``pods`` pending pods (``cpu: 100m``, ``memory: 128Mi``)
of ``apps`` apps (label ``app: app-NN``, pod ``i`` belongs to app ``i % apps``), and every
``spread_every``-th pod carries a zone spread constraint (``maxSkew: 1``,
``whenUnsatisfiable: ScheduleAnyway``, selector ``app: <its app>``). Deterministic: the same
arguments give the same bytes.

:data:`SIMULATE_FIXTURES` names the shipped sizes; :func:`write_fixture` writes one as
multi-document YAML (about 250 bytes per pod).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ZONES = ("zone-a", "zone-b", "zone-c")


@dataclass(frozen=True, slots=True)
class SimulateFixture:
    """A named size of :func:`spreading_cluster`."""

    name: str
    nodes: int
    pods: int
    apps: int = 50
    spread_every: int = 10


SIMULATE_FIXTURES: dict[str, SimulateFixture] = {
    f.name: f
    for f in (
        SimulateFixture("SimulateSpreading/2000Nodes_20000Pods", 2000, 20000),
        SimulateFixture("SimulateSpreading/10000Nodes_100000Pods", 10000, 100000),
        SimulateFixture("SimulateSpreading/200Nodes_2000Pods", 200, 2000),
    )
}


def _node(i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % len(ZONES)]},
        },
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        },
    }


def _pod(i: int, apps: int, spread_every: int) -> dict[str, Any]:
    app = f"app-{i % apps:02d}"
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": f"registry.example/{app}:1.0",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            }
        ]
    }
    if i % spread_every == spread_every - 1:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{app}-{i:06d}", "namespace": "default", "labels": {"app": app}},
        "spec": spec,
    }


def spreading_cluster(
    nodes: int, pods: int, apps: int = 50, spread_every: int = 10
) -> Iterator[dict[str, Any]]:
    """The objects of a SimulateSpreading file: nodes first, then pods (see the module docstring).
    Raises ValueError for a non-positive count."""
    if nodes < 1 or pods < 0 or apps < 1 or spread_every < 1:
        raise ValueError("nodes, apps and spread_every must be positive and pods not negative")
    for i in range(nodes):
        yield _node(i)
    for i in range(pods):
        yield _pod(i, apps, spread_every)


def write_fixture(path: str | Path, fixture: SimulateFixture) -> Path:
    """Write ``fixture`` as multi-document YAML to ``path``; returns the path."""
    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out = Path(path)
    with out.open("w", encoding="utf-8") as f:
        yaml.dump_all(
            spreading_cluster(fixture.nodes, fixture.pods, fixture.apps, fixture.spread_every),
            f,
            Dumper=dumper,
            sort_keys=False,
            default_flow_style=None,
        )
    return out
