"""A fake DRA driver for the embedded cluster (``kubesched serve --kubelet``, ``kubesched replay
--gpu dra``): the part of a GPU vendor's DRA kubelet plugin that publishes a node's GPUs as a
``resource.k8s.io/v1`` ResourceSlice (``staging/src/k8s.io/dynamic-resource-allocation/
resourceslice/resourceslicecontroller.go``), plus the DeviceClass that selects its devices.

Driver :data:`DRIVER` (``gpu.kubesched.io``); one pool per node, named after the node, in one
slice (``pool.resourceSliceCount: 1``; ``generation`` starts at 1 and grows each time the node's
devices change); the slice is created with ``generateName: <node>-gpu.kubesched.io-`` and owned by
the Node (``controller: true``), ``spec.nodeName`` set. One device per GPU, ``gpu-0`` ..
``gpu-<n-1>``, with the attributes ``index`` (int), ``model`` (string, when known) and the capacity
``memory`` (when known). The slice is deleted when the node goes away, or changes to have no GPUs.

How many GPUs and which model a node has (first that applies):

* GPUs: the node annotation ``gpu.kubesched.io/devices`` (a count, ``"0"`` for none), else its
  ``status.allocatable["nvidia.com/gpu"]`` (what the device plugin advertises; ``capacity`` when
  there is no allocatable), else none;
* model: the annotation ``gpu.kubesched.io/model``, else the label ``alibabacloud.com/gpu-model``
  (the openb trace's), else ``nvidia.com/gpu.product`` (NVIDIA GPU feature discovery's), else no
  ``model`` attribute;
* memory per GPU: the annotation ``gpu.kubesched.io/memory`` (a quantity, e.g. ``16Gi``), else the
  model's memory from :data:`MODEL_MEMORY` (the openb models with a published size), else no
  ``memory`` capacity.

A malformed annotation is reported once per node change (logged with the node and annotation) and
the node publishes no slice. The DeviceClass :data:`DRIVER` (selector ``device.driver ==
"gpu.kubesched.io"``) is created at :meth:`FakeGPUDriver.start` unless one of that name exists.
Handlers run synchronously on the store's watch events, like the embedded controllers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import QuantityError, parse_quantity, value
from kubesched.client.client import ClusterClient, Subscription, WatchEvent
from kubesched.errors import KubeschedError, NotFoundError

__all__ = [
    "DEVICES_ANNOTATION",
    "DRIVER",
    "MEMORY_ANNOTATION",
    "MODEL_ANNOTATION",
    "MODEL_MEMORY",
    "FakeGPUDriver",
    "device_class",
    "node_gpus",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Driver name, pool driver of every slice, and name of the DeviceClass.
DRIVER = "gpu.kubesched.io"
DEVICES_ANNOTATION = "gpu.kubesched.io/devices"
MODEL_ANNOTATION = "gpu.kubesched.io/model"
MEMORY_ANNOTATION = "gpu.kubesched.io/memory"
DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"
TRACE_MODEL_LABEL = "alibabacloud.com/gpu-model"
GFD_MODEL_LABEL = "nvidia.com/gpu.product"
#: Memory of one GPU by model, as a quantity (the openb trace's models with a published size;
#: ``G2``/``G3`` are anonymised there and have none).
MODEL_MEMORY: Mapping[str, str] = {
    "A10": "24Gi",
    "P100": "16Gi",
    "T4": "16Gi",
    "V100M16": "16Gi",
    "V100M32": "32Gi",
}


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def device_class() -> Obj:
    """The DeviceClass ``gpu.kubesched.io``: every device of the driver."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def node_gpus(node: Mapping[str, Any]) -> tuple[int, str | None, str | None]:
    """``(count, model, memory quantity)`` of a Node manifest's GPUs by the rules of the module
    docstring. Raises KubeschedError ``Node n1: metadata.annotations["gpu.kubesched.io/devices"]:
    ...`` for a malformed annotation or allocatable value."""
    meta = _map(node.get("metadata"))
    name = meta.get("name")
    ann = _map(meta.get("annotations"))
    labels = _map(meta.get("labels"))
    status = _map(node.get("status"))

    def bad(field: str, why: str) -> KubeschedError:
        return KubeschedError(f"Node {name}: {field}: {why}")

    if DEVICES_ANNOTATION in ann:
        raw, field = ann[DEVICES_ANNOTATION], f'metadata.annotations["{DEVICES_ANNOTATION}"]'
    else:
        alloc = _map(status.get("allocatable")) or _map(status.get("capacity"))
        raw, field = alloc.get(DEVICE_PLUGIN_RESOURCE, 0), f'status.allocatable["{DEVICE_PLUGIN_RESOURCE}"]'
    try:
        count = value(raw)
    except (QuantityError, ValueError, TypeError):
        raise bad(field, f"must be a whole number of GPUs, got {raw!r}") from None
    if count < 0 or parse_quantity(raw) != count:
        raise bad(field, f"must be a whole number of GPUs, got {raw!r}")
    model = ann.get(MODEL_ANNOTATION) or labels.get(TRACE_MODEL_LABEL) or labels.get(GFD_MODEL_LABEL) or None
    memory = ann.get(MEMORY_ANNOTATION)
    if memory is not None:
        try:
            parse_quantity(memory)
        except (QuantityError, ValueError, TypeError):
            raise bad(
                f'metadata.annotations["{MEMORY_ANNOTATION}"]',
                f"must be a quantity such as 16Gi, got {memory!r}",
            ) from None
    elif model is not None:
        memory = MODEL_MEMORY.get(str(model))
    return count, (str(model) if model is not None else None), (str(memory) if memory is not None else None)


def slice_devices(count: int, model: str | None, memory: str | None) -> list[Obj]:
    """The ``spec.devices`` of a node's slice."""
    devices: list[Obj] = []
    for i in range(count):
        attributes: Obj = {"index": {"int": i}}
        if model is not None:
            attributes["model"] = {"string": model}
        device: Obj = {"name": f"gpu-{i}", "attributes": attributes}
        if memory is not None:
            device["capacity"] = {"memory": {"value": memory}}
        devices.append(device)
    return devices


class FakeGPUDriver:
    """Publishes the GPUs of every node of ``cluster`` as ResourceSlices (module docstring).
    :meth:`start` creates the DeviceClass, adopts the driver's existing slices and publishes for
    every node; :meth:`stop` ends the watch (slices stay, as when a driver is stopped)."""

    def __init__(self, cluster: ClusterClient) -> None:
        self.cluster = cluster
        self._slices: dict[str, str] = {}  # node name -> slice name
        self._subs: list[Subscription] = []

    def start(self) -> FakeGPUDriver:
        try:
            self.cluster.get("DeviceClass", None, DRIVER)
        except NotFoundError:
            self.cluster.create(device_class())
        for s in self.cluster.list("ResourceSlice").items:
            spec = _map(s.get("spec"))
            if spec.get("driver") == DRIVER and spec.get("nodeName"):
                self._slices[str(spec["nodeName"])] = str(_map(s.get("metadata")).get("name"))
        self._subs = [self.cluster.watch("Node", None, self._on_node)]
        return self

    def stop(self) -> None:
        for s in self._subs:
            s.stop()
        self._subs = []

    def _on_node(self, ev: WatchEvent) -> None:
        meta = _map(ev.object.get("metadata"))
        name = str(meta.get("name") or "")
        try:
            if ev.type == "DELETED":
                self._delete(name)
            else:
                self.sync_node(ev.object)
        except KubeschedError as e:
            log.warning("fake DRA driver: %s", e)
            if ev.type != "DELETED":
                self._delete(name)

    def _delete(self, node: str) -> None:
        slice_name = self._slices.pop(node, None)
        if slice_name is not None:
            try:
                self.cluster.delete("ResourceSlice", None, slice_name)
            except NotFoundError:
                pass

    def sync_node(self, node: Mapping[str, Any]) -> None:
        """Create, update or delete the node's slice to match its GPUs. Raises KubeschedError for
        a malformed node (see :func:`node_gpus`)."""
        meta = _map(node.get("metadata"))
        name = str(meta.get("name") or "")
        count, model, memory = node_gpus(node)
        if count == 0:
            self._delete(name)
            return
        devices = slice_devices(count, model, memory)
        existing = None
        if name in self._slices:
            try:
                existing = self.cluster.get("ResourceSlice", None, self._slices[name])
            except NotFoundError:
                del self._slices[name]
        if existing is not None:
            spec = _map(existing.get("spec"))
            if spec.get("devices") == devices:
                return
            pool = _map(spec.get("pool"))
            raw_generation = pool.get("generation")
            generation = raw_generation if isinstance(raw_generation, int) else 0
            new_spec = {
                **spec,
                "devices": devices,
                "pool": {"name": name, "generation": generation + 1, "resourceSliceCount": 1},
            }
            self.cluster.update({**existing, "spec": new_spec})
            return
        created = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {
                    "generateName": f"{name}-{DRIVER}-",
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": name,
                            "uid": meta.get("uid"),
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "driver": DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
        self._slices[name] = str(_map(created.get("metadata")).get("name"))
