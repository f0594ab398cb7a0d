"""A real registry for the registry-lookup tests: Debian's ``docker-registry`` (the CNCF
distribution server) on 127.0.0.1 with a temporary config, images pushed over the HTTP API with
httpx, and a small token server for the bearer-token flow. Tests skip when the server is not
installed or does not start."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
SERVICE = "kubesched-test-registry"
ISSUER = "kubesched-test-issuer"
USER, PASSWORD = "robot", "s3cret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    """``GET /token?service=&scope=`` with Basic credentials -> ``{"token", "expires_in"}``: a JWT
    signed RS256 with an ``x5c`` header, as the distribution server's token auth verifies it. With
    ``anonymous``, requests without credentials get a token too (as Docker Hub's token service
    gives anonymous pull tokens)."""

    def __init__(self, tmp: Path, anonymous: bool = False) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-test-token-signer")])
        now = dt.datetime.now(dt.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.bundle = tmp / "token-signer.pem"
        self.bundle.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                auth = self.headers.get("Authorization", "")
                server.requests.append({"query": query, "auth": auth})
                expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
                if url.path != "/token" or (auth != expected and not (anonymous and not auth)):
                    self.send_response(401)
                    self.end_headers()
                    return
                body = json.dumps({"token": server.token(query.get("scope", "")), "expires_in": 300}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def token(self, scope: str) -> str:
        access = []
        for item in scope.split(" "):
            parts = item.split(":")
            if len(parts) == 3:
                access.append({"type": parts[0], "name": parts[1], "actions": parts[2].split(",")})
        now = int(time.time())
        header = {
            "typ": "JWT",
            "alg": "RS256",
            "x5c": [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()],
        }
        claims = {
            "iss": ISSUER,
            "sub": USER,
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now - 10,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        sig = self.key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing}.{_b64url(sig)}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Registry:
    """A running ``docker-registry``: ``host`` (127.0.0.1:port, the image reference's registry
    part), ``url`` and an httpx client for pushing (``token`` set for a token-auth registry)."""

    host: str
    url: str
    proc: subprocess.Popen[bytes]
    tokens: TokenServer | None = None
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=10))

    def _headers(self, repo: str) -> dict[str, str]:
        if self.tokens is None:
            return {}
        return {"Authorization": f"Bearer {self.tokens.token(f'repository:{repo}:pull,push')}"}

    def push_blob(self, repo: str, data: bytes) -> str:
        d = digest_of(data)
        r = self.client.post(f"{self.url}/v2/{repo}/blobs/uploads/", headers=self._headers(repo))
        assert r.status_code == 202, r.text
        location = r.headers["Location"]
        if location.startswith("/"):
            location = self.url + location
        sep = "&" if "?" in location else "?"
        r = self.client.put(
            f"{location}{sep}digest={d}",
            content=data,
            headers={**self._headers(repo), "Content-Type": "application/octet-stream"},
        )
        assert r.status_code == 201, r.text
        return d

    def push_manifest(self, repo: str, ref: str, doc: dict[str, Any], media_type: str) -> str:
        body = json.dumps(doc).encode()
        r = self.client.put(
            f"{self.url}/v2/{repo}/manifests/{ref}",
            content=body,
            headers={**self._headers(repo), "Content-Type": media_type},
        )
        assert r.status_code == 201, r.text
        return digest_of(body)

    def push_image(
        self,
        repo: str,
        layers: list[bytes],
        *,
        ref: str | None = None,
        docker: bool = False,
        arch: str = "amd64",
    ) -> tuple[str, int, list[tuple[str, int]]]:
        """Push layer blobs, a config and a manifest (OCI, or Docker v2 with ``docker``); returns
        ``(manifest digest, manifest size, [(layer digest, size)])``. ``ref`` tags it (else by digest)."""
        layer_descs = [(self.push_blob(repo, data), len(data)) for data in layers]
        config = json.dumps(
            {
                "architecture": arch,
                "os": "linux",
                "rootfs": {"type": "layers", "diff_ids": [d for d, _ in layer_descs]},
            }
        ).encode()
        config_digest = self.push_blob(repo, config)
        layer_type = (
            "application/vnd.docker.image.rootfs.diff.tar.gzip"
            if docker
            else "application/vnd.oci.image.layer.v1.tar+gzip"
        )
        media_type = DOCKER_MANIFEST if docker else OCI_MANIFEST
        doc = {
            "schemaVersion": 2,
            "mediaType": media_type,
            "config": {
                "mediaType": (
                    "application/vnd.docker.container.image.v1+json"
                    if docker
                    else "application/vnd.oci.image.config.v1+json"
                ),
                "digest": config_digest,
                "size": len(config),
            },
            "layers": [{"mediaType": layer_type, "digest": d, "size": s} for d, s in layer_descs],
        }
        body = json.dumps(doc).encode()
        digest = self.push_manifest(repo, ref or digest_of(body), doc, media_type)
        return digest, len(body), layer_descs

    def push_index(
        self, repo: str, tag: str, entries: list[tuple[str, int, str]], docker: bool = False
    ) -> str:
        """Tag an index (OCI, or a Docker manifest list) of ``(digest, size, arch)`` manifests."""
        child = DOCKER_MANIFEST if docker else OCI_MANIFEST
        media_type = DOCKER_LIST if docker else OCI_INDEX
        doc = {
            "schemaVersion": 2,
            "mediaType": media_type,
            "manifests": [
                {"mediaType": child, "digest": d, "size": s, "platform": {"os": "linux", "architecture": a}}
                for d, s, a in entries
            ],
        }
        return self.push_manifest(repo, tag, doc, media_type)

    def close(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if self.tokens is not None:
            self.tokens.close()


def start_registry(
    tmp: Path, token_auth: bool = False, tls: bool = False, anonymous_tokens: bool = False
) -> Iterator[Registry]:
    """Start ``docker-registry`` (skip the test when absent or when it does not answer in 15 s);
    with ``tls``, HTTPS with a certificate for 127.0.0.1 from a test CA (``tmp / "ca.pem"``); with
    ``anonymous_tokens`` (and ``token_auth``), the token service serves requests without
    credentials."""
    binary = shutil.which("docker-registry") or shutil.which("registry")
    if binary is None:
        pytest.skip("docker-registry (Debian package docker-registry) is not installed")
    port = free_port()
    tokens = TokenServer(tmp, anonymous_tokens) if token_auth else None
    config = {
        "version": 0.1,
        "log": {"level": "error", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(tmp / "registry-data")}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}"},
    }
    if tokens is not None:
        config["auth"] = {
            "token": {
                "realm": tokens.url,
                "service": SERVICE,
                "issuer": ISSUER,
                "rootcertbundle": str(tokens.bundle),
            }
        }
    verify: Any = True
    if tls:
        import trustme

        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        ca.cert_pem.write_to_path(str(tmp / "ca.pem"))
        cert.cert_chain_pems[0].write_to_path(str(tmp / "server.pem"))
        cert.private_key_pem.write_to_path(str(tmp / "server.key"))
        config["http"]["tls"] = {"certificate": str(tmp / "server.pem"), "key": str(tmp / "server.key")}
        import ssl

        verify = ssl.create_default_context(cafile=str(tmp / "ca.pem"))
    path = tmp / "registry.yml"
    path.write_text(json.dumps(config))  # JSON is YAML
    log = open(tmp / "registry.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([binary, "serve", str(path)], stdout=log, stderr=subprocess.STDOUT)
    scheme = "https" if tls else "http"
    registry = Registry(
        f"127.0.0.1:{port}",
        f"{scheme}://127.0.0.1:{port}",
        proc,
        tokens,
        httpx.Client(timeout=10, verify=verify),
    )
    deadline = time.monotonic() + 15
    try:
        while True:
            if proc.poll() is not None:
                pytest.skip(f"docker-registry exited at start: {(tmp / 'registry.log').read_text()[-500:]}")
            try:
                if httpx.get(f"{registry.url}/v2/", timeout=1, verify=verify).status_code in (200, 401):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.skip("docker-registry did not answer within 15 s")
            time.sleep(0.1)
        yield registry
    finally:
        registry.close()
        log.close()


class RoutedTransport(httpx.BaseTransport):
    """Sends requests for ``host`` (e.g. ``registry-1.docker.io``) to a local registry over HTTP,
    other requests unchanged; ``urls`` records the URLs asked for ``host`` as the client built them."""

    def __init__(self, host: str, target: Registry) -> None:
        self.host = host
        self.target = urlparse(target.url)
        self.urls: list[str] = []
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == self.host:
            self.urls.append(str(request.url))
            headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
            request = httpx.Request(
                request.method,
                request.url.copy_with(scheme="http", host=self.target.hostname, port=self.target.port),
                headers=headers,
                content=request.read(),
            )
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()
