"""TokenReview and SubjectAccessReview for ``kubesched serve``, so that a scheduler's secure port
can delegate its authentication and authorization to the embedded cluster as it does to a
kube-apiserver. Small on purpose, in kube-apiserver's own file formats:

* ``--token-auth-file`` (kube-apiserver's static token file,
  ``k8s.io/apiserver/pkg/authentication/token/tokenfile``): CSV, one user per line,
  ``token,user,uid[,"group1,group2"]``; blank lines are skipped. ``POST
  /apis/authentication.k8s.io/v1/tokenreviews`` answers ``status.authenticated: true`` with the
  user (its groups plus ``system:authenticated``) for a listed token, else ``authenticated: false``.
* ``--authorization-policy-file`` (kube-apiserver's ABAC policy file,
  ``pkg/auth/authorizer/abac``): one JSON object per line (``#`` comments and blank lines
  skipped) of ``{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
  "spec": {...}}`` with ``user``/``group`` (``*`` for any), ``readonly`` (only get/list/watch),
  and either ``nonResourcePath`` (``*``, an exact path, or a prefix ending in ``*``) or
  ``namespace``/``resource``/``apiGroup`` (``*`` for any). ``POST
  /apis/authorization.k8s.io/v1/subjectaccessreviews`` answers ``status.allowed: true`` when a
  line matches (or the user is in ``system:masters``), else ``allowed: false`` with reason
  ``No policy matched.``.

Example: let the user of token ``scrape-me`` read ``/metrics`` and nothing else::

    tokens.csv:  scrape-me,prometheus,uid-1,"monitoring"
    policy.jsonl: {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
                   "spec": {"user": "prometheus", "nonResourcePath": "/metrics", "readonly": true}}

Without the files every token is unauthenticated and every review denied. ``serve`` itself does
not authenticate its own API requests (see :mod:`kubesched.embedded.apiserver.server`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import ConfigError

__all__ = ["AbacPolicy", "Reviews", "StaticToken", "load_policy_file", "load_token_file"]

Obj = dict[str, Any]

ABAC_API_VERSION = "abac.authorization.kubernetes.io/v1beta1"
AUTHENTICATED_GROUP = "system:authenticated"
PRIVILEGED_GROUP = "system:masters"
READ_ONLY_VERBS = frozenset({"get", "list", "watch"})
NO_POLICY_MATCHED = "No policy matched."


@dataclass(frozen=True)
class StaticToken:
    """One line of the token file."""

    user: str
    uid: str
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class AbacPolicy:
    """One ABAC policy line's ``spec`` (``pkg/apis/abac/v1beta1`` ``PolicySpec``)."""

    user: str = ""
    group: str = ""
    readonly: bool = False
    api_group: str = ""
    resource: str = ""
    namespace: str = ""
    non_resource_path: str = ""

    def _subject(self, user: str, groups: Sequence[str]) -> bool:
        matched = False
        if self.user:
            if self.user != "*" and self.user != user:
                return False
            matched = True
        if self.group:
            if self.group != "*" and self.group not in groups:
                return False
            matched = True
        return matched

    def matches(
        self, user: str, groups: Sequence[str], attrs: Mapping[str, Any], resource_request: bool
    ) -> bool:
        """``abac.matches``: subject, verb (``readonly``), then resource or non-resource attributes."""
        if not self._subject(user, groups):
            return False
        verb = str(attrs.get("verb") or "")
        if self.readonly and verb not in READ_ONLY_VERBS:
            return False
        if resource_request:
            return (
                self.namespace in ("*", str(attrs.get("namespace") or ""))
                and self.resource in ("*", str(attrs.get("resource") or ""))
                and self.api_group in ("*", str(attrs.get("group") or ""))
            )
        path = str(attrs.get("path") or "")
        p = self.non_resource_path
        return p == "*" or p == path or (p.endswith("*") and path.startswith(p.rstrip("*")))


def load_token_file(path: str) -> dict[str, StaticToken]:
    """Parse a static token file. Raises ConfigError naming ``--token-auth-file``, the file and
    the line (``tokens.csv line 2: at least 3 columns (token, user name, user uid), found 2``)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigError("--token-auth-file", f"cannot read {path}: {e}") from None
    tokens: dict[str, StaticToken] = {}
    for i, row in enumerate(rows, 1):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) < 3:
            raise ConfigError(
                "--token-auth-file",
                f"{path} line {i}: at least 3 columns (token, user name, user uid), found {len(row)}",
            )
        token, user, uid = row[0].strip(), row[1].strip(), row[2].strip()
        if not token or not user:
            raise ConfigError("--token-auth-file", f"{path} line {i}: empty token or user name")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        tokens[token] = StaticToken(user, uid, groups)
    return tokens


def load_policy_file(path: str) -> list[AbacPolicy]:
    """Parse an ABAC policy file. Raises ConfigError naming ``--authorization-policy-file``, the
    file and the line for invalid JSON, another apiVersion/kind, or unknown spec fields."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("--authorization-policy-file", f"cannot read {path}: {e}") from None
    known = {
        "user": "user",
        "group": "group",
        "readonly": "readonly",
        "apiGroup": "api_group",
        "resource": "resource",
        "namespace": "namespace",
        "nonResourcePath": "non_resource_path",
    }
    out: list[AbacPolicy] = []
    for i, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue

        def bad(msg: str, line_no: int = i) -> ConfigError:
            return ConfigError("--authorization-policy-file", f"{path} line {line_no}: {msg}")

        try:
            doc = json.loads(text)
        except ValueError as e:
            raise bad(f"invalid JSON: {e}") from None
        if (
            not isinstance(doc, dict)
            or doc.get("apiVersion") != ABAC_API_VERSION
            or doc.get("kind") != "Policy"
        ):
            raise bad(f'expected {{"apiVersion": "{ABAC_API_VERSION}", "kind": "Policy", "spec": {{...}}}}')
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            raise bad("spec: must be an object")
        args: dict[str, Any] = {}
        for k, v in spec.items():
            if k not in known:
                raise bad(f"spec.{k}: unknown field (known: {', '.join(known)})")
            if k == "readonly":
                if not isinstance(v, bool):
                    raise bad("spec.readonly: must be true or false")
            elif not isinstance(v, str):
                raise bad(f"spec.{k}: must be a string")
            args[known[k]] = v
        out.append(AbacPolicy(**args))
    return out


@dataclass
class Reviews:
    """The tokens and policies ``serve`` answers reviews with (empty: nobody authenticated or allowed)."""

    tokens: dict[str, StaticToken] = field(default_factory=dict)
    policies: list[AbacPolicy] = field(default_factory=list)

    def token_review(self, body: Any) -> Obj:
        """The answered TokenReview for a request ``body``. Raises ValueError for a body that is no
        TokenReview with a ``spec.token`` string."""
        if not isinstance(body, dict) or body.get("kind") != "TokenReview":
            raise ValueError("the body must be a TokenReview")
        spec = body.get("spec")
        token = spec.get("token") if isinstance(spec, dict) else None
        if not isinstance(token, str):
            raise ValueError("spec.token: Required value")
        found = self.tokens.get(token)
        status: Obj
        if found is None:
            status = {"authenticated": False, "user": {}}
        else:
            groups = list(found.groups) + (
                [AUTHENTICATED_GROUP] if AUTHENTICATED_GROUP not in found.groups else []
            )
            status = {
                "authenticated": True,
                "user": {"username": found.user, "uid": found.uid, "groups": groups},
            }
        audiences = spec.get("audiences") if isinstance(spec, dict) else None
        if isinstance(audiences, list) and audiences and found is not None:
            status["audiences"] = list(audiences)
        return {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "metadata": {"creationTimestamp": None},
            "spec": {},
            "status": status,
        }

    def subject_access_review(self, body: Any) -> Obj:
        """The answered SubjectAccessReview for a request ``body``. Raises ValueError for a body
        that is no SubjectAccessReview with a user or group and exactly one of
        ``resourceAttributes``/``nonResourceAttributes``."""
        if not isinstance(body, dict) or body.get("kind") != "SubjectAccessReview":
            raise ValueError("the body must be a SubjectAccessReview")
        spec = body.get("spec")
        if not isinstance(spec, dict):
            raise ValueError("spec: Required value")
        user = spec.get("user") or ""
        groups = spec.get("groups") or []
        if not isinstance(user, str) or not isinstance(groups, list):
            raise ValueError("spec.user must be a string and spec.groups a list")
        if not user and not groups:
            raise ValueError('spec.user: Invalid value: "": at least one of user or group must be specified')
        res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if (res is None) == (non is None):
            raise ValueError(
                "spec: exactly one of nonResourceAttributes or resourceAttributes must be specified"
            )
        attrs = res if res is not None else non
        if not isinstance(attrs, dict):
            raise ValueError("spec: resourceAttributes/nonResourceAttributes must be an object")
        group_names = [str(g) for g in groups]
        allowed = PRIVILEGED_GROUP in group_names or any(
            p.matches(user, group_names, attrs, res is not None) for p in self.policies
        )
        status: Obj = {"allowed": allowed}
        if not allowed:
            status["reason"] = NO_POLICY_MATCHED
        return {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": None},
            "spec": spec,
            "status": status,
        }
