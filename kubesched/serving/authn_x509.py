"""Client certificates of the secure port's requests (``--client-ca-file``;
``k8s.io/apiserver/pkg/authentication/request/x509/x509.go`` ``Authenticator`` with
``CommonNameUserConversion``).

A request whose TLS client certificate was issued by a certificate of the bundle (every
certificate of the file is a trust anchor, as Go's ``VerifyOptions.Roots``), is within its
validity period and, if it names extended key usages, allows ``clientAuth`` authenticates as
user = the subject's CommonName, groups = its Organization values in order. A certificate with
an empty CN has no opinion; one that does not verify is a failure (401 unless another
authenticator of the chain authenticates the request).

The TLS layer asks for client certificates only when a CA bundle is configured, and verifies
them during the handshake against every configured bundle (``--client-ca-file`` and
``--requestheader-client-ca-file``): a certificate that no configured CA issued ends the
handshake (upstream accepts the connection and answers 401). Intermediate certificates must be
in the bundle: the authenticator sees the client's leaf certificate only.
"""

from __future__ import annotations

import datetime
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubesched.errors import ConfigError
from kubesched.serving.authn import AuthenticationFailed, AuthRequest, UserInfo

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "CABundle",
    "ClientCertAuthenticator",
    "common_name",
    "user_of_certificate",
    "verify_client_certificate",
]

_CLIENT_AUTH_OID = "1.3.6.1.5.5.7.3.2"
_ANY_EKU_OID = "2.5.29.37.0"


class CABundle:
    """The CA certificates of one PEM bundle (``source`` names it in messages: a file, or
    ``configmap/extension-apiserver-authentication``). :attr:`pem` is the bundle for the TLS layer."""

    def __init__(self, certs: list[x509.Certificate], pem: bytes, source: str) -> None:
        self.certs = certs
        self.pem = pem
        self.source = source
        self._seen: OrderedDict[bytes, x509.Certificate | None] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_pem(cls, data: bytes, source: str, flag: str) -> CABundle:
        """Parse ``data``; raises ConfigError naming ``flag`` and ``source`` when it holds no
        certificate or a malformed one."""
        from cryptography import x509

        try:
            certs = x509.load_pem_x509_certificates(data)
        except ValueError as e:
            detail = (
                "no PEM certificate found"
                if b"-----BEGIN CERTIFICATE-----" not in data
                else f"invalid certificate: {e}"
            )
            raise ConfigError(flag, f"{source}: {detail}") from None
        return cls(certs, data, source)

    @classmethod
    def from_file(cls, path: str, flag: str) -> CABundle:
        """Read and parse ``path``; raises ConfigError naming ``flag`` and the file."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ConfigError(flag, f"cannot read {path}: {e.strerror or e}") from None
        return cls.from_pem(data, path, flag)

    def issuer_of(self, der: bytes) -> tuple[x509.Certificate, x509.Certificate | None]:
        """``(the certificate, its issuer in the bundle or None)``; results are remembered per
        certificate (bounded). Raises AuthenticationFailed for bytes that are no certificate."""
        key = hashlib.sha256(der).digest()
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return _parse(der), self._seen[key]
        leaf = _parse(der)
        issuer = next((ca for ca in self.certs if _issued_by(leaf, ca)), None)
        with self._lock:
            self._seen[key] = issuer
            while len(self._seen) > 1024:
                self._seen.popitem(last=False)
        return leaf, issuer


def _parse(der: bytes) -> x509.Certificate:
    from cryptography import x509

    try:
        return x509.load_der_x509_certificate(der)
    except ValueError as e:
        raise AuthenticationFailed(f"unreadable client certificate: {e}") from None


def _issued_by(leaf: x509.Certificate, ca: x509.Certificate) -> bool:
    from cryptography.exceptions import InvalidSignature

    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _allows_client_auth(cert: x509.Certificate) -> bool:
    from cryptography import x509

    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True  # no restriction (Go: a certificate without EKUs is valid for any usage)
    oids = {o.dotted_string for o in eku}
    return _CLIENT_AUTH_OID in oids or _ANY_EKU_OID in oids


def _name(cert: x509.Certificate) -> str:
    return f"CN={common_name(cert)!r}, SN={cert.serial_number}"


def common_name(cert: x509.Certificate) -> str:
    """The subject's first CommonName ("" without one)."""
    from cryptography.x509.oid import NameOID

    values = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(values[0].value) if values else ""


def verify_client_certificate(
    der: bytes, bundle: CABundle, now: datetime.datetime | None = None
) -> x509.Certificate:
    """The client certificate ``der`` once verified against ``bundle`` (issuer, validity at
    ``now``, ``clientAuth`` usage); raises AuthenticationFailed with upstream's wording
    (``verifying certificate ... failed: x509: certificate signed by unknown authority``)."""
    leaf, issuer = bundle.issuer_of(der)
    if issuer is None:
        raise AuthenticationFailed(
            f"verifying certificate {_name(leaf)} failed: x509: certificate signed by unknown authority"
        )
    when = now or datetime.datetime.now(datetime.UTC)
    for c in (leaf, issuer):
        if not c.not_valid_before_utc <= when <= c.not_valid_after_utc:
            raise AuthenticationFailed(
                f"verifying certificate {_name(leaf)} failed: x509: certificate has "
                "expired or is not yet valid"
            )
        if not _allows_client_auth(c):
            raise AuthenticationFailed(
                f"verifying certificate {_name(leaf)} failed: x509: certificate "
                "specifies an incompatible key usage"
            )
    return leaf


class ClientCertAuthenticator:
    """The x509 authenticator of the chain (:class:`kubesched.serving.authn.RequestAuthenticator`).
    ``ca()``: the current bundle (None: no client CA, so no opinion on any request)."""

    def __init__(
        self, ca: Callable[[], CABundle | None], now: Callable[[], datetime.datetime] | None = None
    ) -> None:
        self.ca = ca
        self.now = now

    def authenticate(self, request: AuthRequest) -> UserInfo | None:
        der = request.peer_certificate
        bundle = self.ca()
        if der is None or bundle is None:
            return None
        leaf = verify_client_certificate(der, bundle, self.now() if self.now else None)
        return user_of_certificate(leaf)


def user_of_certificate(cert: x509.Certificate) -> UserInfo | None:
    """``CommonNameUserConversion``: user = CN, groups = the O values; None for an empty CN."""
    from cryptography.x509.oid import NameOID

    cn = common_name(cert)
    if not cn:
        return None
    orgs = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(cn, groups=orgs)
