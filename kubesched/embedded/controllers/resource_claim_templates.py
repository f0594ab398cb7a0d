"""ResourceClaims from ResourceClaimTemplates, as the ResourceClaim controller creates them
(``pkg/controller/resourceclaim/controller.go``: ``handleClaim``), for the embedded cluster.

For each ``spec.resourceClaims`` entry of a pod that names a template and has no entry in
``status.resourceClaimStatuses`` yet: a ResourceClaim ``<pod>-<entry>-<5 random characters>``
(``generateName``, both parts shortened in proportion when longer than 57 characters) in the pod's
namespace, controlled by the pod (``ownerReferences`` with ``controller`` and
``blockOwnerDeletion``), annotated ``resource.kubernetes.io/pod-claim-name: <entry>``, with the
template's labels, annotations and claim spec; then the pod's ``status.resourceClaimStatuses``
names it. A missing template leaves the entry alone (the scheduler keeps the pod waiting with
``ResourceClaim not created yet``).

Not modelled here: the controller's reservedFor clean-up and deallocation when pods finish, and
garbage collection of claims of deleted pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.client.client import ClusterClient
from kubesched.errors import NotFoundError

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_MAX_BASE_LEN = 57


def generate_name(pod_name: str, claim_name: str) -> str:
    """The claim's ``generateName``: ``<pod>-<entry>-``, proportionally shortened to 57 characters."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        base = (pod_name[: len(pod_name) * _MAX_BASE_LEN // len(base)] + "-"
                + claim_name[: len(claim_name) * _MAX_BASE_LEN // len(base)])
    return base


def create_claims_for_pod(client: ClusterClient, pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Create the missing generated claims of ``pod`` (a Pod dict) and record them in its status.
    Returns ``(entry, claim name)`` for each claim created."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    namespace = str(meta.get("namespace") or "default")
    pod_name = str(meta.get("name") or "")
    have = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
            if isinstance(s, Mapping)}
    created: list[tuple[str, str]] = []
    for entry in spec.get("resourceClaims") or []:
        if not isinstance(entry, Mapping) or not entry.get("resourceClaimTemplateName") or entry.get("name") in have:
            continue
        try:
            template = client.get("ResourceClaimTemplate", namespace, str(entry["resourceClaimTemplateName"]))
        except NotFoundError:
            continue
        tspec = template.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        annotations = {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: str(entry["name"])}
        claim_meta: dict[str, Any] = {
            "generateName": generate_name(pod_name, str(entry["name"])),
            "namespace": namespace,
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": meta.get("uid"),
                                 "controller": True, "blockOwnerDeletion": True}],
        }
        if tmeta.get("labels"):
            claim_meta["labels"] = dict(tmeta["labels"])
        claim = client.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": claim_meta,
                               "spec": dict(tspec.get("spec") or {})})
        created.append((str(entry["name"]), str(claim["metadata"]["name"])))
    if created:
        statuses = [*((pod.get("status") or {}).get("resourceClaimStatuses") or []),
                    *({"name": e, "resourceClaimName": c} for e, c in created)]
        client.patch_status("Pod", namespace, pod_name, {"resourceClaimStatuses": statuses})
    return created


def create_missing_claims(client: ClusterClient) -> int:
    """:func:`create_claims_for_pod` for every pod not bound to a node; returns the claims created."""
    n = 0
    for pod in client.list("Pod").items:
        if not (pod.get("spec") or {}).get("nodeName"):
            n += len(create_claims_for_pod(client, pod))
    return n
