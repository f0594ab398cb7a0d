"""Delegated authentication of the secure port's requests
(``k8s.io/apiserver/pkg/authentication/authenticatorfactory/delegating.go``, as kube-scheduler
configures it).

* ``Authorization: Bearer <token>`` (``request/bearertoken``: the scheme compared
  case-insensitively; an empty token counts as no header): the token is checked with a
  ``TokenReview`` (``authentication.k8s.io/v1``, no audiences) sent to the API server
  (``plugin/pkg/authenticator/token/webhook``). A token the server does not authenticate, or a
  review that fails, makes the request fail with 401 ``Unauthorized`` -- it never falls back to
  anonymous (``union.NewFailOnError``).
* No bearer token: the request is anonymous, user ``system:anonymous`` in group
  ``system:unauthenticated`` (``request/anonymous``); authorization decides what it may see.
* An authenticated user gets the group ``system:authenticated`` added (``AuthenticatedGroupAdder``).

Answers are cached by the token's SHA-256 digest (the token itself is never kept):
authenticated and unauthenticated answers for ``cache_ttl`` seconds (upstream
``--authentication-token-webhook-cache-ttl``, default 10 s, for both, as ``cache.New(tokenAuth,
false, CacheTTL, CacheTTL)``); failed reviews are not cached. Client certificates and
front-proxy request headers are not authenticated.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.serving.review_client import ReviewError, ReviewPoster
from kubesched.serving.ttl_cache import TTLCache

__all__ = ["ANONYMOUS", "AUTHENTICATED_GROUP", "DEFAULT_CACHE_TTL", "TOKEN_REVIEW_PATH", "Authenticator",
           "TokenAnswer", "Unauthorized", "UserInfo", "bearer_token"]

log = logging.getLogger(__name__)

TOKEN_REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews"
DEFAULT_CACHE_TTL = 10.0
AUTHENTICATED_GROUP = "system:authenticated"


@dataclass(frozen=True)
class UserInfo:
    """Who made a request (``user.Info``): name, uid, groups, extra."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


class Unauthorized(Exception):
    """The request's credentials were rejected (answered 401); the message is for the log only."""


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, None without one
    (``bearertoken.AuthenticateRequest``)."""
    if not authorization:
        return None
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1] or None


class Authenticator:
    """``authenticate(authorization_header)`` -> :class:`UserInfo`; raises :class:`Unauthorized`.

    ``review``: posts TokenReviews (None: no API access, so every bearer token is refused and
    only anonymous requests pass, as upstream without an authentication kubeconfig)."""

    def __init__(self, review: ReviewPoster | None, cache_ttl: float = DEFAULT_CACHE_TTL,
                 cache: TTLCache[bytes, TokenAnswer] | None = None) -> None:
        self.review = review
        self.cache_ttl = cache_ttl
        self.cache: TTLCache[bytes, TokenAnswer] = cache if cache is not None else TTLCache()

    def authenticate(self, authorization: str | None) -> UserInfo:
        token = bearer_token(authorization)
        if token is None:
            return ANONYMOUS
        user = self._token_user(token)
        if user is None:
            raise Unauthorized("invalid bearer token")
        groups = user.groups if AUTHENTICATED_GROUP in user.groups else (*user.groups, AUTHENTICATED_GROUP)
        return UserInfo(user.name, user.uid, groups, user.extra)

    def _token_user(self, token: str) -> UserInfo | None:
        key = hashlib.sha256(token.encode()).digest()
        cached = self.cache.get(key)
        if cached is not None:
            return cached.user
        if self.review is None:
            raise Unauthorized("bearer token given but no authentication kubeconfig to check it with")
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            answer = self.review(TOKEN_REVIEW_PATH, body)
        except ReviewError as e:
            log.warning("TokenReview failed: %s", e)
            raise Unauthorized(f"token review failed: {e}") from None
        user = _user_of(answer)
        self.cache.set(key, TokenAnswer(user), self.cache_ttl)
        return user


@dataclass(frozen=True)
class TokenAnswer:
    """A cached TokenReview answer: the user, or None when the token was not authenticated."""

    user: UserInfo | None


def _user_of(answer: Mapping[str, object]) -> UserInfo | None:
    """The user of a TokenReview answer (``status.authenticated``, ``status.user``), None when
    not authenticated or nameless."""
    status = answer.get("status")
    if not isinstance(status, Mapping) or status.get("authenticated") is not True:
        return None
    raw = status.get("user")
    raw = raw if isinstance(raw, Mapping) else {}
    groups = raw.get("groups")
    extra = raw.get("extra")
    name = str(raw.get("username") or "")
    if not name:
        return None
    return UserInfo(
        name, str(raw.get("uid") or ""),
        tuple(str(g) for g in groups) if isinstance(groups, list) else (),
        {str(k): tuple(str(x) for x in v) for k, v in extra.items() if isinstance(v, list)}
        if isinstance(extra, Mapping) else {})
