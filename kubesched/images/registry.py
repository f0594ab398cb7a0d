"""Image layers from a registry, over the OCI distribution API (httpx).

:meth:`RegistryClient.image_layers` resolves an image reference the way a container runtime does
before it pulls (containerd's ``remotes/docker`` resolver, the OCI distribution spec
``GET /v2/<name>/manifests/<reference>``):

1. fetch the manifest of the tag or digest, accepting an OCI image index, a Docker manifest
   list, an OCI image manifest or a Docker image manifest v2 (schema 2);
2. for an index or list, pick the entry of the configured platform (``os``/``architecture``
   and, when given, ``variant``) and fetch that manifest by digest (an index inside an index is
   followed once more);
3. return its layers (digest, compressed size) bottom first, with the digest of the manifest
   first fetched (what the kubelet reports as ``name@digest``).

A manifest fetched by digest is checked against it (sha256 of the body). Authentication follows
the registry's ``WWW-Authenticate`` challenge: ``Bearer realm=...,service=...,scope=...`` (the
distribution token flow: ``GET realm?service=&scope=`` with basic credentials when configured,
``token`` or ``access_token`` in the reply, cached per scope for ``expires_in`` seconds, 60 by
default) or ``Basic``. Per-registry endpoint, TLS and credentials come from
:class:`~kubesched.images.registry_settings.RegistrySettings`.

Each manifest request, token exchange included, ends within ``timeoutSeconds`` in total (connect,
headers and body, as Go's ``http.Client.Timeout``; :mod:`kubesched.net.deadline`), and a manifest
is read up to 4 MiB.

Errors: :class:`RegistryError` naming the image and what failed (HTTP status and the registry's
error code, a digest mismatch, no manifest for the platform, an unsupported media type).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import ssl
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import httpx

from kubesched.errors import KubeschedError
from kubesched.images.catalogue import CatalogueImage, Layer
from kubesched.images.names import ImageRef, InvalidImageReference, parse_image_ref
from kubesched.images.registry_settings import RegistryHostSettings, RegistrySettings
from kubesched.net.deadline import DeadlineExceeded, ResponseTooLarge, deadline_client, request

__all__ = ["ImageLayers", "RegistryClient", "RegistryError", "MANIFEST_MEDIA_TYPES"]

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
#: what the client accepts, indexes first (as containerd's resolver asks)
MANIFEST_MEDIA_TYPES = (OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST)
_INDEXES = (OCI_INDEX, DOCKER_LIST)
_MANIFESTS = (OCI_MANIFEST, DOCKER_MANIFEST)
_MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # the spec's suggested manifest size limit
_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_MANIFEST_PATH = re.compile(r"^/v2/(?P<name>.+)/(?:manifests|blobs)/[^/]+$")
_DEFAULT_TOKEN_SECONDS = 60.0


class RegistryError(KubeschedError):
    """A registry lookup failed (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class ImageLayers:
    """The layers of one image for one platform: ``ref`` (the parsed reference), ``digest`` (of the
    manifest or index the reference resolved to), ``manifest_digest`` (of the platform manifest),
    ``media_type`` (of that manifest) and ``layers`` (``(digest, compressed bytes)``, bottom first)."""

    ref: ImageRef
    digest: str
    manifest_digest: str
    media_type: str
    layers: tuple[tuple[str, int], ...]

    @property
    def size_bytes(self) -> int:
        """Compressed bytes of the distinct layers."""
        return sum(dict(self.layers).values())

    def to_catalogue_image(self) -> CatalogueImage:
        """The image as a catalogue entry (layers keyed by digest, so they match catalogue and
        other registry images sharing them)."""
        layers = tuple(Layer(d, size) for d, size in self.layers)
        unique: dict[str, Layer] = {}
        for layer in layers:
            unique.setdefault(layer.id, layer)
        return CatalogueImage(
            name=self.ref.canonical,
            ref=self.ref,
            image_class="cpu",
            layers=layers,
            source=f"registry manifest {self.manifest_digest}",
            confidence="verified",
            manifest_digest=self.digest,
            unique_layers=tuple(unique.values()),
        )


class _TokenAuth(httpx.Auth):
    """Per-registry auth flow: answer a 401 challenge (Bearer token or Basic), cache tokens per scope."""

    requires_response_body = True

    def __init__(self, credentials: tuple[str, str] | None) -> None:
        self.credentials = credentials
        self._tokens: dict[str, tuple[str, float]] = {}  # repository name -> (token, expiry)
        self._lock = threading.Lock()

    def _basic(self) -> str:
        assert self.credentials is not None
        raw = f"{self.credentials[0]}:{self.credentials[1]}".encode()
        return "Basic " + base64.b64encode(raw).decode()

    @staticmethod
    def _repository(request: httpx.Request) -> str:
        m = _MANIFEST_PATH.match(request.url.path)
        return m.group("name") if m else ""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        repo = self._repository(request)
        with self._lock:
            cached = self._tokens.get(repo)
        if cached is not None and cached[1] > time.monotonic():
            request.headers["Authorization"] = f"Bearer {cached[0]}"
        response = yield request
        if response.status_code != 401:
            return
        challenge = response.headers.get("WWW-Authenticate", "")
        scheme = challenge.split(" ", 1)[0].lower()
        params = dict(_CHALLENGE_PARAM.findall(challenge))
        if scheme == "basic" and self.credentials is not None:
            request.headers["Authorization"] = self._basic()
            yield request
            return
        if scheme != "bearer" or "realm" not in params:
            return
        query = {k: params[k] for k in ("service", "scope") if k in params}
        token_request = httpx.Request("GET", params["realm"], params=query)
        if self.credentials is not None:
            token_request.headers["Authorization"] = self._basic()
        token_response = yield token_request
        if token_response.status_code != 200:
            raise RegistryError(
                f"token service {params['realm']} answered HTTP {token_response.status_code}"
                f"{_error_detail(token_response.content)}"
            )
        try:
            body = token_response.json()
            token = body.get("token") or body.get("access_token")
            expires = float(body.get("expires_in") or _DEFAULT_TOKEN_SECONDS)
        except (ValueError, AttributeError, TypeError):
            token = None
        if not isinstance(token, str) or not token:
            raise RegistryError(f"token service {params['realm']} returned no token")
        with self._lock:
            self._tokens[repo] = (token, time.monotonic() + max(expires - 5.0, 1.0))
        request.headers["Authorization"] = f"Bearer {token}"
        yield request


def _error_detail(body: bytes) -> str:
    """``: CODE message`` of a distribution error body (``{"errors": [{"code", "message"}]}``)."""
    try:
        errors = json.loads(body).get("errors") or []
        first = errors[0]
        return f": {first.get('code', '')} {first.get('message', '')}".rstrip()
    except (ValueError, AttributeError, IndexError, TypeError):
        return ""


class RegistryClient:
    """OCI distribution client for manifests (see the module docstring). Thread-safe: one httpx
    client per registry host, created on first use. Call :meth:`close` when done."""

    def __init__(
        self, settings: RegistrySettings | None = None, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.settings = settings or RegistrySettings()
        self._transport = transport
        self._clients: dict[str, tuple[httpx.Client, str]] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, {}
        for client, _ in clients.values():
            client.close()

    def _client(self, host: str) -> tuple[httpx.Client, str]:
        with self._lock:
            entry = self._clients.get(host)
            if entry is None:
                hs: RegistryHostSettings = self.settings.host(host)
                verify: Any = True
                if hs.insecure_skip_verify:
                    verify = False
                elif hs.ca_file:
                    try:
                        verify = ssl.create_default_context(cafile=hs.ca_file)
                    except (OSError, ssl.SSLError) as e:
                        raise RegistryError(f"registry {host}: caFile {hs.ca_file}: {e}") from None
                client = deadline_client(
                    auth=_TokenAuth(hs.credentials()),
                    verify=verify,
                    timeout=self.settings.timeout_seconds,
                    follow_redirects=True,
                    transport=self._transport,
                )
                entry = self._clients[host] = (client, hs.base_url(host))
            return entry

    def _get_manifest(self, ref: ImageRef, reference: str, accept: tuple[str, ...]) -> tuple[str, str, Any]:
        """``(media type, digest, parsed body)`` of ``GET /v2/<path>/manifests/<reference>``."""
        client, base = self._client(ref.domain)
        url = f"{base}/v2/{ref.path}/manifests/{reference}"
        try:
            response, body = request(
                client,
                "GET",
                url,
                timeout=self.settings.timeout_seconds,
                max_bytes=_MAX_MANIFEST_BYTES,
                headers={"Accept": ", ".join(accept)},
            )
        except ResponseTooLarge:
            raise RegistryError(f"image {ref.canonical}: manifest {reference} is larger than 4 MiB") from None
        except DeadlineExceeded as e:
            raise RegistryError(f"image {ref.canonical}: GET {url}: {e}") from None
        except httpx.HTTPError as e:
            raise RegistryError(f"image {ref.canonical}: GET {url}: {e or type(e).__name__}") from None
        if response.status_code != 200:
            raise RegistryError(
                f"image {ref.canonical}: GET {url}: HTTP {response.status_code}{_error_detail(body)}"
            )
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if reference.startswith("sha256:") and digest != reference:
            raise RegistryError(f"image {ref.canonical}: manifest {reference} has digest {digest}")
        try:
            doc = json.loads(body)
        except ValueError:
            raise RegistryError(f"image {ref.canonical}: manifest {reference} is not JSON") from None
        if not isinstance(doc, dict):
            raise RegistryError(f"image {ref.canonical}: manifest {reference} is not a JSON object")
        media_type = doc.get("mediaType") or response.headers.get("Content-Type", "").split(";")[0].strip()
        if not media_type:
            media_type = OCI_INDEX if "manifests" in doc else OCI_MANIFEST
        return media_type, digest, doc

    def _pick(self, ref: ImageRef, doc: dict[str, Any]) -> dict[str, Any]:
        want_os, want_arch, want_variant = self.settings.platform_parts
        entries = doc.get("manifests")
        if not isinstance(entries, list):
            raise RegistryError(f"image {ref.canonical}: index has no manifests list")
        for entry in entries:
            platform = entry.get("platform") if isinstance(entry, dict) else None
            if not isinstance(platform, dict):
                continue
            if platform.get("os") != want_os or platform.get("architecture") != want_arch:
                continue
            if want_variant is not None and platform.get("variant") != want_variant:
                continue
            return entry
        found = sorted(
            {
                f"{e['platform'].get('os')}/{e['platform'].get('architecture')}"
                for e in entries
                if isinstance(e, dict) and isinstance(e.get("platform"), dict)
            }
        )
        raise RegistryError(
            f"image {ref.canonical}: no manifest for platform {self.settings.platform} "
            f"(index has {', '.join(found) or 'none'})"
        )

    def image_layers(self, image: str | ImageRef) -> ImageLayers:
        """The layers of ``image`` for the configured platform. Raises RegistryError (also for an
        invalid reference)."""
        try:
            ref = image if isinstance(image, ImageRef) else parse_image_ref(image)
        except InvalidImageReference as e:
            raise RegistryError(f"image {image!r}: {e}") from None
        if not ref.domain:
            raise RegistryError(f"image {ref.canonical}: the reference names no registry")
        reference = ref.digest or ref.tag or "latest"
        media_type, top_digest, doc = self._get_manifest(ref, reference, MANIFEST_MEDIA_TYPES)
        digest = top_digest
        for _ in range(2):
            if media_type not in _INDEXES:
                break
            entry = self._pick(ref, doc)
            child = entry.get("digest")
            if not isinstance(child, str):
                raise RegistryError(f"image {ref.canonical}: index entry without a digest")
            media_type, digest, doc = self._get_manifest(ref, child, MANIFEST_MEDIA_TYPES)
        if media_type not in _MANIFESTS:
            raise RegistryError(f"image {ref.canonical}: unsupported manifest media type {media_type!r}")
        raw_layers = doc.get("layers")
        if not isinstance(raw_layers, list) or not raw_layers:
            raise RegistryError(f"image {ref.canonical}: manifest {digest} lists no layers")
        layers: list[tuple[str, int]] = []
        for i, layer in enumerate(raw_layers):
            d = layer.get("digest") if isinstance(layer, dict) else None
            size = layer.get("size") if isinstance(layer, dict) else None
            if not isinstance(d, str) or isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise RegistryError(
                    f"image {ref.canonical}: manifest {digest}: layers[{i}] needs a digest and a size"
                )
            layers.append((d, size))
        return ImageLayers(ref, top_digest, digest, media_type, tuple(layers))
