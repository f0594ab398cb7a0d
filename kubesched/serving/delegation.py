"""The secure port's authentication and authorization from ``kubesched run``'s flags
(kube-scheduler's ``--authentication-kubeconfig``, ``--authorization-kubeconfig``,
``--authorization-always-allow-paths``; ``k8s.io/apiserver/pkg/server/options``
``DelegatingAuthenticationOptions`` / ``DelegatingAuthorizationOptions``).

Both kubeconfigs default to the scheduler's own (``--kubeconfig`` or ``clientConnection.kubeconfig``),
else the in-cluster service account -- the identity that must be allowed to create TokenReviews
and SubjectAccessReviews (``system:auth-delegator``). When both name the same file one client
serves both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.serving.authn import DEFAULT_CACHE_TTL, Authenticator
from kubesched.serving.authz import (
    DEFAULT_ALLOW_TTL,
    DEFAULT_ALWAYS_ALLOW_PATHS,
    DEFAULT_DENY_TTL,
    Authorizer,
)
from kubesched.serving.review_client import ReviewClient

__all__ = ["DelegationOptions", "build_request_auth"]


@dataclass(frozen=True)
class DelegationOptions:
    """Flags of the delegated authentication/authorization. Kubeconfigs None: the scheduler's."""

    authentication_kubeconfig: str | None = None
    authorization_kubeconfig: str | None = None
    always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS
    token_cache_ttl: float = DEFAULT_CACHE_TTL
    allow_ttl: float = DEFAULT_ALLOW_TTL
    deny_ttl: float = DEFAULT_DENY_TTL


def build_request_auth(opts: DelegationOptions, scheduler_kubeconfig: str | None) -> tuple[Authenticator, Authorizer,
                                                                                             list[ReviewClient]]:
    """``(authenticator, authorizer, clients to close)``. Raises ConfigError naming the flag
    when a kubeconfig cannot be loaded."""
    authn_path = opts.authentication_kubeconfig or scheduler_kubeconfig
    authz_path = opts.authorization_kubeconfig or scheduler_kubeconfig
    authn_client = ReviewClient(authn_path, "--authentication-kubeconfig")
    authz_client = authn_client if authz_path == authn_path else ReviewClient(authz_path, "--authorization-kubeconfig")
    clients = [authn_client] if authz_client is authn_client else [authn_client, authz_client]
    return (Authenticator(authn_client, opts.token_cache_ttl),
            Authorizer(authz_client, opts.always_allow_paths, allow_ttl=opts.allow_ttl, deny_ttl=opts.deny_ttl),
            clients)
