"""Unknown fields: keys an object's schema does not define, found by walking the object along its
kind's v1.35 schema (:mod:`kubesched.embedded.schema`).

Two users, one walk:

- kubectl's client-side field validation, which ``simulate`` and ``serve`` apply to the files they
  load (:func:`unknown_fields`): ``--validate=warn`` (the default since v1.27) prints ``Warning:
  unknown field "spec.nodeSelecter"``, ``--validate=strict`` makes it an error
  (``staging/src/k8s.io/kubectl/pkg/cmd/util/helpers.go: GetValidationDirective``);
- the API server's ``fieldValidation`` (:func:`prune_unknown_fields`): ``Warn`` (the default)
  drops the fields and warns, ``Strict`` refuses the request, ``Ignore`` drops them silently
  (``sigs.k8s.io/structured-merge-diff`` and the strict JSON decoder of
  ``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json``: ``unknown field "<path>"``).

Paths are written as kubectl writes them: dotted keys, list items as ``[i]``
(``spec.containers[0].imagePullPolic``). Keys under maps (``additionalProperties``: labels,
annotations, resource quantities) are never unknown, though map values that are objects are
walked; ``x-kubernetes-preserve-unknown-fields`` objects and schemas without properties accept
anything.

Each kind's schema is compiled once into :class:`_Node` s (field -> node dicts), so the walk is a
dict lookup per key.
"""

from __future__ import annotations

from typing import Any

from kubesched.api import kinds
from kubesched.embedded.schema import definition_name, definitions, resolve

__all__ = ["prune_unknown_fields", "unknown_fields"]

Obj = dict[str, Any]


class _Node:
    """A schema compiled for the walk: ``props`` (field -> node) of an object, ``extra`` the node
    of ``additionalProperties`` (True: anything goes), ``items`` the node of list items; ``free``
    for schemas that accept anything."""

    __slots__ = ("props", "extra", "items", "free")

    def __init__(self) -> None:
        self.props: dict[str, _Node] | None = None
        self.extra: _Node | bool | None = None
        self.items: _Node | None = None
        self.free = False


_COMPILED: dict[int, _Node] = {}


def _compile(schema: Obj) -> _Node:
    """The :class:`_Node` of ``schema`` (cached by the resolved schema's identity; recursive
    definitions share nodes)."""
    schema = resolve(schema)
    node = _COMPILED.get(id(schema))
    if node is not None:
        return node
    node = _COMPILED[id(schema)] = _Node()
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        node.free = True
        return node
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if isinstance(props, dict):
        node.props = {k: _compile(v) for k, v in props.items()}
    if isinstance(extra, dict):
        node.extra = _compile(extra)
    elif extra:
        node.extra = True
    items = schema.get("items")
    if isinstance(items, dict):
        node.items = _compile(items)
    if node.props is None and node.extra is None and node.items is None:
        node.free = True
    return node


_KINDS: dict[tuple[str, str, str], _Node | None] = {}


def _kind_node(group: str, version: str, kind: str) -> _Node | None:
    key = (group, version, kind)
    if key not in _KINDS:
        name = definition_name(group, version, kind)
        _KINDS[key] = _compile(definitions()[name]) if name is not None else None
    return _KINDS[key]


def _find(value: Any, node: _Node, path: str, unknown: list[str]) -> None:
    """Append to ``unknown`` the paths of ``value``'s fields that ``node`` does not have."""
    if node.free:
        return
    if isinstance(value, dict):
        props, extra = node.props, node.extra
        if props is None and not isinstance(extra, _Node):
            return
        for key, sub in value.items():
            child = props.get(key) if props is not None else None
            if child is None:
                if isinstance(extra, _Node):
                    child = extra
                elif extra:
                    continue
                else:
                    unknown.append(f"{path}.{key}" if path else str(key))
                    continue
            if isinstance(sub, (dict, list)):
                _find(sub, child, f"{path}.{key}" if path else str(key), unknown)
    elif isinstance(value, list) and node.items is not None:
        items = node.items
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                _find(item, items, f"{path}[{i}]", unknown)


def _prune(value: Any, node: _Node, path: str, drop: set[str]) -> Any:
    """``value`` without the fields whose paths are in ``drop``."""
    if isinstance(value, dict):
        out: Obj = {}
        for key, sub in value.items():
            sub_path = f"{path}.{key}" if path else str(key)
            if sub_path in drop:
                continue
            child = (node.props or {}).get(key) or (node.extra if isinstance(node.extra, _Node) else None)
            out[key] = _prune(sub, child, sub_path, drop) if child is not None else sub
        return out
    if isinstance(value, list) and node.items is not None:
        return [_prune(item, node.items, f"{path}[{i}]", drop) for i, item in enumerate(value)]
    return value


def prune_unknown_fields(obj: Obj, group: str, version: str, kind: str) -> tuple[Obj, list[str]]:
    """``obj`` without the fields ``kind``'s schema (in ``group``/``version``) does not have, and
    their paths (``spec.containers[0].foo``) in document order; ``(obj, [])`` (the same object)
    when there is none or the kind has no upstream schema."""
    node = _kind_node(group, version, kind)
    if node is None:
        return obj, []
    unknown: list[str] = []
    _find(obj, node, "", unknown)
    if not unknown:
        return obj, []
    return _prune(obj, node, "", set(unknown)), unknown


def unknown_fields(obj: Obj) -> list[str]:
    """The paths of keys in ``obj`` (a parsed manifest, ``kind`` set) that its kind's schema does
    not define, in document order. The schema is the one of the object's ``apiVersion``, else of
    the version the Kind registry serves; kinds upstream has no schema for give ``[]``."""
    kind = str(obj.get("kind"))
    api_version = obj.get("apiVersion")
    node = None
    if isinstance(api_version, str):
        group, _, version = api_version.rpartition("/")
        node = _kind_node(group, version, kind)
    if node is None:
        served = kinds.api_version(kind)
        if served is None:
            return []
        group, _, version = served.rpartition("/")
        node = _kind_node(group, version, kind)
        if node is None:
            return []
    unknown: list[str] = []
    _find(obj, node, "", unknown)
    return unknown
