"""The secure port's authentication and authorization from ``kubesched run``'s flags, as
kube-scheduler's (``k8s.io/apiserver/pkg/server/options`` ``DelegatingAuthenticationOptions.ApplyTo``
and ``DelegatingAuthorizationOptions.ApplyTo``, with kube-scheduler's
``TolerateInClusterLookupFailure = true``):

* ``--authentication-kubeconfig`` / ``--authorization-kubeconfig``: the API server of the
  TokenReviews and SubjectAccessReviews. Both default to the scheduler's own kubeconfig
  (``--kubeconfig`` or ``clientConnection.kubeconfig``), else the in-cluster service account --
  the identity that must be allowed to create the reviews (``system:auth-delegator``). When both
  name the same file one client serves both.
* ``--authentication-token-webhook-cache-ttl``, ``--authorization-webhook-cache-authorized-ttl``,
  ``--authorization-webhook-cache-unauthorized-ttl`` (seconds, default 10 each).
* ``--client-ca-file``: client certificates (:mod:`kubesched.serving.authn_x509`).
* ``--requestheader-client-ca-file``, ``--requestheader-allowed-names``,
  ``--requestheader-username-headers``, ``--requestheader-uid-headers``,
  ``--requestheader-group-headers``, ``--requestheader-extra-headers-prefix``: the front proxy
  (:mod:`kubesched.serving.authn_requestheader`).
* Without ``--client-ca-file`` / ``--requestheader-client-ca-file`` (and unless
  ``--authentication-skip-lookup``), the missing settings come from the cluster's
  ``kube-system/extension-apiserver-authentication`` ConfigMap (:mod:`kubesched.serving.authn_lookup`)
  through the authentication kubeconfig. A failed lookup is logged and the port goes on without
  them when ``--authentication-tolerate-lookup-failure`` (default true, as kube-scheduler), else
  it is a ConfigError.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.errors import ConfigError
from kubesched.serving.authn import Authenticator, RequestAuthenticator
from kubesched.serving.authn_lookup import InClusterAuthentication, LookupFailed, lookup_in_cluster
from kubesched.serving.authn_requestheader import (
    DEFAULT_EXTRA_PREFIXES,
    DEFAULT_GROUP_HEADERS,
    DEFAULT_USERNAME_HEADERS,
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
)
from kubesched.serving.authn_token import DEFAULT_CACHE_TTL, TokenReviewAuthenticator
from kubesched.serving.authn_x509 import CABundle, ClientCertAuthenticator
from kubesched.serving.authz import (
    DEFAULT_ALLOW_TTL,
    DEFAULT_ALWAYS_ALLOW_PATHS,
    DEFAULT_DENY_TTL,
    Authorizer,
)
from kubesched.serving.review_client import ReviewClient

__all__ = ["DelegatedAuth", "DelegationOptions", "build_request_auth", "check_header_names"]

log = logging.getLogger(__name__)


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


@dataclass
class DelegatedAuth:
    """What :func:`build_request_auth` built: the chain, the authorizer, the CA bundles the TLS
    layer must accept client certificates of (:attr:`client_ca_pem`, empty: none), and the API
    clients to close at shutdown."""

    authenticator: Authenticator
    authorizer: Authorizer
    client_cas: list[CABundle] = field(default_factory=list)
    clients: list[ReviewClient] = field(default_factory=list)

    @property
    def client_ca_pem(self) -> bytes:
        return b"\n".join(b.pem.strip() for b in self.client_cas)


def check_header_names(flag: str, values: Sequence[str]) -> tuple[str, ...]:
    """The entries of a ``--requestheader-*`` list flag; raises ConfigError ``empty value in
    "requestheader-username-headers"`` for a blank one (``checkForWhiteSpaceOnly``)."""
    out = []
    for v in values:
        if not v.strip():
            raise ConfigError(f"--{flag}", f'empty value in "{flag}"')
        out.append(v.strip())
    return tuple(out)


def _lookup(opts: DelegationOptions, client: ReviewClient, wanted: bool) -> InClusterAuthentication:
    if not wanted or opts.skip_lookup or (opts.client_ca_file and opts.requestheader_client_ca_file):
        return InClusterAuthentication()
    try:
        return lookup_in_cluster(client.get)
    except LookupFailed as e:
        if not opts.tolerate_lookup_failure:
            raise ConfigError("--authentication-tolerate-lookup-failure",
                              f"unable to load configmap based request-header-client-ca-file: {e}") from None
        log.warning("Error looking up in-cluster authentication configuration: %s", e)
        log.warning("Continuing without authentication configuration. This may treat all requests as anonymous.")
        log.warning("To require authentication configuration lookup to succeed, "
                    "set --authentication-tolerate-lookup-failure=false")
        return InClusterAuthentication()


def build_request_auth(opts: DelegationOptions, scheduler_kubeconfig: str | None, *,
                       client_certificates: bool = True) -> DelegatedAuth:
    """The endpoints' authentication and authorization. ``client_certificates``: whether a TLS
    port serves (without one no certificate can be presented: the CA files are still checked,
    the cluster is not asked). Raises ConfigError naming the flag when a kubeconfig or CA file
    cannot be loaded (or the in-cluster lookup fails and is not tolerated)."""
    authn_path = opts.authentication_kubeconfig or scheduler_kubeconfig
    authz_path = opts.authorization_kubeconfig or scheduler_kubeconfig
    client_ca = CABundle.from_file(opts.client_ca_file, "--client-ca-file") if opts.client_ca_file else None
    proxy: RequestHeaderConfig | None = None
    if opts.requestheader_client_ca_file:
        proxy = RequestHeaderConfig(
            CABundle.from_file(opts.requestheader_client_ca_file, "--requestheader-client-ca-file"),
            opts.requestheader_allowed_names, opts.requestheader_username_headers, opts.requestheader_uid_headers,
            opts.requestheader_group_headers, opts.requestheader_extra_headers_prefix)
    authn_client = ReviewClient(authn_path, "--authentication-kubeconfig")
    authz_client = authn_client if authz_path == authn_path else ReviewClient(authz_path, "--authorization-kubeconfig")
    clients = [authn_client] if authz_client is authn_client else [authn_client, authz_client]
    found = _lookup(opts, authn_client, client_certificates)
    if client_ca is None:
        client_ca = found.client_ca
    if proxy is None:
        proxy = found.request_header
    chain: list[RequestAuthenticator] = []
    cas: list[CABundle] = []
    if proxy is not None:
        proxy_config = proxy
        chain.append(RequestHeaderAuthenticator(lambda: proxy_config))
        cas.append(proxy.ca)
    if client_ca is not None:
        bundle = client_ca
        chain.append(ClientCertAuthenticator(lambda: bundle))
        cas.append(client_ca)
    chain.append(TokenReviewAuthenticator(authn_client, opts.token_cache_ttl))
    for what, b in (("request-header", proxy.ca if proxy else None), ("client", client_ca)):
        if b is not None:
            log.info("authenticating %s certificates with the CA of %s", what, b.source)
    return DelegatedAuth(Authenticator(chain),
                         Authorizer(authz_client, opts.always_allow_paths, allow_ttl=opts.allow_ttl,
                                    deny_ttl=opts.deny_ttl),
                         cas, clients)
