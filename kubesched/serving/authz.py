"""Delegated authorization of the secure port's requests
(``k8s.io/apiserver/pkg/server/options/authorization.go`` ``toAuthorizer``, as kube-scheduler
configures it), in upstream's order, first opinion wins:

1. ``always-allow-groups``: a user in ``system:masters`` may do anything
   (``authorizerfactory.NewPrivilegedGroups``).
2. ``always-allow-paths``: ``--authorization-always-allow-paths`` (default ``/healthz``,
   ``/readyz``, ``/livez``); an entry ending in ``*`` matches by prefix, a leading ``/`` is optional
   (``authorization/path.NewAuthorizer``).
3. ``webhook``: a ``SubjectAccessReview`` (``authorization.k8s.io/v1``) with the user and
   ``nonResourceAttributes {path, verb}`` (every route of the port is a non-resource URL: ``/metrics``,
   ``/debug/pprof/*``, ``/configz``...), verb from the HTTP method (GET/HEAD ``get``, POST
   ``create``, PUT ``update``, PATCH ``patch``, DELETE ``delete``). ``status.allowed`` allows,
   anything else denies. Answers are cached per review spec: allowed for ``allow_ttl``, denied for
   ``deny_ttl`` seconds (``--authorization-webhook-cache-authorized-ttl`` /
   ``--authorization-webhook-cache-unauthorized-ttl``, both 10 s as upstream's
   ``DelegatingAuthorizationOptions``); failed reviews are not cached.

A denied request is answered 403 with upstream's message (``forbidden: User "system:anonymous"
cannot get path "/metrics"``, plus ``: <reason>`` when the review gave one); a review that failed
500 (``filters.WithAuthorization``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kubesched.errors import ConfigError
from kubesched.serving.authn import UserInfo
from kubesched.serving.review_client import ReviewError, ReviewPoster
from kubesched.serving.ttl_cache import TTLCache

__all__ = [
    "DEFAULT_ALWAYS_ALLOW_PATHS",
    "DEFAULT_ALLOW_TTL",
    "DEFAULT_DENY_TTL",
    "PRIVILEGED_GROUPS",
    "SUBJECT_ACCESS_REVIEW_PATH",
    "AuthorizationError",
    "Authorizer",
    "Decision",
    "PathMatcher",
    "forbidden_message",
    "verb_of",
]

log = logging.getLogger(__name__)

SUBJECT_ACCESS_REVIEW_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
PRIVILEGED_GROUPS = ("system:masters",)
DEFAULT_ALLOW_TTL = 10.0
DEFAULT_DENY_TTL = 10.0

_VERBS = {
    "GET": "get",
    "HEAD": "get",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


def verb_of(method: str) -> str:
    """The request verb of an HTTP method (``RequestInfoFactory`` for non-resource requests)."""
    return _VERBS.get(method.upper(), method.lower())


class AuthorizationError(Exception):
    """The authorization decision could not be made (the review failed): answered 500."""


@dataclass(frozen=True)
class Decision:
    """``allowed`` and upstream's ``reason`` (may be empty)."""

    allowed: bool
    reason: str = ""


class PathMatcher:
    """``--authorization-always-allow-paths`` entries: exact paths, or prefixes ending in ``*``.
    Raises ConfigError for an entry with ``*`` anywhere else (``path.NewAuthorizer``)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.exact: set[str] = set()
        self.prefixes: list[str] = []
        for p in paths:
            p = p.strip()
            if not p:
                continue
            p = "/" + p.lstrip("/")
            if "*" in p[:-1]:
                raise ConfigError("--authorization-always-allow-paths", f'only trailing "*" allowed in "{p}"')
            if p.endswith("*"):
                self.prefixes.append(p[:-1])
            else:
                self.exact.add(p)

    def matches(self, path: str) -> bool:
        return path in self.exact or any(path.startswith(p) for p in self.prefixes)


class Authorizer:
    """``authorize(user, method, path)`` -> :class:`Decision`; raises AuthorizationError.

    ``review``: posts SubjectAccessReviews (None: no API access, so only the privileged groups
    and the always-allowed paths pass, as upstream without an authorization kubeconfig).
    ``allow_ttl`` / ``deny_ttl``: seconds an allowed / denied answer is reused (0: not cached);
    ``now``: the cache's clock (monotonic seconds)."""

    def __init__(
        self,
        review: ReviewPoster | None,
        always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
        *,
        allow_ttl: float = DEFAULT_ALLOW_TTL,
        deny_ttl: float = DEFAULT_DENY_TTL,
        privileged_groups: Sequence[str] = PRIVILEGED_GROUPS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.review = review
        self.paths = PathMatcher(always_allow_paths)
        self.allow_ttl = allow_ttl
        self.deny_ttl = deny_ttl
        self.privileged_groups = frozenset(privileged_groups)
        self.cache: TTLCache[str, Decision] = TTLCache(now=now)

    def authorize(self, user: UserInfo, method: str, path: str) -> Decision:
        if self.privileged_groups.intersection(user.groups):
            return Decision(True)
        if self.paths.matches(path):
            return Decision(True)
        if self.review is None:
            return Decision(False)
        spec: dict[str, object] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb_of(method)},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        key = json.dumps(spec, sort_keys=True)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        try:
            answer = self.review(SUBJECT_ACCESS_REVIEW_PATH, body)
        except ReviewError as e:
            log.warning("SubjectAccessReview failed: %s", e)
            raise AuthorizationError(str(e)) from None
        status = answer.get("status")
        status = status if isinstance(status, dict) else {}
        decision = Decision(status.get("allowed") is True, str(status.get("reason") or ""))
        self.cache.set(key, decision, self.allow_ttl if decision.allowed else self.deny_ttl)
        return decision


def forbidden_message(user: UserInfo, method: str, path: str, reason: str) -> str:
    """Upstream's 403 message for a non-resource request (``responsewriters.ForbiddenStatusError``)."""
    msg = f'forbidden: User "{user.name}" cannot {verb_of(method)} path "{path}"'
    return f"{msg}: {reason}" if reason else msg
