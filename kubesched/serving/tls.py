"""Serving certificate for ``--secure-port`` (``k8s.io/client-go/util/cert``
``GenerateSelfSignedCertKey``): the files given by ``--tls-cert-file``/``--tls-private-key-file``,
or else a self-signed certificate for ``localhost``/the bind address, made in memory at start."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile

from kubesched.errors import ConfigError

__all__ = ["accept_client_certificates", "check_cert_and_key", "server_context", "self_signed_pem"]


def self_signed_pem(host: str) -> tuple[bytes, bytes]:
    """``(certificate PEM, private key PEM)`` of a self-signed ECDSA P-256 certificate valid one year
    for ``host``, ``localhost`` and 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    try:
        ip = ipaddress.ip_address(host)
        if str(ip) != "127.0.0.1":
            names.append(x509.IPAddress(ip))
    except ValueError:
        if host and host != "localhost":
            names.append(x509.DNSName(host))
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"{host or 'localhost'}@{int(now.timestamp())}")]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def _read(flag: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(flag, f"cannot read {path}: {e.strerror or e}") from None


def check_cert_and_key(cert_file: str, key_file: str) -> None:
    """Check that ``cert_file`` holds PEM certificates and ``key_file`` an unencrypted PEM private
    key matching the first certificate. Raises ConfigError naming the flag and file
    (``--tls-cert-file: /etc/hostname: no PEM certificate found``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert_pem = _read("--tls-cert-file", cert_file)
    key_pem = _read("--tls-private-key-file", key_file)
    try:
        certs = x509.load_pem_x509_certificates(cert_pem)
    except ValueError as e:
        detail = (
            "no PEM certificate found"
            if b"-----BEGIN CERTIFICATE-----" not in cert_pem
            else f"invalid certificate: {e}"
        )
        raise ConfigError("--tls-cert-file", f"{cert_file}: {detail}") from None
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except TypeError:
        raise ConfigError(
            "--tls-private-key-file", f"{key_file}: the private key is encrypted; give an unencrypted key"
        ) from None
    except Exception as e:  # noqa: BLE001 - cryptography raises several types for bad input
        detail = (
            "no PEM private key found" if b"PRIVATE KEY-----" not in key_pem else f"invalid private key: {e}"
        )
        raise ConfigError("--tls-private-key-file", f"{key_file}: {detail}") from None
    pub = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    if certs[0].public_key().public_bytes(enc, pub) != key.public_key().public_bytes(enc, pub):
        raise ConfigError(
            "--tls-private-key-file",
            f"{key_file} does not match the certificate of --tls-cert-file {cert_file}",
        )


def server_context(host: str, cert_file: str | None = None, key_file: str | None = None) -> ssl.SSLContext:
    """A TLS server context with the given files or a fresh self-signed certificate.
    Raises ConfigError naming ``--tls-cert-file``/``--tls-private-key-file`` and the file for an
    unreadable, malformed, encrypted or mismatched certificate or key."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file and key_file:
        check_cert_and_key(cert_file, key_file)
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(
                "--tls-cert-file",
                f"cannot use {cert_file} with --tls-private-key-file {key_file}: "
                f"{getattr(e, 'reason', None) or e}",
            ) from None
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


def accept_client_certificates(ctx: ssl.SSLContext, ca_pem: bytes) -> None:
    """Ask clients of ``ctx`` for a certificate (optional) and accept those issued by a CA of
    ``ca_pem`` (PEM; ``--client-ca-file`` and ``--requestheader-client-ca-file`` together, as
    upstream's ``ApplyClientCert``); which CA vouches for whom is the authenticators' decision.
    Nothing changes for an empty ``ca_pem``."""
    if not ca_pem.strip():
        return
    ctx.load_verify_locations(cadata=ca_pem.decode("ascii", "replace"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
