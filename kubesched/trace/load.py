"""Read a replay workload (:class:`~kubesched.trace.workload.Workload`) from a trace.

Two inputs, chosen by :func:`load_workload` from the path:

1. **The openb trace** (Alibaba cluster-trace-gpu-v2023, README "Real data"; see
   :mod:`kubesched.trace.openb` for the GPU modelling): a directory holding
   ``openb_node_list_all_node.csv`` and ``openb_pod_list_default.csv``, or a path to one
   ``openb_pod_list_*.csv`` file (e.g. ``openb_pod_list_gpuspec33.csv``; the node list is read from
   the same directory). Every node is loaded (the first ``max_nodes`` with ``--nodes``). A pod
   arrives at ``creation_time`` and runs for ``deletion_time - creation_time`` once its container
   has started; a pod whose deletion is the end of the trace (still Running when it was collected)
   runs until the replay ends. Pods whose ``scheduled_time`` is empty (Pending at the end of the
   trace) are replayed like any other. The trace has no images: each pod gets one from an
   :class:`~kubesched.images.assign.ImageAssigner` (GPU pool for pods with ``num_gpu > 0``).

   ``window`` (``--trace-window``) picks the pods created in ``[START, END)``, trace seconds:

   * ``all`` (default): the whole trace;
   * ``30d`` / ``12h`` / ``3600s`` / ``3600``: the last span of that length before the end of the
     trace (``30d`` = the busy last 30 days: 7,355 of the 8,152 pods);
   * ``START:END`` with optional units (``10309761:12902960``, ``100d:``, ``:7d``; empty START = 0,
     empty END = the end of the trace).

   Replay second 0 is START; the measurement horizon is ``END - START``. Pods created before START
   are left out, even if they were still running at START (the cluster starts empty).

2. **kubesched's simple format**, a YAML file (``.yaml``/``.yml``) or a directory holding
   ``nodes.csv`` and ``pods.csv``::

       horizon: 600            # optional; default: max(arrival + duration) over the pods
       kubelet:                # optional KubeletImageConfig overrides (camelCase), e.g.
         nodeBandwidthBytesPerSecond: 100000000
       nodes:
         - {name: node-a, cpu: "4", memory: 16Gi, gpu: 0, count: 1, labels: {zone: a}}
         - {name: node-z, cpu: "4", memory: 16Gi, arrival: 60}             # joins at second 60
         - {apiVersion: v1, kind: Node, metadata: {...}, status: {...}}   # or a full Node
       pods:
         - {name: web, arrival: 0, duration: 60, cpu: 500m, memory: 1Gi, gpu: 0, image: redis:latest}
         - {name: job, arrival: 5, duration: null, count: 3, template: {metadata: {...}, spec: {...}}}
       podsCsv: pods.csv        # optional: more pods from a CSV file next to the YAML
       objects:                 # optional: manifests created at second 0 (workloads, PriorityClasses...)
         - {apiVersion: batch/v1, kind: Job, metadata: {name: train}, spec: {...}}

   Node shorthand: ``cpu``/``memory`` (Kubernetes quantities; numbers are cores and bytes),
   ``gpu`` (``nvidia.com/gpu``), ``pods`` (default 110), ``labels``, ``arrival`` (s after second
   0 at which the node joins; default 0); ``count: N`` makes ``name-0`` .. ``name-{N-1}``.
   ``objects`` are Kubernetes manifests of the kinds ``simulate`` loads, except Pods and Nodes
   (``metadata.namespace`` defaults to ``default``); the workloads among them (Deployments,
   ReplicaSets, Jobs, DaemonSets, StatefulSets) get their pods from the replay's workload
   controllers (:mod:`kubesched.modes.replay.controllers`). A trace needs pods or objects. Pod entries: ``arrival`` (s, required), ``duration`` (s; omitted or
   null = until the end), ``namespace`` (default ``default``), ``count`` (replicas
   ``name-0``...); then either ``template`` (a Pod manifest: its containers' images are kept) or
   the shorthand ``cpu``/``memory``/``gpu``/``image``. A pod without an image gets one from the
   assigner. CSV columns: nodes ``name,cpu,memory,gpu[,count]``; pods
   ``name,arrival,duration,cpu,memory,gpu,image[,namespace]`` (empty duration = until the end, empty
   image = assigned).

Errors: :class:`~kubesched.errors.ManifestError` naming the file and field
(``trace.yaml: pods[2].arrival: must be a number >= 0``); FileNotFoundError for a missing path.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubesched.api import kinds as kind_registry
from kubesched.api.document_file import read_document
from kubesched.api.pod import Pod
from kubesched.errors import ManifestError
from kubesched.images.assign import ImageAssigner
from kubesched.trace.openb import TracePod, read_nodes, read_pods
from kubesched.trace.workload import Workload, WorkloadPod
from kubesched.units import format_seconds

__all__ = [
    "load_workload",
    "load_openb",
    "load_simple_yaml",
    "load_simple_csv_dir",
    "parse_window",
    "OPENB_NODE_LIST",
    "OPENB_POD_LIST",
    "is_openb_path",
]

OPENB_NODE_LIST = "openb_node_list_all_node.csv"
OPENB_POD_LIST = "openb_pod_list_default.csv"
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def _seconds(text: str, what: str) -> float:
    m = _SPAN.match(text)
    if m is None:
        raise ManifestError(
            "--trace-window",
            f"{what}: expected a number of seconds with an optional unit s/m/h/d, got {text!r}",
        )
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


def parse_window(window: str | None, trace_end: float) -> tuple[float, float]:
    """``(start, end)`` in trace seconds for a ``--trace-window`` value (see the module docstring).
    Raises ManifestError (path ``--trace-window``) for a malformed or empty window."""
    if window is None or window.strip() in ("", "all"):
        return 0.0, trace_end
    if ":" in window:
        a, _, b = window.partition(":")
        start = _seconds(a, "START") if a.strip() else 0.0
        end = _seconds(b, "END") if b.strip() else trace_end
    else:
        end = trace_end
        start = max(0.0, trace_end - _seconds(window, "span"))
    if end <= start:
        raise ManifestError(
            "--trace-window", f"the window {window!r} is empty (start {start:g} >= end {end:g})"
        )
    return start, end


def is_openb_path(path: Path) -> bool:
    """True for an openb directory (holding the default node list) or an ``openb_pod_list_*.csv`` file."""
    if path.is_dir():
        return (path / OPENB_NODE_LIST).exists()
    return path.name.startswith("openb_pod_list_") and path.suffix == ".csv"


def load_openb(
    path: str | Path,
    assigner: ImageAssigner,
    *,
    window: str | None = None,
    max_pods: int | None = None,
    max_nodes: int | None = None,
) -> Workload:
    """The openb trace as a workload (see the module docstring). ``path``: the trace directory or
    one of its pod lists; ``max_pods``: keep the first N pods of the window by (creation, name);
    ``max_nodes``: keep the first N nodes in file order. Raises FileNotFoundError naming a missing
    file, ManifestError for a bad window."""
    p = Path(path)
    if p.is_dir():
        directory, pod_file = p, p / OPENB_POD_LIST
    else:
        directory, pod_file = p.parent, p
    node_file = directory / OPENB_NODE_LIST
    for f in (node_file, pod_file):
        if not f.exists():
            raise FileNotFoundError(f"openb trace file {f} not found")
    nodes = list(read_nodes(node_file))
    if max_nodes is not None:
        nodes = nodes[:max_nodes]
    rows = list(read_pods(pod_file))
    trace_end = max(max(r.creation_time, r.deletion_time or 0.0, r.scheduled_time or 0.0) for r in rows)
    start, end = parse_window(window, trace_end)
    chosen = sorted(
        (r for r in rows if start <= r.creation_time < end), key=lambda r: (r.creation_time, r.name)
    )
    # the cluster as the trace had it when the window opens: pods scheduled before it and still
    # running then arrive at second 0 for the rest of their run
    running = (
        sorted(
            (
                r
                for r in rows
                if r.creation_time < start
                and r.scheduled_time is not None
                and r.scheduled_time < start
                and (r.deletion_time is None or r.deletion_time > start)
            ),
            key=lambda r: r.name,
        )
        if start > 0
        else []
    )  # all arrive at 0: by name
    if max_pods is not None:  # the first N by arrival: the running ones arrive first
        running = running[:max_pods]
        chosen = chosen[: max_pods - len(running)]
    pods = [_running_pod(r, start, trace_end, assigner) for r in running]
    pods += [_openb_pod(r, start, trace_end, assigner) for r in chosen]
    label = f"{pod_file} window {_window_label(start, end, trace_end)}"
    notes: tuple[str, ...] = (f"{len(chosen)} of {len(rows)} pods created in the window, {len(nodes)} nodes",)
    if running:
        notes += (
            f"{len(running)} pods running when the window opens start it (arrival 0, for the rest of their "
            "run)",
        )
    return Workload(nodes, pods, horizon=end - start, origin=start, description=label, notes=notes)


def _window_label(start: float, end: float, trace_end: float) -> str:
    """``the last 12h (day 148.8 to 149.3)`` or ``day 119.3 to 149.3`` for reading."""
    span = f"day {start / 86400:.1f} to {end / 86400:.1f}"
    if end == trace_end and start > 0:
        return f"the last {format_seconds(end - start)} ({span})"
    return f"{format_seconds(end - start)} ({span})"


def _running_pod(r: TracePod, start: float, trace_end: float, assigner: ImageAssigner) -> WorkloadPod:
    image = assigner.image_for(r.name, gpu=r.num_gpu > 0)
    duration: float | None = None
    if r.deletion_time is not None and r.deletion_time < trace_end:
        duration = max(0.0, r.deletion_time - start)
    return WorkloadPod(
        r.name, "default", 0.0, duration, r.manifest(image=image.name), source="RunningAtStart"
    )


def _openb_pod(r: TracePod, start: float, trace_end: float, assigner: ImageAssigner) -> WorkloadPod:
    image = assigner.image_for(r.name, gpu=r.num_gpu > 0)
    duration: float | None = None
    if r.deletion_time is not None and r.deletion_time < trace_end:
        duration = max(0.0, r.deletion_time - r.creation_time)
    manifest = r.manifest(image=image.name)
    return WorkloadPod(r.name, "default", r.creation_time - start, duration, manifest, source=r.phase)


# ----------------------------------------------------------------------------- simple format


def _number(value: Any, path: str, where: str, *, allow_none: bool = False) -> float | None:
    if value is None or value == "":
        if allow_none:
            return None
        raise ManifestError(path, "required", where)
    if isinstance(value, bool):
        raise ManifestError(path, f"must be a number >= 0, got {value!r}", where)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ManifestError(path, f"must be a number >= 0, got {value!r}", where) from None
    if not number >= 0 or number == float("inf"):
        raise ManifestError(path, f"must be a number >= 0, got {value!r}", where)
    return number


def _count(value: Any, path: str, where: str) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        try:
            if isinstance(value, str) and value.strip().isdigit() and int(value) >= 1:
                return int(value)
        except ValueError:
            pass
        raise ManifestError(path, f"must be an integer >= 1, got {value!r}", where)
    return value


def _quantity(value: Any) -> str:
    return str(value).strip()


def _names(base: str, count: int) -> list[str]:
    return [base] if count == 1 else [f"{base}-{i}" for i in range(count)]


def _node_manifests(entry: Any, path: str, where: str) -> list[dict[str, Any]]:
    if not isinstance(entry, Mapping):
        raise ManifestError(path, f"must be a mapping, got {entry!r}", where)
    if entry.get("kind") == "Node" or "metadata" in entry:
        return [dict(entry)]
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{path}.name", "required", where)
    allowed = {"name", "cpu", "memory", "gpu", "pods", "labels", "count", "arrival"}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ManifestError(
            f"{path}.{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})", where
        )
    for key in ("cpu", "memory"):
        if entry.get(key) in (None, ""):
            raise ManifestError(f"{path}.{key}", "required", where)
    alloc: dict[str, str] = {
        "cpu": _quantity(entry["cpu"]),
        "memory": _quantity(entry["memory"]),
        "pods": _quantity(entry.get("pods", 110)),
    }
    gpu = entry.get("gpu")
    if gpu not in (None, "", 0, "0"):
        alloc["nvidia.com/gpu"] = _quantity(gpu)
    labels = entry.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ManifestError(f"{path}.labels", "must be a mapping", where)
    out = []
    for node_name in _names(name, _count(entry.get("count"), f"{path}.count", where)):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": node_name,
                    "labels": {
                        "kubernetes.io/hostname": node_name,
                        **{str(k): str(v) for k, v in labels.items()},
                    },
                },
                "status": {"allocatable": dict(alloc), "capacity": dict(alloc)},
            }
        )
    return out


def _objects(raw: Any, where: str) -> list[dict[str, Any]]:
    """The ``objects`` of a YAML trace: manifests of loadable kinds other than Pod and Node."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError("objects", "must be a list of Kubernetes manifests", where)
    out = []
    for i, obj in enumerate(raw):
        path = f"objects[{i}]"
        if not isinstance(obj, Mapping):
            raise ManifestError(path, f"must be a Kubernetes manifest mapping, got {obj!r}", where)
        kind = obj.get("kind")
        if kind in ("Pod", "Node") or kind not in kind_registry.loadable_kinds():
            raise ManifestError(
                f"{path}.kind",
                f"{kind!r} is not a kind a trace's objects may hold (pods and nodes have their own lists)",
                where,
            )
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta.get("name"):
            raise ManifestError(f"{path}.metadata.name", "required", where)
        manifest = dict(obj)
        if not kind_registry.is_cluster_scoped(str(kind)):
            manifest["metadata"] = {**meta, "namespace": str(meta.get("namespace") or "default")}
        check = kind_registry.validator(str(kind))
        if check is not None:
            try:
                check(manifest)
            except ManifestError as e:
                raise e.under(path).located(where) from None
            except ValueError as e:
                raise ManifestError(path, str(e), where) from None
        out.append(manifest)
    return out


def _pod_entries(entry: Any, path: str, where: str, assigner: ImageAssigner) -> list[WorkloadPod]:
    if not isinstance(entry, Mapping):
        raise ManifestError(path, f"must be a mapping, got {entry!r}", where)
    allowed = {
        "name",
        "namespace",
        "arrival",
        "duration",
        "cpu",
        "memory",
        "gpu",
        "image",
        "count",
        "template",
    }
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ManifestError(
            f"{path}.{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(allowed))})", where
        )
    arrival = _number(entry.get("arrival"), f"{path}.arrival", where)
    assert arrival is not None
    duration = _number(entry.get("duration"), f"{path}.duration", where, allow_none=True)
    template = entry.get("template")
    if template is not None and not isinstance(template, Mapping):
        raise ManifestError(f"{path}.template", "must be a Pod manifest mapping", where)
    tmeta = (template or {}).get("metadata") or {}
    name = entry.get("name") or tmeta.get("name")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{path}.name", "required (or template.metadata.name)", where)
    namespace = str(entry.get("namespace") or tmeta.get("namespace") or "default")
    count = _count(entry.get("count"), f"{path}.count", where)
    out = []
    for pod_name in _names(name, count):
        if template is not None:
            if any(k in entry for k in ("cpu", "memory", "gpu", "image")):
                raise ManifestError(path, "give either template or cpu/memory/gpu/image, not both", where)
            manifest = _from_template(template, pod_name, namespace, path, where, assigner)
        else:
            manifest = _from_shorthand(entry, pod_name, namespace, path, where, assigner)
        try:
            Pod.from_manifest(manifest)
        except ManifestError as e:
            raise e.under(f"{path}.template" if template is not None else path).located(where) from None
        out.append(WorkloadPod(pod_name, namespace, arrival, duration, manifest))
    return out


def _from_template(
    template: Mapping[str, Any], name: str, namespace: str, path: str, where: str, assigner: ImageAssigner
) -> dict[str, Any]:
    spec = dict(template.get("spec") or {})
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ManifestError(f"{path}.template.spec.containers", "must be a non-empty list", where)
    fixed = []
    for c in containers:
        c = dict(c) if isinstance(c, Mapping) else c
        if isinstance(c, dict) and not c.get("image"):
            c["image"] = assigner.image_for(name, gpu=_wants_gpu(c)).name
        fixed.append(c)
    spec["containers"] = fixed
    meta = dict(template.get("metadata") or {})
    meta.update({"name": name, "namespace": namespace})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _wants_gpu(container: Mapping[str, Any]) -> bool:
    req = (container.get("resources") or {}).get("requests") or {}
    return str(req.get("nvidia.com/gpu", "0")) not in ("0", "")


def _from_shorthand(
    entry: Mapping[str, Any], name: str, namespace: str, path: str, where: str, assigner: ImageAssigner
) -> dict[str, Any]:
    req: dict[str, str] = {}
    for key in ("cpu", "memory"):
        if entry.get(key) not in (None, ""):
            req[key] = _quantity(entry[key])
    gpu = entry.get("gpu")
    if gpu not in (None, "", 0, "0"):
        req["nvidia.com/gpu"] = _quantity(gpu)
    image = entry.get("image")
    if image in (None, ""):
        image = assigner.image_for(name, gpu="nvidia.com/gpu" in req).name
    elif not isinstance(image, str):
        raise ManifestError(f"{path}.image", f"must be a string, got {image!r}", where)
    container: dict[str, Any] = {"name": "main", "image": image}
    if req:
        container["resources"] = {"requests": req}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container]},
    }


def _default_horizon(pods: Iterable[WorkloadPod]) -> float:
    return max((p.arrival + (p.duration or 0.0) for p in pods), default=0.0)


def _sorted(pods: list[WorkloadPod]) -> list[WorkloadPod]:
    return sorted(pods, key=lambda p: (p.arrival, p.namespace, p.name))


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(f)]


def _csv_pods(path: Path, assigner: ImageAssigner) -> list[WorkloadPod]:
    where = str(path)
    out: list[WorkloadPod] = []
    for i, row in enumerate(_read_csv(path)):
        entry: dict[str, Any] = {
            k: v
            for k, v in row.items()
            if k in ("name", "namespace", "arrival", "duration", "cpu", "memory", "gpu", "image") and v != ""
        }
        if "duration" not in entry:
            entry["duration"] = None
        out.extend(_pod_entries(entry, f"row {i + 2}", where, assigner))
    return out


#: What a trace can be, for messages about a file that is none of them.
TRACE_FORMATS = (
    "a trace is an openb directory or pod list, a YAML file with nodes and pods, or a directory with "
    "nodes.csv and pods.csv (Kubernetes manifests are read by simulate and serve)"
)


def load_simple_yaml(path: str | Path, assigner: ImageAssigner) -> Workload:
    """A workload from kubesched's YAML trace format (see the module docstring)."""
    p = Path(path)
    where = str(p)
    data = read_document(p, error=ManifestError, hint=TRACE_FORMATS)
    if isinstance(data, Mapping) and ("kind" in data or "apiVersion" in data) and "nodes" not in data:
        raise ManifestError(
            "", f"a Kubernetes manifest (kind {data.get('kind')}), not a trace: {TRACE_FORMATS}", where
        )
    if not isinstance(data, Mapping):
        raise ManifestError("", "the trace must be a mapping with nodes and pods", where)
    allowed = {"horizon", "kubelet", "nodes", "pods", "podsCsv", "objects"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ManifestError(unknown[0], f"unknown field (allowed: {', '.join(sorted(allowed))})", where)
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise ManifestError("nodes", "must be a non-empty list", where)
    nodes: list[dict[str, Any]] = []
    node_arrivals: dict[str, float] = {}
    for i, e in enumerate(raw_nodes):
        made = _node_manifests(e, f"nodes[{i}]", where)
        nodes.extend(made)
        if isinstance(e, Mapping) and e.get("kind") != "Node" and "metadata" not in e:
            arrival = _number(e.get("arrival", 0), f"nodes[{i}].arrival", where) or 0.0
            node_arrivals.update({str(n["metadata"]["name"]): arrival for n in made if arrival > 0})
    objects = _objects(data.get("objects"), where)
    raw_pods = data.get("pods") or []
    if not isinstance(raw_pods, list):
        raise ManifestError("pods", "must be a list", where)
    pods = [wp for i, e in enumerate(raw_pods) for wp in _pod_entries(e, f"pods[{i}]", where, assigner)]
    if data.get("podsCsv"):
        pods.extend(_csv_pods(p.parent / str(data["podsCsv"]), assigner))
    if not pods and not objects:
        raise ManifestError("pods", "the trace has no pods (and no objects)", where)
    kubelet = data.get("kubelet") or {}
    if not isinstance(kubelet, Mapping):
        raise ManifestError("kubelet", "must be a mapping of KubeletImageConfig fields", where)
    horizon = _number(data.get("horizon"), "horizon", where, allow_none=True)
    pods = _sorted(pods)
    try:
        return Workload(
            nodes,
            pods,
            horizon=horizon if horizon is not None else _default_horizon(pods),
            description=where,
            kubelet=dict(kubelet),
            objects=objects,
            node_arrivals=node_arrivals,
        )
    except ValueError as e:
        raise ManifestError("pods", str(e), where) from None


def load_simple_csv_dir(path: str | Path, assigner: ImageAssigner) -> Workload:
    """A workload from a directory holding ``nodes.csv`` and ``pods.csv`` (see the module docstring)."""
    d = Path(path)
    node_file, pod_file = d / "nodes.csv", d / "pods.csv"
    for f in (node_file, pod_file):
        if not f.exists():
            raise FileNotFoundError(f"trace file {f} not found")
    nodes = []
    for i, row in enumerate(_read_csv(node_file)):
        entry: dict[str, Any] = {k: v for k, v in row.items() if v != ""}
        nodes.extend(_node_manifests(entry, f"row {i + 2}", str(node_file)))
    pods = _sorted(_csv_pods(pod_file, assigner))
    if not nodes or not pods:
        raise ManifestError("", "the trace needs at least one node and one pod", str(d))
    try:
        return Workload(nodes, pods, horizon=_default_horizon(pods), description=str(d))
    except ValueError as e:
        raise ManifestError("", str(e), str(pod_file)) from None


def load_workload(
    path: str | Path,
    assigner: ImageAssigner,
    *,
    window: str | None = None,
    max_pods: int | None = None,
    max_nodes: int | None = None,
) -> Workload:
    """Dispatch on ``path``: openb directory or pod list, YAML file, or a directory with
    ``nodes.csv``/``pods.csv``; then apply ``max_pods`` (first N by arrival) and ``max_nodes``
    (first N nodes). ``window`` applies to openb traces only (ManifestError otherwise)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"trace {p} not found")
    if is_openb_path(p):
        return load_openb(p, assigner, window=window, max_pods=max_pods, max_nodes=max_nodes)
    if window not in (None, "", "all"):
        raise ManifestError("--trace-window", "only the openb trace has a time window", str(p))
    if p.is_dir():
        workload = load_simple_csv_dir(p, assigner)
    elif p.suffix.lower() in (".yaml", ".yml"):
        workload = load_simple_yaml(p, assigner)
    else:
        raise ManifestError("", f"not a trace: {TRACE_FORMATS}", str(p))
    if max_pods is None and max_nodes is None:
        return workload
    pods = list(workload.pods)[:max_pods] if max_pods is not None else list(workload.pods)
    nodes = list(workload.nodes)[:max_nodes] if max_nodes is not None else list(workload.nodes)
    return Workload(
        nodes,
        pods,
        horizon=workload.horizon,
        origin=workload.origin,
        description=workload.description,
        notes=workload.notes,
        kubelet=workload.kubelet,
        objects=workload.objects,
        gpu=workload.gpu,
    )
