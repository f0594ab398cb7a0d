"""Reading and writing Kubernetes manifests (the cluster state given to ``simulate``/``bench``).

:func:`load_manifests` reads files or directories (non-recursively unless ``recursive=True``: ``*.yaml``, ``*.yml``, ``*.json``,
sorted by path) holding multi-document YAML or JSON, and expands ``kind: List`` / ``<Kind>List``
documents (what ``kubectl get nodes,pods -A -o yaml`` or a raw API list prints). Like
``sigs.k8s.io/yaml`` (used by kubectl), unquoted timestamps stay strings. Objects of
:func:`kubesched.api.kinds.loadable_kinds` are returned as :class:`Manifest` (object + location); other kinds are
counted in :attr:`LoadResult.skipped_kinds` so the CLI can warn once per kind.

:func:`write_manifests` writes objects back (``--write-snapshot``) with a stable key order.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api import kinds
from kubesched.api.document_file import yaml_problem
from kubesched.api.label_validation import dns1123_label_errors, go_quote
from kubesched.api.yaml_limits import FastLoader, YAMLLimitError, load_json, safe_load_all
from kubesched.atomic_file import atomic_write_text
from kubesched.errors import ManifestError

__all__ = [
    "LoadResult",
    "Manifest",
    "add_documents",
    "load_manifest_text",
    "load_manifests",
    "parse_documents",
    "render_manifests",
    "write_manifests",
]

Obj = dict[str, Any]

_SUFFIXES = (".yaml", ".yml", ".json")

#: The file name that means standard input (``-f -``), as kubectl; messages call it ``STDIN``.
STDIN = "-"
STDIN_SOURCE = "STDIN"

_BaseLoader: Any = FastLoader
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _PlainDumper(_BaseDumper):  # type: ignore[misc]
    """Safe dumper (C-accelerated when available) that never writes anchors/aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe loader (C-accelerated when available) that keeps timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True, slots=True)
class Manifest:
    """One object read from a manifest file.

    ``source`` is the file path as given (or joined under the given directory), ``doc_index`` the
    1-based YAML document number in that file (JSON files: 1), ``item_index`` the 1-based position
    inside a List document (None otherwise). ``obj`` is the parsed dict (shared, do not mutate).
    """

    obj: Obj
    source: str
    doc_index: int
    item_index: int | None = None

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        """The namespace (``default`` when missing) or None for cluster-scoped kinds."""
        if kinds.is_cluster_scoped(self.kind):
            return None
        return str(self.obj["metadata"].get("namespace") or "default")

    @property
    def where(self) -> str:
        """Location prefix for messages: ``cluster.yaml doc 3 (Pod default/web-1)`` or
        ``nodes.yaml doc 1 item 4 (Node n4)``."""
        ns = self.namespace
        ident = self.name if ns is None else f"{ns}/{self.name}"
        return f"{_doc_where(self.source, self.doc_index, self.item_index)} ({self.kind} {ident})"

    def where_of(self, what: str) -> str:
        """Location prefix for an object made from this one (a workload's pod): ``deploy.yaml
        doc 2 (Pod shop/web-5d8f-x7k2p of Deployment shop/web)`` for ``what`` = ``Pod
        shop/web-5d8f-x7k2p``."""
        ns = self.namespace
        ident = self.name if ns is None else f"{ns}/{self.name}"
        return f"{_doc_where(self.source, self.doc_index, self.item_index)} ({what} of {self.kind} {ident})"


@dataclass(slots=True)
class LoadResult:
    """Objects loaded (file order) and the skipped kinds with their counts (first-seen order)."""

    manifests: list[Manifest] = field(default_factory=list)
    skipped_kinds: dict[str, int] = field(default_factory=dict)
    #: directories given without ``recursive`` whose subdirectories hold manifest files (not read)
    skipped_subdirectories: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """One line per skipped kind (``skipped 1 object(s) of unsupported kind Foo``) and per
        directory whose subdirectories were not read (``-R`` reads them, as kubectl's)."""
        lines = [
            f"skipped {count} object(s) of unsupported kind {kind}"
            for kind, count in sorted(self.skipped_kinds.items())
        ]
        lines.extend(
            f"{d}: subdirectories skipped (-R/--recursive reads them)" for d in self.skipped_subdirectories
        )
        return lines

    @property
    def objects(self) -> list[Obj]:
        """The loaded objects alone, ready for ``MemoryCluster.load``."""
        return [m.obj for m in self.manifests]


def _doc_where(source: str, doc_index: int, item_index: int | None = None) -> str:
    where = f"{source} doc {doc_index}"
    return f"{where} item {item_index}" if item_index is not None else where


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _files(
    paths: Sequence[str | Path], recursive: bool, skipped: list[str] | None = None
) -> list[tuple[Path | None, str]]:
    """(path, source name) of every file to read; ``-`` is standard input (path None), as kubectl.
    An existing path that is neither a directory nor a regular file (``/dev/null``, a FIFO) is read
    as a file. Directories given without ``recursive`` whose subdirectories hold manifest files are
    appended to ``skipped``. Raises ManifestError for a missing path."""
    out: list[tuple[Path | None, str]] = []
    for p in paths:
        if str(p) == STDIN:
            out.append((None, STDIN_SOURCE))
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(
                (
                    f
                    for f in (path.rglob("*") if recursive else path.iterdir())
                    if f.suffix.lower() in _SUFFIXES and f.is_file()
                ),
                key=lambda f: f.relative_to(path).as_posix(),
            )
            out.extend((f, os.path.join(str(p), f.relative_to(path).as_posix())) for f in found)
            if not recursive and skipped is not None and _subdirectories_hold_manifests(path):
                skipped.append(str(p))
        elif path.exists():
            out.append((path, str(p)))
        else:
            raise ManifestError("", "no such file or directory", where=str(p))
    return out


def _subdirectories_hold_manifests(path: Path) -> bool:
    return any(
        f.suffix.lower() in _SUFFIXES and f.is_file()
        for d in path.iterdir()
        if d.is_dir()
        for f in d.rglob("*")
    )


def _read_text(path: Path | None, source: str) -> str:
    try:
        if path is None:
            return sys.stdin.buffer.read().decode("utf-8")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError("", "not valid UTF-8 text", where=source) from None
    except OSError as err:
        raise ManifestError("", err.strerror or str(err), where=source) from None


def _documents(path: Path | None, source: str) -> Iterable[tuple[int, object]]:
    """(1-based document index, parsed document) of one file (``path`` None: standard input, JSON
    when it parses as JSON, else YAML)."""
    text = _read_text(path, source)
    is_json = _is_json(text) if path is None else path.suffix.lower() == ".json"
    return _parse_text(text, source, is_json)


def _parse_text(text: str, source: str, is_json: bool) -> Iterator[tuple[int, object]]:
    if is_json:
        try:
            yield 1, load_json(text)
        except YAMLLimitError as err:
            raise ManifestError("", f"invalid JSON: {err}", where=f"{source} doc 1") from None
        except json.JSONDecodeError as err:
            raise ManifestError(
                "",
                f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})",
                where=f"{source} doc 1",
            ) from None
        return
    index = 0
    try:
        docs = safe_load_all(text, _Loader)
    except YAMLLimitError as err:
        raise ManifestError("", f"invalid YAML: {err}", where=f"{source} doc {err.document}") from None
    while True:
        try:
            doc = next(docs)
        except StopIteration:
            return
        except yaml.YAMLError as err:
            raise ManifestError(
                "", f"invalid YAML: {yaml_problem(err)}", where=f"{source} doc {index + 1}"
            ) from None
        index += 1
        yield index, doc


def _check_object(doc: object, where: str, default_kind: str | None = None) -> str | None:
    """Validate the identity fields; return the kind (None for an empty document)."""
    if not isinstance(doc, dict):
        raise ManifestError(
            "", f"expected a mapping (a Kubernetes object), got {_type_name(doc)}", where=where
        )
    kind = doc.get("kind", default_kind) or default_kind
    if kind is None or kind == "":
        raise ManifestError("kind", "required", where=where)
    if not isinstance(kind, str):
        raise ManifestError("kind", f"must be a string, got {_type_name(kind)}", where=where)
    return kind


def _check_identity(doc: Obj, where: str) -> None:
    meta = doc.get("metadata")
    if meta is None:
        raise ManifestError("metadata.name", "required", where=where)
    if not isinstance(meta, dict):
        raise ManifestError("metadata", f"must be a mapping, got {_type_name(meta)}", where=where)
    name = meta.get("name")
    if name is None or name == "":
        raise ManifestError("metadata.name", "required", where=where)
    if not isinstance(name, str):
        raise ManifestError("metadata.name", f"must be a string, got {_type_name(name)}", where=where)
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise ManifestError("metadata.namespace", f"must be a string, got {_type_name(ns)}", where=where)


def _is_list_kind(kind: str, doc: Obj) -> bool:
    return kind == "List" or (kind.endswith("List") and "items" in doc)


def load_manifests(paths: Sequence[str | Path], *, recursive: bool = False) -> LoadResult:
    """Read every object from ``paths`` (files or directories, see module docstring). As with
    ``kubectl -f``, a directory's subdirectories are read only with ``recursive=True`` (``-R``).

    Returns loadable objects in file/document/item order and skipped kinds with counts. Empty YAML
    documents are ignored (they still count for document numbers). Raises ManifestError, e.g.
    ``cluster.yaml doc 2: metadata.name: required``, ``cluster.yaml doc 1 item 3: kind: required``,
    ``cluster.yaml doc 4: invalid YAML: ... (line 9, column 3)``, ``missing.yaml: no such file or
    directory``. Only loadable kinds need ``metadata.name``; skipped kinds are not validated further.
    """
    result = LoadResult()
    for path, source in _files(paths, recursive, result.skipped_subdirectories):
        add_documents(result, _documents(path, source), source)
    return result


def load_manifest_text(text: str, source: str, *, is_json: bool = False) -> LoadResult:
    """:func:`load_manifests` for text held in memory (e.g. YAML pasted into a form); ``source``
    names it in messages (``added.yaml doc 2 (Pod default/p): ...``). Raises ManifestError."""
    result = LoadResult()
    add_documents(result, _parse_text(text, source, is_json), source)
    return result


def parse_documents(text: str, source: str) -> Iterable[tuple[int, object]]:
    """(1-based document index, parsed document) of YAML/JSON ``text`` named ``source`` in messages."""
    return _parse_text(text, source, _is_json(text))


def _is_json(text: str) -> bool:
    """Text that starts like JSON and parses as JSON (flow-style YAML such as ``{kind: Pod}`` starts
    the same way and is read as YAML)."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def add_documents(result: LoadResult, documents: Iterable[tuple[int, object]], source: str) -> None:
    """Validate parsed ``documents`` of ``source`` (see :func:`load_manifests`) into ``result``:
    loadable objects appended, ``List`` documents expanded, other kinds counted. Raises ManifestError."""
    skipped = result.skipped_kinds
    manifests = result.manifests
    for doc_index, doc in documents:
        if doc is None:
            continue
        where = _doc_where(source, doc_index)
        kind = _check_object(doc, where)
        assert kind is not None and isinstance(doc, dict)
        if _is_list_kind(kind, doc):
            items = doc.get("items")
            if items is None:
                items = []
            if not isinstance(items, list):
                raise ManifestError("items", f"must be a list, got {_type_name(items)}", where=where)
            item_kind = kind[: -len("List")] or None
            api_version = doc.get("apiVersion")
            for item_index, item in enumerate(items, start=1):
                item_where = _doc_where(source, doc_index, item_index)
                ikind = _check_object(item, item_where, item_kind)
                assert ikind is not None and isinstance(item, dict)
                if ikind not in kinds.loadable_kinds():
                    skipped[ikind] = skipped.get(ikind, 0) + 1
                    continue
                _check_identity(item, item_where)
                if item.get("kind") != ikind:
                    item = {"apiVersion": api_version, "kind": ikind, **item}
                    if not item["apiVersion"]:
                        del item["apiVersion"]
                manifests.append(_checked(Manifest(item, source, doc_index, item_index)))
            continue
        if kind not in kinds.loadable_kinds():
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        _check_identity(doc, where)
        manifests.append(_checked(Manifest(doc, source, doc_index)))


def _checked(m: Manifest) -> Manifest:
    """``m`` once its ``apiVersion`` is set (``kubectl apply`` refuses a document without one:
    ``error validating data: apiVersion not set``) and its namespace is a DNS-1123 label
    (``apimachinery/pkg/api/validation: ValidateObjectMeta``, ``ValidateNamespaceName``). Raises
    :class:`ManifestError` located at the object, e.g. ``cluster.yaml doc 2 (Pod Bad_NS!/web):
    metadata.namespace: Invalid value: "Bad_NS!": a lowercase RFC 1123 label must ...``."""
    if not m.obj.get("apiVersion"):
        raise ManifestError("", "apiVersion not set", where=m.where)
    ns = m.obj["metadata"].get("namespace")
    if ns and not kinds.is_cluster_scoped(m.kind):
        bad = dns1123_label_errors(ns)
        if bad:
            raise ManifestError(
                "metadata.namespace", f"Invalid value: {go_quote(ns)}: {bad[0]}", where=m.where
            )
    return m


_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec", "status")


def _sorted_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_deep(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_deep(v) for v in value]
    return value


def _ordered(obj: Obj) -> Obj:
    """Top-level keys in kubectl order (apiVersion, kind, metadata, spec, status, rest sorted);
    nested mapping keys sorted."""
    out: Obj = {k: _sorted_deep(obj[k]) for k in _TOP_ORDER if k in obj}
    for k in sorted(obj):
        if k not in out:
            out[k] = _sorted_deep(obj[k])
    return out


def render_manifests(objects: Sequence[Obj], *, as_json: bool = False, as_list: bool = False) -> str:
    """``objects`` as text: multi-document YAML (``---`` before each object), one ``kind: List``
    YAML document when ``as_list``, or a JSON ``List`` when ``as_json``. Key order is stable (see
    :func:`_ordered`) and YAML has no anchors or aliases (a repeated object is written in full)."""
    docs = [_ordered(o) for o in objects]
    if as_json:
        return (
            json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2, ensure_ascii=False)
            + "\n"
        )
    if as_list:
        body = {"apiVersion": "v1", "kind": "List", "items": docs}
        return yaml.dump(
            body, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
        )
    if not docs:
        return ""
    return yaml.dump_all(
        docs,
        Dumper=_PlainDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        explicit_start=True,
    )


def write_manifests(
    path: str | Path, objects: Sequence[Obj], *, as_list: bool = False, as_json: bool | None = None
) -> None:
    """Write :func:`render_manifests` of ``objects`` to ``path`` (JSON when ``as_json``, by default
    for a ``.json`` path), replacing the file atomically. Equal inputs give identical files, and
    :func:`load_manifests` reads the result back unchanged.
    """
    target = Path(path)
    if as_json is None:
        as_json = target.suffix.lower() == ".json"
    text = render_manifests(objects, as_json=as_json, as_list=as_list)
    atomic_write_text(target, text)
