"""The scheduler's view of DRA objects (``pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go``:
``DefaultDRAManager``, ``claimTracker``; ``allocateddevices.go``).

* Claims come from the informer (``handle.objects``) through an *assume cache*: after PreBind wrote
  a claim's allocation, the written object is used until the informer holds that resourceVersion
  of it or a newer one (``AssumeClaimAfterAPICall``), so the next pod never sees the device as
  free in between; Unreserve restores the informer's version (``AssumedClaimRestore``).
* *In-flight allocations*: Reserve records each allocation it is about to write
  (``SignalClaimPendingAllocation``, keyed by claim uid); until PreBind finished or Unreserve ran,
  those devices count as allocated (``ListAllAllocatedDevices``) and another pod using the same
  claim waits (``ClaimHasPendingAllocation``).
* Slices and classes are parsed once per resourceVersion; the slice index (by node) is rebuilt
  only when the set of slices changed.

Objects that do not parse (hand-written manifests the API server would have refused) raise
:class:`~kubesched.errors.ManifestError` naming the object; the plugin reports them as an error
status for the pod that uses them.

Thread safety: one lock; Filter may call :meth:`get_class` from several threads.

Deviation: upstream shares one manager between profiles; kubesched keeps one per plugin
instance (per profile), so in-flight allocations of one profile are not seen by another.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.storage import newer_version
from kubesched.errors import ManifestError
from kubesched.framework.handle import ObjectLister
from kubesched.plugins.dynamicresources.structured import DeviceID, NodeOutcomes, SliceIndex

CLAIM, SLICE, CLASS = "ResourceClaim", "ResourceSlice", "DeviceClass"


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def allocated_devices(claim: ResourceClaim) -> tuple[DeviceID, ...]:
    """Devices of a claim's allocation, without admin-access results (``foreachAllocatedDevice``:
    admin access does not make a device unavailable to others)."""
    if claim.allocation is None:
        return ()
    return tuple((r.driver, r.pool, r.device) for r in claim.allocation.results if not r.admin_access)


class DRAManager:
    """Claims (with assume cache and in-flight allocations), slices and classes for the plugin."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claims: dict[tuple[str, str], tuple[Mapping[str, Any], ResourceClaim]] = {}
        self._assumed: dict[tuple[str, str], ResourceClaim] = {}
        self._in_flight: dict[str, ResourceClaim] = {}
        self._slices: dict[str, tuple[Mapping[str, Any], ResourceSlice]] = {}
        self._classes: dict[str, tuple[Mapping[str, Any], DeviceClass]] = {}
        self._index: SliceIndex | None = None
        self._index_ids: tuple[int, ...] = ()
        #: identities of the slice objects the index was last checked against, and the objects
        self._index_objs: tuple[frozenset[int], list[Mapping[str, Any]]] = (frozenset(), [])
        #: id(claim object) -> (object, key, its allocated devices): the informer's claims counted
        self._tracked: dict[int, tuple[Mapping[str, Any], tuple[str, str], tuple[DeviceID, ...]]] = {}
        #: DeviceID -> number of tracked claims whose allocation holds it
        self._device_counts: dict[DeviceID, int] = {}
        #: the devices with a count above zero
        self._in_use: set[DeviceID] = set()
        #: per-node allocator outcomes kept across cycles, and the devices the last call added to
        #: or hid from ``_in_use`` for assumed and in-flight claims
        self.outcomes = NodeOutcomes()
        self._last_extra: set[DeviceID] = set()

    # -- parsing --------------------------------------------------------------------------------

    def _parse_claim(self, obj: Mapping[str, Any]) -> ResourceClaim:
        key = _key(obj)
        hit = self._claims.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        try:
            claim = ResourceClaim.from_obj(obj)
        except ManifestError as e:
            raise e.located(f"ResourceClaim {key[0]}/{key[1]}") from None
        self._claims[key] = (obj, claim)
        return claim

    def _resolve(self, key: tuple[str, str], informer: ResourceClaim | None) -> ResourceClaim | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return informer
        if (
            informer is None
            or informer.resource_version == assumed.resource_version
            or newer_version(informer.resource_version, assumed.resource_version)
        ):
            # the informer caught up: an equal resourceVersion is the same object, so the entry is
            # dropped (upstream keeps it until a newer one arrives; the claims seen are the same)
            del self._assumed[key]
            return informer
        return assumed

    # -- claims ---------------------------------------------------------------------------------

    def get_claim(self, objects: ObjectLister, namespace: str, name: str) -> ResourceClaim | None:
        """``ResourceClaims().Get``: the assumed version when still current, else the informer's."""
        obj = objects.get(CLAIM, namespace, name)
        with self._lock:
            parsed = self._parse_claim(obj) if obj is not None else None
            return self._resolve((namespace, name), parsed)

    def list_all_allocated_devices(self, objects: ObjectLister) -> set[DeviceID]:
        """``ListAllAllocatedDevices``: devices of every allocated claim plus in-flight allocations.

        Kept incrementally, as upstream's ``allocatedDevices`` follows the claim informer: only
        the claim objects that appeared or went away since the last call (by identity: the
        informer replaces an object on every change) are parsed and counted; the devices
        (``DeviceID`` -> number of claims holding it) are a running count. Assumed claims (the
        written version not yet in the informer) replace their informer version in the result.
        Cost per call: O(claims) identity checks (C-level set operations), O(changed claims)
        parsing. The set returned is shared with the manager when nothing is assumed or in
        flight: callers only read it, until the next call."""
        items = objects.list(CLAIM)
        with self._lock:
            known = self._tracked
            changed: set[DeviceID] = set()
            by_id = dict(zip(map(id, items), items, strict=True))
            gone = known.keys() - by_id.keys()
            for oid in by_id.keys() - known.keys():
                self._track(by_id[oid], changed)
            counts = self._device_counts
            in_use = self._in_use
            for oid in gone:
                _, _, devices = known.pop(oid)
                for d in devices:
                    n = counts[d] - 1
                    if n:
                        counts[d] = n
                    else:
                        del counts[d]
                        in_use.discard(d)
                        changed.add(d)
            delta: dict[DeviceID, int] = {}
            for key in list(self._assumed):
                obj = objects.get(CLAIM, key[0], key[1])
                if obj is None:
                    del self._assumed[key]  # deleted from the informer
                    continue
                try:
                    informer = self._parse_claim(obj)
                except ManifestError:
                    continue  # reported to the pods that use it
                resolved = self._resolve(key, informer)
                if resolved is None or resolved is informer:
                    continue
                for d in allocated_devices(informer):
                    delta[d] = delta.get(d, 0) - 1
                for d in allocated_devices(resolved):
                    delta[d] = delta.get(d, 0) + 1
            extra_in: set[DeviceID] = set()
            extra_out: set[DeviceID] = set()
            for d, n in delta.items():
                if counts.get(d, 0) + n > 0:
                    if d not in in_use:
                        extra_in.add(d)
                elif d in in_use:
                    extra_out.add(d)
            for claim in self._in_flight.values():
                extra_in.update(d for d in allocated_devices(claim) if d not in in_use)
            extra_out -= extra_in
            # a device whose availability may differ from the last call: counted ones that changed,
            # and every device adjusted by assumed or in-flight claims now or last time
            changed |= extra_in | extra_out | self._last_extra
            if changed:
                self.outcomes.bump(changed)
            self._last_extra = extra_in | extra_out
            out = in_use
            if extra_in or extra_out:
                out = (in_use - extra_out) | extra_in
            if len(self._claims) > 2 * len(items) + 1024:
                live = {k for _, k, _ in known.values()}
                self._claims = {k: v for k, v in self._claims.items() if k in live}
        return out

    def _track(self, obj: Mapping[str, Any], changed: set[DeviceID]) -> None:
        """Count the devices of a claim object new to :meth:`list_all_allocated_devices` (the
        informer's version; a claim that does not parse counts no device: it is reported to the
        pods that use it); a device that becomes in use goes into ``changed``."""
        key = _key(obj)
        try:
            devices = allocated_devices(self._parse_claim(obj))
        except ManifestError:
            devices = ()
        self._tracked[id(obj)] = (obj, key, devices)
        counts = self._device_counts
        for d in devices:
            n = counts.get(d, 0)
            counts[d] = n + 1
            if not n:
                self._in_use.add(d)
                changed.add(d)

    def claim_has_pending_allocation(self, uid: str) -> bool:
        """``ClaimHasPendingAllocation``."""
        with self._lock:
            return uid in self._in_flight

    def signal_claim_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        """``SignalClaimPendingAllocation``: ``claim`` carries the allocation about to be written."""
        with self._lock:
            self._in_flight[uid] = claim

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        """``RemoveClaimPendingAllocation``: True if there was one."""
        with self._lock:
            return self._in_flight.pop(uid, None) is not None

    def assume_claim_after_api_call(self, obj: Mapping[str, Any]) -> None:
        """``AssumeClaimAfterAPICall``: use the object the API returned until the informer catches up."""
        claim = ResourceClaim.from_obj(obj)
        with self._lock:
            key = (claim.namespace, claim.name)
            current = self._assumed.get(key)
            if current is not None and not newer_version(claim.resource_version, current.resource_version):
                return
            self._assumed[key] = claim

    def assumed_claim_restore(self, namespace: str, name: str) -> None:
        """``AssumedClaimRestore``: back to the informer's version."""
        with self._lock:
            self._assumed.pop((namespace, name), None)

    # -- slices and classes ---------------------------------------------------------------------

    def slice_index(self, objects: ObjectLister) -> SliceIndex:
        """The current slices, indexed (``ResourceSlices().ListWithDeviceTaintRules``; device
        taint rules are not modelled: DRADeviceTaintRules is off by default). A slice that does
        not parse is left out."""
        items = objects.list(SLICE)
        obj_ids = frozenset(map(id, items))
        with self._lock:
            if self._index is not None and obj_ids == self._index_objs[0]:
                return self._index  # the very objects of last time (kept alive, so ids are theirs)
            parsed: list[ResourceSlice] = []
            for obj in items:
                name = str((obj.get("metadata") or {}).get("name") or "")
                hit = self._slices.get(name)
                if hit is None or hit[0] is not obj:
                    try:
                        hit = (obj, ResourceSlice.from_obj(obj))
                    except ManifestError:
                        continue
                    self._slices[name] = hit
                parsed.append(hit[1])
            self._index_objs = (obj_ids, items)
            ids = tuple(id(s) for s in parsed)
            if self._index is None or ids != self._index_ids:
                self._index = SliceIndex(parsed)
                self._index_ids = ids
                self.outcomes.clear()
                if len(self._slices) > 2 * len(items) + 1024:
                    live = {str((o.get("metadata") or {}).get("name") or "") for o in items}
                    self._slices = {k: v for k, v in self._slices.items() if k in live}
            return self._index

    def get_class(self, objects: ObjectLister, name: str) -> DeviceClass:
        """``DeviceClasses().Get``; raises :class:`KeyError` with the lister's NotFound text
        (``deviceclass.resource.k8s.io "gpu" not found``) or ManifestError for a malformed class."""
        obj = objects.get(CLASS, "", name)
        if obj is None:
            raise KeyError(f'deviceclass.resource.k8s.io "{name}" not found')
        with self._lock:
            hit = self._classes.get(name)
            if hit is not None and hit[0] is obj:
                return hit[1]
        try:
            cls = DeviceClass.from_obj(obj)
        except ManifestError as e:
            raise e.located(f"DeviceClass {name}") from None
        with self._lock:
            self._classes[name] = (obj, cls)
        return cls

    def in_flight(self) -> Iterable[ResourceClaim]:
        """The claims with an allocation in flight (for explanations and tests)."""
        with self._lock:
            return list(self._in_flight.values())
