"""Serving certificate for ``--secure-port`` (``k8s.io/client-go/util/cert``
``GenerateSelfSignedCertKey``): the files given by ``--tls-cert-file``/``--tls-private-key-file``,
or else a self-signed certificate for ``localhost``/the bind address, made in memory at start."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile

__all__ = ["server_context", "self_signed_pem"]


def self_signed_pem(host: str) -> tuple[bytes, bytes]:
    """``(certificate PEM, private key PEM)`` of a self-signed ECDSA P-256 certificate valid one year
    for ``host``, ``localhost`` and 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        ip = ipaddress.ip_address(host)
        if str(ip) != "127.0.0.1":
            names.append(x509.IPAddress(ip))
    except ValueError:
        if host and host != "localhost":
            names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host or 'localhost'}@{int(now.timestamp())}")])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def server_context(host: str, cert_file: str | None = None, key_file: str | None = None) -> ssl.SSLContext:
    """A TLS server context with the given files or a fresh self-signed certificate.
    Raises OSError / ssl.SSLError for unreadable or mismatched files."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file and key_file:
        ctx.load_cert_chain(cert_file, key_file)
        return ctx
    cert, key = self_signed_pem(host)
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as d:
        cpath, kpath = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        with open(cpath, "wb") as f:
            f.write(cert)
        with open(kpath, "wb") as f:
            f.write(key)
        ctx.load_cert_chain(cpath, kpath)
    return ctx
