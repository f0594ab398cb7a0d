"""A replay workload's GPUs through Dynamic Resource Allocation instead of the device plugin
(``kubesched replay --gpu dra``): the same nodes and pods, with each GPU request turned into a
ResourceClaimTemplate against the ResourceSlices of the fake DRA driver
(:mod:`kubesched.embedded.kubelet.dra_driver`, driver and DeviceClass ``gpu.kubesched.io``).

Nodes: ``nvidia.com/gpu`` and ``alibabacloud.com/gpu-milli`` leave ``status.allocatable`` and
``capacity`` (the driver owns the GPUs now); the node gets the annotation
``gpu.kubesched.io/devices: <its nvidia.com/gpu>`` so the driver publishes that many devices, with
the model from the trace's ``alibabacloud.com/gpu-model`` label.

Pods that ask for GPUs (``nvidia.com/gpu``, or only ``alibabacloud.com/gpu-milli``): both requests
(and limits) leave the containers; the pod gets ``spec.resourceClaims: [{name: gpu,
resourceClaimTemplateName: T}]`` and its first container ``resources.claims: [{name: gpu}]``. The
number of devices is its ``nvidia.com/gpu``, else ``ceil(gpu-milli / 1000)``: **a fractional GPU
request takes a whole device**, because a v1.35 device is allocated to one claim at a time (sharing
a device between claims needs consumable capacity, DRAConsumableCapacity, off by default); the
comparison with the device plugin shows what that costs. A required node-affinity expression
``alibabacloud.com/gpu-model In [models]`` (the trace's ``gpu_spec``) becomes the request's CEL
selector ``device.attributes["gpu.kubesched.io"].model in [models]`` and leaves the affinity (an
emptied term, affinity or ``nodeAffinity`` is removed with it).

Templates: one per (device count, allowed models) in each namespace, named ``gpu-<n>`` or
``gpu-<n>-<models, lower case, joined by ->`` (e.g. ``gpu-1-p100-t4``), each with one request
``gpu`` (``exactly``: DeviceClass ``gpu.kubesched.io``, ``allocationMode: ExactCount``, ``count``).
No upstream counterpart; kept out of :mod:`kubesched.trace` so that the trace readers need no
knowledge of the driver.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import QuantityError, parse_quantity
from kubesched.client.client import ClusterClient
from kubesched.embedded.kubelet.dra_driver import DEVICES_ANNOTATION, DRIVER
from kubesched.errors import ManifestError, NotFoundError
from kubesched.trace.openb import GPU, GPU_MILLI, GPU_MODEL_LABEL
from kubesched.trace.workload import Workload, WorkloadPod

__all__ = ["CLAIM_NAME", "GPU_MODES", "allocated_devices", "pod_gpu_devices", "with_dra_gpus"]

Obj = dict[str, Any]

#: ``--gpu`` values: how GPU requests reach the scheduler.
GPU_MODES = ("device-plugin", "dra")
#: The pod claim (and request) name of a converted pod.
CLAIM_NAME = "gpu"


def _quantity(v: Any, what: str, where: str) -> Any:
    try:
        return parse_quantity(v)
    except (QuantityError, ValueError, TypeError):
        raise ManifestError(what, f"invalid quantity {v!r}", where) from None


def pod_gpu_devices(manifest: Mapping[str, Any], where: str = "") -> int:
    """Devices a Pod manifest's GPU requests become: the sum over containers of ``nvidia.com/gpu``,
    else ``ceil(gpu-milli / 1000)`` (0 without GPU requests). Raises ManifestError for a malformed
    quantity."""
    whole = milli = 0
    spec = manifest.get("spec") or {}
    for i, c in enumerate(spec.get("containers") or []):
        req = ((c or {}).get("resources") or {}).get("requests") or {}
        if GPU in req:
            whole += int(_quantity(req[GPU], f"spec.containers[{i}].resources.requests[{GPU}]", where))
        if GPU_MILLI in req:
            milli += int(
                _quantity(req[GPU_MILLI], f"spec.containers[{i}].resources.requests[{GPU_MILLI}]", where)
            )
    return whole if whole else math.ceil(milli / 1000)


def _models_from_affinity(spec: Obj) -> tuple[str, ...]:
    """Remove the ``gpu-model In [...]`` expressions from the required node affinity of ``spec``
    (edited in place) and return their values (the first such expression's, sorted)."""
    affinity = spec.get("affinity")
    node_aff = (affinity or {}).get("nodeAffinity") if isinstance(affinity, dict) else None
    required = (
        (node_aff or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_aff, dict)
        else None
    )
    if not isinstance(required, dict):
        return ()
    models: tuple[str, ...] = ()
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        exprs = []
        for e in (term or {}).get("matchExpressions") or []:
            if isinstance(e, dict) and e.get("key") == GPU_MODEL_LABEL and e.get("operator") == "In":
                models = models or tuple(sorted(str(v) for v in e.get("values") or []))
            else:
                exprs.append(e)
        term = (
            {**term, "matchExpressions": exprs}
            if exprs
            else {k: v for k, v in term.items() if k != "matchExpressions"}
        )
        if term:
            terms.append(term)
    assert isinstance(affinity, dict) and isinstance(node_aff, dict)
    if terms:
        required["nodeSelectorTerms"] = terms
    else:
        del node_aff["requiredDuringSchedulingIgnoredDuringExecution"]
        if not node_aff:
            del affinity["nodeAffinity"]
        if not affinity:
            del spec["affinity"]
    return models


def template_name(count: int, models: tuple[str, ...]) -> str:
    """``gpu-<count>`` or ``gpu-<count>-<models>`` (module docstring)."""
    if not models:
        return f"gpu-{count}"
    return f"gpu-{count}-" + "-".join(m.lower().replace("_", "-").replace(".", "-") for m in models)


def claim_template(namespace: str, count: int, models: tuple[str, ...]) -> Obj:
    """The ResourceClaimTemplate for ``count`` devices of ``models`` (any model when empty)."""
    exactly: Obj = {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count}
    if models:
        values = ", ".join(f'"{m}"' for m in models)
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model in [{values}]'}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": template_name(count, models), "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": CLAIM_NAME, "exactly": exactly}]}}},
    }


def _dra_node(node: Mapping[str, Any]) -> Obj:
    out = copy.deepcopy(dict(node))
    status = out.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    gpus = alloc.get(GPU)
    for field in ("allocatable", "capacity"):
        if isinstance(status.get(field), dict):
            for r in (GPU, GPU_MILLI):
                status[field].pop(r, None)
    if gpus is not None:
        meta = out.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), DEVICES_ANNOTATION: str(gpus)}
    return out


def _dra_pod(wp: WorkloadPod, templates: dict[tuple[str, int, tuple[str, ...]], Obj]) -> WorkloadPod:
    count = pod_gpu_devices(wp.manifest, f"Pod {wp.key}")
    if count == 0:
        return wp
    manifest = copy.deepcopy(dict(wp.manifest))
    spec = manifest.setdefault("spec", {})
    for c in spec.get("containers") or []:
        resources = c.get("resources") or {}
        for part in ("requests", "limits"):
            if isinstance(resources.get(part), dict):
                for r in (GPU, GPU_MILLI):
                    resources[part].pop(r, None)
    models = _models_from_affinity(spec)
    key = (wp.namespace, count, models)
    if key not in templates:
        templates[key] = claim_template(wp.namespace, count, models)
    name = templates[key]["metadata"]["name"]
    spec["resourceClaims"] = [{"name": CLAIM_NAME, "resourceClaimTemplateName": name}]
    first = spec["containers"][0]
    first.setdefault("resources", {})["claims"] = [{"name": CLAIM_NAME}]
    return WorkloadPod(wp.name, wp.namespace, wp.arrival, wp.duration, manifest, wp.source)


def with_dra_gpus(workload: Workload) -> Workload:
    """``workload`` with its GPUs through DRA (module docstring): converted nodes and pods, the
    claim templates in ``objects``, ``gpu="dra"`` (the replay then runs the fake DRA driver).
    Raises ManifestError (``Pod ns/name: spec.containers[0].resources.requests[nvidia.com/gpu]:
    invalid quantity 'x'``) for a malformed GPU request."""
    templates: dict[tuple[str, int, tuple[str, ...]], Obj] = {}
    pods = [_dra_pod(wp, templates) for wp in workload.pods]
    nodes = [_dra_node(n) for n in workload.nodes]
    objects = [*workload.objects, *(templates[k] for k in sorted(templates))]
    return Workload(
        nodes,
        pods,
        horizon=workload.horizon,
        origin=workload.origin,
        description=workload.description,
        notes=(*workload.notes, f"GPUs through DRA: {len(templates)} claim template(s)"),
        kubelet=workload.kubelet,
        objects=objects,
        gpu="dra",
        images=workload.images,
        status_phases=workload.status_phases,
        running=workload.running,
    )


def allocated_devices(cluster: ClusterClient, pod: Mapping[str, Any]) -> int:
    """Devices allocated to the claims a bound pod names in ``status.resourceClaimStatuses``
    (``status.allocation.devices.results`` entries of claims that exist)."""
    namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
    n = 0
    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        name = s.get("resourceClaimName") if isinstance(s, Mapping) else None
        if not name:
            continue
        try:
            claim = cluster.get("ResourceClaim", namespace, str(name))
        except NotFoundError:
            continue
        allocation = (claim.get("status") or {}).get("allocation") or {}
        n += len((allocation.get("devices") or {}).get("results") or [])
    return n
