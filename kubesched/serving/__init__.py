"""The scheduler's own HTTP endpoint (``kubesched run``): health, readiness, metrics, profiling,
behind delegated authentication (TokenReview) and authorization (SubjectAccessReview) as
kube-scheduler's ``--secure-port``.

See :mod:`kubesched.serving.http` for the routes, :mod:`kubesched.serving.profiling` for the CPU
profile format, :mod:`kubesched.serving.tls` for the serving certificate,
:mod:`kubesched.serving.authn` (the authenticator chain: :mod:`~kubesched.serving.authn_requestheader`,
:mod:`~kubesched.serving.authn_x509`, :mod:`~kubesched.serving.authn_token`; their certificate
settings from files and the cluster in :mod:`~kubesched.serving.authn_sources` and
:mod:`~kubesched.serving.authn_lookup`) and :mod:`kubesched.serving.authz` for the checks,
:mod:`kubesched.serving.delegation` (building both from the flags) and
:mod:`kubesched.serving.review_client` (the API client they use).
"""

from kubesched.serving.http import RequestAuth, StatusServer

__all__ = ["RequestAuth", "StatusServer"]
