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
  it is a ConfigError. Files and ConfigMap are re-read every minute
  (:mod:`kubesched.serving.authn_sources`).
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.errors import ConfigError
from kubesched.serving.authn import Authenticator, RequestAuthenticator
from kubesched.serving.authn_requestheader import RequestHeaderAuthenticator
from kubesched.serving.authn_sources import CertificateSources
from kubesched.serving.authn_token import TokenReviewAuthenticator
from kubesched.serving.authn_x509 import ClientCertAuthenticator
from kubesched.serving.authz import Authorizer
from kubesched.serving.delegation_options import DelegationOptions
from kubesched.serving.review_client import ReviewClient
from kubesched.serving.tls import accept_client_certificates

__all__ = ["DelegatedAuth", "DelegationOptions", "build_request_auth", "check_header_names"]

log = logging.getLogger(__name__)


@dataclass
class DelegatedAuth:
    """What :func:`build_request_auth` built: the chain, the authorizer, the certificate
    settings in force (:attr:`sources`) and the API clients to close at shutdown."""

    authenticator: Authenticator
    authorizer: Authorizer
    sources: CertificateSources
    clients: list[ReviewClient] = field(default_factory=list)

    @property
    def client_ca_pem(self) -> bytes:
        """The CAs the TLS layer must accept client certificates of (PEM; empty: none)."""
        return self.sources.pem

    def follow(self, tls: ssl.SSLContext | None, stop: threading.Event) -> None:
        """Keep the certificate settings current (:meth:`CertificateSources.follow`), adding new
        CAs to ``tls`` (None: no TLS port, nothing to follow)."""
        if tls is None or not self.sources.followed:
            return
        self.sources.follow(lambda pem: accept_client_certificates(tls, pem), stop)


def check_header_names(flag: str, values: Sequence[str]) -> tuple[str, ...]:
    """The entries of a ``--requestheader-*`` list flag; raises ConfigError ``empty value in
    "requestheader-username-headers"`` for a blank one (``checkForWhiteSpaceOnly``)."""
    out = []
    for v in values:
        if not v.strip():
            raise ConfigError(f"--{flag}", f'empty value in "{flag}"')
        out.append(v.strip())
    return tuple(out)


def build_request_auth(
    opts: DelegationOptions, scheduler_kubeconfig: str | None, *, client_certificates: bool = True
) -> DelegatedAuth:
    """The endpoints' authentication and authorization. ``client_certificates``: whether a TLS
    port serves (without one no certificate can be presented: the CA files are still checked,
    the cluster is not asked). Raises ConfigError naming the flag when a kubeconfig or CA file
    cannot be loaded (or the in-cluster lookup fails and is not tolerated)."""
    authn_path = opts.authentication_kubeconfig or scheduler_kubeconfig
    authz_path = opts.authorization_kubeconfig or scheduler_kubeconfig
    authn_client = ReviewClient(authn_path, "--authentication-kubeconfig")
    authz_client = (
        authn_client if authz_path == authn_path else ReviewClient(authz_path, "--authorization-kubeconfig")
    )
    clients = [authn_client] if authz_client is authn_client else [authn_client, authz_client]
    sources = CertificateSources(opts, authn_client.get if client_certificates else None)
    sources.load()
    chain: list[RequestAuthenticator] = [
        RequestHeaderAuthenticator(sources.request_header),
        ClientCertAuthenticator(sources.client_ca),
        TokenReviewAuthenticator(authn_client, opts.token_cache_ttl),
    ]
    return DelegatedAuth(
        Authenticator(chain),
        Authorizer(authz_client, opts.always_allow_paths, allow_ttl=opts.allow_ttl, deny_ttl=opts.deny_ttl),
        sources,
        clients,
    )
