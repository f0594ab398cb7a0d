"""The client-certificate CA bundle and the front-proxy settings in force, kept current as
upstream's dynamic providers keep them (``k8s.io/apiserver/pkg/server/dynamiccertificates``:
``DynamicFileCAContent`` re-reads its file, ``ConfigMapCAController`` and
``RequestHeaderAuthRequestController`` follow the ConfigMap).

* ``--client-ca-file`` / ``--requestheader-client-ca-file`` (with the ``--requestheader-*`` header
  flags): read from the files.
* Whatever the flags leave out (unless ``--authentication-skip-lookup``): from the
  ``kube-system/extension-apiserver-authentication`` ConfigMap (:mod:`kubesched.serving.authn_lookup`).

:meth:`CertificateSources.load` reads them at start: a bad file is a ConfigError; a failed lookup
is logged and tolerated with ``--authentication-tolerate-lookup-failure`` (default true, as
kube-scheduler), else a ConfigError. :meth:`CertificateSources.refresh` re-reads them (every
:data:`REFRESH_INTERVAL` seconds once :meth:`CertificateSources.follow` runs): a content that
changed replaces the old one for the next request; a read that fails keeps the last good content
(logged), and a ConfigMap that no longer exists removes what it gave.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubesched.errors import ConfigError
from kubesched.serving.authn_lookup import InClusterAuthentication, LookupFailed, lookup_in_cluster
from kubesched.serving.authn_requestheader import RequestHeaderConfig
from kubesched.serving.authn_x509 import CABundle

if TYPE_CHECKING:
    from kubesched.serving.delegation_options import DelegationOptions

__all__ = ["REFRESH_INTERVAL", "CertificateSources"]

log = logging.getLogger(__name__)

#: seconds between two re-reads of the CA files and the ConfigMap (upstream's file content
#: controller checks once a minute)
REFRESH_INTERVAL = 60.0


def _key(ca: CABundle | None, rh: RequestHeaderConfig | None) -> tuple[Any, ...]:
    rh_key = (
        None
        if rh is None
        else (
            rh.ca.pem,
            rh.allowed_names,
            rh.username_headers,
            rh.uid_headers,
            rh.group_headers,
            rh.extra_prefixes,
        )
    )
    return (None if ca is None else ca.pem, rh_key)


class CertificateSources:
    """``client_ca()`` and ``request_header()`` as of the last read (None: none configured).
    ``get(path)``: reads the ConfigMap through the authentication kubeconfig (None: never
    looked up)."""

    def __init__(self, opts: DelegationOptions, get: Callable[[str], dict[str, Any]] | None) -> None:
        self.opts = opts
        lookup_needed = not (opts.client_ca_file and opts.requestheader_client_ca_file)
        self.get = get if lookup_needed and not opts.skip_lookup else None
        self._client_ca: CABundle | None = None
        self._request_header: RequestHeaderConfig | None = None
        self._lock = threading.Lock()

    @property
    def followed(self) -> bool:
        """Whether anything can change: a CA file, or the ConfigMap."""
        return bool(
            self.opts.client_ca_file or self.opts.requestheader_client_ca_file or self.get is not None
        )

    def client_ca(self) -> CABundle | None:
        return self._client_ca

    def request_header(self) -> RequestHeaderConfig | None:
        return self._request_header

    @property
    def pem(self) -> bytes:
        """Every CA the TLS layer must accept client certificates of (PEM; empty: none)."""
        cas = [b for b in (self._request_header.ca if self._request_header else None, self._client_ca) if b]
        return b"\n".join(b.pem.strip() for b in cas)

    def _files(self) -> tuple[CABundle | None, RequestHeaderConfig | None]:
        o = self.opts
        ca = CABundle.from_file(o.client_ca_file, "--client-ca-file") if o.client_ca_file else None
        rh = None
        if o.requestheader_client_ca_file:
            rh = RequestHeaderConfig(
                CABundle.from_file(o.requestheader_client_ca_file, "--requestheader-client-ca-file"),
                o.requestheader_allowed_names,
                o.requestheader_username_headers,
                o.requestheader_uid_headers,
                o.requestheader_group_headers,
                o.requestheader_extra_headers_prefix,
            )
        return ca, rh

    def _read(self) -> tuple[CABundle | None, RequestHeaderConfig | None]:
        """Raises ConfigError (a file) or LookupFailed (the ConfigMap)."""
        ca, rh = self._files()
        found = lookup_in_cluster(self.get) if self.get is not None else InClusterAuthentication()
        return ca if ca is not None else found.client_ca, rh if rh is not None else found.request_header

    def load(self) -> None:
        """The first read (see the module docstring for its errors)."""
        try:
            ca, rh = self._read()
        except LookupFailed as e:
            if not self.opts.tolerate_lookup_failure:
                raise ConfigError(
                    "--authentication-tolerate-lookup-failure",
                    f"unable to load configmap based request-header-client-ca-file: {e}",
                ) from None
            log.warning("Error looking up in-cluster authentication configuration: %s", e)
            log.warning(
                "Continuing without authentication configuration. This may treat all requests as anonymous."
            )
            log.warning(
                "To require authentication configuration lookup to succeed, "
                "set --authentication-tolerate-lookup-failure=false"
            )
            ca, rh = self._files()
        with self._lock:
            self._client_ca, self._request_header = ca, rh
        for what, b in (("request-header", rh.ca if rh else None), ("client", ca)):
            if b is not None:
                log.info("authenticating %s certificates with the CA of %s", what, b.source)

    def refresh(self) -> bool:
        """Re-read; True when the content in force changed. Never raises (a failed read is logged
        and the last good content kept)."""
        try:
            ca, rh = self._read()
        except (ConfigError, LookupFailed) as e:
            log.warning("keeping the client-certificate settings in force: %s", e)
            return False
        with self._lock:
            if _key(ca, rh) == _key(self._client_ca, self._request_header):
                return False
            self._client_ca, self._request_header = ca, rh
        log.info(
            "client-certificate settings changed (client CA %s, request-header CA %s)",
            ca.source if ca else "none",
            rh.ca.source if rh else "none",
        )
        return True

    def follow(
        self, on_change: Callable[[bytes], None], stop: threading.Event, interval: float = REFRESH_INTERVAL
    ) -> threading.Thread:
        """Refresh every ``interval`` seconds on a daemon thread until ``stop``; ``on_change(pem)``
        after each change (the TLS layer's CA list)."""

        def loop() -> None:
            while not stop.wait(interval):
                if self.refresh():
                    on_change(self.pem)

        t = threading.Thread(target=loop, name="client-ca-refresh", daemon=True)
        t.start()
        return t
