"""The OpenAPI documents of the served API: ``/openapi/v2`` and ``/openapi/v3`` (+ one document
per group version).

The schemas are Kubernetes v1.35's own definitions (:mod:`kubesched.embedded.schema`, the one
source of field facts, also behind the unknown-field walk of
:mod:`kubesched.embedded.unknown_fields`). They are turned back into OpenAPI form: ``$ref`` to
``#/definitions/`` (v2) or ``#/components/schemas/`` (v3), nullable ``["string", "null"]`` types
to ``string``, ``resource.Quantity`` and ``intstr.IntOrString`` to ``string`` with the formats
``quantity``/``int-or-string`` -- what kube-apiserver publishes
(``staging/src/k8s.io/kube-openapi``, ``pkg/controlplane/apiserver/options``).

Documents:

* ``GET /openapi/v3``: ``{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=H"}}}``
  (``k8s.io/kube-openapi/pkg/handler3``); ``GET /openapi/v3/api/v1`` (or ``apis/<g>/<v>``): an
  OpenAPI 3.0 document whose ``components.schemas`` hold every definition the group version's kinds
  reach and whose ``paths`` list the served REST paths with their operations. Each create, update
  and patch operation carries ``x-kubernetes-group-version-kind`` and the ``fieldValidation``
  query parameter, which is how kubectl (``resource.QueryParamVerifierV3``) learns that the
  server validates fields itself, so ``kubectl create -f`` and ``apply`` need no
  ``--validate=false``; ``kubectl explain`` reads the schemas.
* ``GET /openapi/v2`` (JSON; kubesched does not encode the protobuf form clients ask for first):
  a Swagger 2.0 document of every served kind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from kubesched.api.kinds import Kind, served_kinds
from kubesched.api.kube_version import KUBE_GIT_VERSION
from kubesched.client.json_codec import dumps
from kubesched.embedded.apiserver.paths import group_versions, served_subresources
from kubesched.embedded.schema import definition_name, definitions, ref_name

__all__ = [
    "gv_path",
    "v2_document",
    "v3_document",
    "v3_root",
]

Obj = dict[str, Any]

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_SCHEMA_KEYS = ("items", "additionalProperties", "not")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def _convert(schema: Any, prefix: str, v3: bool) -> Any:
    """One JSON Schema node in OpenAPI form (refs under ``prefix``; v3 wraps a described ref in
    ``allOf`` as kube-openapi does)."""
    if not isinstance(schema, dict):
        return schema
    out: Obj = {}
    for key, value in schema.items():
        if key == "$ref":
            continue
        if key == "type":
            types = [t for t in (value if isinstance(value, list) else [value]) if t != "null"]
            out["type"] = types[0] if len(types) == 1 else types
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: _convert(v, prefix, v3) for k, v in value.items()}
        elif key in _SCHEMA_KEYS:
            out[key] = _convert(value, prefix, v3)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_convert(v, prefix, v3) for v in value]
        else:
            out[key] = value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = prefix + ref_name(ref)
        if v3 and len(out) > 0:
            out["allOf"] = [{"$ref": target}]
        else:
            out["$ref"] = target
    return out


def _definition(name: str, prefix: str, v3: bool) -> Obj:
    if name == _QUANTITY:
        return {
            "description": definitions()[name].get(
                "description", "Quantity is a fixed-point representation of a number."
            ),
            "type": "string",
            "format": "quantity",
        }
    if name == _INT_OR_STRING:
        return {
            "description": "IntOrString is a type that can hold an int32 or a string.",
            "type": "string",
            "format": "int-or-string",
        }
    converted: Obj = _convert(definitions()[name], prefix, v3)
    return converted


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            yield ref_name(ref)
        for value in schema.values():
            yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


def _closure(roots: Iterable[str]) -> list[str]:
    defs = definitions()
    seen: set[str] = set()
    todo = [r for r in roots if r in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in _refs(defs[name]) if r not in seen and r in defs)
    return sorted(seen)


def _common_roots() -> list[str]:
    return [
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    ]


def _kind_roots(resources_: Iterable[Kind]) -> list[str]:
    out: list[str] = []
    for r in resources_:
        for kind in (r.kind, r.kind + "List"):
            name = definition_name(r.group, r.version, kind)
            if name is not None:
                out.append(name)
    return out


def gv_path(group: str, version: str) -> str:
    """``api/v1`` or ``apis/<group>/<version>`` (the keys of ``/openapi/v3``)."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _param(name: str, description: str, in_: str = "query") -> Obj:
    p: Obj = {"name": name, "in": in_, "description": description, "schema": {"type": "string"}}
    if in_ == "path":
        p["required"] = True
        p["schema"] = {"type": "string", "uniqueItems": True}
    return p


_FIELD_VALIDATION = _param(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing "
    "unknown or duplicate fields. Valid values are: - Ignore - Warn (default) - Strict",
)
_FIELD_MANAGER = _param(
    "fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."
)
_DRY_RUN = _param("dryRun", "When present, indicates that modifications should not be persisted.")


def _operation(action: str, r: Kind, ref: str | None, prefix: str, *, body: bool, writes: bool) -> Obj:
    op: Obj = {
        "operationId": f"{action}{r.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
        "responses": {"200": {"description": "OK"}, "401": {"description": "Unauthorized"}},
    }
    if ref is not None:
        schema = {"$ref": prefix + ref}
        op["responses"]["200"]["content"] = {"application/json": {"schema": schema}}
    params: list[Obj] = []
    if writes:
        params += [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    op["parameters"] = params
    if body and ref is not None:
        media = (
            (
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
            )
            if action == "patch"
            else ("*/*",)
        )
        body_schema = (
            {"$ref": prefix + "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}
            if action == "patch"
            else {"$ref": prefix + ref}
        )
        op["requestBody"] = {"content": {m: {"schema": body_schema} for m in media}, "required": True}
    return op


def _paths(group: str, version: str, prefix: str) -> Obj:
    """REST paths of one group version with their operations (v3 form)."""
    base = "/" + gv_path(group, version)
    out: Obj = {}
    for r in served_kinds():
        if (r.group, r.version) != (group, version):
            continue
        ref = definition_name(r.group, r.version, r.kind)
        list_ref = definition_name(r.group, r.version, r.kind + "List")
        ns = "/namespaces/{namespace}" if r.namespaced else ""
        params = [_param("namespace", "object name and auth scope", "path")] if r.namespaced else []
        collection = f"{base}{ns}/{r.plural}"
        out[collection] = {
            "get": _operation("list", r, list_ref, prefix, body=False, writes=False),
            "post": _operation("post", r, ref, prefix, body=True, writes=True),
            "delete": _operation("deletecollection", r, None, prefix, body=False, writes=False),
            "parameters": params,
        }
        item_params = [_param("name", f"name of the {r.kind}", "path"), *params]
        out[f"{collection}/{{name}}"] = {
            "get": _operation("get", r, ref, prefix, body=False, writes=False),
            "put": _operation("put", r, ref, prefix, body=True, writes=True),
            "patch": _operation("patch", r, ref, prefix, body=True, writes=True),
            "delete": _operation("delete", r, None, prefix, body=False, writes=False),
            "parameters": item_params,
        }
        if "status" in served_subresources(r):
            out[f"{collection}/{{name}}/status"] = {
                "get": _operation("get", r, ref, prefix, body=False, writes=False),
                "put": _operation("put", r, ref, prefix, body=True, writes=True),
                "patch": _operation("patch", r, ref, prefix, body=True, writes=True),
                "parameters": item_params,
            }
    return out


@cache
def v3_document(group: str, version: str) -> bytes | None:
    """``GET /openapi/v3/<gv_path>``: the OpenAPI 3.0 document (JSON bytes), or None when the
    group version is not served."""
    if (group, version) not in group_versions():
        return None
    prefix = "#/components/schemas/"
    served = [r for r in served_kinds() if (r.group, r.version) == (group, version)]
    names = _closure(_kind_roots(served) + _common_roots())
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBE_GIT_VERSION},
        "paths": _paths(group, version, prefix),
        "components": {"schemas": {n: _definition(n, prefix, v3=True) for n in names}},
    }
    return dumps(doc)


def _hash(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest().upper()


@cache
def v3_root() -> bytes:
    """``GET /openapi/v3``: the group versions and the URLs of their documents (JSON bytes)."""
    paths: Obj = {}
    for group, version in group_versions():
        doc = v3_document(group, version)
        assert doc is not None
        path = gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={_hash(doc)}"}
    return dumps({"paths": paths})


@cache
def v2_document() -> bytes:
    """``GET /openapi/v2`` (JSON): a Swagger 2.0 document of every served kind (definitions; the
    paths are those of v3 without request bodies)."""
    prefix = "#/definitions/"
    names = _closure(_kind_roots(served_kinds()) + _common_roots())
    paths: Obj = {}
    for group, version in group_versions():
        for path, item in _paths(group, version, prefix).items():
            paths[path] = {
                verb: {k: v for k, v in op.items() if k not in ("requestBody", "responses")}
                | {"responses": {"200": {"description": "OK"}}}
                if isinstance(op, dict)
                else op
                for verb, op in item.items()
                if verb != "parameters"
            }
    doc = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": KUBE_GIT_VERSION},
        "paths": paths,
        "definitions": {n: _definition(n, prefix, v3=False) for n in names},
    }
    return dumps(doc)
