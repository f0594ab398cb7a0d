"""Write ``kubesched/data/proto_fields.json``: the protobuf field numbers of the Kubernetes kinds
the embedded API server decodes, read from upstream's ``generated.proto`` files.

Usage (checkouts of ``k8s.io/api`` and ``k8s.io/apimachinery`` at the release kubesched follows,
``v0.35.0`` for Kubernetes v1.35)::

    python scripts/proto_fields.py ../api ../apimachinery > kubesched/data/proto_fields.json

The table maps a message's full name (``k8s.io.api.core.v1.PodSpec``) to its fields:
``{"<number>": [jsonName, type, label]}`` where ``type`` is a scalar protobuf type (``string``,
``int32``, ``int64``, ``bool``, ``bytes``, ``double``), a message's full name, or
``map:<value type>`` (string keys), and ``label`` is ``optional`` or ``repeated``. Only the
messages reachable from the kinds in ``ROOTS`` are written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

API_PACKAGES = (
    "core/v1",
    "apps/v1",
    "batch/v1",
    "policy/v1",
    "scheduling/v1",
    "storage/v1",
    "coordination/v1",
    "events/v1",
    "resource/v1",
)
MACHINERY_PACKAGES = (
    "pkg/apis/meta/v1",
    "pkg/runtime",
    "pkg/runtime/schema",
    "pkg/util/intstr",
    "pkg/api/resource",
)
ROOTS = (
    "k8s.io.api.core.v1." + k
    for k in (
        "Pod",
        "Node",
        "Namespace",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Service",
        "ReplicationController",
        "Event",
        "ConfigMap",
        "Secret",
        "LimitRange",
        "ServiceAccount",
    )
)
MORE_ROOTS = (
    "k8s.io.api.apps.v1.ReplicaSet",
    "k8s.io.api.apps.v1.StatefulSet",
    "k8s.io.api.apps.v1.Deployment",
    "k8s.io.api.apps.v1.DaemonSet",
    "k8s.io.api.batch.v1.Job",
    "k8s.io.api.batch.v1.CronJob",
    "k8s.io.api.policy.v1.PodDisruptionBudget",
    "k8s.io.api.scheduling.v1.PriorityClass",
    "k8s.io.api.storage.v1.StorageClass",
    "k8s.io.api.storage.v1.CSINode",
    "k8s.io.api.storage.v1.CSIDriver",
    "k8s.io.api.storage.v1.CSIStorageCapacity",
    "k8s.io.api.coordination.v1.Lease",
    "k8s.io.api.events.v1.Event",
    "k8s.io.api.resource.v1.DeviceClass",
    "k8s.io.api.resource.v1.ResourceClaim",
    "k8s.io.api.resource.v1.ResourceClaimTemplate",
    "k8s.io.api.resource.v1.ResourceSlice",
    "k8s.io.apimachinery.pkg.runtime.Unknown",
)

_PACKAGE = re.compile(r"^package\s+([\w.]+);", re.M)
_MESSAGE = re.compile(r"^message\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(
    r"^\s*(?:(optional|repeated)\s+([\w.]+)|map<\s*string\s*,\s*([\w.]+)\s*>)\s+(\w+)\s*=\s*(\d+);", re.M
)
_SCALARS = {"string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64"}


def _resolve(type_name: str, package: str) -> str:
    if type_name in _SCALARS:
        return type_name
    if type_name.startswith("."):
        return type_name[1:]
    return f"{package}.{type_name}"


def parse(text: str) -> dict[str, dict[str, list[str]]]:
    package = _PACKAGE.search(text)
    assert package is not None
    pkg = package.group(1)
    out: dict[str, dict[str, list[str]]] = {}
    for m in _MESSAGE.finditer(text):
        fields: dict[str, list[str]] = {}
        for f in _FIELD.finditer(m.group(2)):
            label, type_name, map_value, name, number = f.groups()
            if map_value is not None:
                fields[number] = [name, "map:" + _resolve(map_value, pkg), "repeated"]
            else:
                fields[number] = [name, _resolve(type_name, pkg), label]
        out[f"{pkg}.{m.group(1)}"] = fields
    return out


def main(api: str, machinery: str) -> None:
    messages: dict[str, dict[str, list[str]]] = {}
    for root, packages in ((api, API_PACKAGES), (machinery, MACHINERY_PACKAGES)):
        for p in packages:
            messages.update(parse((Path(root) / p / "generated.proto").read_text()))
    keep: dict[str, dict[str, list[str]]] = {}
    todo = [*ROOTS, *MORE_ROOTS]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = messages[name]
        for _, type_name, _ in keep[name].values():
            t = type_name.removeprefix("map:")
            if t not in _SCALARS:
                todo.append(t)
    json.dump(dict(sorted(keep.items())), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
