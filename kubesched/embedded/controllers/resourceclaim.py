"""The embedded cluster's ResourceClaim controller: what kube-controller-manager's
``resource-claim-controller`` (``pkg/controller/resourceclaim/controller.go``, v1.35) does for pods
with ``spec.resourceClaims``, so that ``simulate``, ``replay`` and ``serve`` create, reserve, release
and remove claims as a real cluster does (the scheduler's DynamicResources plugin waits for the
claims this controller creates).

Pods (``syncPod`` / ``handleClaim``):

* each ``spec.resourceClaims[]`` entry with ``resourceClaimTemplateName`` whose claim does not
  exist yet (no ``status.resourceClaimStatuses`` entry, or the named claim is gone or not owned by
  the pod) gets a ResourceClaim created from the template: ``metadata.generateName``
  ``<pod>-<claim name>-`` (both truncated proportionally when longer than 57 characters, as
  upstream does), so the store appends 5 random characters; the template's
  ``spec.metadata.labels`` and ``annotations`` plus ``resource.kubernetes.io/pod-claim-name: <claim
  name>``; an owner reference to the pod (``apiVersion: v1``, ``kind: Pod``, ``controller: true``,
  ``blockOwnerDeletion: true``); ``spec`` = the template's ``spec.spec``. A claim the controller
  created earlier for the same pod claim (owned by the pod and carrying the annotation) is reused
  instead (``findPodResourceClaim``);
* the pod's ``status.resourceClaimStatuses`` then gets ``{name, resourceClaimName}`` for each new
  claim (existing entries kept, new ones in ``spec.resourceClaims`` order);
* a pod bound to a node whose allocated claim does not list it in ``status.reservedFor`` (and has
  fewer than 256 entries there) gets reserved (``reserveForPod``): ``{resource: pods, name, uid}``
  appended.

A template that is missing is reported as a ``FailedResourceClaimCreation`` Warning Event on the pod
(``PodResourceClaim <name>: resource claim template "<t>": resourceclaimtemplate.resource.k8s.io
"<t>" not found``, the lister's error) and nothing of the pod is written; the pod is synced again when a ResourceClaimTemplate of its namespace is added
(upstream retries the pod with backoff; the embedded controller has no retry queue).

Claims (``syncClaim``): ``status.reservedFor`` entries for pods that are gone (deleted, replaced by a
pod of the same name with another uid) or done (``Succeeded``/``Failed``, or being deleted before
it was scheduled) are removed. When that leaves no consumer and the claim carries the finalizer
``resource.kubernetes.io/delete-protection`` (the scheduler adds it when it allocates), the claim is
deallocated (``status.allocation`` removed) and the finalizer dropped. A claim without consumers
that was generated for a pod which is done, or was replaced, is deleted; the claims of a deleted pod
are removed by the garbage collector (:mod:`kubesched.embedded.controllers.garbagecollector`).

Deviation: a pod that is done gets no claim work, only cleanup. v1.35 still runs ``podNeedsWork`` for
it, so a terminated pod can get its released claim reserved (or its deleted claim created) again,
and cleanup undoes it, over and over under the rate-limited queue (a known upstream bug, fixed
after v1.35 by the same guard); the embedded controller, whose reactions are immediate, would loop.

The controller reacts to the store's watch events synchronously (the store delivers events of the
controller's own writes after the current one), so by the time a write that needs work returns,
the work is done. Not modelled: the controller's metrics, the ``DRAExtendedResource`` claims
(off by default in v1.35), reservations for consumers other than pods (logged and left alone, as
upstream returns an error for them).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import rfc3339
from kubesched.client.client import ClusterClient, Subscription, WatchEvent
from kubesched.embedded.controllers.events import record_event
from kubesched.errors import KubeschedError, NotFoundError

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "POD_CLAIM_NAME_ANNOTATION",
    "RESERVED_FOR_MAX_SIZE",
    "ClaimNameError",
    "ResourceClaimController",
    "generate_claim_name_base",
    "pod_claim_name",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Annotation of generated claims: the ``spec.resourceClaims[].name`` they were made for
#: (``podResourceClaimAnnotation``).
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: Finalizer the scheduler adds to claims it allocates (``resourceapi.Finalizer``).
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
#: Most entries ``status.reservedFor`` may hold (``resourceapi.ResourceClaimReservedForMaxSize``).
RESERVED_FOR_MAX_SIZE = 256
#: Pods remembered as deleted (``maxUIDCacheEntries``).
MAX_UID_CACHE_ENTRIES = 500
#: ``generateName`` bases longer than this are truncated (``maxBaseLen`` in ``handleClaim``).
MAX_BASE_LEN = 57
#: Event source of the controller (``v1.EventSource{Component: "resource_claim"}``).
EVENT_COMPONENT = "resource_claim"


class ClaimNameError(KubeschedError):
    """``resourceclaim.Name`` failed: the claim was not created yet (``not_created``) or the pod
    claim sets neither ``resourceClaimName`` nor ``resourceClaimTemplateName``."""

    def __init__(self, message: str, *, not_created: bool) -> None:
        super().__init__(message)
        self.not_created = not_created


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(obj.get("metadata"))


def _ns_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = _meta(obj)
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _pod_claims(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    claims = _map(pod.get("spec")).get("resourceClaims")
    return [c for c in claims if isinstance(c, Mapping)] if isinstance(claims, list) else []


def _claim_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    statuses = _map(pod.get("status")).get("resourceClaimStatuses")
    return [s for s in statuses if isinstance(s, Mapping)] if isinstance(statuses, list) else []


def pod_claim_name(pod: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """Name of the ResourceClaim a pod claim refers to, and whether the caller must check that the
    pod owns it (``staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go:
    Name``). ``(None, False)`` when the pod status says no claim is needed. Raises
    :class:`ClaimNameError` (``pod "ns/name": ResourceClaim not created yet``; ``pod "ns/name",
    spec.resourceClaim "c": none of the supported fields are set``)."""
    ns, name = _ns_name(pod)
    if pod_claim.get("resourceClaimName"):
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName"):
        for status in _claim_statuses(pod):
            if status.get("name") == pod_claim.get("name"):
                claim = status.get("resourceClaimName")
                return (str(claim) if claim else None), True
        raise ClaimNameError(f'pod "{ns}/{name}": ResourceClaim not created yet', not_created=True)
    raise ClaimNameError(
        f'pod "{ns}/{name}", spec.resourceClaim "{pod_claim.get("name")}": '
        "none of the supported fields are set",
        not_created=False,
    )


def _controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in _meta(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> str | None:
    """None when ``claim`` was created for ``pod`` (same namespace, the pod is its controller),
    else upstream's error text (``resourceclaim.IsForPod``)."""
    pns, pname = _ns_name(pod)
    cns, cname = _ns_name(claim)
    ref = _controller_ref(claim)
    if cns != pns or ref is None or ref.get("uid") != _meta(pod).get("uid"):
        return f"ResourceClaim {cns}/{cname} was not created for pod {pns}/{pname} (pod is not owner)"
    return None


def _reserved_for(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = _map(claim.get("status")).get("reservedFor")
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _allocated(claim: Mapping[str, Any]) -> bool:
    return _map(claim.get("status")).get("allocation") is not None


def _is_reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    uid = _meta(pod).get("uid")
    return any(e.get("uid") == uid for e in _reserved_for(claim))


def _can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len(_reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def _phase_terminal(pod: Mapping[str, Any]) -> bool:
    return _map(pod.get("status")).get("phase") in ("Succeeded", "Failed")


def is_pod_done(pod: Mapping[str, Any]) -> bool:
    """True when none of the pod's containers runs or ever will (``isPodDone``): phase
    ``Succeeded``/``Failed``, or deleted before it was scheduled."""
    return _phase_terminal(pod) or (
        bool(_meta(pod).get("deletionTimestamp")) and not _map(pod.get("spec")).get("nodeName")
    )


def _pod_needs_claims(pod: Mapping[str, Any], deleted: bool) -> bool:
    """``podNeedsClaims``: False once the pod was removed, terminated or deleted before scheduling."""
    return not deleted and not is_pod_done(pod)


def generate_claim_name_base(pod_name: str, pod_claim_name: str) -> str:
    """``metadata.generateName`` of a claim generated for ``pod_claim_name`` of pod ``pod_name``:
    ``<pod>-<claim>-``, or, when longer than 57 characters, both parts cut in proportion to their
    lengths and joined by ``-`` (without the trailing hyphen, as upstream ``handleClaim``)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) > MAX_BASE_LEN:
        n = len(base)
        base = (
            pod_name[: len(pod_name) * MAX_BASE_LEN // n]
            + "-"
            + pod_claim_name[: len(pod_claim_name) * MAX_BASE_LEN // n]
        )
    return base


def _needs_admin_access(template: Mapping[str, Any]) -> bool:
    devices = _map(_map(_map(template.get("spec")).get("spec")).get("devices"))
    for request in devices.get("requests") or ():
        if isinstance(request, Mapping) and _map(request.get("exactly")).get("adminAccess") is True:
            return True
    return False


class ResourceClaimController:
    """Creates claims from templates, reserves and releases them (module docstring) in ``cluster``
    (any ClusterClient; in practice the embedded :class:`~kubesched.embedded.store.MemoryCluster`).

    ``admin_access_enabled`` is the DRAAdminAccess feature gate (on in v1.35): when off, a
    template with a request asking for ``adminAccess`` is refused (``admin access is requested,
    but the feature is disabled``). ``clock_now`` (epoch seconds) stamps the Events; without it
    they carry no timestamps. :meth:`start` subscribes to Pods, ResourceClaims and
    ResourceClaimTemplates (existing objects are reconciled at once); :meth:`stop` ends it."""

    def __init__(
        self, cluster: ClusterClient, *, admin_access_enabled: bool = True, clock_now: Any = None
    ) -> None:
        self.cluster = cluster
        self.admin_access_enabled = admin_access_enabled
        self._now = clock_now
        self._subs: list[Subscription] = []
        # pods remembered as deleted (``deletedObjects``), oldest first
        self._deleted: OrderedDict[str, None] = OrderedDict()
        # claim key "ns/name" -> keys of pods that reference it (``podResourceClaimIndex``)
        self._claim_pods: dict[str, set[str]] = {}
        self._pod_index: dict[str, set[str]] = {}
        # pod uid -> keys of claims the pod controls (``claimPodOwnerIndex``, plus the claims this
        # controller created whose ADDED event has not arrived yet: the mutation cache)
        self._owned: dict[str, set[str]] = {}
        # namespace -> keys of pods waiting for a template of that namespace
        self._waiting: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ResourceClaimController:
        self._subs = [
            self.cluster.watch("ResourceClaim", None, self._on_claim),
            self.cluster.watch("Pod", None, self._on_pod),
            self.cluster.watch("ResourceClaimTemplate", None, self._on_template),
        ]
        return self

    def stop(self) -> None:
        for s in self._subs:
            s.stop()
        self._subs = []

    # ------------------------------------------------------------------ events

    def _on_pod(self, ev: WatchEvent) -> None:
        try:
            self.enqueue_pod(ev.object, deleted=ev.type == "DELETED")
        except (KubeschedError, ValueError) as e:
            ns, name = _ns_name(ev.object)
            log.warning("resource claim controller: pod %s/%s: %s", ns, name, e)

    def _on_claim(self, ev: WatchEvent) -> None:
        claim = ev.object
        ns, name = _ns_name(claim)
        key = f"{ns}/{name}"
        ref = _controller_ref(claim)
        if ref is not None and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
            owned = self._owned.setdefault(str(ref.get("uid")), set())
            if ev.type == "DELETED":
                owned.discard(key)
                if not owned:
                    self._owned.pop(str(ref.get("uid")), None)
            else:
                owned.add(key)
        try:
            if ev.type != "DELETED":
                self.sync_claim(ns, name)
            for pod_key in sorted(self._claim_pods.get(key, ())):
                pns, _, pname = pod_key.partition("/")
                try:
                    pod = self.cluster.get("Pod", pns, pname)
                except NotFoundError:
                    continue
                self.enqueue_pod(pod, deleted=False)
        except (KubeschedError, ValueError) as e:
            log.warning("resource claim controller: claim %s: %s", key, e)

    def _on_template(self, ev: WatchEvent) -> None:
        if ev.type != "ADDED":
            return
        ns, _ = _ns_name(ev.object)
        for pod_key in sorted(self._waiting.pop(ns, ())):
            pns, _, pname = pod_key.partition("/")
            try:
                self.sync_pod(pns, pname)
            except NotFoundError:
                continue
            except (KubeschedError, ValueError) as e:
                log.warning("resource claim controller: pod %s: %s", pod_key, e)

    # ------------------------------------------------------------------ pods

    def _index_pod(self, pod: Mapping[str, Any], deleted: bool) -> None:
        ns, name = _ns_name(pod)
        pod_key = f"{ns}/{name}"
        for claim_key in self._pod_index.pop(pod_key, ()):
            pods = self._claim_pods.get(claim_key)
            if pods is not None:
                pods.discard(pod_key)
                if not pods:
                    del self._claim_pods[claim_key]
        if deleted:
            return
        keys: set[str] = set()
        for pc in _pod_claims(pod):
            try:
                claim, _ = pod_claim_name(pod, pc)
            except ClaimNameError:
                continue
            if claim is not None:
                keys.add(f"{ns}/{claim}")
        if keys:
            self._pod_index[pod_key] = keys
            for claim_key in keys:
                self._claim_pods.setdefault(claim_key, set()).add(pod_key)

    def enqueue_pod(self, pod: Mapping[str, Any], *, deleted: bool) -> None:
        """React to a pod change (``enqueuePod``): release the claims of a pod that is done or
        gone, then create or reserve claims when the pod needs it."""
        if not _pod_claims(pod):
            return
        self._index_pod(pod, deleted)
        ns, name = _ns_name(pod)
        if deleted:
            uid = str(_meta(pod).get("uid") or "")
            self._deleted[uid] = None
            self._deleted.move_to_end(uid)
            while len(self._deleted) > MAX_UID_CACHE_ENTRIES:
                self._deleted.popitem(last=False)
        if not _pod_needs_claims(pod, deleted):
            for pc in _pod_claims(pod):
                try:
                    claim, _ = pod_claim_name(pod, pc)
                except ClaimNameError:
                    continue
                if claim is not None:
                    self.sync_claim(ns, claim)
        elif self._pod_needs_work(pod):
            self.sync_pod(ns, name)

    def _get_claim(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return self.cluster.get("ResourceClaim", namespace, name)
        except NotFoundError:
            return None

    def _pod_needs_work(self, pod: Mapping[str, Any]) -> bool:
        """``podNeedsWork``: a claim to create from a template, or an allocated claim to reserve
        for a pod already bound to a node."""
        if _meta(pod).get("deletionTimestamp"):
            return False
        ns, _ = _ns_name(pod)
        for pc in _pod_claims(pod):
            try:
                name, check_owner = pod_claim_name(pod, pc)
            except ClaimNameError:
                return True
            if name is None:
                return False
            claim = self._get_claim(ns, name)
            if claim is None:
                return bool(pc.get("resourceClaimTemplateName"))
            if check_owner and is_for_pod(pod, claim) is not None:
                return False
            if not _map(pod.get("spec")).get("nodeName"):
                continue
            if _allocated(claim) and not _is_reserved_for_pod(pod, claim) and _can_be_reserved(claim):
                return True
        return False

    def sync_pod(self, namespace: str, name: str) -> None:
        """Create the pod's missing claims, record them in its status and reserve its allocated
        claims once it is bound (``syncPod``). A pod that is gone or being deleted is left alone."""
        try:
            pod = self.cluster.get("Pod", namespace, name)
        except NotFoundError:
            return
        if _meta(pod).get("deletionTimestamp") or not _pod_needs_claims(pod, False):
            return
        new_claims: dict[str, str] = {}
        for pc in _pod_claims(pod):
            try:
                self._handle_claim(pod, pc, new_claims)
            except KubeschedError as e:
                self._warn(pod, "FailedResourceClaimCreation", f"PodResourceClaim {pc.get('name')}: {e}")
                log.warning(
                    "resource claim controller: pod %s/%s, PodResourceClaim %s: %s",
                    namespace,
                    name,
                    pc.get("name"),
                    e,
                )
                return  # as upstream: retried (here: when a template appears), status untouched
        if new_claims:
            statuses = [dict(s) for s in _claim_statuses(pod) if s.get("name") not in new_claims]
            statuses += [
                {"name": pc_name, "resourceClaimName": claim} for pc_name, claim in new_claims.items()
            ]
            pod = self.cluster.patch_status("Pod", namespace, name, {"resourceClaimStatuses": statuses})
            self._index_pod(pod, False)
        if not _map(pod.get("spec")).get("nodeName"):
            return  # the scheduler reserves
        for pc in _pod_claims(pod):
            claim_name, check_owner = pod_claim_name(pod, pc)
            if claim_name is None:
                continue
            claim = self._get_claim(namespace, claim_name)
            if claim is None:
                return
            if check_owner:
                err = is_for_pod(pod, claim)
                if err is not None:
                    raise KubeschedError(err)
            if _allocated(claim) and not _is_reserved_for_pod(pod, claim) and _can_be_reserved(claim):
                entry = {"resource": "pods", "name": name, "uid": _meta(pod).get("uid")}
                self.cluster.patch_status(
                    "ResourceClaim",
                    namespace,
                    claim_name,
                    {"reservedFor": [*map(dict, _reserved_for(claim)), entry]},
                )

    def _handle_claim(
        self, pod: Mapping[str, Any], pc: Mapping[str, Any], new_claims: dict[str, str]
    ) -> None:
        """``handleClaim``: create the claim of one pod claim from its template when it is missing."""
        ns, pod_name = _ns_name(pod)
        try:
            name, check_owner = pod_claim_name(pod, pc)
        except ClaimNameError as e:
            if not e.not_created:
                raise KubeschedError(f"checking for claim before creating it: {e}") from None
        else:
            if name is None:
                return
            claim = self._get_claim(ns, name)
            if claim is not None and (not check_owner or is_for_pod(pod, claim) is None):
                return  # already created
        template_name = pc.get("resourceClaimTemplateName")
        if not template_name:
            return
        pc_name = str(pc.get("name") or "")
        claim = self._find_pod_claim(pod, pc_name)
        if claim is None:
            try:
                template = self.cluster.get("ResourceClaimTemplate", ns, str(template_name))
            except NotFoundError:
                self._waiting.setdefault(ns, set()).add(f"{ns}/{pod_name}")
                raise KubeschedError(
                    f'resource claim template "{template_name}": '
                    f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
                ) from None
            if not self.admin_access_enabled and _needs_admin_access(template):
                raise KubeschedError("admin access is requested, but the feature is disabled")
            claim = self.cluster.create(self._claim_from_template(pod, pc_name, template))
            uid = str(_meta(pod).get("uid"))
            self._owned.setdefault(uid, set()).add("/".join(_ns_name(claim)))
        new_claims[pc_name] = _ns_name(claim)[1]

    def _claim_from_template(self, pod: Mapping[str, Any], pc_name: str, template: Mapping[str, Any]) -> Obj:
        ns, pod_name = _ns_name(pod)
        tmeta = _map(_map(template.get("spec")).get("metadata"))
        annotations = {**dict(_map(tmeta.get("annotations"))), POD_CLAIM_NAME_ANNOTATION: pc_name}
        meta: Obj = {
            "generateName": generate_claim_name_base(pod_name, pc_name),
            "namespace": ns,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod_name,
                    "uid": _meta(pod).get("uid"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "annotations": annotations,
        }
        if _map(tmeta.get("labels")):
            meta["labels"] = dict(_map(tmeta.get("labels")))
        spec = _map(template.get("spec")).get("spec")
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta,
            "spec": spec if isinstance(spec, Mapping) else {},
        }

    def _find_pod_claim(self, pod: Mapping[str, Any], pc_name: str) -> Mapping[str, Any] | None:
        """``findPodResourceClaim``: a claim the pod controls that was generated for ``pc_name``."""
        uid = str(_meta(pod).get("uid"))
        for key in sorted(self._owned.get(uid, ())):
            ns, _, name = key.partition("/")
            claim = self._get_claim(ns, name)
            if claim is None:
                continue
            ann = _map(_meta(claim).get("annotations"))
            if ann.get(POD_CLAIM_NAME_ANNOTATION) == pc_name:
                return claim
        return None

    # ------------------------------------------------------------------ claims

    def sync_claim(self, namespace: str, name: str) -> None:
        """Drop stale ``reservedFor`` entries, deallocate a claim left without consumers, and delete
        an unused claim generated for a pod that is done (``syncClaim``)."""
        claim = self._get_claim(namespace, name)
        if claim is None:
            return
        reserved = _reserved_for(claim)
        valid: list[Mapping[str, Any]] = []
        for entry in reserved:
            if entry.get("apiGroup") or entry.get("resource") != "pods":
                log.warning(
                    "resource claim controller: claim %s/%s: unsupported ReservedFor entry: %s",
                    namespace,
                    name,
                    dict(entry),
                )
                return
            if self._keep_reservation(namespace, entry):
                valid.append(entry)
        meta = _meta(claim)
        finalizers = [f for f in meta.get("finalizers") or () if isinstance(f, str)]
        protected = DELETE_PROTECTION_FINALIZER in finalizers
        if len(valid) < len(reserved):
            patch: Obj = {"reservedFor": [dict(e) for e in valid] or None}
            if not valid and protected:
                patch["allocation"] = None  # deallocate: the last consumer is gone
            claim = self.cluster.patch_status("ResourceClaim", namespace, name, patch)
            if protected and not _allocated(claim):
                claim = self._drop_finalizer(claim)
        elif protected and meta.get("deletionTimestamp") and not valid:
            if _allocated(claim):
                claim = self.cluster.patch_status("ResourceClaim", namespace, name, {"allocation": None})
            claim = self._drop_finalizer(claim)
        if valid:
            return
        ref = _controller_ref(claim)
        if ref is None or ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod":
            return  # not generated for a pod
        try:
            pod = self.cluster.get("Pod", namespace, str(ref.get("name")))
        except NotFoundError:
            return  # the garbage collector removes it when the pod is truly gone
        if _meta(pod).get("uid") != ref.get("uid") or is_pod_done(pod):
            try:
                self.cluster.delete("ResourceClaim", namespace, name)
            except NotFoundError:
                pass

    def _keep_reservation(self, namespace: str, entry: Mapping[str, Any]) -> bool:
        if str(entry.get("uid")) in self._deleted:
            return False
        try:
            pod = self.cluster.get("Pod", namespace, str(entry.get("name")))
        except NotFoundError:
            return False
        return _meta(pod).get("uid") == entry.get("uid") and not is_pod_done(pod)

    def _drop_finalizer(self, claim: Mapping[str, Any]) -> Mapping[str, Any]:
        meta = dict(_meta(claim))
        meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != DELETE_PROTECTION_FINALIZER]
        if not meta["finalizers"]:
            del meta["finalizers"]
        return self.cluster.update({**claim, "metadata": meta})

    # ------------------------------------------------------------------ events

    def _warn(self, pod: Mapping[str, Any], reason: str, message: str) -> None:
        """A core ``v1`` Warning Event about ``pod`` from ``resource_claim`` (the controller's
        ``record.EventRecorder``)."""
        stamp = rfc3339(self._now()) if self._now is not None else None
        record_event(self.cluster, pod, "Pod", "v1", "Warning", reason, message, EVENT_COMPONENT, stamp)
