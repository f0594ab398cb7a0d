"""The three PATCH content types of the API server, applied to plain JSON objects.

* ``application/merge-patch+json``: RFC 7386 JSON merge patch (``json-patch``'s ``MergePatch``).
* ``application/strategic-merge-patch+json``: the strategic merge patch
  (``k8s.io/apimachinery/pkg/util/strategicpatch/patch.go``) for the fields clients patch:
  lists with a ``patchMergeKey`` (:data:`MERGE_KEYS`: ``containers`` by ``name``, ``conditions`` by
  ``type``, ...) merge item by item, primitive lists with ``patchStrategy: merge`` (``finalizers``)
  take the union, other lists are replaced; the directives ``$patch`` (``replace``, ``delete``,
  ``merge``), ``$retainKeys``, ``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``
  are honoured. Merge keys are looked up by field name (not by Go type), which is exact for the
  core/apps/policy/storage types served here.
* ``application/json-patch+json``: RFC 6902 JSON patch (add, remove, replace, move, copy, test).

Inputs are never modified; every function returns new containers. Errors raise :class:`PatchError`
(answered as ``422 Invalid`` or ``400 BadRequest`` by the server).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MERGE_KEYS",
    "PatchError",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
]

Obj = dict[str, Any]

#: List fields merged item by item, and their merge key (``patchMergeKey`` in the Go types).
MERGE_KEYS: Mapping[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "podIPs": "ip",
    "hostIPs": "ip",
}

#: Primitive lists with ``patchStrategy: merge`` (union of values).
MERGE_PRIMITIVE_LISTS: frozenset[str] = frozenset({"finalizers"})

_SET_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


class PatchError(ValueError):
    """A patch that cannot be applied (malformed, failed ``test``, missing path)."""


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: mappings merge recursively, ``null`` deletes a key, anything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result: Obj = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def _merge_key_for(field: str, items: list[Any]) -> str | None:
    if field == "ports":  # ContainerPort by containerPort, ServicePort by port
        for item in items:
            if isinstance(item, Mapping):
                return "containerPort" if "containerPort" in item else "port"
        return None
    return MERGE_KEYS.get(field)


def apply_strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Strategic merge patch of ``patch`` onto ``target`` (see module docstring). Raises PatchError."""
    if not isinstance(patch, Mapping):
        raise PatchError("strategic merge patch must be a JSON object")
    return _smp_map(target if isinstance(target, Mapping) else {}, patch)


def _smp_map(target: Mapping[str, Any], patch: Mapping[str, Any]) -> Obj:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive}")
    result: Obj = dict(target)
    retain = patch.get("$retainKeys")
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith(_SET_ORDER):
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            orders[key[len(_SET_ORDER) :]] = value
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE) :]
            drop = value if isinstance(value, list) else [value]
            current = result.get(field)
            if isinstance(current, list):
                result[field] = [v for v in current if v not in drop]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                old = result.get(key)
                result[key] = _smp_map(old if isinstance(old, Mapping) else {}, value)
        elif isinstance(value, list):
            result[key] = _smp_list(key, result.get(key), value)
        else:
            result[key] = value
    for field, order in orders.items():
        current = result.get(field)
        if isinstance(current, list):
            result[field] = _reorder(field, current, order)
    if isinstance(retain, list):
        keep = set(retain)
        result = {k: v for k, v in result.items() if k in keep}
    return result


def _smp_list(field: str, target: Any, patch: list[Any]) -> list[Any]:
    current = list(target) if isinstance(target, list) else []
    if any(isinstance(p, Mapping) and p.get("$patch") == "replace" for p in patch):
        return [
            copy.deepcopy(p) for p in patch if not (isinstance(p, Mapping) and p.get("$patch") == "replace")
        ]
    if field in MERGE_PRIMITIVE_LISTS and all(not isinstance(p, Mapping | list) for p in patch):
        return current + [p for p in patch if p not in current]
    key = _merge_key_for(field, patch) or _merge_key_for(field, current)
    if key is None or not all(isinstance(p, Mapping) for p in patch):
        return [copy.deepcopy(p) for p in patch]
    for item in patch:
        if key not in item:
            raise PatchError(f"map: {dict(item)} does not contain declared merge key: {key}")
        idx = next(
            (i for i, cur in enumerate(current) if isinstance(cur, Mapping) and cur.get(key) == item[key]), -1
        )
        if item.get("$patch") == "delete":
            if idx >= 0:
                del current[idx]
            continue
        if idx >= 0:
            current[idx] = _smp_map(current[idx], item)
        else:
            current.append(_smp_map({}, item))
    return current


def _reorder(field: str, items: list[Any], order: list[Any]) -> list[Any]:
    """``$setElementOrder``: items named in ``order`` first in that order, the rest after."""
    key = _merge_key_for(field, items)

    def ident(item: Any) -> Any:
        return item.get(key) if key is not None and isinstance(item, Mapping) else item

    wanted = [ident(o) for o in order]
    ordered = sorted(
        range(len(items)),
        key=lambda i: (wanted.index(ident(items[i])) if ident(items[i]) in wanted else len(wanted), i),
    )
    return [items[i] for i in ordered]


# ------------------------------------------------------------------------- JSON patch


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for part in parts:
        if isinstance(cur, dict):
            if part not in cur:
                raise PatchError(f"path element {part!r} not found")
            cur = cur[part]
        elif isinstance(cur, list):
            cur = cur[_index(cur, part, allow_end=False)]
        else:
            raise PatchError(f"cannot descend into {type(cur).__name__} at {part!r}")
    return cur


def _index(seq: list[Any], part: str, *, allow_end: bool) -> int:
    if part == "-" and allow_end:
        return len(seq)
    if not part.isdigit():
        raise PatchError(f"invalid array index {part!r}")
    idx = int(part)
    if idx > len(seq) or (idx == len(seq) and not allow_end):
        raise PatchError(f"array index {idx} out of bounds")
    return idx


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _resolve(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError(f"cannot add to {type(parent).__name__}")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _resolve(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path element {last!r} not found")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise PatchError(f"cannot remove from {type(parent).__name__}")


def apply_json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch: ``operations`` is a list of ``{"op", "path", "value"/"from"}``.
    Raises PatchError (failed ``test``, missing path, unknown op)."""
    if not isinstance(operations, list):
        raise PatchError("JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, Mapping) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _resolve(doc, parts)
            if parts:
                _remove(doc, parts)
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind in ("move", "copy"):
            src = _pointer(str(op.get("from", "")))
            value = _remove(doc, src) if kind == "move" else copy.deepcopy(_resolve(doc, src))
            doc = _add(doc, parts, value)
        elif kind == "test":
            if _resolve(doc, parts) != op.get("value"):
                raise PatchError(f"testing value {op['path']} failed")
        else:
            raise PatchError(f"unexpected kind: {kind}")
    return doc
