"""Label key and value validation, with upstream's messages
(``k8s.io/apimachinery/pkg/util/validation/validation.go``: ``IsQualifiedName``,
``IsValidLabelValue``, ``IsDNS1123Subdomain``).

Each function returns the list of problems (empty when valid), worded exactly as upstream so that
messages built from them read like the API server's and the scheduler's.
"""

from __future__ import annotations

import re

__all__ = [
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "label_value_errors",
    "qualified_name_errors",
    "regex_error",
]

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_QNAME_MAX = 63
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MAX = 63
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character"
)
_DNS1123_LABEL_MAX = 63
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX = 253


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: ``msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')``."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, e in enumerate(examples):
        if i > 0:
            out += " or "
        out += f"'{e}', "
    return out + f"regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label`` (a namespace's name: ``ValidateNamespaceName``)."""
    errs = []
    if len(value) > _DNS1123_LABEL_MAX:
        errs.append(_max_len(_DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.match(value):
        errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(_max_len(_DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName``: a label key such as ``app`` or ``example.com/app``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QNAME_MAX:
        errs.append("name part " + _max_len(_QNAME_MAX))
    if not _QNAME_RE.match(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = []
    if len(value) > _LABEL_VALUE_MAX:
        errs.append(_max_len(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def go_quote(value: str) -> str:
    """The value as ``field.Invalid`` prints a string (Go ``%q``-style, for plain text)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
