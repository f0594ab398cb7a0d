"""Label selector strings for ``list`` filtering in the embedded store.

Parses the string syntax of ``labels.Parse`` (``k8s.io/apimachinery/pkg/labels/selector.go``):
``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x,y)``, ``a``, ``!a``, comma-separated (AND).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = ["compile_selector"]

_SEL_REQ = re.compile(
    r"^\s*(?:(!)\s*(?P<nk>[\w./-]+)|(?P<key>[\w./-]+)\s*(?:(?P<op>==|=|!=)\s*(?P<val>[\w.-]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<vals>[^()]*)\))?)\s*$"
)


def compile_selector(selector: str | Mapping[str, str]) -> Callable[[Mapping[str, str]], bool]:
    """Predicate over a labels mapping for a selector string (``a=b,c!=d,e in (x,y),f notin (z),g,!h``,
    as ``labels.Parse`` in apimachinery) or a ``matchLabels`` mapping. Raises ValueError."""
    reqs: list[tuple[str, str, frozenset[str]]] = []
    if isinstance(selector, Mapping):
        reqs = [(k, "in", frozenset([v])) for k, v in selector.items()]
    else:
        parts: list[str] = []
        cur: list[str] = []
        depth = 0
        for ch in selector:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
        parts.append("".join(cur))
        for part in parts:
            if not part.strip():
                continue
            m = _SEL_REQ.match(part)
            if m is None:
                raise ValueError(f"invalid label selector {selector!r}: cannot parse {part.strip()!r}")
            if m.group("nk"):
                reqs.append((m.group("nk"), "!", frozenset()))
            elif m.group("op"):
                op = "notin" if m.group("op") == "!=" else "in"
                reqs.append((m.group("key"), op, frozenset([m.group("val")])))
            elif m.group("setop"):
                vals = frozenset(v.strip() for v in m.group("vals").split(",") if v.strip())
                reqs.append((m.group("key"), m.group("setop"), vals))
            else:
                reqs.append((m.group("key"), "exists", frozenset()))

    def matches(labels: Mapping[str, str]) -> bool:
        for key, op, vals in reqs:
            if op == "in":
                if labels.get(key) not in vals:
                    return False
            elif op == "notin":
                if key in labels and labels[key] in vals:
                    return False
            elif op == "exists":
                if key not in labels:
                    return False
            elif key in labels:
                return False
        return True

    return matches
