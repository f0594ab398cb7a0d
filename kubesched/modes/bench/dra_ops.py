"""The objects of the DRA ops of a bench workload (``test/integration/scheduler_perf/dra.go``),
shared by the in-process runner and ``bench --api``:

* ``createResourceDriver``: :func:`driver_slices`, upstream's ``resourceSlice``: one
  ResourceSlice per matching node, named after the node, driver ``driverName``, pool = node name
  (``resourceSliceCount: 1``), devices ``instance-0`` .. ``instance-<maxClaimsPerNode - 1>`` with
  the attributes ``model: A100``, ``family: GPU``, ``driverVersion: 1.2.3`` (a version),
  ``dra.example.com/numa: <i>`` and the capacity ``memory: 1Gi``;
* ``createAny``: :func:`any_objects`, ``count`` copies of the template in the op's namespace,
  ``{{.Index}}`` in ``metadata.name`` replaced by the copy's index;
* ``allocResourceClaims``: :func:`allocate_claims`, the allocation each claim of a namespace
  would have had from an earlier scheduling: claims in name order, each on the first node (by
  name) whose slice still has enough free devices, the first free devices in slice order (upstream
  runs the structured allocator node by node in the informer's order and keeps the first
  success; the benchmark's claims ask for one device of a class that selects every device of the
  driver, so any first fit is such an allocation). The claims get ``status.allocation`` only (no
  ``reservedFor``, no finalizer), as upstream writes them.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.modes.bench.workloads import Op

__all__ = ["allocate_claims", "any_objects", "driver_slices", "matching_nodes"]

Obj = dict[str, Any]


def matching_nodes(op: Op, node_names: Iterable[str]) -> list[str]:
    """The node names the op's ``nodes`` glob matches (``filepath.Match``), in the given order."""
    return [n for n in node_names if fnmatch.fnmatchcase(n, op.node_glob)]


def driver_slices(op: Op, node_names: Iterable[str]) -> list[Obj]:
    """The ResourceSlices of a ``createResourceDriver`` op for the nodes it matches."""
    out = []
    for node in matching_nodes(op, node_names):
        devices = [
            {
                "name": f"instance-{i}",
                "attributes": {
                    "model": {"string": "A100"},
                    "family": {"string": "GPU"},
                    "driverVersion": {"version": "1.2.3"},
                    "dra.example.com/numa": {"int": i},
                },
                "capacity": {"memory": {"value": "1Gi"}},
            }
            for i in range(op.count)
        ]
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": node},
                "spec": {
                    "driver": op.driver_name,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return out


def any_objects(op: Op, namespace: str | None) -> list[Obj]:
    """The objects of a ``createAny`` op (``namespace`` set on each when given)."""
    assert op.template is not None
    out = []
    for k in range(op.count):
        obj = copy.deepcopy(op.template)
        meta = obj.setdefault("metadata", {})
        if isinstance(meta.get("name"), str):
            meta["name"] = meta["name"].replace("{{.Index}}", str(k))
        if namespace:
            meta["namespace"] = namespace
        out.append(obj)
    return out


def _requested(claim: Mapping[str, Any]) -> list[str]:
    """One request name per device the claim asks for (``exactly`` with ``ExactCount``)."""
    names = []
    for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        exactly = r.get("exactly") or {}
        names.extend([str(r.get("name"))] * int(exactly.get("count") or 1))
    return names


def allocate_claims(
    claims: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]]
) -> list[tuple[str, Obj]]:
    """``(claim name, status.allocation)`` for each claim that fits (module docstring), in claim
    name order; devices already allocated by earlier claims of the call are not given again."""
    free: dict[str, list[tuple[str, str]]] = {}
    for s in sorted(slices, key=lambda s: str((s.get("spec") or {}).get("nodeName"))):
        spec = s.get("spec") or {}
        node = str(spec.get("nodeName"))
        free.setdefault(node, []).extend(
            (str(spec.get("driver")), str(d.get("name"))) for d in spec.get("devices") or []
        )
    out = []
    for claim in sorted(claims, key=lambda c: str((c.get("metadata") or {}).get("name"))):
        wanted = _requested(claim)
        for node, devices in free.items():
            if len(devices) < len(wanted):
                continue
            taken, free[node] = devices[: len(wanted)], devices[len(wanted) :]
            results = [
                {"request": req, "driver": driver, "pool": node, "device": dev}
                for req, (driver, dev) in zip(wanted, taken, strict=True)
            ]
            out.append(
                (
                    str(claim["metadata"]["name"]),
                    {
                        "devices": {"results": results},
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": [node]}
                                    ]
                                }
                            ]
                        },
                    },
                )
            )
            break
    return out
