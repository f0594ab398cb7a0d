"""Objects given from Python (dicts, YAML text, paths, the official client's models) as
:class:`~kubesched.embedded.manifests.Manifest` entries, for :func:`kubesched.simulate`.

Accepted, alone or in any iterable (nested iterables are flattened):

* a ``dict`` (one object, or a ``kind: List``);
* a ``str``: a file or directory path when it has no newline, ``:``, ``{`` or ``}`` (a missing
  one is an error), else YAML/JSON text (multi-document);
* a :class:`pathlib.Path` (file or directory, as ``-f``);
* a model of the ``kubernetes`` client (``V1Pod``, ``V1Node``, ...): serialised with
  ``ApiClient.sanitize_for_serialization``, as the client sends it to an API server (``kind``
  from the class name when the model leaves it unset).

Errors are :class:`~kubesched.errors.ManifestError` naming the input (``objects[3]``, the path, or
``text doc 2``) and the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kubesched.api import kinds
from kubesched.embedded.manifests import LoadResult, Manifest, add_documents, load_manifests, parse_documents
from kubesched.errors import ManifestError

__all__ = ["ObjectsInput", "manifests_from"]

#: ``V1``, ``V1beta1``, ``V2alpha3``: the version prefix of a client model's class name
#: (``V1Pod`` is kind ``Pod``; a model without ``kind`` set gets it from its class).
_VERSION_PREFIX = re.compile(r"^V\d+(?:alpha\d+|beta\d+)?")

#: What :func:`manifests_from` accepts.
ObjectsInput = Any


def _is_client_model(obj: object) -> bool:
    return hasattr(type(obj), "openapi_types") and hasattr(type(obj), "attribute_map")


def _flatten(objects: ObjectsInput, where: str) -> Iterator[tuple[object, str]]:
    if isinstance(objects, dict | str | Path) or _is_client_model(objects):
        yield objects, where
        return
    if not isinstance(objects, Iterable):
        raise ManifestError(
            "",
            f"expected objects (dicts, YAML text, paths or client models), got {type(objects).__name__}",
            where=where,
        )
    for i, item in enumerate(objects):
        if isinstance(item, dict | str | Path) or _is_client_model(item):
            yield item, f"{where}[{i}]"
        else:
            yield from _flatten(item, f"{where}[{i}]")


def _path_like(text: str) -> bool:
    """A string that names a file rather than holding YAML: no newline, no ``:``, ``{`` or ``}``
    (a one-line YAML or JSON object always has a ``:``)."""
    return not any(c in text for c in ":{}\n") and bool(text.strip())


def manifests_from(objects: ObjectsInput, where: str = "objects") -> list[Manifest]:
    """Every loadable object of ``objects`` (see the module docstring) in order; kinds ``simulate``
    does not load are skipped as ``-f`` skips them. Raises ManifestError."""
    result = LoadResult()
    serializer: Any = None
    for item, at in _flatten(objects, where):
        if isinstance(item, str) and _path_like(item) and not Path(item).exists():
            raise ManifestError("", "no such file or directory", where=item)
        if isinstance(item, Path) or (isinstance(item, str) and _path_like(item)):
            result.manifests.extend(load_manifests([str(item)], recursive=True).manifests)
        elif isinstance(item, str):
            add_documents(result, parse_documents(item, at), at)
        else:
            if not isinstance(item, dict):
                if serializer is None:
                    from kubernetes.client import ApiClient

                    serializer = ApiClient()
                kind = _VERSION_PREFIX.sub("", type(item).__name__)
                # a client model's class names its kind; its version is the registry's (as the
                # client's typed API sends it on the URL)
                item = {
                    "apiVersion": kinds.api_version(kind),
                    "kind": kind,
                    **serializer.sanitize_for_serialization(item),
                }
            add_documents(result, [(1, item)], at)
    return result.manifests
