"""Bounded YAML and JSON decoding: alias expansion and nesting depth are limited before any
object is built.

PyYAML shares one Python object per anchor, so an alias bomb (a few hundred bytes that expand to
billions of nodes) loads quickly but hangs or exhausts memory in whatever walks the result next
(serialising, copying, validating); libyaml's composer recurses in C, so a document nested
100,000 levels deep crashes the interpreter. :func:`check_yaml` refuses both before loading:

- **Aliasing** follows ``gopkg.in/yaml.v2`` ``decode.go`` (``allowedAliasRatio``, used by
  ``sigs.k8s.io/yaml`` and so by kubectl and the API server): a document is refused with
  ``document contains excessive aliasing`` when it has more than 100 aliases, expands to more than
  1,000 nodes, and the share of nodes reached through aliases exceeds 99 % (up to 400,000 nodes),
  falling linearly to 10 % at 4,000,000 nodes. Expansion is also capped at
  :data:`MAX_EXPANDED_NODES` outright.
- **Nesting** deeper than :data:`MAX_DEPTH` collections is refused (``exceeded max depth``), and
  so is an alias inside the collection it names (a recursive object).

The check costs nothing for the common input: text without ``*`` has no aliases, and a text whose
indentation and bracket count bound its depth below the limit is not scanned. Otherwise libyaml's
event parser (iterative, C-accelerated when available) is run once, stopping at the first limit
passed.

:func:`load_json` bounds JSON nesting the same way (Python's decoder would raise RecursionError).

Errors: :class:`YAMLLimitError` (a ``ValueError``) with a one-line message and, for YAML, the
line and column where the limit was passed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "FastLoader",
    "YAMLLimitError",
    "check_depth",
    "check_yaml",
    "load_json",
    "safe_load",
    "safe_load_all",
]

#: Deepest nesting of mappings/sequences accepted (Kubernetes objects nest ~20 levels).
MAX_DEPTH = 256
#: Most nodes one document may expand to through aliases.
MAX_EXPANDED_NODES = 4_000_000

_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000

_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_INT_TAG = "tag:yaml.org,2002:int"
_Scalar = yaml.ScalarNode
_Mapping = yaml.MappingNode
_Sequence = yaml.SequenceNode


class _DirectConstruct:
    """Builds the common case of a safe-loaded document directly: mappings whose keys are all plain
    strings, sequences, string scalars and plain decimal integers become dicts, lists, strs and ints in one recursive walk of the
    composed nodes; every other node (ints, booleans, nulls, floats, other keys, merge keys ``<<``,
    explicit tags) goes to the safe constructor unchanged (``yaml/constructor.py:
    SafeConstructor``), so the result equals ``yaml.load(..., SafeLoader)``'s. A node reached twice
    through an alias is built once and shared, as the safe constructor does (recursive aliases are
    refused by :func:`check_yaml` first).

    The composer asks :meth:`resolve` for the tag of every plain scalar; without path resolvers
    (the safe loader has none) that tag depends on the scalar's text alone, so it is remembered per
    text for the loader's stream (``v1``, ``cpu``, ``100m`` recur in every document)."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)  # type: ignore[call-arg]
        self._plain_tags: dict[str, str] = {}
        if not self.yaml_path_resolvers:  # type: ignore[attr-defined]
            # the composer looks ``resolve`` up on the instance for every scalar: this closure
            # answers without attribute look-ups or a call into the base class
            self.resolve = self._by_text()  # type: ignore[method-assign,assignment]
            # and around every node it calls descend_resolver(parent, index) and ascend_resolver(),
            # which only follow path resolvers: C callables that take those arguments and do
            # nothing stand in for them (the results are not used)
            self.descend_resolver = slice  # type: ignore[method-assign,assignment]
            self.ascend_resolver = tuple  # type: ignore[method-assign,assignment]

    def dispose(self) -> None:
        """Drop the per-instance ``resolve`` (``yaml.load`` / ``load_all`` call this when done):
        it refers back to the loader, and the loader holds the whole text, so the pair would
        otherwise wait for the cyclic collector (or stay for good once frozen)."""
        for name in ("resolve", "descend_resolver", "ascend_resolver"):
            self.__dict__.pop(name, None)
        super().dispose()  # type: ignore[misc]

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """``yaml/resolver.py: BaseResolver.resolve``, remembered per plain scalar text."""
        if kind is _Scalar and implicit[0] and not self.yaml_path_resolvers:  # type: ignore[attr-defined]
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = self._plain_tags[value] = super().resolve(kind, value, implicit)  # type: ignore[misc]
            return tag
        return super().resolve(kind, value, implicit)  # type: ignore[misc]

    def _by_text(self) -> Callable[[Any, Any, Any], Any]:
        """:meth:`resolve` for a loader without path resolvers: a plain scalar's tag by its text
        (remembered), any other node's its kind's default tag (``BaseResolver.resolve``'s answers
        when no path resolver applies)."""
        tags = self._plain_tags
        get = tags.get
        base = super().resolve  # type: ignore[misc]
        scalar_tag = self.DEFAULT_SCALAR_TAG  # type: ignore[attr-defined]
        mapping_tag = self.DEFAULT_MAPPING_TAG  # type: ignore[attr-defined]
        sequence_tag = self.DEFAULT_SEQUENCE_TAG  # type: ignore[attr-defined]

        def resolve(kind: Any, value: Any, implicit: Any) -> Any:
            if kind is _Scalar:
                if implicit[0]:
                    tag = get(value)
                    if tag is None:
                        tag = tags[value] = base(kind, value, implicit)
                    return tag
                return scalar_tag
            if kind is _Mapping:
                return mapping_tag
            if kind is _Sequence:
                return sequence_tag
            return base(kind, value, implicit)

        return resolve

    def construct_document(self, node: Any) -> Any:
        data = self._direct(node, {})
        ctor: Any = self
        while ctor.state_generators:
            generators = ctor.state_generators
            ctor.state_generators = []
            for g in generators:
                for _ in g:
                    pass
        ctor.constructed_objects = {}
        ctor.recursive_objects = {}
        ctor.deep_construct = False
        return data

    def _direct(self, node: Any, memo: dict[int, Any]) -> Any:
        cls = node.__class__
        tag = node.tag
        if cls is _Scalar:
            if tag == _STR_TAG:
                return node.value
            if tag == _INT_TAG:
                v = node.value
                if (
                    v.isascii() and v.isdigit() and (v[0] != "0" or v == "0")
                ):  # plain decimal (a leading 0 is octal)
                    return int(v)
            return self.construct_object(node, deep=True)  # type: ignore[attr-defined]
        key = id(node)
        if key in memo:
            return memo[key]
        out: Any
        if cls is _Mapping and tag == _MAP_TAG:
            # string values inline (most of a manifest); a key that is not a plain string hands the
            # whole mapping to the safe constructor (what was built of it is dropped)
            out = {}
            for k, v in node.value:
                if k.__class__ is not _Scalar or k.tag != _STR_TAG:
                    out = self.construct_object(node, deep=True)  # type: ignore[attr-defined]
                    break
                out[k.value] = (
                    v.value if v.__class__ is _Scalar and v.tag == _STR_TAG else self._direct(v, memo)
                )
        elif cls is _Sequence and tag == _SEQ_TAG:
            out = [
                v.value if v.__class__ is _Scalar and v.tag == _STR_TAG else self._direct(v, memo)
                for v in node.value
            ]
        else:
            out = self.construct_object(node, deep=True)  # type: ignore[attr-defined]
        memo[key] = out
        return out


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FastLoader(_DirectConstruct, _SafeLoader):  # type: ignore[misc]
    """Safe loader, C-accelerated when libyaml is available, with the direct construction of
    :class:`_DirectConstruct`."""


#: a document start marker line
_DOC_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
#: a line whose indentation/indicator prefix alone could reach MAX_DEPTH block levels
_DEEP_LINE = re.compile(rf"^[ \t?:-]{{{MAX_DEPTH * 3 // 8 - 1}}}", re.M)


class YAMLLimitError(ValueError):
    """A document passes the alias or depth bound; ``str()`` is one line. ``document`` is the
    1-based number of the offending document in a multi-document stream (1 for JSON)."""

    def __init__(self, message: str, document: int = 1) -> None:
        super().__init__(message)
        self.document = document


def _allowed_alias_ratio(decoded: int) -> float:
    """``gopkg.in/yaml.v2`` ``decode.go: allowedAliasRatio``."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW))


def _may_be_deep(text: str) -> bool:
    """False when ``text`` certainly nests at most MAX_DEPTH levels: each block level needs one
    more indentation or indicator character on its line (two levels when a sequence is a
    mapping's value at the same indentation), each flow level one bracket of its document."""
    if _DEEP_LINE.search(text) is not None:
        return True
    # depth <= 2 * (widest prefix + 1) + flow brackets of the document; with flow <= MAX_DEPTH/4
    # and every prefix shorter than 3/8 MAX_DEPTH - 1 that is at most MAX_DEPTH. A "---" line
    # ends a document wherever it stands (YAML forbids it inside any scalar).
    limit = MAX_DEPTH // 4
    if text.count("[") + text.count("{") <= limit:
        return False
    return any(doc.count("[") + doc.count("{") > limit for doc in _DOC_START.split(text))


def _where(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _scan(text: str | bytes) -> None:
    """Walk the event stream, counting expanded nodes per document and nesting depth."""
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []
    decoded = aliases = 0
    doc = 0
    for ev in yaml.parse(text, Loader=FastLoader):
        if isinstance(ev, yaml.ScalarEvent):
            decoded += 1
            if ev.anchor is not None:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.AliasEvent):
            if any(anchor == ev.anchor for anchor, _ in stack):
                raise YAMLLimitError(f"recursive alias *{ev.anchor}{_where(ev.start_mark)}", doc)
            size = sizes.get(ev.anchor or "", 1)
            decoded += size
            aliases += size
            if decoded > MAX_EXPANDED_NODES or (
                aliases > 100 and decoded > 1000 and aliases / decoded > _allowed_alias_ratio(decoded)
            ):
                raise YAMLLimitError(f"document contains excessive aliasing{_where(ev.start_mark)}", doc)
        elif isinstance(ev, yaml.CollectionStartEvent):
            decoded += 1
            stack.append((ev.anchor, decoded))
            if len(stack) > MAX_DEPTH:
                raise YAMLLimitError(f"exceeded max depth of {MAX_DEPTH}{_where(ev.start_mark)}", doc)
        elif isinstance(ev, yaml.CollectionEndEvent):
            anchor, start = stack.pop()
            if anchor is not None:
                sizes[anchor] = decoded - start + 1
        elif isinstance(ev, yaml.DocumentStartEvent):
            doc += 1
            sizes.clear()
            decoded = aliases = 0


def check_yaml(text: str | bytes) -> None:
    """Raise :class:`YAMLLimitError` if any document of ``text`` aliases too much or nests deeper
    than :data:`MAX_DEPTH`. Syntax errors are left to the load that follows (it stops at the same
    place, and everything before it has been checked)."""
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "*" not in s and not _may_be_deep(s):
        return
    try:
        _scan(text)
    except yaml.MarkedYAMLError as e:
        # libyaml 0.2.5+ (PyYAML 6.0.2+ wheels) stops flow collections nested past 1,000 levels in
        # its scanner, ahead of the events this scan counts: report it as the depth limit, at the
        # bracket that crosses MAX_DEPTH
        if "exceeded maximum nesting depth" in str(e.problem or ""):
            where, document = _flow_depth_where(s)
            raise YAMLLimitError(f"exceeded max depth of {MAX_DEPTH}{where}", document) from None
    except yaml.YAMLError:
        return


def _flow_depth_where(text: str) -> tuple[str, int]:
    """`` (line L, column C)`` of the first ``[``/``{`` that opens level MAX_DEPTH + 1 of flow
    collections (quoted scalars skipped), or ``""``; and the 1-based document it is in."""
    depth = line = col = 0
    document = 1
    quote = ""
    for i, ch in enumerate(text):
        if col == 0 and line > 0 and not quote and text.startswith("---", i):
            document += 1
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return f" (line {line + 1}, column {col + 1})", document
        elif ch in "]}":
            depth -= 1
        if ch == "\n":
            line, col = line + 1, 0
        else:
            col += 1
    return "", document


def safe_load(text: str | bytes, loader: Any = FastLoader) -> Any:
    """``yaml.load`` of one document with ``loader`` (a safe loader class), bounded by
    :func:`check_yaml`. Raises YAMLLimitError or yaml.YAMLError."""
    check_yaml(text)
    return yaml.load(text, Loader=loader)  # noqa: S506 - callers pass safe loaders only


def safe_load_all(text: str | bytes, loader: Any = FastLoader) -> Iterator[Any]:
    """``yaml.load_all`` with ``loader``, bounded by :func:`check_yaml` (checked before the first
    document is built). Raises YAMLLimitError or yaml.YAMLError."""
    check_yaml(text)
    return yaml.load_all(text, Loader=loader)  # noqa: S506 - callers pass safe loaders only


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`YAMLLimitError` if ``value`` (decoded JSON/YAML) nests more than ``limit``
    mappings/sequences deep. Iterative; shared sub-objects are visited once."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > limit:
            raise YAMLLimitError(f"exceeded max depth of {limit}")
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


def load_json(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads`` with nesting bounded by :data:`MAX_DEPTH`. Raises YAMLLimitError or
    ``json.JSONDecodeError``."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise YAMLLimitError(f"exceeded max depth of {MAX_DEPTH}") from None
    opened = (
        text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
    )
    if opened > MAX_DEPTH:
        check_depth(value)
    return value
