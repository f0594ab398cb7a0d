"""Test doubles shared by the volume plugin tests: an object store that is both the plugins'
``handle.objects`` lister and a minimal ``ClusterClient`` (get/update/patch_status) with
resourceVersion bumps and optimistic-concurrency checks, plus manifest builders."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.errors import ConflictError, NotFoundError
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import FakeHandle

CLUSTER_SCOPED = {"PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "Node"}


class FakeStore:
    """Objects by kind and ``(namespace, name)``; records every write in ``writes``."""

    def __init__(self, objects: Sequence[Mapping[str, Any]] = ()) -> None:
        self.data: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self.rv = 0
        self.writes: list[tuple[str, str, str, str]] = []
        for o in objects:
            self.put(copy.deepcopy(dict(o)))

    def _key(self, kind: str, namespace: str | None, name: str) -> tuple[str, str]:
        return ("" if kind in CLUSTER_SCOPED else (namespace or "default"), name)

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        meta = obj["metadata"]
        self.data.setdefault(obj["kind"], {})[self._key(obj["kind"], meta.get("namespace"), meta["name"])] = (
            obj
        )
        return obj

    # ObjectLister
    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [
            o
            for (ns, _), o in sorted(self.data.get(kind, {}).items())
            if namespace is None or ns == namespace
        ]

    def get(self, kind: str, namespace: str | None, name: str) -> Any:
        return self.data.get(kind, {}).get(self._key(kind, namespace, name))

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return {}


class FakeClient:
    """The subset of ``ClusterClient`` VolumeBinding and the PV controller use, writing into a
    :class:`FakeStore`. After each write the embedded cluster's PV controller reconciles every
    object (``controller=True``), as it does on the store's watch events."""

    def __init__(self, store: FakeStore, controller: bool = True) -> None:
        from kubesched.embedded.controllers.pv_controller import PVController

        self.store = store
        self.controller = PVController(self) if controller else None  # type: ignore[arg-type]
        self._syncing = False

    def _after_write(self) -> None:
        if self.controller is None or self._syncing:
            return
        self._syncing = True
        try:
            while True:
                n = len(self.store.writes)
                self.controller.sync_all()
                if len(self.store.writes) == n:
                    break
        finally:
            self._syncing = False

    def list(self, kind: str, namespace: str | None = None) -> Any:
        from kubesched.client.client import ListResult

        return ListResult(
            [copy.deepcopy(dict(o)) for o in self.store.list(kind, namespace)], str(self.store.rv)
        )

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        new = copy.deepcopy(obj)
        new.setdefault("metadata", {}).setdefault(
            "uid", f"uid-{obj['kind'].lower()}-{obj['metadata']['name']}"
        )
        self.store.writes.append(
            ("create", obj["kind"], new["metadata"].get("namespace") or "", new["metadata"]["name"])
        )
        out = self.store.put(new)
        self._after_write()
        return out

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        o = self.store.get(kind, namespace, name)
        if o is None:
            raise NotFoundError(f'{kind.lower()}s "{name}" not found')
        return o

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        cur = self.get(obj["kind"], meta.get("namespace"), meta["name"])
        rv = meta.get("resourceVersion")
        if rv and rv != cur["metadata"]["resourceVersion"]:
            raise ConflictError(
                f'Operation cannot be fulfilled on {obj["kind"].lower()}s "{meta["name"]}": '
                "the object has been modified; please apply your changes to the latest version "
                "and try again"
            )
        new = copy.deepcopy(obj)
        if "status" in cur:
            new["status"] = copy.deepcopy(cur["status"])
        else:
            new.pop("status", None)
        self.store.writes.append(("update", obj["kind"], meta.get("namespace") or "", meta["name"]))
        out = self.store.put(new)
        self._after_write()
        return out

    def patch_status(
        self, kind: str, namespace: str | None, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]:
        cur = copy.deepcopy(self.get(kind, namespace, name))
        cur.setdefault("status", {}).update(copy.deepcopy(patch))
        self.store.writes.append(("patch_status", kind, namespace or "", name))
        out = self.store.put(cur)
        self._after_write()
        return out


def handle_with(store: FakeStore, snapshot: Snapshot | None = None) -> FakeHandle:
    """A FakeHandle whose objects and client are ``store``."""
    h = FakeHandle(snapshot, objects=store)
    h.client = FakeClient(store)
    return h


def pvc(
    name: str,
    *,
    namespace: str = "default",
    storage: str = "1Gi",
    sc: str | None = "local",
    modes: Sequence[str] = ("ReadWriteOnce",),
    volume_name: str = "",
    bound: bool = False,
    annotations: Mapping[str, str] | None = None,
    selector: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = dict(selector)
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-pvc-{name}"}
    if ann:
        meta["annotations"] = ann
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Bound" if bound else "Pending"},
    }


def pv(
    name: str,
    *,
    storage: str = "10Gi",
    sc: str = "local",
    modes: Sequence[str] = ("ReadWriteOnce",),
    hostnames: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    claim: tuple[str, str] | None = None,
    csi: tuple[str, str] | None = None,
    phase: str | None = "Available",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": storage},
        "accessModes": list(modes),
        "storageClassName": sc,
    }
    if hostnames is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": list(hostnames)}
                        ]
                    }
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}
    if phase is not None:
        obj["status"] = {"phase": phase}
    return obj


def storage_class(
    name: str,
    *,
    provisioner: str = "kubernetes.io/no-provisioner",
    mode: str | None = "WaitForFirstConsumer",
    allowed_zones: Sequence[str] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if mode is not None:
        obj["volumeBindingMode"] = mode
    if allowed_zones is not None:
        obj["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": list(allowed_zones)}]}
        ]
    return obj


def pvc_volumes(*claims: str) -> dict[str, Any]:
    """``spec`` fragment mounting the given claims."""
    return {
        "volumes": [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
        ]
    }
