"""The Kubernetes CEL semver library (``staging/src/k8s.io/apiserver/pkg/cel/library/semverlib.go``):

``semver(string)``, ``semver(string, bool normalize)``, ``isSemver(string)``,
``isSemver(string, bool)``, and on a version ``major()``, ``minor()``, ``patch()``,
``isLessThan(semver)``, ``isGreaterThan(semver)``, ``compareTo(semver)``. Parsing and precedence
are the ``semver`` package's (semantic versioning 2.0.0, build metadata ignored in comparisons, as
upstream's ``blang/semver``); ``normalize`` is upstream's ``normalizeAndParse`` (strips a ``v``
prefix and leading zeros, fills a missing minor/patch with 0).

Deviation: a malformed version's runtime error is the ``semver`` package's text (``1.2 is not
valid SemVer string``) where upstream prints ``blang/semver``'s.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import semver
from cel_expr_python import cel

from kubesched.api.dra.cel.types import SEMVER_TYPE, SemverMessage

V = cel.Type(SEMVER_TYPE)


@lru_cache(maxsize=4096)
def parse(text: str) -> semver.Version:
    """Parse a strict semantic version; raises ValueError."""
    return semver.Version.parse(text)


def normalize(text: str) -> str:
    """Upstream's ``normalizeAndParse`` rewriting (before the strict parse)."""
    s = text.removeprefix("v")
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit():
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def to_message(v: semver.Version) -> Any:
    """``v`` as a ``kubernetes.Semver`` CEL value (canonical text without build metadata)."""
    return SemverMessage(canonical=str(v.replace(build=None)))


def _version(m: Any) -> semver.Version:
    return parse(m.canonical)


def _semver(text: str, norm: bool = False) -> Any:
    return to_message(parse(normalize(text) if norm else text))


def _is_semver(text: str, norm: bool = False) -> bool:
    try:
        parse(normalize(text) if norm else text)
    except ValueError:
        return False
    return True


def _cmp(a: Any, b: Any) -> int:
    return int(_version(a).compare(_version(b)))


def overloads() -> dict[str, list[cel.Overload]]:
    """The library's functions: name -> overloads with their implementations (upstream overload ids)."""
    STR, BOOL, INT = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT
    ov = cel.Overload
    return {
        "semver": [
            ov("string_to_semver", V, [STR], impl=_semver),
            ov("string_bool_to_semver", V, [STR, BOOL], impl=_semver),
        ],
        "isSemver": [
            ov("is_semver_string", BOOL, [STR], impl=_is_semver),
            ov("is_semver_string_bool", BOOL, [STR, BOOL], impl=_is_semver),
        ],
        "major": [ov("semver_major", INT, [V], is_member=True, impl=lambda m: _version(m).major)],
        "minor": [ov("semver_minor", INT, [V], is_member=True, impl=lambda m: _version(m).minor)],
        "patch": [ov("semver_patch", INT, [V], is_member=True, impl=lambda m: _version(m).patch)],
        "isLessThan": [
            ov("semver_is_less_than", BOOL, [V, V], is_member=True, impl=lambda a, b: _cmp(a, b) < 0)
        ],
        "isGreaterThan": [
            ov("semver_is_greater_than", BOOL, [V, V], is_member=True, impl=lambda a, b: _cmp(a, b) > 0)
        ],
        "compareTo": [ov("semver_compare_to", INT, [V, V], is_member=True, impl=_cmp)],
    }


#: the comparison functions shared by name with the other library (see the compiler's ``_functions``)
IMPLS = {
    "isLessThan": lambda a, b: _cmp(a, b) < 0,
    "isGreaterThan": lambda a, b: _cmp(a, b) > 0,
    "compareTo": _cmp,
}
OVERLOAD_IDS = {
    "isLessThan": "semver_is_less_than",
    "isGreaterThan": "semver_is_greater_than",
    "compareTo": "semver_compare_to",
}
RESULT_TYPES = {"isLessThan": cel.Type.BOOL, "isGreaterThan": cel.Type.BOOL, "compareTo": cel.Type.INT}
