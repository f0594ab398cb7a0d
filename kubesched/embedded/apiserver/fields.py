"""Field selectors (``?fieldSelector=spec.nodeName=n1,status.phase!=Succeeded``).

Syntax of ``fields.ParseSelector`` (``k8s.io/apimachinery/pkg/fields/selector.go``): comma-separated
``key=value``, ``key==value`` or ``key!=value`` terms (AND), ``\\`` escaping ``,``, ``=`` and ``!``.
Each resource accepts only the field labels upstream registers for it (``GetAttrs`` /
``AddFieldLabelConversionFunc`` in ``pkg/apis/core/v1/conversion.go``, ``pkg/registry/core/*/strategy.go``);
any other label is ``400 BadRequest`` ``field label not supported: <label>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.embedded.apiserver.status import ApiError

__all__ = ["SUPPORTED_FIELDS", "compile_field_selector", "field_value"]

Obj = dict[str, Any]

_META = frozenset({"metadata.name", "metadata.namespace"})

#: Field labels per (group, resource), besides ``metadata.name``/``metadata.namespace``.
SUPPORTED_FIELDS: Mapping[tuple[str, str], frozenset[str]] = {
    ("", "pods"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        }
    ),
    ("", "nodes"): frozenset({"spec.unschedulable"}),
    ("", "namespaces"): frozenset({"status.phase"}),
    ("", "persistentvolumeclaims"): frozenset(),
    ("", "events"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    ("events.k8s.io", "events"): frozenset(
        {
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        }
    ),
    ("apps", "replicasets"): frozenset({"status.replicas"}),
}


def field_value(obj: Obj, label: str) -> str:
    """String value of field ``label`` in ``obj`` as ``GetAttrs`` renders it: missing -> ``""``,
    booleans ``true``/``false``, ``status.podIPs`` the first IP, ``source`` the source component."""
    if label == "status.podIPs":
        ips = (obj.get("status") or {}).get("podIPs") or []
        return str(ips[0].get("ip", "")) if ips else ""
    if label == "source":
        return str((obj.get("source") or {}).get("component") or "")
    cur: Any = obj
    for part in label.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` not preceded by a backslash (escapes kept)."""
    parts: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            cur.append(ch)
            escaped = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    it = iter(text)
    for ch in it:
        out.append(next(it, "") if ch == "\\" else ch)
    return "".join(out)


def compile_field_selector(selector: str, group: str, resource: str) -> Callable[[Obj], bool]:
    """Predicate over objects of ``group``/``resource`` for ``selector``.

    Raises :class:`ApiError` 400 for a malformed term (``invalid selector: '<term>'; can't
    understand '<term>'``) or an unsupported label (``field label not supported: <label>``)."""
    terms: list[tuple[str, bool, str]] = []  # (label, equal, value)
    allowed = _META | SUPPORTED_FIELDS.get((group, resource), frozenset())
    for raw in _split(selector, ","):
        term = raw.strip()
        if not term:
            continue
        found = next(((op, idx) for op in ("!=", "==", "=") if (idx := _find_op(term, op)) >= 0), None)
        if found is None:
            raise ApiError(400, f"invalid selector: '{selector}'; can't understand '{term}'")
        op, idx = found
        equal = op != "!="
        label, value = term[:idx].strip(), _unescape(term[idx + len(op) :].strip())
        if label not in allowed:
            raise ApiError(400, f"field label not supported: {label}")
        terms.append((label, equal, value))

    def matches(obj: Obj) -> bool:
        for label, equal, value in terms:
            if (field_value(obj, label) == value) != equal:
                return False
        return True

    return matches


def _find_op(term: str, op: str) -> int:
    """Index of the first unescaped ``op`` in ``term`` (``=`` not part of ``==``/``!=``), or -1."""
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == "\\":
            i += 2
            continue
        if term.startswith(op, i):
            if op == "=" and (term.startswith("==", i) or (i > 0 and term[i - 1] == "!")):
                i += 1
                continue
            return i
        i += 1
    return -1
