"""ControllerRevisions: the template history of StatefulSets and DaemonSets, as
``pkg/controller/history/controller_history.go`` keeps it (``NewControllerRevision``,
``HashControllerRevision``, ``ControllerRevisionName``, ``EqualRevision``,
``SortControllerRevisions``, ``CreateControllerRevision``) with the controllers' ``getPatch``.

A revision (``apps/v1`` ``ControllerRevision``) stores ``data``: the owner's template as a
strategic merge patch, ``{"spec": {"template": {..., "$patch": "replace"}}}``, and ``revision``, a
number one above the highest of its owner's revisions. ``data`` is hashed as upstream hashes
``Data.Raw``: fnv-32 (not fnv-32a) over the patch's JSON as Go's ``json.Marshal`` writes a
``map[string]interface{}`` (keys sorted, no spaces, ``<``, ``>`` and ``&`` escaped), followed by
the collision count's decimal text, then ``rand.SafeEncodeString``. The template is encoded as
the typed object is: ``metadata.creationTimestamp: null`` and each container's ``resources: {}``
are present even when unset.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.embedded.controllers.controller_utils import controller_ref, new_controller_ref
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import AlreadyExistsError, NotFoundError

__all__ = [
    "HASH_LABEL",
    "REVISION_HASH",
    "controlled_revisions",
    "create_controller_revision",
    "equal_revision",
    "go_json",
    "hash_controller_revision",
    "new_controller_revision",
    "next_revision",
    "revision_patch",
    "revision_template",
    "sort_revisions",
]

Obj = dict[str, Any]

#: label of a workload's pods naming their revision (StatefulSet pods: the revision's name; DaemonSet
#: pods and revisions: its hash)
REVISION_HASH = "controller-revision-hash"
#: label of a revision made by :func:`new_controller_revision` naming its hash
#: (``ControllerRevisionHashLabel``)
HASH_LABEL = "controller.kubernetes.io/hash"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand: SafeEncodeString
_MAX_NAME_PREFIX = 223


def go_json(value: Any) -> bytes:
    """``value`` as Go's ``json.Marshal`` writes the same ``map[string]interface{}``: keys sorted,
    no spaces, UTF-8, HTML characters and line separators escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text.encode()


def _typed_template(template: Any) -> Obj:
    """A pod template as the typed ``PodTemplateSpec`` encodes: ``metadata.creationTimestamp``
    (``null``) and every container's ``resources`` (``{}``) always written."""
    t: Obj = copy.deepcopy(dict(template)) if isinstance(template, Mapping) else {}
    meta = t.get("metadata")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    meta.setdefault("creationTimestamp", None)
    t["metadata"] = meta
    spec = t.get("spec")
    if isinstance(spec, dict):
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or []:
                if isinstance(c, dict):
                    c.setdefault("resources", {})
    return t


def revision_patch(owner: Mapping[str, Any]) -> Obj:
    """``getPatch``: ``{"spec": {"template": <template>, "$patch": "replace"}}`` of a StatefulSet
    or DaemonSet."""
    template = _typed_template((owner.get("spec") or {}).get("template"))
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_template(revision: Mapping[str, Any]) -> Obj:
    """The pod template a revision holds (``ApplyRevision`` of its replace patch)."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def _fnv32(data: bytes, h: int = 0x811C9DC5) -> int:
    """fnv-32 (multiply, then xor) of ``data``, continuing from ``h``."""
    for b in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ b
    return h


def hash_controller_revision(data: Any, probe: int | None = None) -> str:
    """``HashControllerRevision``: fnv-32 of ``data``'s JSON and the collision count ``probe``
    (decimal text), encoded by ``rand.SafeEncodeString``."""
    h = _fnv32(go_json(data))
    if probe is not None:
        h = _fnv32(str(int(probe)).encode(), h)
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def new_controller_revision(
    parent: Mapping[str, Any], template_labels: Mapping[str, str], data: Obj, revision: int, probe: int | None
) -> Obj:
    """``NewControllerRevision``: ``<parent>-<hash>``, the template's labels plus
    ``controller.kubernetes.io/hash: <hash>``, controlled by ``parent``, in its namespace."""
    h = hash_controller_revision(data, probe)
    pmeta = parent.get("metadata") or {}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{str(pmeta.get('name'))[:_MAX_NAME_PREFIX]}-{h}",
            "namespace": pmeta.get("namespace") or "default",
            "labels": {**template_labels, HASH_LABEL: h},
            "ownerReferences": [new_controller_ref(parent)],
        },
        "data": data,
        "revision": revision,
    }


def equal_revision(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """``EqualRevision``: the same ``data``."""
    if a is None or b is None:
        return a is b
    return bool(go_json(a.get("data")) == go_json(b.get("data")))


def _revision_number(r: Mapping[str, Any]) -> int:
    try:
        return int(r.get("revision") or 0)
    except (TypeError, ValueError):
        return 0


def sort_revisions(revisions: Sequence[Obj]) -> list[Obj]:
    """``SortControllerRevisions``: by revision, then creation time, then name."""

    def key(r: Obj) -> tuple[int, float, str]:
        meta = r.get("metadata") or {}
        try:
            created = parse_rfc3339(str(meta.get("creationTimestamp")))
        except ValueError:
            created = 0.0
        return _revision_number(r), created, str(meta.get("name"))

    return sorted(revisions, key=key)


def next_revision(revisions: Sequence[Obj]) -> int:
    """``nextRevision``: one above the highest revision (1 for none)."""
    return max((_revision_number(r) for r in revisions), default=0) + 1


def controlled_revisions(cluster: MemoryCluster, owner: Mapping[str, Any]) -> list[Obj]:
    """``ListControllerRevisions`` of ``owner``: the revisions of its namespace it controls."""
    meta = owner.get("metadata") or {}
    uid = meta.get("uid")
    return [
        r
        for r in cluster.list("ControllerRevision", meta.get("namespace") or "default").items
        if (controller_ref(r) or {}).get("uid") == uid
    ]


def create_controller_revision(cluster: MemoryCluster, revision: Obj, probe: int) -> tuple[Obj, int]:
    """``CreateControllerRevision``: create ``revision`` named by its hash with collision count
    ``probe``; a name taken by a revision of other data raises the count and tries again (the
    name changes, the hash label stays, as upstream). Returns the stored revision and the
    collision count used."""
    while True:
        h = hash_controller_revision(revision["data"], probe)
        prefix = str((controller_ref(revision) or {}).get("name"))[:_MAX_NAME_PREFIX]
        candidate = copy.deepcopy(revision)
        candidate["metadata"]["name"] = f"{prefix}-{h}"
        try:
            return cluster.create(candidate), probe
        except AlreadyExistsError:
            try:
                existing = cluster.get(
                    "ControllerRevision", candidate["metadata"]["namespace"], candidate["metadata"]["name"]
                )
            except NotFoundError:
                continue
            if equal_revision(existing, candidate):
                return existing, probe
            probe += 1
