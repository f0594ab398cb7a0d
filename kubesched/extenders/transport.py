"""HTTP transport of an extender: TLS settings and the JSON POST (``pkg/scheduler/extender.go``
``makeTransport``/``send`` and client-go ``transport.TLSConfigFor``).

Errors keep upstream's wording where kubesched can produce it:

* non-200 answer: ``failed <verb> with extender at URL <url>, code <status>``
  (``<url>`` is the full URL including the verb);
* connection failures render like Go's ``*url.Error``: ``Post "<url>": <cause>`` with
  ``dial tcp <host:port>: connect: connection refused`` and
  ``context deadline exceeded (Client.Timeout exceeded while awaiting headers)`` for the common causes;
* a deadline that passes while the body is read: Go's body error
  ``context deadline exceeded (Client.Timeout or context cancellation while reading body)``;
* an answer over :data:`MAX_RESPONSE_BYTES`:
  ``Post "<url>": answer larger than <n> bytes`` (upstream has no cap; Go's decoder would read it all).

``httpTimeout`` bounds the whole call (connect, TLS, request, headers and body) as Go's
``http.Client.Timeout`` does (:mod:`kubesched.net.deadline`): an extender that answers one byte a
second holds the scheduling cycle ``httpTimeout`` and not longer.
"""

from __future__ import annotations

import json
import os
import ssl
import tempfile
from typing import Any
from urllib.parse import urlsplit

import httpx

from kubesched.config.types import Extender
from kubesched.errors import ConfigError
from kubesched.net.deadline import DeadlineExceeded, ResponseTooLarge, deadline_client, request

#: largest extender answer read, bytes (a filter answer of 15,000 full Nodes is about 75 MB)
MAX_RESPONSE_BYTES = 128 * 1024 * 1024


class ExtenderError(Exception):
    """A failed call to an extender (transport, status code, decoding or an ``Error`` field)."""


def ssl_context(cfg: Extender, path: str = "extenders[0]") -> tuple[ssl.SSLContext | None, str]:
    """The TLS client context for ``cfg`` and the server name override (``""`` = from the URL).

    As upstream: ``enableHTTPS`` without ``caFile``/``caData`` means insecure (no verification);
    a CA together with ``insecure: true`` is rejected; a client certificate needs its key (and the
    other way round). ``None`` when nothing TLS-specific is configured (system trust store is
    then used for ``https`` URLs). Raises :class:`ConfigError` naming ``<path>.tlsConfig``.
    """
    tls = cfg.tls_config
    insecure = tls.insecure if tls is not None else False
    has_ca = tls is not None and bool(tls.ca_file or tls.ca_data)
    if cfg.enable_https and not has_ca:
        insecure = True
    p = f"{path}.tlsConfig"
    if insecure and has_ca:
        raise ConfigError(p, "specifying a root certificates file with the insecure flag is not allowed")
    has_cert = tls is not None and bool(tls.cert_file or tls.cert_data)
    has_key = tls is not None and bool(tls.key_file or tls.key_data)
    if has_cert != has_key:
        raise ConfigError(p, "client certificate and key must both be specified")
    if not insecure and not has_ca and not has_cert and not (tls is not None and tls.server_name):
        return None, ""
    try:
        ctx = ssl.create_default_context(purpose=ssl.Purpose.SERVER_AUTH)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if tls is not None:
            if tls.ca_file:
                ctx.load_verify_locations(cafile=tls.ca_file)
            if tls.ca_data:
                ctx.load_verify_locations(cadata=tls.ca_data.decode("utf-8"))
            if has_cert:
                _load_cert_chain(ctx, tls.cert_file, tls.cert_data, tls.key_file, tls.key_data)
    except (OSError, ssl.SSLError, UnicodeDecodeError) as e:
        raise ConfigError(p, f"loading TLS material: {e}") from None
    return ctx, (tls.server_name if tls is not None else "")


def _load_cert_chain(
    ctx: ssl.SSLContext, cert_file: str, cert_data: bytes, key_file: str, key_data: bytes
) -> None:
    """``load_cert_chain`` from files or PEM bytes (data wins over files, as in client-go); PEM
    bytes go through a private temporary directory that is removed right after loading."""
    if not cert_data and not key_data:
        ctx.load_cert_chain(certfile=cert_file, keyfile=key_file)
        return
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as d:
        cf = os.path.join(d, "tls.crt")
        kf = os.path.join(d, "tls.key")
        with open(cf, "wb") as f:
            f.write(cert_data if cert_data else _read(cert_file))
        with open(os.open(kf, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(key_data if key_data else _read(key_file))
        ctx.load_cert_chain(certfile=cf, keyfile=kf)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class Transport:
    """A pooled, thread-safe JSON-over-HTTP client for one extender (``http.Client`` with
    ``Timeout: httpTimeout``). ``timeout`` in seconds bounds the whole request; answers are
    read up to ``max_bytes`` bytes."""

    def __init__(
        self, cfg: Extender, path: str = "extenders[0]", max_bytes: int = MAX_RESPONSE_BYTES
    ) -> None:
        ctx, server_name = ssl_context(cfg, path)
        self.url_prefix = cfg.url_prefix
        self.server_name = server_name
        self.timeout = float(cfg.http_timeout)
        self.max_bytes = max_bytes
        self._client = deadline_client(
            verify=ctx if ctx is not None else True,
            timeout=self.timeout,
            follow_redirects=True,
            trust_env=False,
        )

    def url(self, verb: str) -> str:
        """``strings.TrimRight(urlPrefix, "/") + "/" + verb``."""
        return self.url_prefix.rstrip("/") + "/" + verb

    def send(self, verb: str, args: Any) -> Any:
        """POST ``args`` as JSON to ``<urlPrefix>/<verb>`` and return the decoded JSON answer.

        Raises :class:`ExtenderError` with upstream's messages (module docstring).
        """
        url = self.url(verb)
        body = json.dumps(args, separators=(",", ":")).encode("utf-8")
        ext = {"sni_hostname": self.server_name} if self.server_name else None
        try:
            resp, data = request(
                self._client,
                "POST",
                url,
                timeout=self.timeout,
                max_bytes=self.max_bytes,
                content=body,
                headers={"Content-Type": "application/json"},
                extensions=ext,
            )
        except DeadlineExceeded as e:
            raise ExtenderError(str(e) if e.headers_received else f'Post "{url}": {e}') from None
        except ResponseTooLarge as e:
            raise ExtenderError(f'Post "{url}": {e}') from None
        except httpx.ConnectError as e:
            raise ExtenderError(f'Post "{url}": {_connect_cause(url, e)}') from None
        except httpx.HTTPError as e:
            raise ExtenderError(f'Post "{url}": {e}') from None
        if resp.status_code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status_code}")
        try:
            return json.loads(data)
        except ValueError as e:
            raise ExtenderError(f"invalid JSON from extender at URL {url}: {e}") from None

    def close(self) -> None:
        """Close pooled connections."""
        self._client.close()


def _connect_cause(url: str, e: Exception) -> str:
    text = str(e)
    if "refused" in text.lower():
        u = urlsplit(url)
        port = u.port or (443 if u.scheme == "https" else 80)
        return f"dial tcp {u.hostname}:{port}: connect: connection refused"
    return text
