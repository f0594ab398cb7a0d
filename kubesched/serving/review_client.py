"""The API client of delegated authentication and authorization: ``POST`` of TokenReview and
SubjectAccessReview objects (and the ``GET`` of the authentication ConfigMap) to the API server named by ``--authentication-kubeconfig`` /
``--authorization-kubeconfig`` (default: the scheduler's own kubeconfig, else the in-cluster
service account), through the official ``kubernetes`` client.

As upstream's delegating options (``k8s.io/apiserver/pkg/server/options/authentication.go`` and
``authorization.go`` ``getClient``) it has its own limiter (200 requests/s, burst 400) and a
10 s request timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

from kubesched.client.kube import check_kubeconfig
from kubesched.client.rate_limit import TokenBucket
from kubesched.clock import RealClock
from kubesched.errors import ConfigError

__all__ = ["REVIEW_BURST", "REVIEW_QPS", "REVIEW_TIMEOUT", "ReviewClient", "ReviewError", "ReviewPoster"]

REVIEW_QPS = 200.0
REVIEW_BURST = 400
#: seconds per review request (upstream ``ClientTimeout`` / ``TokenRequestTimeout``)
REVIEW_TIMEOUT = 10.0

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

    def __init__(self, kubeconfig: str | None, flag: str, *,
                 limiter: TokenBucket | None = None, timeout: float = REVIEW_TIMEOUT,
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
        self.limiter = limiter if limiter is not None else TokenBucket(REVIEW_QPS, REVIEW_BURST, RealClock())
        self.timeout = timeout

    def __call__(self, path: str, body: Obj) -> Obj:
        return self._request("POST", path, body)

    def get(self, path: str) -> Obj:
        """``GET path`` (e.g. a ConfigMap); raises ReviewError (``code`` 404 when it does not exist)."""
        return self._request("GET", path, None)

    def _request(self, method: str, path: str, body: Obj | None) -> Obj:
        self.limiter.accept()
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            resp = self.api.call_api(path, method, header_params=headers,
                                     body=body, auth_settings=["BearerToken"], _preload_content=False,
                                     _return_http_data_only=True, _request_timeout=(self.timeout, self.timeout))
            data = resp.data
        except ApiException as e:
            raise ReviewError(f"{method} {path}: HTTP {e.status}: {(e.body or b'')[:200]!r}", int(e.status or 0)) from None
        except Exception as e:  # noqa: BLE001 - urllib3/OS errors: no answer
            raise ReviewError(f"{method} {path}: {e}") from None
        try:
            doc = json.loads(data)
        except ValueError:
            raise ReviewError(f"{method} {path}: the answer is not JSON") from None
        if not isinstance(doc, dict):
            raise ReviewError(f"{method} {path}: the answer is not an object")
        return doc

    def close(self) -> None:
        try:
            self.api.close()
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass
