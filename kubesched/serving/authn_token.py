"""Bearer tokens of the secure port's requests, checked with a TokenReview
(``k8s.io/apiserver/pkg/authentication/request/bearertoken`` in front of
``plugin/pkg/authenticator/token/webhook``, behind ``token/cache``).

* ``Authorization: Bearer <token>`` (the scheme compared case-insensitively; an empty token counts
  as no header): the token is sent in a ``TokenReview`` (``authentication.k8s.io/v1``, no
  audiences) to the API server of ``--authentication-kubeconfig``. A token it does not
  authenticate, or a review that fails, is a failure (401 unless an earlier authenticator of the
  chain authenticated the request).
* Answers are cached by the token's SHA-256 digest (the token itself is never kept):
  authenticated and unauthenticated answers for ``cache_ttl`` seconds
  (``--authentication-token-webhook-cache-ttl``, default 10 s, for both, as upstream's
  ``cache.New(tokenAuth, false, CacheTTL, CacheTTL)``; 0 disables the cache); failed reviews are
  not cached.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.serving.authn import AuthenticationFailed, AuthRequest, UserInfo
from kubesched.serving.review_client import ReviewError, ReviewPoster
from kubesched.serving.ttl_cache import TTLCache

__all__ = [
    "DEFAULT_CACHE_TTL",
    "TOKEN_REVIEW_PATH",
    "TokenAnswer",
    "TokenReviewAuthenticator",
    "bearer_token",
]

log = logging.getLogger(__name__)

TOKEN_REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews"
#: seconds (``--authentication-token-webhook-cache-ttl``)
DEFAULT_CACHE_TTL = 10.0


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, None without one
    (``bearertoken.AuthenticateRequest``)."""
    if not authorization:
        return None
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1] or None


@dataclass(frozen=True)
class TokenAnswer:
    """A cached TokenReview answer: the user, or None when the token was not authenticated."""

    user: UserInfo | None


class TokenReviewAuthenticator:
    """The bearer-token authenticator of the chain (:class:`kubesched.serving.authn.RequestAuthenticator`).

    ``review``: posts TokenReviews (None: no API access, so every bearer token fails).
    ``cache``: the answer cache (its clock decides expiry; tests pass one with a fake clock)."""

    def __init__(
        self,
        review: ReviewPoster | None,
        cache_ttl: float = DEFAULT_CACHE_TTL,
        cache: TTLCache[bytes, TokenAnswer] | None = None,
    ) -> None:
        self.review = review
        self.cache_ttl = cache_ttl
        self.cache: TTLCache[bytes, TokenAnswer] = cache if cache is not None else TTLCache()

    def authenticate(self, request: AuthRequest) -> UserInfo | None:
        token = bearer_token(request.header("Authorization"))
        if token is None:
            return None
        user = self._token_user(token)
        if user is None:
            raise AuthenticationFailed("invalid bearer token")
        return user

    def _token_user(self, token: str) -> UserInfo | None:
        key = hashlib.sha256(token.encode()).digest()
        cached = self.cache.get(key)
        if cached is not None:
            return cached.user
        if self.review is None:
            raise AuthenticationFailed("bearer token given but no authentication kubeconfig to check it with")
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            answer = self.review(TOKEN_REVIEW_PATH, body)
        except ReviewError as e:
            log.warning("TokenReview failed: %s", e)
            raise AuthenticationFailed(f"token review failed: {e}") from None
        user = _user_of(answer)
        self.cache.set(key, TokenAnswer(user), self.cache_ttl)
        return user


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
        name,
        str(raw.get("uid") or ""),
        tuple(str(g) for g in groups) if isinstance(groups, list) else (),
        {str(k): tuple(str(x) for x in v) for k, v in extra.items() if isinstance(v, list)}
        if isinstance(extra, Mapping)
        else {},
    )
