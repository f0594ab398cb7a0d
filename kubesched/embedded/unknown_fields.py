"""Unknown-field detection for manifests, as kubectl's client-side field validation reports it.

kubectl (``--validate=warn``, the default since v1.27) prints ``Warning: unknown field
"spec.nodeSelecter"`` for a key the object's schema does not have; ``--validate=strict`` makes it
an error. kubesched does the same for the kinds ``simulate`` and ``serve`` load, using the
schemas carried by the official ``kubernetes`` Python client's models (``openapi_types`` and
``attribute_map`` of ``V1Pod``, ``V1Node``, ...), so the field list follows that client's
Kubernetes version.

Paths are written as kubectl writes them: dotted keys, list items as ``[i]``
(``spec.containers[0].imagePullPolic``). Keys under free-form maps (labels, annotations,
resource quantities, ``dict(str, ...)`` types) and ``object`` fields (e.g. CRD-shaped extension
points) are never reported.

Source followed: ``staging/src/k8s.io/kubectl/pkg/cmd/util/helpers.go: GetValidationDirective``
and the server-side ``fieldValidation=Warn`` text of
``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json``: ``unknown field "<path>"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from kubernetes import client as _models

from kubesched.api import kinds

__all__ = ["unknown_fields"]

_LIST = re.compile(r"^list\[(.+)\]$")


@cache
def _fields(model: str) -> dict[str, str] | None:
    """JSON field name -> type string of a client model, or None when the model is unknown."""
    cls = getattr(_models, model, None)
    if cls is None or not hasattr(cls, "openapi_types"):
        return None
    types: dict[str, str] = cls.openapi_types
    names: dict[str, str] = cls.attribute_map
    return {names[py]: t for py, t in types.items()}


def _walk(value: Any, type_name: str, path: str) -> Iterator[str]:
    m = _LIST.match(type_name)
    if m:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _walk(item, m.group(1), f"{path}[{i}]")
        return
    fields = _fields(type_name) if isinstance(value, dict) else None
    if fields is None:
        return  # scalars, dict(str, ...) maps, object, datetime: free-form or type errors reported elsewhere
    for key, sub in value.items():
        sub_path = f"{path}.{key}" if path else str(key)
        sub_type = fields.get(key) if isinstance(key, str) else None
        if sub_type is None:
            yield sub_path
            continue
        yield from _walk(sub, sub_type, sub_path)


def unknown_fields(obj: dict[str, Any]) -> list[str]:
    """The paths of keys in ``obj`` that its kind's schema does not define, in document order.

    ``obj`` is a parsed manifest (``kind`` set); kinds without a known model give ``[]``.
    ``apiVersion``/``kind``/``metadata`` are part of every model, so they are never reported.
    """
    model = kinds.model(str(obj.get("kind")))
    if model is None:
        return []
    return list(_walk(obj, model, ""))
