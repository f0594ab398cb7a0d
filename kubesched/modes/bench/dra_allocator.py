"""The DRA allocator at scale: ``python -m kubesched.modes.bench.dra_allocator [--nodes 5000]
[--devices 8] [--allocated 0.5] [--pods 20]``.

Builds ``nodes`` nodes, one ResourceSlice per node with ``devices`` GPUs, a DeviceClass with a CEL
selector, and allocated claims holding the first ``allocated`` share of every node's devices; then
schedules ``pods`` one-GPU claims (a CEL selector on memory capacity) through the DynamicResources
plugin's PreFilter and Filter over every node, Reserve on the first feasible node, as one
scheduling cycle per pod. Prints: PreFilter time, Filter time per node (median over pods; the first
pod, with cold CEL results, shown apart; wall seconds, then the CPU seconds of this process, the
fair figure on a shared machine), and the memory of the per-cycle state (the slice index,
the allocated-device set and the per-node allocations kept for Reserve/Score), in bytes, measured
with ``tracemalloc``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from typing import Any, cast

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

DRIVER = "gpu.example.com"


class _Objects:
    def __init__(self) -> None:
        self.by_kind: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}

    def add(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.by_kind.setdefault(obj["kind"], {})[(meta.get("namespace", ""), meta["name"])] = obj

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return list(self.by_kind.get(kind, {}).values())

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.by_kind.get(kind, {}).get((namespace or "", name))

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


def build(nodes: int, devices: int, allocated: float) -> tuple[_Objects, list[Any]]:
    objs = _Objects()
    objs.add(
        {
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    )
    infos = []
    taken = int(devices * allocated)
    for n in range(nodes):
        name = f"node-{n:05d}"
        infos.append(node_info(make_node(name, labels={"kubernetes.io/hostname": name})))
        objs.add(
            {
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"gpu-{i}",
                            "attributes": {"model": {"string": "A100"}, "index": {"int": i}},
                            "capacity": {"memory": {"value": "80Gi"}},
                        }
                        for i in range(devices)
                    ],
                },
            }
        )
        if taken:
            objs.add(
                {
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"used-{name}", "namespace": "default", "uid": f"used-{name}"},
                    "spec": {
                        "devices": {
                            "requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": taken}}
                            ]
                        }
                    },
                    "status": {
                        "allocation": {
                            "devices": {
                                "results": [
                                    {"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{i}"}
                                    for i in range(taken)
                                ]
                            }
                        }
                    },
                }
            )
    return objs, infos


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--allocated", type=float, default=0.5)
    ap.add_argument("--pods", type=int, default=12)
    a = ap.parse_args(argv)
    objs, infos = build(a.nodes, a.devices, a.allocated)
    handle = FakeHandle(objects=objs)
    pl = DynamicResources(None, cast("Handle", handle))
    prefilter_s: list[float] = []
    filter_s: list[float] = []
    prefilter_cpu: list[float] = []
    filter_cpu: list[float] = []
    state_bytes: list[int] = []
    for p in range(a.pods):
        name = f"pod-{p}"
        objs.add(
            {
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default", "uid": f"c-{p}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": DRIVER,
                                    "selectors": [
                                        {
                                            "cel": {
                                                "expression": f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
                                            }
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                },
            }
        )
        pod = make_pod(
            name, uid=f"u-{p}", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}
        )
        state = CycleState()
        traced = p == a.pods - 1  # the last cycle measures memory (tracemalloc slows it down)
        if traced:
            tracemalloc.start()
        t0, c0 = time.perf_counter(), time.process_time()
        _, st = pl.pre_filter(state, pod, infos)
        t1, c1 = time.perf_counter(), time.process_time()
        assert st is None, st
        feasible = None
        for ni in infos:
            if pl.filter(state, pod, ni) is None and feasible is None:
                feasible = ni.name
        t2, c2 = time.perf_counter(), time.process_time()
        assert feasible is not None
        pl.reserve(state, pod, feasible)
        if traced:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            state_bytes.append(peak)
            continue
        prefilter_s.append(t1 - t0)
        filter_s.append((t2 - t1) / len(infos))
        prefilter_cpu.append(c1 - c0)
        filter_cpu.append((c2 - c1) / len(infos))
    warm = filter_s[1:] or filter_s
    print(f"nodes={a.nodes} devices/node={a.devices} allocated={a.allocated:.0%} pods={a.pods}")
    print(
        f"PreFilter: first {prefilter_s[0] * 1e3:.1f} ms, median {statistics.median(prefilter_s[1:] or prefilter_s) * 1e3:.1f} ms"
    )
    print(
        f"Filter per node: first pod {filter_s[0] * 1e6:.1f} us (cold CEL), median {statistics.median(warm) * 1e6:.1f} us"
    )
    print(f"Filter all nodes: median {statistics.median(warm) * a.nodes * 1e3:.0f} ms per pod")
    print(
        f"CPU time, warm: PreFilter median {statistics.median(prefilter_cpu[1:] or prefilter_cpu) * 1e3:.1f} ms, "
        f"Filter per node median {statistics.median(filter_cpu[1:] or filter_cpu) * 1e6:.1f} us"
    )
    print(
        f"per-cycle state (peak allocated during one warm PreFilter+Filter+Reserve): {state_bytes[0] / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
