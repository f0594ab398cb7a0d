"""VolumeBinding (``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` and ``binder.go``;
matching from ``k8s.io/component-helpers/storage/volume/pv_helpers.go`` ``FindMatchingVolume``).

* PreFilter: Skip for pods without PVCs (``persistentVolumeClaim`` or generic ``ephemeral`` volumes).
  UnschedulableAndUnresolvable for a missing claim (``persistentvolumeclaim "<n>" not found``; for an
  ephemeral volume ``waiting for ephemeral volume controller to create the persistentvolumeclaim "<n>"``),
  a Lost claim, a claim being deleted, an ephemeral claim not owned by the pod, and for claims that
  are not fully bound and not of a WaitForFirstConsumer class (``pod has unbound immediate
  PersistentVolumeClaims``; a claim whose class does not exist counts as Immediate). Bound claims whose
  PV pins ``kubernetes.io/hostname In [...]`` narrow the nodes (``PreFilterResult``, upstream's
  ``GetEligibleNodes``; the hostnames are mapped to node names through the nodes' hostname labels).
* Filter (per node, UnschedulableAndUnresolvable with every failing reason, in this order):
  bound PVs' node affinity (``node(s) didn't match PersistentVolume's node affinity``); unbound
  WaitForFirstConsumer claims: a claim already annotated ``volume.kubernetes.io/selected-node`` for
  another node fails at once, otherwise the smallest matching available PV (class, access modes,
  capacity >= request, volumeMode, label selector, volumeAttributesClass, not being deleted, PV node
  affinity) is chosen per claim (claims by increasing request), and claims without a PV need dynamic
  provisioning: class provisioner set and not ``kubernetes.io/no-provisioner``, ``allowedTopologies``
  matching the node (``node(s) didn't find available persistent volumes to bind``) and, for CSI drivers
  with ``storageCapacity: true``, a CSIStorageCapacity in the class whose node topology matches and whose
  ``maximumVolumeSize`` (else ``capacity``) covers the request (``node(s) did not have enough free
  storage``); claims bound to a missing PV (``node(s) unavailable due to one or more pvc(s) bound to
  non-existent pv(s)``).
* Reserve: assumes the chosen bindings (PV ``spec.claimRef`` + ``pv.kubernetes.io/bound-by-controller``)
  and provisioning claims (``volume.kubernetes.io/selected-node``) in the plugin's assume caches, so a
  later pod of the same run does not take the same PV; Unreserve reverts them.
* PreBindPreFlight: Skip when every claim was already bound. PreBind writes through ``handle.client``
  only what upstream's binder writes: the PV update (``claimRef``, ``bound-by-controller``) for a
  static binding, the PVC update (``volume.kubernetes.io/selected-node``) for provisioning. The rest
  (PVC ``spec.volumeName``, ``pv.kubernetes.io/bind-completed``, both objects' ``status``, the
  provisioned PV) is the PV controller's and the provisioner's job -- in a real cluster
  kube-controller-manager's, in the embedded cluster :mod:`kubesched.embedded.controllers.pv_controller`'s.
  PreBind then waits, on the informer's objects, until every claim is fully bound (upstream
  ``checkBindings``), at most ``bindTimeoutSeconds``.

Not modelled: CSI migration of in-tree PVs (``tryTranslatePVToCSI``) and StorageCapacityScoring (the
Score extension, alpha): ``shape`` is validated but unused.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.labels import parse_label_selector
from kubesched.api.node import HOSTNAME_LABEL
from kubesched.api.pod import Pod
from kubesched.api.quantity import QuantityError, value
from kubesched.api.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    CLAIM_LOST,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    access_modes_fit,
    ephemeral_owner_error,
    newer_version,
    not_found,
    pod_claims,
)
from kubesched.clock import RealClock
from kubesched.config.args import ARGS_CONFIG
from kubesched.errors import KubeschedError, ManifestError
from kubesched.framework.cycle_state import CycleState, StateData, StateNotFoundError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    ReservePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import PreFilterResult
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, SignFragment, volumes_signer
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper.shape_score import UtilizationShapePoint, validate_shape
from kubesched.plugins.volumebinding.assume_cache import AssumeCache

NAME = "VolumeBinding"
STATE_KEY = NAME

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
#: Seconds between two checks of PreBind's wait for the PV controller (``binder.go``: 1 s).
BIND_POLL_INTERVAL = 1.0


def _default_shape() -> list[UtilizationShapePoint]:
    return [UtilizationShapePoint(utilization=0, score=10), UtilizationShapePoint(utilization=100, score=0)]


@dataclass(config=ARGS_CONFIG)
class VolumeBindingArgs:
    """``VolumeBindingArgs``: ``bind_timeout_seconds`` (>= 0, default 600) and the scoring ``shape``
    (default ``[(0, 10), (100, 0)]``, utilizations strictly increasing)."""

    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] = field(default_factory=_default_shape)

    @field_validator("bind_timeout_seconds")
    @classmethod
    def _timeout(cls, v: int) -> int:
        if v < 0:
            raise ValueError("invalid BindTimeoutSeconds, should not be a negative value")
        return v

    @field_validator("shape")
    @classmethod
    def _shape(cls, v: list[UtilizationShapePoint]) -> list[UtilizationShapePoint]:
        validate_shape(v)
        return v


class PodVolumes:
    """What a node needs for the pod: static ``(pv dict, claim)`` bindings and claims to provision."""

    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(
        self,
        static_bindings: list[tuple[Mapping[str, Any], PersistentVolumeClaim]],
        dynamic_provisions: list[PersistentVolumeClaim],
    ) -> None:
        self.static_bindings = static_bindings
        self.dynamic_provisions = dynamic_provisions
        # after Reserve, dynamic_provisions' ``raw`` carry the selected-node annotation


class _State(StateData):
    """Per-cycle data; shared by clones (upstream ``stateData.Clone`` returns itself)."""

    __slots__ = ("has_claims", "bound", "unbound_delay", "pvs_by_class", "by_node", "all_bound")

    def __init__(self) -> None:
        self.has_claims = False
        self.bound: list[PersistentVolumeClaim] = []
        self.unbound_delay: list[PersistentVolumeClaim] = []
        self.pvs_by_class: dict[str, list[PersistentVolume]] = {}
        self.by_node: dict[str, PodVolumes] = {}
        self.all_bound = False

    def clone(self) -> _State:
        return self


def _get(obj: Mapping[str, Any], *path: str) -> Any:
    cur: Any = obj
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node_labels: Mapping[str, str] | None,
    excluded: set[str],
) -> PersistentVolume | None:
    """``FindMatchingVolume`` on the scheduler path (delay binding, VolumeAttributesClass on).

    A PV pre-bound to the claim wins (``None`` if its node affinity fails); otherwise the smallest
    Available PV of the claim's class that fits (first one on ties, in ``volumes`` order)."""
    requested = claim.request or 0
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not pv.bound_to(claim):
            continue
        if pv.capacity < requested:
            continue
        if pv.volume_mode != claim.volume_mode:
            continue
        if pv.deleting:
            continue
        affinity_ok = True if node_labels is None else pv.node_affinity_matches(node_labels)
        if pv.bound_to(claim):
            return pv if affinity_ok else None
        if node_labels is None:
            continue
        if pv.phase != VOLUME_AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.storage_class != claim.storage_class:
            continue
        if not affinity_ok:
            continue
        if not access_modes_fit(claim, pv):
            continue
        if claim.vac_name != pv.vac_name:
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def bind_volume_to_claim(pv: Mapping[str, Any], claim: PersistentVolumeClaim) -> tuple[dict[str, Any], bool]:
    """``GetBindVolumeToClaim``: a new PV dict whose ``spec.claimRef`` names the claim (with its uid and
    resourceVersion) and, unless pre-bound by the user, ``pv.kubernetes.io/bound-by-controller: "yes"``;
    ``dirty`` tells whether anything changed."""
    parsed = PersistentVolume.from_obj(pv)
    should_set_bound_by_controller = not parsed.bound_to(claim)
    out = copy.deepcopy(dict(pv))
    meta = out.setdefault("metadata", {})
    spec = out.setdefault("spec", {})
    dirty = False
    ref = parsed.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace or ref.uid != claim.uid:
        claim_ref: dict[str, Any] = {
            "kind": "PersistentVolumeClaim",
            "namespace": claim.namespace,
            "name": claim.name,
            "apiVersion": "v1",
        }
        if claim.uid:
            claim_ref["uid"] = claim.uid
        if claim.resource_version:
            claim_ref["resourceVersion"] = claim.resource_version
        spec["claimRef"] = claim_ref
        dirty = True
    ann = meta.setdefault("annotations", {})
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in ann:
        ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return out, dirty


class VolumeBinding(
    PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions, SignPlugin
):
    """Binds a pod's PVCs to PVs / triggers provisioning (module docstring)."""

    NAME = NAME
    Args = VolumeBindingArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on the pod's volumes other than ConfigMap and Secret volumes."""
        return [SignFragment(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def __init__(self, args: VolumeBindingArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or VolumeBindingArgs(), handle)
        self.pv_cache = AssumeCache("PersistentVolume", namespaced=False)
        self.pvc_cache = AssumeCache("PersistentVolumeClaim", namespaced=True)

    # ---------------------------------------------------------------- reads
    def _claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        obj = self.pvc_cache.get(self.required_handle().objects, namespace, name)
        return None if obj is None else PersistentVolumeClaim.from_obj(obj)

    def _pv(self, name: str) -> PersistentVolume | None:
        obj = self.pv_cache.get(self.required_handle().objects, "", name)
        return None if obj is None else PersistentVolume.from_obj(obj)

    def _class(self, name: str) -> StorageClass | None:
        obj = self.required_handle().objects.get("StorageClass", "", name) if name else None
        return None if obj is None else StorageClass.from_obj(obj)

    # ---------------------------------------------------------------- PreFilter
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Classify the pod's claims; see the module docstring for the rejections."""
        s = _State()
        claims = pod_claims(pod.name, pod.volumes)
        if not claims:
            state.write(STATE_KEY, s)
            return None, Status(Code.Skip)
        s.has_claims = True
        parsed: list[PersistentVolumeClaim] = []
        try:
            for name, ephemeral in claims:
                pvc = self._claim(pod.namespace, name)
                if pvc is None:
                    msg = (
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                        if ephemeral
                        else not_found("persistentvolumeclaim", name)
                    )
                    return None, Status(Code.UnschedulableAndUnresolvable, msg)
                if pvc.phase == CLAIM_LOST:
                    return None, Status(
                        Code.UnschedulableAndUnresolvable,
                        f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                        f'persistentvolume "{pvc.volume_name}"',
                    )
                if pvc.deleting:
                    return None, Status(
                        Code.UnschedulableAndUnresolvable,
                        f'persistentvolumeclaim "{pvc.name}" is being deleted',
                    )
                if ephemeral:
                    err = ephemeral_owner_error(pod.namespace, pod.name, pod.uid, pvc)
                    if err is not None:
                        return None, Status(Code.UnschedulableAndUnresolvable, err)
                parsed.append(pvc)
            immediate = False
            for pvc in parsed:
                if pvc.fully_bound:
                    s.bound.append(pvc)
                    continue
                sc = self._class(pvc.storage_class)
                delay = sc is not None and sc.binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER
                if delay and not pvc.volume_name:
                    s.unbound_delay.append(pvc)
                else:
                    immediate = True
            if immediate:
                return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNBOUND_IMMEDIATE)
            if s.unbound_delay:
                wanted = {c.storage_class for c in s.unbound_delay}
                for obj in self.pv_cache.list(self.required_handle().objects):
                    pv = PersistentVolume.from_obj(obj)
                    if pv.storage_class in wanted:
                        s.pvs_by_class.setdefault(pv.storage_class, []).append(pv)
            eligible = self._eligible_nodes(s.bound, nodes)
        except ManifestError as e:
            return None, Status.as_status(e)
        state.write(STATE_KEY, s)
        return (PreFilterResult(eligible) if eligible is not None else None), None

    def _eligible_nodes(
        self, bound: list[PersistentVolumeClaim], nodes: Sequence[NodeInfo]
    ) -> set[str] | None:
        """``GetEligibleNodes``: intersection of the local PVs' ``kubernetes.io/hostname`` sets
        (``None`` = all nodes), mapped to the names of the nodes carrying those hostname labels
        (a node's name and its hostname label may differ; the PV's affinity is about the label)."""
        hostnames: set[str] | None = None
        for pvc in bound:
            pv = self._pv(pvc.volume_name)
            if pv is None:
                return None
            names = pv.local_node_names()
            if names:
                hostnames = set(names) if hostnames is None else hostnames & names
        if hostnames is None:
            return None
        return {
            ni.node.name
            for ni in nodes
            if ni.node is not None and ni.node.labels.get(HOSTNAME_LABEL) in hostnames
        }

    # ---------------------------------------------------------------- Filter
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """``FindPodVolumes`` for this node; remembers the node's bindings for Reserve."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        node = node_info.node
        if node is None:
            return Status(Code.Error, err=RuntimeError("node not found"))
        try:
            pod_volumes, reasons = self._find_pod_volumes(s, node.name, node.labels)
        except (KubeschedError, ValueError) as e:
            return Status.as_status(e)
        if reasons:
            return Status(Code.UnschedulableAndUnresolvable, *reasons)
        s.by_node[node.name] = pod_volumes
        return None

    def _find_pod_volumes(
        self, s: _State, node_name: str, labels: Mapping[str, str]
    ) -> tuple[PodVolumes, list[str]]:
        bound_ok, bound_found, unbound_ok, enough_storage = True, True, True, True
        static: list[tuple[Mapping[str, Any], PersistentVolumeClaim]] = []
        provisions: list[PersistentVolumeClaim] = []
        for pvc in s.bound:
            pv = self._pv(pvc.volume_name)
            if pv is None:
                bound_found = False
                break
            if not pv.node_affinity_matches(labels):
                bound_ok = False
                break
        if s.unbound_delay:
            unbound_ok, enough_storage, static, provisions = self._unbound(s, node_name, labels)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not bound_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(static, provisions), reasons

    def _unbound(
        self, s: _State, node_name: str, labels: Mapping[str, str]
    ) -> tuple[
        bool, bool, list[tuple[Mapping[str, Any], PersistentVolumeClaim]], list[PersistentVolumeClaim]
    ]:
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in s.unbound_delay:
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node_name:
                    return False, True, [], []
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        satisfied = True
        static: list[tuple[Mapping[str, Any], PersistentVolumeClaim]] = []
        if to_match:
            chosen: set[str] = set()
            for pvc in sorted(to_match, key=lambda c: c.request or 0):
                pv = find_matching_volume(pvc, s.pvs_by_class.get(pvc.storage_class, ()), labels, chosen)
                if pv is None:
                    to_provision.append(pvc)
                    satisfied = False
                    continue
                chosen.add(pv.name)
                static.append((pv.raw, pvc))
        provisions: list[PersistentVolumeClaim] = []
        enough = True
        if to_provision:
            satisfied, enough, provisions = self._check_provisions(to_provision, labels)
        return satisfied, enough, static, provisions

    def _check_provisions(
        self, claims: list[PersistentVolumeClaim], labels: Mapping[str, str]
    ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        """``checkVolumeProvisions``: (provisioning possible, enough storage, claims to provision).

        Raises ValueError ``no class for claim "<ns>/<name>"`` / ``failed to find storage class "<c>"``."""
        out = []
        for claim in claims:
            if not claim.storage_class:
                raise ValueError(f'no class for claim "{claim.key}"')
            sc = self._class(claim.storage_class)
            if sc is None:
                raise ValueError(f'failed to find storage class "{claim.storage_class}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not sc.topology_matches(labels):
                return False, True, []
            if not self._has_enough_capacity(sc, claim, labels):
                return True, False, []
            out.append(claim)
        return True, True, out

    def _has_enough_capacity(
        self, sc: StorageClass, claim: PersistentVolumeClaim, labels: Mapping[str, str]
    ) -> bool:
        """``hasEnoughCapacity``: only for CSI drivers with ``spec.storageCapacity: true``."""
        if claim.request is None:
            return True
        driver = self.required_handle().objects.get("CSIDriver", "", sc.provisioner)
        if driver is None or _get(driver, "spec", "storageCapacity") is not True:
            return True
        for cap in self.required_handle().objects.list("CSIStorageCapacity"):
            if cap.get("storageClassName") != sc.name:
                continue
            limit_raw = cap.get("maximumVolumeSize")
            if limit_raw is None:
                limit_raw = cap.get("capacity")
            if limit_raw is None:
                continue
            try:
                limit = value(limit_raw)
            except QuantityError:
                continue
            if limit < claim.request:
                continue
            topo = cap.get("nodeTopology")
            if topo is None:
                continue
            try:
                sel = parse_label_selector(topo, "nodeTopology")
            except ManifestError:
                continue
            if sel is not None and sel.matches(labels):
                return True
        return False

    # ---------------------------------------------------------------- Reserve
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``AssumePodVolumes`` for the chosen node."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        pv = s.by_node.get(node_name)
        if pv is None:
            s.all_bound = True
            return None
        try:
            s.all_bound = self._assume(pod, node_name, pv)
        except (KubeschedError, ValueError) as e:
            return Status.as_status(e)
        return None

    def _all_claims_bound(self, pod: Pod) -> bool:
        for name, _ in pod_claims(pod.name, pod.volumes):
            pvc = self._claim(pod.namespace, name)
            if pvc is None or not pvc.fully_bound:
                return False
        return True

    def _assume(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        if self._all_claims_bound(pod):
            return True
        bindings = []
        for pv, pvc in pod_volumes.static_bindings:
            new_pv, dirty = bind_volume_to_claim(pv, pvc)
            if dirty:
                self.pv_cache.assume(new_pv)
            bindings.append((new_pv, pvc))
        provisions = []
        for pvc in pod_volumes.dynamic_provisions:
            clone = copy.deepcopy(dict(pvc.raw))
            clone.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
            self.pvc_cache.assume(clone)
            provisions.append(PersistentVolumeClaim.from_obj(clone))
        pod_volumes.static_bindings = bindings  # type: ignore[assignment]
        pod_volumes.dynamic_provisions = provisions
        return False

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``RevertAssumedPodVolumes``: forget the assumed PVs and claims."""
        s = state.get(STATE_KEY)
        if s is None:
            return
        pv = s.by_node.get(node_name)
        if pv is None:
            return
        for obj, _ in pv.static_bindings:
            self.pv_cache.restore(self.pv_cache.key_of(obj))
        for pvc in pv.dynamic_provisions:
            self.pvc_cache.restore(pvc.key)

    # ---------------------------------------------------------------- PreBind
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip when all claims were bound at Reserve."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        return Status(Code.Skip) if s.all_bound else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``BindPodVolumes``: write the bindings (PV ``claimRef``) and provisioning requests (PVC
        ``selected-node``) through ``handle.client``, then wait until the PV controller (and a
        provisioner) completed them: checked at once, then every :data:`BIND_POLL_INTERVAL`
        seconds of ``handle.clock`` up to ``bindTimeoutSeconds`` (``binder.go`` ``checkBindings``).
        Error statuses: a write failed (the assumed objects are restored), a claimRef or
        ``selected-node`` annotation was reset meanwhile (``provisioning failed for PVC "<c>"``),
        or ``binding volumes: context deadline exceeded``."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        if s.all_bound:
            return None
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None:
            return Status.as_status(RuntimeError(f'no pod volumes found for node "{node_name}"'))
        client = self.required_handle().client
        if client is None:
            return Status.as_status(RuntimeError("binding volumes: no cluster client"))
        done_bindings = 0
        done_provisions = 0
        written_pvs: list[Mapping[str, Any]] = []
        written_pvcs: list[Mapping[str, Any]] = []
        try:
            for pv_obj, _ in pod_volumes.static_bindings:
                new_pv = client.update(copy.deepcopy(dict(pv_obj)))
                self.pv_cache.assume(new_pv)
                written_pvs.append(new_pv)
                done_bindings += 1
            for pvc in pod_volumes.dynamic_provisions:
                new_pvc = client.update(copy.deepcopy(dict(pvc.raw)))
                self.pvc_cache.assume(new_pvc)
                written_pvcs.append(new_pvc)
                done_provisions += 1
        except (KubeschedError, ValueError) as e:
            for pv_obj, _ in pod_volumes.static_bindings[done_bindings:]:
                self.pv_cache.restore(self.pv_cache.key_of(pv_obj))
            for pvc in pod_volumes.dynamic_provisions[done_provisions:]:
                self.pvc_cache.restore(pvc.key)
            return Status.as_status(e)
        claims = [pvc for _, pvc in pod_volumes.static_bindings]
        return self._wait_for_bindings(node_name, list(zip(written_pvs, claims, strict=True)), written_pvcs)

    def _wait_for_bindings(
        self,
        node_name: str,
        bindings: list[tuple[Mapping[str, Any], PersistentVolumeClaim]],
        provisions: list[Mapping[str, Any]],
    ) -> Status | None:
        clock = self.required_handle().clock or RealClock()
        deadline = clock.now() + self.args.bind_timeout_seconds
        while True:
            try:
                if self._check_bindings(node_name, bindings, provisions):
                    return None
            except ValueError as e:
                return Status.as_status(RuntimeError(f"binding volumes: {e}"))
            if clock.now() >= deadline:
                return Status.as_status(RuntimeError("binding volumes: context deadline exceeded"))
            clock.sleep(min(BIND_POLL_INTERVAL, max(0.0, deadline - clock.now())))

    def _check_bindings(
        self,
        node_name: str,
        bindings: list[tuple[Mapping[str, Any], PersistentVolumeClaim]],
        provisions: list[Mapping[str, Any]],
    ) -> bool:
        """``checkBindings`` on the informer's objects: True when every claim is fully bound;
        False to keep waiting (also while the informer is older than what PreBind wrote); raises
        ValueError when a binding was undone."""
        objects = self.required_handle().objects
        for written, claim in bindings:
            name = str(_get(written, "metadata", "name"))
            pv = objects.get("PersistentVolume", "", name)
            pvc = objects.get("PersistentVolumeClaim", claim.namespace, claim.name)
            if pv is None:
                raise ValueError(f'failed to check binding: persistentvolume "{name}" not found')
            if pvc is None:
                raise ValueError(f'failed to check binding: persistentvolumeclaim "{claim.key}" not found')
            if newer_version(
                str(_get(written, "metadata", "resourceVersion") or ""),
                str(_get(pv, "metadata", "resourceVersion") or ""),
            ):
                return False
            if _get(pv, "spec", "claimRef") is None:
                raise ValueError(f'ClaimRef got reset for pv "{name}"')
            if not PersistentVolumeClaim.from_obj(pvc).fully_bound:
                return False
        labels: Mapping[str, str] = {}
        info = self.required_handle().snapshot().get(node_name)
        if info is not None and info.node is not None:
            labels = info.node.labels
        for written in provisions:
            ns = str(_get(written, "metadata", "namespace") or "default")
            name = str(_get(written, "metadata", "name"))
            obj = objects.get("PersistentVolumeClaim", ns, name)
            if obj is None:
                raise ValueError(
                    f'failed to check provisioning pvc: persistentvolumeclaim "{ns}/{name}" not found'
                )
            if newer_version(
                str(_get(written, "metadata", "resourceVersion") or ""),
                str(_get(obj, "metadata", "resourceVersion") or ""),
            ):
                return False
            claim = PersistentVolumeClaim.from_obj(obj)
            selected = claim.annotations.get(ANN_SELECTED_NODE)
            if selected is None:
                raise ValueError(f'selectedNode annotation reset for PVC "{name}"')
            if selected != node_name:
                raise ValueError(f'provisioning failed for PVC "{name}"')
            if claim.volume_name:
                pv_obj = objects.get("PersistentVolume", "", claim.volume_name)
                if pv_obj is None:
                    return False  # not seen yet
                if not PersistentVolume.from_obj(pv_obj).node_affinity_matches(labels):
                    raise ValueError(
                        f'pv "{claim.volume_name}" node affinity doesn\'t match node "{node_name}"'
                    )
            if not claim.fully_bound:
                return False
        return True

    # ---------------------------------------------------------------- events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """StorageClass, PVC (hinted), PV, Node Add/UpdateNodeLabel, CSINode, CSIDriver, CSIStorageCapacity."""
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.StorageClass, add_update), self._after_sc_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update), self._after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume, add_update)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIDriver, ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIStorageCapacity, add_update)),
        ]

    @staticmethod
    def _after_sc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if not isinstance(new_obj, Mapping):
            raise TypeError(f"expected StorageClass, but got {type(new_obj).__name__}")
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, Mapping):
            raise TypeError(f"expected StorageClass, but got {type(old_obj).__name__}")
        if old_obj.get("allowedTopologies") != new_obj.get("allowedTopologies"):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def _after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if not isinstance(new_obj, Mapping):
            raise TypeError(f"expected PersistentVolumeClaim, but got {type(new_obj).__name__}")
        meta = new_obj.get("metadata") or {}
        if str(meta.get("namespace") or "default") != pod.namespace:
            return QueueingHint.QueueSkip
        name = str(meta.get("name") or "")
        if any(c == name for c, _ in pod_claims(pod.name, pod.volumes)):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
