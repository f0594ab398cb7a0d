"""Client-certificate and front-proxy settings read from the cluster: the
``kube-system/extension-apiserver-authentication`` ConfigMap the API server publishes
(``k8s.io/apiserver/pkg/server/options/authentication.go`` ``ApplyTo`` with
``NewDynamicCAFromConfigMapController`` and ``createRequestHeaderConfig``).

Keys: ``client-ca-file`` (PEM, the CA of client certificates), ``requestheader-client-ca-file``
(PEM, the front proxy's CA) and the JSON string lists ``requestheader-allowed-names``,
``requestheader-username-headers``, ``requestheader-uid-headers``, ``requestheader-group-headers``,
``requestheader-extra-headers-prefix``. A setting given by its flag is never looked up;
:mod:`kubesched.serving.authn_sources` reads the ConfigMap at start and every minute after.

A missing ConfigMap means none of these settings. A failed read (403 without the
``extension-apiserver-authentication-reader`` Role, an API server that does not answer, a key
that does not parse) raises :class:`LookupFailed`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.errors import ConfigError
from kubesched.serving.authn_requestheader import RequestHeaderConfig
from kubesched.serving.authn_x509 import CABundle
from kubesched.serving.review_client import ReviewError

__all__ = [
    "AUTHENTICATION_CONFIGMAP_NAME",
    "AUTHENTICATION_CONFIGMAP_NAMESPACE",
    "AUTHENTICATION_CONFIGMAP_PATH",
    "InClusterAuthentication",
    "LookupFailed",
    "lookup_in_cluster",
]

log = logging.getLogger(__name__)

AUTHENTICATION_CONFIGMAP_NAMESPACE = "kube-system"
AUTHENTICATION_CONFIGMAP_NAME = "extension-apiserver-authentication"
AUTHENTICATION_CONFIGMAP_PATH = (
    f"/api/v1/namespaces/{AUTHENTICATION_CONFIGMAP_NAMESPACE}/configmaps/{AUTHENTICATION_CONFIGMAP_NAME}"
)
_SOURCE = f"configmap/{AUTHENTICATION_CONFIGMAP_NAME} in {AUTHENTICATION_CONFIGMAP_NAMESPACE}"


class LookupFailed(Exception):
    """The ConfigMap could not be read or parsed."""


@dataclass(frozen=True)
class InClusterAuthentication:
    """What the ConfigMap gave (None: the key is absent or empty)."""

    client_ca: CABundle | None = None
    request_header: RequestHeaderConfig | None = None


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    """``deserializeStrings``: a JSON list of strings; empty for an absent or empty key."""
    raw = data.get(key) or ""
    if not raw:
        return ()
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise LookupFailed(f"{_SOURCE}: {key}: not a JSON list of strings: {e}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LookupFailed(f"{_SOURCE}: {key}: not a JSON list of strings")
    return tuple(value)


def _bundle(data: dict[str, Any], key: str) -> CABundle | None:
    raw = data.get(key) or ""
    if not raw:
        return None
    try:
        return CABundle.from_pem(str(raw).encode(), f"{_SOURCE} key {key}", key)
    except ConfigError as e:
        raise LookupFailed(str(e)) from None


def lookup_in_cluster(get: Callable[[str], dict[str, Any]]) -> InClusterAuthentication:
    """Read the ConfigMap with ``get(path)`` (raises ReviewError, ``code`` 404 when absent).
    Raises LookupFailed (a 403 also logs how to grant the read, as upstream)."""
    try:
        cm = get(AUTHENTICATION_CONFIGMAP_PATH)
    except ReviewError as e:
        if e.code == 404:
            return InClusterAuthentication()
        if e.code == 403:
            log.warning(
                "Unable to get %s. Usually fixed by 'kubectl create rolebinding -n %s ROLEBINDING_NAME "
                "--role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'",
                _SOURCE,
                AUTHENTICATION_CONFIGMAP_NAMESPACE,
            )
        raise LookupFailed(str(e)) from None
    data = cm.get("data")
    data = data if isinstance(data, dict) else {}
    client_ca = _bundle(data, "client-ca-file")
    proxy_ca = _bundle(data, "requestheader-client-ca-file")
    request_header = None
    if proxy_ca is not None:
        request_header = RequestHeaderConfig(
            proxy_ca,
            _strings(data, "requestheader-allowed-names"),
            _strings(data, "requestheader-username-headers"),
            _strings(data, "requestheader-uid-headers"),
            _strings(data, "requestheader-group-headers"),
            _strings(data, "requestheader-extra-headers-prefix"),
        )
    return InClusterAuthentication(client_ca, request_header)
