"""Reading one YAML or JSON document from a file, as every kubesched input that is not a manifest
stream is read (scheduler configurations, kubelet settings, bench workload files, simple traces,
image catalogues, registry settings): the same bounded parser and the same one-line messages as
the manifest reader (:mod:`kubesched.embedded.manifests`), naming the file and the line.

Messages (each raised as the caller's error class, a :class:`~kubesched.errors.FieldError`,
located at the file name as given):

- ``sched.yaml: cannot read: No such file or directory``
- ``sched.yaml: not valid UTF-8 text``
- ``sched.yaml: invalid YAML: did not find expected ',' or ']' (line 2, column 2)``
- ``sched.json: invalid JSON: Expecting ',' delimiter (line 3, column 5)``
- ``trace.yaml: invalid YAML: expected one document, found a second at line 13`` (plus the
  caller's ``hint`` naming what the file should hold)
- ``x.yaml: invalid YAML: document contains excessive aliasing`` (alias and depth bounds of
  :mod:`kubesched.api.yaml_limits`).

No upstream counterpart as such: the messages follow ``sigs.k8s.io/yaml`` errors as kubectl
prints them (``error converting YAML to JSON: yaml: line 2: ...``), shortened to one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.yaml_limits import FastLoader, YAMLLimitError, load_json, safe_load_all
from kubesched.errors import ConfigError, FieldError

#: Builds the error to raise: ``(field path, message, where)``, as a FieldError subclass is built.
ErrorFactory = Callable[[str, str, str], FieldError]

__all__ = ["ErrorFactory", "parse_document", "read_document", "read_text", "yaml_problem"]


def yaml_problem(err: yaml.YAMLError) -> str:
    """PyYAML's error as one line: ``problem (line L, column C)`` (1-based), without PyYAML's
    ``in "<unicode string>"`` context lines. PyYAML's ``problem_mark`` is where the parser
    noticed the problem, often the line after the mistake (an unclosed ``{`` is noticed at the
    next key); when its ``context_mark`` (where the construct being parsed started) is on an
    earlier line, that line is named too: ``did not find expected ',' or '}' (line 4, column 5),
    while parsing a flow mapping started at line 3, column 11``."""
    if isinstance(err, yaml.MarkedYAMLError):
        problem = err.problem or err.context or "syntax error"
        mark = err.problem_mark or err.context_mark
        if mark is None:
            return problem
        text = f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
        start = err.context_mark
        if err.problem and err.context and start is not None and start.line < mark.line:
            text += f", {err.context} started at line {start.line + 1}, column {start.column + 1}"
        return text
    return " ".join(str(err).split())


def read_text(path: str | Path, error: ErrorFactory = ConfigError) -> str:
    """The UTF-8 text of ``path``. Raises ``error`` located at ``path``: ``cannot read: REASON``
    (missing, a directory, no permission) or ``not valid UTF-8 text``."""
    where = str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise error("", "not valid UTF-8 text", where) from None
    except OSError as e:
        raise error("", f"cannot read: {e.strerror or e}", where) from None


def parse_document(
    text: str,
    where: str,
    *,
    error: ErrorFactory = ConfigError,
    is_json: bool | None = None,
    loader: Any = FastLoader,
    hint: str = "",
    object_pairs_hook: Any = None,
) -> Any:
    """The one document of ``text`` (YAML, or JSON when ``is_json`` or, for None, when the text
    parses as JSON); an empty text is None. Aliases and nesting are bounded. Raises ``error``
    located at ``where`` (see the module docstring); ``hint`` is appended to the message for a
    stream of several documents; ``loader`` (a safe loader class) and ``object_pairs_hook`` (JSON)
    may refuse more, e.g. duplicate keys, raising YAMLError or ValueError."""
    if is_json is None:
        is_json = text.lstrip().startswith(("{", "[")) and _parses_as_json(text)
    if is_json:
        try:
            return load_json(text, object_pairs_hook=object_pairs_hook)
        except YAMLLimitError as e:
            raise error("", f"invalid JSON: {e}", where) from None
        except json.JSONDecodeError as e:
            raise error("", f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", where) from None
        except ValueError as e:
            raise error("", f"invalid JSON: {e}", where) from None
    try:
        docs = safe_load_all(text, loader)
        first = next(docs, None)
        more = any(doc is not None for doc in docs)
    except YAMLLimitError as e:
        raise error("", f"invalid YAML: {e}", where) from None
    except yaml.YAMLError as e:
        raise error("", f"invalid YAML: {yaml_problem(e)}", where) from None
    if more:
        message = f"invalid YAML: expected one document, found a second at line {_second_document_line(text)}"
        raise error("", f"{message}; {hint}" if hint else message, where)
    return first


def _second_document_line(text: str) -> int:
    """The 1-based line where the stream's second document starts (on the error path only)."""
    starts = [
        e.start_mark.line + 1
        for e in yaml.parse(text, Loader=yaml.SafeLoader)
        if isinstance(e, yaml.DocumentStartEvent) and e.start_mark is not None
    ]
    return starts[1] if len(starts) > 1 else 1


def _parses_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def read_document(
    path: str | Path,
    *,
    error: ErrorFactory = ConfigError,
    loader: Any = FastLoader,
    hint: str = "",
    object_pairs_hook: Any = None,
) -> Any:
    """:func:`parse_document` of the file ``path`` (JSON for a ``.json`` name, else YAML, which
    JSON also is). Raises ``error`` located at ``path`` as given."""
    text = read_text(path, error)
    is_json = True if Path(path).suffix.lower() == ".json" else None
    return parse_document(
        text,
        str(path),
        error=error,
        is_json=is_json,
        loader=loader,
        hint=hint,
        object_pairs_hook=object_pairs_hook,
    )
