"""Front-proxy request headers (``--requestheader-*``;
``k8s.io/apiserver/pkg/authentication/request/headerrequest/requestheader.go`` behind
``x509.NewDynamicCAVerifier``).

A request is authenticated by its headers only when its TLS client certificate verifies against
the request-header CA bundle and, when ``allowed_names`` is not empty, the certificate's
CommonName is one of them. Then:

* user: the first non-empty value among ``username_headers`` (in order; default
  ``X-Remote-User``); none: no opinion (the next authenticator of the chain decides);
* uid: the first non-empty value among ``uid_headers`` (default none);
* groups: every non-empty value of every ``group_headers`` header (default ``X-Remote-Group``);
* extra: every header starting with one of ``extra_prefixes`` (default ``X-Remote-Extra-``),
  keyed by the rest of its name lowercased and %-unescaped (kept as is when malformed).

A certificate that does not verify, or whose CN is not allowed, is a failure
(``x509: subject with cn=... is not in the allowed list``); no client certificate: no opinion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from kubesched.serving.authn import AuthenticationFailed, AuthRequest, UserInfo
from kubesched.serving.authn_x509 import CABundle, common_name, verify_client_certificate

__all__ = [
    "DEFAULT_EXTRA_PREFIXES",
    "DEFAULT_GROUP_HEADERS",
    "DEFAULT_USERNAME_HEADERS",
    "RequestHeaderAuthenticator",
    "RequestHeaderConfig",
]

DEFAULT_USERNAME_HEADERS = ("x-remote-user",)
DEFAULT_GROUP_HEADERS = ("x-remote-group",)
DEFAULT_EXTRA_PREFIXES = ("x-remote-extra-",)

_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class RequestHeaderConfig:
    """What the request-header authenticator trusts: the proxies' CA bundle, their allowed CNs
    (empty: any), and the header names."""

    ca: CABundle
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    extra_prefixes: tuple[str, ...] = DEFAULT_EXTRA_PREFIXES


def _first(request: AuthRequest, names: Sequence[str]) -> str:
    for n in names:
        v = request.header(n)
        if v:
            return v
    return ""


def _unescape(key: str) -> str:
    """``url.PathUnescape``, keeping the key unchanged when an escape is malformed."""
    if _ESCAPE.search(key):
        return key
    return unquote(key)


def _extra(request: AuthRequest, prefixes: Sequence[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for prefix in prefixes:
        low = prefix.lower()
        for name, value in request.headers:
            if len(name) >= len(prefix) and name[: len(prefix)].lower() == low:
                out.setdefault(_unescape(name[len(prefix) :].lower()), []).append(value)
    return {k: tuple(v) for k, v in out.items()}


class RequestHeaderAuthenticator:
    """The front-proxy authenticator of the chain (:class:`kubesched.serving.authn.RequestAuthenticator`).
    ``config()``: the current configuration (None: none, so no opinion on any request)."""

    def __init__(self, config: Callable[[], RequestHeaderConfig | None]) -> None:
        self.config = config

    def authenticate(self, request: AuthRequest) -> UserInfo | None:
        der = request.peer_certificate
        cfg = self.config()
        if der is None or cfg is None:
            return None
        proxy = verify_client_certificate(der, cfg.ca)
        if cfg.allowed_names:
            cn = common_name(proxy)
            if cn not in cfg.allowed_names:
                raise AuthenticationFailed(f"x509: subject with cn={cn} is not in the allowed list")
        name = _first(request, cfg.username_headers)
        if not name:
            return None
        groups = tuple(v for h in cfg.group_headers for v in request.header_values(h) if v)
        return UserInfo(name, _first(request, cfg.uid_headers), groups, _extra(request, cfg.extra_prefixes))
