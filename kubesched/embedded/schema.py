"""Kubernetes v1.35's object schemas: the one source of field facts for the embedded cluster.

The definitions are upstream's OpenAPI definitions as the ``kubernetes-validate`` package ships
them (``kubernetes-json-schema/v1.35.0-local/_definitions.json``: converted to JSON Schema, the
extensions ``x-kubernetes-group-version-kind``, ``x-kubernetes-preserve-unknown-fields`` and
``x-kubernetes-patch-merge-key`` kept). :mod:`kubesched.embedded.apiserver.openapi` publishes them
(``/openapi/v2``, ``/openapi/v3``) and :mod:`kubesched.embedded.unknown_fields` walks objects
along them (kubectl's client-side warnings and the server's ``fieldValidation``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from kubesched.api.kube_version import KUBE_MAJOR, KUBE_MINOR
from kubesched.api.yaml_limits import load_json

__all__ = ["definition_name", "definitions", "ref_name", "resolve"]

Obj = dict[str, Any]

_SCHEMA_DIR = f"kubernetes-json-schema/v{KUBE_MAJOR}.{KUBE_MINOR}.0-local/_definitions.json"
#: ``$ref`` hops followed at most when resolving a schema
_MAX_REF_HOPS = 32


@cache
def definitions() -> dict[str, Obj]:
    """Upstream definitions by name (``io.k8s.api.core.v1.Pod``), as JSON Schema (shared: never
    mutate)."""
    text = resources.files("kubernetes_validate").joinpath(_SCHEMA_DIR).read_bytes()
    defs: dict[str, Obj] = load_json(text)["$defs"]
    return defs


@cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            out.setdefault((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")), name)
    return out


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a kind (``io.k8s.api.apps.v1.Deployment``; ``group`` ``""`` for the
    core group), or None when upstream has none."""
    return _by_gvk().get((group, version, kind))


def ref_name(ref: str) -> str:
    """The definition a ``$ref`` points at (``#/$defs/io.k8s.api.core.v1.PodSpec`` ->
    ``io.k8s.api.core.v1.PodSpec``)."""
    return ref.rsplit("/", 1)[-1]


def resolve(schema: Obj) -> Obj:
    """``schema`` with its ``$ref`` followed (``{}`` for a dangling one)."""
    defs = definitions()
    for _ in range(_MAX_REF_HOPS):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema
        schema = defs.get(ref_name(ref), {})
    return schema
