"""Reader of the Alibaba GPU cluster trace ("openb", cluster-trace-gpu-v2023, published with the
USENIX ATC '23 paper *Beware of Fragmentation*; where to get it: README, "Real data") into
Kubernetes Node and Pod manifests.

GPU modelling follows the trace authors' simulator (hkust-adsl/kubernetes-scheduler-simulator):
a node with ``gpu`` GPUs gets ``nvidia.com/gpu: gpu`` and ``alibabacloud.com/gpu-milli:
gpu*1000``; a pod requests ``alibabacloud.com/gpu-milli: num_gpu*gpu_milli`` (thousandths of a
GPU, so GPU-sharing pods fit several to a GPU) and, when it takes whole GPUs, also
``nvidia.com/gpu: num_gpu``. ``gpu_spec`` (allowed models) becomes required node affinity on
the node label ``alibabacloud.com/gpu-model``. Memory is in MiB in the trace.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.errors import ManifestError

GPU = "nvidia.com/gpu"
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_MODEL_LABEL = "alibabacloud.com/gpu-model"


@dataclass(frozen=True, slots=True)
class TracePod:
    """One row of an openb pod list; times in seconds from the trace origin (``None`` when empty)."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...]
    qos: str
    phase: str
    creation_time: float
    deletion_time: float | None
    scheduled_time: float | None

    def manifest(
        self, namespace: str = "default", image: str = "registry.k8s.io/pause:3.10.1"
    ) -> dict[str, Any]:
        """A pending Pod manifest for this trace pod (labels ``trace/qos``)."""
        req: dict[str, Any] = {"cpu": f"{self.cpu_milli}m", "memory": f"{self.memory_mib}Mi"}
        if self.num_gpu:
            req[GPU_MILLI] = str(self.num_gpu * self.gpu_milli)
            if self.gpu_milli >= 1000:
                req[GPU] = str(self.num_gpu)
        spec: dict[str, Any] = {
            "containers": [{"name": "main", "image": image, "resources": {"requests": req}}]
        }
        if self.gpu_spec:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": GPU_MODEL_LABEL, "operator": "In", "values": list(self.gpu_spec)}
                                ]
                            }
                        ]
                    }
                }
            }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": self.name, "namespace": namespace, "labels": {"trace/qos": self.qos}},
            "spec": spec,
        }


def _num(s: str) -> float | None:
    s = s.strip()
    return float(s) if s else None


def read_pods(path: str | Path) -> Iterator[TracePod]:
    """Rows of ``openb_pod_list_*.csv`` in file order."""
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            yield TracePod(
                row["name"],
                int(row["cpu_milli"]),
                int(row["memory_mib"]),
                int(row["num_gpu"]),
                int(row["gpu_milli"]),
                tuple(s for s in (row.get("gpu_spec") or "").split("|") if s),
                row.get("qos", ""),
                row.get("pod_phase", ""),
                float(row["creation_time"]),
                _num(row.get("deletion_time", "")),
                _num(row.get("scheduled_time", "")),
            )


def read_nodes(path: str | Path) -> Iterator[dict[str, Any]]:
    """Node manifests from ``openb_node_list_*.csv`` (110 pods per node, kubelet's default)."""
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            gpus = int(row["gpu"])
            alloc = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi", "pods": "110"}
            labels = {"kubernetes.io/hostname": row["sn"]}
            if gpus:
                alloc[GPU] = str(gpus)
                alloc[GPU_MILLI] = str(gpus * 1000)
            if row.get("model"):
                labels[GPU_MODEL_LABEL] = row["model"]
            yield {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": row["sn"], "labels": labels},
                "status": {"allocatable": alloc, "capacity": dict(alloc)},
            }


def _read_csv(path: Path, reader: Any) -> list[Any]:
    """Run ``reader(path)`` turning missing files and bad rows into one clear error."""
    if not path.is_file():
        raise ManifestError("", "no such file (expected an openb trace csv)", where=str(path))
    try:
        return list(reader(path))
    except KeyError as e:
        raise ManifestError(
            "", f"missing column {e.args[0]!r} (is this the right openb csv?)", where=str(path)
        ) from None
    except ValueError as e:
        raise ManifestError("", f"invalid value: {e}", where=str(path)) from None


def load_openb_snapshot(
    trace_dir: str | Path,
    *,
    max_pods: int,
    pod_list: str = "openb_pod_list_default.csv",
    node_list: str = "openb_node_list_all_node.csv",
    max_nodes: int | None = None,
) -> list[dict[str, Any]]:
    """The first ``max_nodes`` nodes of ``node_list`` in file order (None: all) plus the first
    ``max_pods`` pods of ``pod_list`` by creation time, all pending. Raises
    :class:`~kubesched.errors.ManifestError` naming a missing file or a missing/invalid column."""
    d = Path(trace_dir)
    objs: list[dict[str, Any]] = _read_csv(d / node_list, read_nodes)[:max_nodes]
    pods = sorted(_read_csv(d / pod_list, read_pods), key=lambda p: (p.creation_time, p.name))[:max_pods]
    objs.extend(p.manifest() for p in pods)
    return objs
