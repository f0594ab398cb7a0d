"""The flags of the secure port's delegated authentication and authorization, once parsed
(see :mod:`kubesched.serving.delegation` for what they do)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.serving.authn_requestheader import (
    DEFAULT_EXTRA_PREFIXES,
    DEFAULT_GROUP_HEADERS,
    DEFAULT_USERNAME_HEADERS,
)
from kubesched.serving.authn_token import DEFAULT_CACHE_TTL
from kubesched.serving.authz import DEFAULT_ALLOW_TTL, DEFAULT_ALWAYS_ALLOW_PATHS, DEFAULT_DENY_TTL

__all__ = ["DelegationOptions"]


@dataclass(frozen=True)
class DelegationOptions:
    """Flags of the delegated authentication/authorization. Kubeconfigs None: the scheduler's.
    TTLs in seconds."""

    authentication_kubeconfig: str | None = None
    authorization_kubeconfig: str | None = None
    always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS
    token_cache_ttl: float = DEFAULT_CACHE_TTL
    allow_ttl: float = DEFAULT_ALLOW_TTL
    deny_ttl: float = DEFAULT_DENY_TTL
    client_ca_file: str | None = None
    requestheader_client_ca_file: str | None = None
    requestheader_allowed_names: tuple[str, ...] = ()
    requestheader_username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    requestheader_uid_headers: tuple[str, ...] = ()
    requestheader_group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    requestheader_extra_headers_prefix: tuple[str, ...] = DEFAULT_EXTRA_PREFIXES
    skip_lookup: bool = False
    tolerate_lookup_failure: bool = True
