"""Delegated authentication of the secure port's requests: the chain kube-scheduler builds
(``k8s.io/apiserver/pkg/authentication/authenticatorfactory/delegating.go``
``DelegatingAuthenticatorConfig.New``), in upstream's order:

1. front-proxy request headers (:mod:`kubesched.serving.authn_requestheader`), trusted only from a
   client certificate of ``--requestheader-client-ca-file`` whose CN is allowed;
2. client certificates (:mod:`kubesched.serving.authn_x509`): CN is the user, O the groups;
3. bearer tokens checked with a TokenReview (:mod:`kubesched.serving.authn_token`);
4. anonymous: ``system:anonymous`` in ``system:unauthenticated`` (``request/anonymous``) when no
   authenticator had an opinion.

The first authenticator that authenticates the request wins; one that fails (a certificate that
does not verify, a CN not allowed, a token the API server rejects, a review that failed) does not
stop the others (``union.New``), but when none authenticates and any failed the request is
answered 401 and never falls back to anonymous (``union.NewFailOnError``). An authenticated user
gets the group ``system:authenticated`` added (``group.AuthenticatedGroupAdder``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "ANONYMOUS",
    "AUTHENTICATED_GROUP",
    "AuthRequest",
    "AuthenticationFailed",
    "Authenticator",
    "RequestAuthenticator",
    "Unauthorized",
    "UserInfo",
]

AUTHENTICATED_GROUP = "system:authenticated"


@dataclass(frozen=True)
class UserInfo:
    """Who made a request (``user.Info``): name, uid, groups, extra."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


@dataclass(frozen=True)
class AuthRequest:
    """What authentication reads of a request: its ``headers`` as ``(name, value)`` pairs in
    arrival order (a name may repeat) and ``peer_certificate``, the DER bytes of the TLS client
    certificate (None without TLS or without a certificate)."""

    headers: tuple[tuple[str, str], ...] = ()
    peer_certificate: bytes | None = None

    @classmethod
    def of(
        cls,
        headers: Iterable[tuple[str, str]] | Mapping[str, str] = (),
        peer_certificate: bytes | None = None,
    ) -> AuthRequest:
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        return cls(tuple((str(k), str(v)) for k, v in pairs), peer_certificate)

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), None when absent
        (``http.Header.Get``)."""
        low = name.lower()
        for k, v in self.headers:
            if k.lower() == low:
                return v
        return None

    def header_values(self, name: str) -> list[str]:
        """Every value of header ``name`` (case-insensitive), in order."""
        low = name.lower()
        return [v for k, v in self.headers if k.lower() == low]


class AuthenticationFailed(Exception):
    """An authenticator looked at the request and rejected its credentials (the message is for
    the log only)."""


class Unauthorized(Exception):
    """The request is answered 401; the message (every authenticator's failure) is for the log only."""


class RequestAuthenticator(Protocol):
    """One authenticator of the chain (``authenticator.Request``): the user, None for no opinion
    (the request has no credentials of this kind); raises AuthenticationFailed."""

    def authenticate(self, request: AuthRequest) -> UserInfo | None: ...


class Authenticator:
    """``authenticate(request)`` -> :class:`UserInfo`; raises :class:`Unauthorized`.

    ``authenticators``: the chain in order; ``anonymous``: whether a request without credentials
    is ``system:anonymous`` (True, as kube-scheduler) or 401."""

    def __init__(self, authenticators: Sequence[RequestAuthenticator], *, anonymous: bool = True) -> None:
        self.authenticators = tuple(authenticators)
        self.anonymous = anonymous

    def authenticate(self, request: AuthRequest) -> UserInfo:
        errors: list[str] = []
        for a in self.authenticators:
            try:
                user = a.authenticate(request)
            except AuthenticationFailed as e:
                errors.append(str(e))
                continue
            if user is not None:
                if AUTHENTICATED_GROUP in user.groups:
                    return user
                return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED_GROUP), user.extra)
        if errors:
            raise Unauthorized("; ".join(errors))
        if not self.anonymous:
            raise Unauthorized("no credentials")
        return ANONYMOUS
