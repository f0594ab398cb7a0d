"""Field types of Kubernetes objects, checked before an object is parsed.

The API server's decoder refuses a document whose fields have the wrong JSON type (a string where
an object belongs, a list where an integer belongs); kubesched reads manifests and watched objects
that may never have passed one (``simulate`` files, hand-written fixtures, a faulty proxy), so
:func:`check_shape` applies the same rule first: every field of a known kind is checked against
the types of the official client's models (``kubernetes.client.models``: ``openapi_types`` and
``attribute_map``, generated from the API's OpenAPI document), and the first wrong one raises
:class:`~kubesched.errors.ManifestError` with its field path, e.g.
``spec.containers[0].resources.requests.cpu: must be a string or a number, got list``.

Rules (what ``encoding/json`` into the Go types accepts, made lenient where YAML is):
``null`` is accepted everywhere (an omitted field); strings also accept numbers and booleans
(YAML writes ``version: 1.0`` unquoted, and quantities are often bare numbers); integers accept
integers only (never booleans); timestamps are strings; ``IntOrString`` and free-form fields
accept anything; unknown fields are ignored (the API server prunes them).

The models are imported on first use (~0.4 s); each kind's checker is compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from kubesched.api import kinds
from kubesched.api.api_versions import check_api_version
from kubesched.errors import ManifestError

__all__ = ["check_shape", "parse_checked"]

Checker = Callable[[Any], None]


class _Bad(Exception):
    """A wrong type; ``parts`` collects the path innermost first while unwinding."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.parts: list[str] = []


def _type_name(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _check_str(v: Any) -> None:
    if not isinstance(v, str | int | float):  # bool is an int
        raise _Bad(f"must be a string, got {_type_name(v)}")


def _check_int(v: Any) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Bad(f"must be an integer, got {_type_name(v)}")


def _check_float(v: Any) -> None:
    if not isinstance(v, int | float) or isinstance(v, bool):
        raise _Bad(f"must be a number, got {_type_name(v)}")


def _check_bool(v: Any) -> None:
    if not isinstance(v, bool):
        raise _Bad(f"must be a boolean, got {_type_name(v)}")


def _check_time(v: Any) -> None:
    if not isinstance(v, str):
        raise _Bad(f"must be a timestamp string, got {_type_name(v)}")


def _check_any(v: Any) -> None:
    return None


_LEAVES: dict[str, Checker] = {
    "str": _check_str,
    "int": _check_int,
    "float": _check_float,
    "bool": _check_bool,
    "datetime": _check_time,
    "date": _check_time,
    "object": _check_any,
}
#: what a string field accepts besides ``null`` (``bool`` is an ``int``)
_SCALAR = (str, int, float)
_LIST = re.compile(r"^list\[(.+)\]$")
_DICT = re.compile(r"^dict\(([^,]+), (.+)\)$")


def _list_of(item: Checker) -> Checker:
    def check(v: Any) -> None:
        if not isinstance(v, list):
            raise _Bad(f"must be a list, got {_type_name(v)}")
        for i, x in enumerate(v):
            if x is not None:
                try:
                    item(x)
                except _Bad as e:
                    e.parts.append(f"[{i}]")
                    raise

    return check


def _map_of(value: Checker) -> Checker:
    leaf = value is _check_str

    def check(v: Any) -> None:
        if not isinstance(v, dict):
            raise _Bad(f"must be an object, got {_type_name(v)}")
        for k, x in v.items():
            if x is None:
                continue
            if leaf:
                if isinstance(x, str | int | float):
                    continue
            try:
                value(x)
            except _Bad as e:
                e.parts.append(f".{k}")
                raise

    return check


class _Compiler:
    """Builds one checker per model name (memoised; recursive models resolve lazily)."""

    def __init__(self) -> None:
        import kubernetes.client.models as models  # deferred: ~0.4 s import

        self.models = models
        self.done: dict[str, Checker] = {}

    def checker(self, type_name: str) -> Checker:
        leaf = _LEAVES.get(type_name)
        if leaf is not None:
            return leaf
        m = _LIST.match(type_name)
        if m:
            return _list_of(self.checker(m.group(1)))
        m = _DICT.match(type_name)
        if m:
            return _map_of(self.checker(m.group(2)))
        return self.model(type_name)

    def model(self, name: str) -> Checker:
        found = self.done.get(name)
        if found is not None:
            return found
        cls = getattr(self.models, name, None)
        if cls is None:
            self.done[name] = _check_any
            return _check_any
        # string fields apart (most fields; checked inline), free-form ones left out entirely
        strings: set[str] = set()
        fields: dict[str, Checker] = {}
        scalar = _SCALAR

        def check(v: Any) -> None:
            if not isinstance(v, dict):
                raise _Bad(f"must be an object, got {_type_name(v)}")
            for k, x in v.items():
                if x is None:
                    continue
                c: Checker
                if k in strings:
                    if isinstance(x, scalar):
                        continue
                    c = _check_str
                else:
                    found = fields.get(k)
                    if found is None:
                        continue
                    c = found
                try:
                    c(x)
                except _Bad as e:
                    e.parts.append(f".{k}")
                    raise

        self.done[name] = check
        for attr, tname in cls.openapi_types.items():
            key = cls.attribute_map.get(attr, attr)
            c = self.checker(tname)
            if c is _check_str:
                strings.add(key)
            elif c is not _check_any:
                fields[key] = c
        return check


_compiler: _Compiler | None = None
_kind_checkers: dict[str, Checker | None] = {}
kinds.on_change(_kind_checkers.clear)


def _for_kind(kind: str) -> Checker | None:
    """The checker of ``kind``'s client model (:func:`kubesched.api.kinds.model`), or None."""
    global _compiler
    try:
        return _kind_checkers[kind]
    except KeyError:
        pass
    model = kinds.model(kind)
    c: Checker | None = None
    if model is not None:
        if _compiler is None:
            _compiler = _Compiler()
        c = _compiler.model(model)
    _kind_checkers[kind] = c
    return c


def check_shape(obj: Any, kind: str) -> None:
    """Raise :class:`ManifestError` (path relative to the object, e.g. ``metadata.labels: must be
    an object, got string``) for the first field of ``obj`` whose JSON type is wrong for ``kind``
    (a kind with a model in :mod:`kubesched.api.kinds`; other kinds only need to be a mapping), or for
    an ``apiVersion`` that ``kind`` is not served at
    (:func:`kubesched.api.api_versions.check_api_version`)."""
    check_api_version(obj, kind)
    checker = _for_kind(kind)
    if checker is None:
        if not isinstance(obj, dict):
            raise ManifestError("", f"must be an object, got {_type_name(obj)}")
        return
    try:
        checker(obj)
    except _Bad as e:
        path = "".join(reversed(e.parts)).lstrip(".")
        raise ManifestError(path, e.message) from None


_T = TypeVar("_T")

#: What a parser may raise on a value of the right JSON type but the wrong content.
_PARSE_FAILURES = (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError, RecursionError)


def parse_checked(kind: str, obj: Any, parse: Callable[[Any], _T]) -> _T:
    """``parse(obj)`` after :func:`check_shape`; any other failure of ``parse`` (a value that is
    well typed but cannot be read) is raised as :class:`ManifestError` too, so nothing but the
    project's error type leaves a parser."""
    check_shape(obj, kind)
    try:
        return parse(obj)
    except ManifestError:
        raise
    except _PARSE_FAILURES as e:
        raise ManifestError("", f"cannot be read: {type(e).__name__}: {e}") from None
