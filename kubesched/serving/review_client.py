"""The API client of delegated authentication and authorization: ``POST`` of TokenReview and
SubjectAccessReview objects (and the ``GET`` of the authentication ConfigMap) to the API server named by ``--authentication-kubeconfig`` /
``--authorization-kubeconfig`` (default: the scheduler's own kubeconfig, else the in-cluster
service account). The kubeconfig is read by the official ``kubernetes`` client (credentials,
bearer token refresh); requests go through the API client's keep-alive pool
(:class:`~kubesched.client.http_pool.ConnectionPool`).

As upstream's delegating options (``k8s.io/apiserver/pkg/server/options/authentication.go`` and
``authorization.go`` ``getClient``) it has its own limiter (200 requests/s, burst 400) and a
10 s request timeout, which bounds the whole request (connect, headers and body, as Go's
``http.Client.Timeout``); answers over 4 MiB are refused.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable
from typing import Any, Protocol

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from kubesched.client.http_pool import ConnectionPool, ssl_context_for
from kubesched.client.kube import check_kubeconfig
from kubesched.client.rate_limit import TokenBucket
from kubesched.clock import RealClock
from kubesched.errors import ConfigError

__all__ = ["REVIEW_BURST", "REVIEW_QPS", "REVIEW_TIMEOUT", "ReviewClient", "ReviewError", "ReviewPoster"]

REVIEW_QPS = 200.0
REVIEW_BURST = 400
#: seconds per review request (upstream ``ClientTimeout`` / ``TokenRequestTimeout``)
REVIEW_TIMEOUT = 10.0
#: largest review answer read, bytes
REVIEW_MAX_BYTES = 4 * 1024 * 1024

Obj = dict[str, Any]


class ReviewError(Exception):
    """A review could not be obtained (no answer, or an HTTP error ``code``)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class ReviewPoster(Protocol):
    """Creates a review object and returns the API server's answer (with ``status``)."""

    def __call__(self, path: str, body: Obj) -> Obj: ...


class ReviewClient:
    """``ReviewClient(kubeconfig, flag)``: a client for the cluster of ``kubeconfig`` (a path), or the
    in-cluster service account when it is None/empty. Raises ConfigError naming ``flag`` when the
    kubeconfig cannot be loaded. Calling it posts a review (:class:`ReviewPoster`) and raises
    ReviewError on failure."""

    def __init__(
        self,
        kubeconfig: str | None,
        flag: str,
        *,
        limiter: TokenBucket | None = None,
        timeout: float = REVIEW_TIMEOUT,
        api_client_factory: Callable[[k8s_client.Configuration], k8s_client.ApiClient] = k8s_client.ApiClient,
    ) -> None:
        cfg = k8s_client.Configuration()
        if kubeconfig:
            check_kubeconfig(kubeconfig)
        try:
            if kubeconfig:
                k8s_config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
            else:
                k8s_config.load_incluster_config(client_configuration=cfg)
        except Exception as e:  # noqa: BLE001 - the loader raises anything on odd content
            what = kubeconfig or "the in-cluster configuration"
            raise ConfigError(flag, f"cannot load {what}: {e}") from None
        self.api = api_client_factory(cfg)
        base = str(cfg.host).rstrip("/")
        try:
            self._pool = ConnectionPool(
                base,
                ssl_context=ssl_context_for(cfg) if base.startswith("https:") else None,
                server_hostname=cfg.tls_server_name or None,
                maxsize=8,
                max_body=REVIEW_MAX_BYTES,
            )
        except (ValueError, OSError, ssl.SSLError) as e:
            raise ConfigError(flag, f"cannot use server {base!r}: {e}") from None
        self.limiter = limiter if limiter is not None else TokenBucket(REVIEW_QPS, REVIEW_BURST, RealClock())
        self.timeout = timeout

    def __call__(self, path: str, body: Obj) -> Obj:
        return self._request("POST", path, body)

    def get(self, path: str) -> Obj:
        """``GET path`` (e.g. a ConfigMap); raises ReviewError (``code`` 404 when it does not exist)."""
        return self._request("GET", path, None)

    def _request(self, method: str, path: str, body: Obj | None) -> Obj:
        self.limiter.accept()
        headers = {**(self.api.default_headers or {}), "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            self.api.update_params_for_auth(headers, [], ["BearerToken"])
            data_out = json.dumps(body).encode() if body is not None else None
            resp = self._pool.request(method, path, data_out, headers, (self.timeout, self.timeout))
        except TimeoutError:
            raise ReviewError(f"{method} {path}: no answer within {self.timeout:g}s") from None
        except Exception as e:  # noqa: BLE001 - OS/HTTP/credential plugin errors: no answer
            raise ReviewError(f"{method} {path}: {e}") from None
        data = resp.data
        if not 200 <= resp.status <= 299:
            raise ReviewError(f"{method} {path}: HTTP {resp.status}: {data[:200]!r}", resp.status)
        try:
            doc = json.loads(data)
        except ValueError:
            raise ReviewError(f"{method} {path}: the answer is not JSON") from None
        if not isinstance(doc, dict):
            raise ReviewError(f"{method} {path}: the answer is not an object")
        return doc

    def close(self) -> None:
        self._pool.close()
        try:
            self.api.close()
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass
