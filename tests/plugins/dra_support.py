"""Builders for DRA objects in tests (the shapes of upstream's allocator test helpers)."""

from __future__ import annotations

from typing import Any

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.node import Node

NODE1, NODE2 = "node-1", "node-2"
REGION1, REGION2 = "region-1", "region-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"


def node(name: str, region: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"region": region, "planet": "earth"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )


def device_class(
    name: str, driver: str, config_attribute: str | None = None, expression: str | None = None
) -> DeviceClass:
    spec: dict[str, Any] = {
        "selectors": [{"cel": {"expression": expression or f'device.driver == "{driver}"'}}]
    }
    if config_attribute:
        spec["config"] = [{"opaque": opaque(driver, config_attribute)}]
    return DeviceClass.from_obj({"metadata": {"name": name}, "spec": spec})


def opaque(driver: str, attribute: str) -> dict[str, Any]:
    return {"driver": driver, "parameters": {attribute: attribute + "Value"}}


def request(
    name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount", admin: bool | None = None
) -> dict[str, Any]:
    e: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        e["count"] = count
    if selectors:
        e["selectors"] = [{"cel": {"expression": x}} for x in selectors]
    if admin is not None:
        e["adminAccess"] = admin
    return {"name": name, "exactly": e}


def sub_request(
    name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount"
) -> dict[str, Any]:
    r: dict[str, Any] = {"name": name, "deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        r["count"] = count
    if selectors:
        r["selectors"] = [{"cel": {"expression": x}} for x in selectors]
    return r


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim(
    name: str,
    *requests: dict[str, Any],
    constraints: list[Any] | None = None,
    config: list[Any] | None = None,
    namespace: str | None = None,
) -> ResourceClaim:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return ResourceClaim.from_obj({"metadata": meta, "spec": {"devices": devices}})


def device(
    name: str, capacity: dict[str, str] | None = None, attributes: dict[str, Any] | None = None
) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        d["attributes"] = attributes
    return d


def label_selector(key: str, *values: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]
    }


def local_selector(node_name: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }


ALL_NODES = "<all>"


def slice_(
    name: str,
    where: Any,
    pool: str,
    driver: str,
    *devices: dict[str, Any],
    count: int = 1,
    generation: int = 1,
) -> ResourceSlice:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "resourceSliceCount": count, "generation": generation},
        "devices": list(devices),
    }
    if where == ALL_NODES:
        spec["allNodes"] = True
    elif isinstance(where, dict):
        spec["nodeSelector"] = where
    else:
        spec["nodeName"] = where
    return ResourceSlice.from_obj({"metadata": {"name": name}, "spec": spec})


def one_device(name: str, where: Any, pool: str, driver: str, **kw: Any) -> ResourceSlice:
    return slice_(name, where, pool, driver, device("device-1"), **kw)


def result(request_name: str, driver: str, pool: str, dev: str, admin: bool = False) -> dict[str, Any]:
    r: dict[str, Any] = {"request": request_name, "driver": driver, "pool": pool, "device": dev}
    if admin:
        r["adminAccess"] = True
    return r


def allocation(
    selector: dict[str, Any] | None, *results: dict[str, Any], config: list[Any] | None = None
) -> dict[str, Any]:
    a: dict[str, Any] = {"devices": {"results": list(results)}}
    if config:
        a["devices"]["config"] = config
    if selector is not None:
        a["nodeSelector"] = selector
    return a
